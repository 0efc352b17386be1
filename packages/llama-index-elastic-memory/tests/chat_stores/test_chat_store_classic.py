"""The classic ``BaseChatStore``: ``ElasticMemoryChatStore`` against ``SimpleChatStore``'s behaviours.

Part of the chat stores' contract suite (``test_chat_store_async.py``: the async store;
``test_chat_store_memory.py``: under LlamaIndex's ``Memory``). Each test takes a fresh store.
"""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.llms import ChatMessage
from llama_index.core.storage.chat_store import SimpleChatStore
from llama_index.core.storage.chat_store.base import BaseChatStore

from elastic_memory import LoopConfig, UsageError
from elastic_memory import Memory as CoreMemory
from elastic_memory.testing import FakeEmbedder
from llama_index.retrievers.elastic_memory import ElasticMemoryRetriever
from llama_index.storage.chat_store.elastic_memory import ElasticMemoryAsyncChatStore, ElasticMemoryChatStore

from .support import MESSAGES, bot, chatty, every_kind, forbid_sync_memory, frozen, texts, user


# ========================================================== classic BaseChatStore
def test_classic_store_is_a_base_chat_store(store: ElasticMemoryChatStore) -> None:
    assert isinstance(store, BaseChatStore)
    assert ElasticMemoryChatStore.class_name() == "ElasticMemoryChatStore"


def test_every_role_and_block_round_trips_exactly(store: ElasticMemoryChatStore) -> None:
    store.set_messages("k", every_kind())
    assert store.get_messages("k") == every_kind()


def test_the_round_trip_is_llama_index_json_serialisation(store: ElasticMemoryChatStore) -> None:
    store.set_messages("k", every_kind())
    assert [m.model_dump(mode="json") for m in store.get_messages("k")] == [
        m.model_dump(mode="json") for m in every_kind()
    ]


def test_bytes_in_additional_kwargs_come_back_base64_as_in_the_reference(store: ElasticMemoryChatStore) -> None:
    message = ChatMessage(content="raw", additional_kwargs={"payload": b"\x00\x01"})
    store.add_message("k", message)
    expected = ChatMessage.model_validate(message.model_dump(mode="json"))
    assert store.get_messages("k") == [expected]
    assert expected.additional_kwargs == {"payload": "AAE="}


def test_add_message_appends(store: ElasticMemoryChatStore) -> None:
    store.add_message("k", user("one"))
    store.add_message("k", bot("two"))
    assert texts(store.get_messages("k")) == ["one", "two"]


def test_add_message_at_idx_inserts_there(store: ElasticMemoryChatStore) -> None:
    store.set_messages("k", [user("a"), bot("c")])
    store.add_message("k", user("b"), idx=1)
    assert texts(store.get_messages("k")) == ["a", "b", "c"]


def test_an_insert_is_one_write(store: ElasticMemoryChatStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """The new message and the messages it moves are written by one remember_many (one transaction)."""
    store.set_messages("k", [user(f"m{n}") for n in range(5)])
    writes: list[int] = []
    write = CoreMemory.remember_many

    def counted(self: CoreMemory, items: Any, **kwargs: Any) -> Any:
        writes.append(len(items))
        return write(self, items, **kwargs)

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an insert neither erases nor updates")

    monkeypatch.setattr(CoreMemory, "remember_many", counted)
    monkeypatch.setattr(CoreMemory, "forget", refused)
    monkeypatch.setattr(CoreMemory, "update", refused)
    store.add_message("k", user("new"), idx=0)
    assert writes == [6]
    assert texts(store.get_messages("k")) == ["new", "m0", "m1", "m2", "m3", "m4"]


def test_an_insert_keeps_the_ids_and_times_of_the_messages_it_moves(store: ElasticMemoryChatStore) -> None:
    store.set_messages("k", [user("a"), bot("b")])
    before = {h.id: h.created_at for h in store.memory.recall("", k=10, touch=False, filters=MESSAGES)}
    store.add_message("k", user("first"), idx=0)
    after = {h.id: h.created_at for h in store.memory.recall("", k=10, touch=False, filters=MESSAGES)}
    assert len(after) == 3
    assert {i: after[i] for i in before} == before


def test_messages_are_stored_without_vectors_on_a_memory_that_has_a_model(tmp_path: Path) -> None:
    embedder = FakeEmbedder()
    with CoreMemory.open(tmp_path / "m.db", embedder=embedder) as core:
        store = ElasticMemoryChatStore(memory=core)
        store.set_messages("k", [user("apples"), bot("pears")])
        store.add_message("k", user("figs"), idx=0)
        ids = [h.id for h in core.recall("", k=10, touch=False, filters=MESSAGES)]
        assert len(ids) == 3
        assert core.vectors(ids) == {}


def test_an_insert_counts_archived_messages_in_positions(mem: CoreMemory) -> None:
    """Positions are those of the whole transcript get_messages shows, as for delete_message."""
    store = ElasticMemoryChatStore(memory=mem)
    store.set_messages("k", [user("old"), bot("kept")])
    asyncio.run(ElasticMemoryAsyncChatStore(memory=mem).archive_oldest_messages("k", 1))
    store.add_message("k", user("between"), idx=1)
    assert texts(store.get_messages("k")) == ["old", "between", "kept"]


def test_an_insert_orders_messages_that_share_a_position(mem: CoreMemory) -> None:
    """Two writers at once can give two messages one position; an insert between them keeps both in order."""
    store = ElasticMemoryChatStore(memory=mem)
    rows = [
        {
            "content": f"m{n}",
            "agent_id": store.agent_id,
            "session_id": "k",
            "tags": ["chat-key:k", "chat-status:active"],
            "metadata": {"seq": n // 2, "message": user(f"m{n}").model_dump(mode="json")},
        }
        for n in range(6)
    ]
    mem.remember_many(rows, dedupe=False)
    store.add_message("k", user("new"), idx=3)
    assert texts(store.get_messages("k")) == ["m0", "m1", "m2", "new", "m3", "m4", "m5"]


def test_an_insert_into_more_than_a_page(store: ElasticMemoryChatStore) -> None:
    store.set_messages("long", [user(f"m{n}") for n in range(1_200)])
    store.add_message("long", bot("early"), idx=3)
    assert texts(store.get_messages("long")) == ["m0", "m1", "m2", "early", *(f"m{n}" for n in range(3, 1_200))]


def test_get_messages_of_an_unknown_key_is_empty(store: ElasticMemoryChatStore) -> None:
    assert store.get_messages("nobody") == []
    assert SimpleChatStore().get_messages("nobody") == []


def test_set_messages_replaces_the_key(store: ElasticMemoryChatStore) -> None:
    store.set_messages("k", [user("old 1"), bot("old 2")])
    store.set_messages("k", [user("new")])
    assert texts(store.get_messages("k")) == ["new"]


def test_set_messages_then_add_keeps_order(store: ElasticMemoryChatStore) -> None:
    store.set_messages("k", [user("a"), bot("b")])
    store.add_message("k", user("c"))
    assert texts(store.get_messages("k")) == ["a", "b", "c"]


def test_set_messages_to_nothing_empties_the_key(store: ElasticMemoryChatStore) -> None:
    store.set_messages("k", [user("a")])
    store.set_messages("k", [])
    assert store.get_messages("k") == []
    assert store.get_keys() == []  # SimpleChatStore would keep an empty key; a row-based store has none


def test_delete_messages_returns_them_and_drops_the_key(store: ElasticMemoryChatStore) -> None:
    store.set_messages("k", [user("a"), bot("b")])
    assert texts(store.delete_messages("k") or []) == ["a", "b"]
    assert store.get_messages("k") == []
    assert store.get_keys() == []


def test_delete_messages_of_an_unknown_key_returns_none(store: ElasticMemoryChatStore) -> None:
    assert store.delete_messages("nobody") is None
    assert SimpleChatStore().delete_messages("nobody") is None


def test_delete_message_removes_that_position(store: ElasticMemoryChatStore) -> None:
    store.set_messages("k", [user("a"), bot("b"), user("c")])
    assert texts([store.delete_message("k", 1)]) == ["b"]  # type: ignore[list-item]
    assert texts(store.get_messages("k")) == ["a", "c"]


def test_delete_message_positions_shift_after_a_delete(store: ElasticMemoryChatStore) -> None:
    store.set_messages("k", [user("a"), bot("b"), user("c")])
    store.delete_message("k", 0)
    removed = store.delete_message("k", 0)
    assert removed is not None and removed.content == "b"
    assert texts(store.get_messages("k")) == ["c"]


def test_delete_message_with_a_negative_index_counts_from_the_end(store: ElasticMemoryChatStore) -> None:
    store.set_messages("k", [user("a"), bot("b"), user("c")])
    removed = store.delete_message("k", -1)
    assert removed is not None and removed.content == "c"
    assert texts(store.get_messages("k")) == ["a", "b"]


def test_delete_message_out_of_range_returns_none_and_keeps_everything(store: ElasticMemoryChatStore) -> None:
    store.set_messages("k", [user("a"), bot("b")])
    reference = SimpleChatStore()
    reference.set_messages("k", [user("a"), bot("b")])
    assert store.delete_message("k", 2) is None
    assert reference.delete_message("k", 2) is None
    assert store.delete_message("k", -3) is None
    assert texts(store.get_messages("k")) == ["a", "b"]


def test_delete_message_of_an_unknown_key_returns_none(store: ElasticMemoryChatStore) -> None:
    assert store.delete_message("nobody", 0) is None


def test_delete_last_message_removes_the_newest(store: ElasticMemoryChatStore) -> None:
    store.set_messages("k", [user("a"), bot("b")])
    removed = store.delete_last_message("k")
    assert removed is not None and removed.content == "b"
    assert texts(store.get_messages("k")) == ["a"]


def test_delete_last_message_of_an_unknown_key_returns_none(store: ElasticMemoryChatStore) -> None:
    assert store.delete_last_message("nobody") is None
    assert SimpleChatStore().delete_last_message("nobody") is None


def test_get_keys_lists_every_key_with_messages_sorted(store: ElasticMemoryChatStore) -> None:
    for key in ("b", "a", "c"):
        store.add_message(key, user(key))
    store.delete_messages("c")
    assert store.get_keys() == ["a", "b"]


def test_keys_are_isolated(store: ElasticMemoryChatStore) -> None:
    store.set_messages("a", [user("for a")])
    store.set_messages("b", [user("for b")])
    store.delete_last_message("b")
    assert texts(store.get_messages("a")) == ["for a"]
    assert store.get_messages("b") == []


def test_a_key_that_prefixes_another_is_separate(store: ElasticMemoryChatStore) -> None:
    store.add_message("chat", user("short"))
    store.add_message("chat-1", user("long"))
    assert texts(store.get_messages("chat")) == ["short"]


def test_the_same_text_is_stored_each_time(store: ElasticMemoryChatStore) -> None:
    store.set_messages("k", [user("ok"), user("ok")])
    store.add_message("k", user("ok"))
    assert texts(store.get_messages("k")) == ["ok", "ok", "ok"]


def test_order_holds_when_every_timestamp_ties() -> None:
    with ElasticMemoryChatStore(path=":memory:", clock=frozen()) as store:
        for n in range(5):
            store.add_message("k", user(f"q{n}"))
            store.add_message("k", bot(f"a{n}"))
        store.delete_message("k", 3)
        assert texts(store.get_messages("k")) == ["q0", "a0", "q1", "q2", "a2", "q3", "a3", "q4", "a4"]


def test_order_holds_when_the_clock_goes_backwards() -> None:
    ticks = itertools.count()
    with ElasticMemoryChatStore(path=":memory:", clock=lambda: 100_000.0 - next(ticks)) as store:
        store.set_messages("k", [user(f"m{n}") for n in range(80)])  # the newest by time are the first written
        store.add_message("k", user("m80"))
        store.add_message("k", user("m81"))
        assert texts(store.get_messages("k")) == [f"m{n}" for n in range(82)]
        assert (store.delete_last_message("k") or user("")).content == "m81"


async def test_concurrent_appends_keep_every_message(astore: ElasticMemoryAsyncChatStore) -> None:
    await asyncio.gather(*(astore.add_message("k", user(f"m{n}")) for n in range(20)))
    assert sorted(texts(await astore.get_messages("k"))) == sorted(f"m{n}" for n in range(20))  # type: ignore[type-var]


def test_repeated_positions_beyond_a_page_read_whole(mem: CoreMemory) -> None:
    """Two writers at once can give two messages one position: paging splits a full window."""
    store = ElasticMemoryChatStore(memory=mem)
    rows = [
        {
            "content": f"m{n}",
            "agent_id": store.agent_id,
            "session_id": "k",
            "tags": ["chat-key:k", "chat-status:active"],
            "metadata": {"seq": n // 2, "message": user(f"m{n}").model_dump(mode="json")},
        }
        for n in range(2_400)
    ]
    mem.remember_many(rows, dedupe=False)
    assert texts(store.get_messages("k")) == [f"m{n}" for n in range(2_400)]


def test_more_than_a_thousand_messages_read_in_order(store: ElasticMemoryChatStore) -> None:
    store.set_messages("long", [user(f"message {n}") for n in range(1_500)])
    store.add_message("long", bot("the end"))
    assert texts(store.get_messages("long")) == [*(f"message {n}" for n in range(1_500)), "the end"]


def test_more_than_a_thousand_messages_with_tied_times() -> None:
    with ElasticMemoryChatStore(path=":memory:", clock=frozen()) as store:
        store.set_messages("long", [user(f"m{n}") for n in range(1_200)])
        store.add_message("long", bot("last"))
        assert store.delete_message("k", 0) is None
        assert (store.delete_message("long", 1_000) or user("")).content == "m1000"
        assert (store.delete_last_message("long") or user("")).content == "last"
        assert texts(store.get_messages("long")) == [f"m{n}" for n in range(1_200) if n != 1_000]


def test_messages_survive_reopening_the_file(tmp_path: Path) -> None:
    with ElasticMemoryChatStore(path=tmp_path / "chat.db") as store:
        store.set_messages("k", every_kind())
    with ElasticMemoryChatStore(path=tmp_path / "chat.db") as again:
        assert again.get_messages("k") == every_kind()
        assert again.get_keys() == ["k"]


def test_to_dict_carries_the_path_and_from_dict_reopens_the_file(tmp_path: Path) -> None:
    with ElasticMemoryChatStore(path=tmp_path / "chat.db", agent_id="bot:chat") as store:
        store.set_messages("k", [user("hello")])
        data = store.to_dict()
    assert data == {"path": str(tmp_path / "chat.db"), "agent_id": "bot:chat", "class_name": "ElasticMemoryChatStore"}
    with ElasticMemoryChatStore.from_dict(data) as again:
        assert texts(again.get_messages("k")) == ["hello"]


def test_to_json_round_trips_through_from_json(tmp_path: Path) -> None:
    with ElasticMemoryChatStore(path=tmp_path / "chat.db") as store:
        store.add_message("k", user("hello"))
        with ElasticMemoryChatStore.from_json(store.to_json()) as again:
            assert texts(again.get_messages("k")) == ["hello"]


def test_an_in_memory_store_serialises_its_messages() -> None:
    with ElasticMemoryChatStore(path=":memory:") as store:
        store.set_messages("a", every_kind())
        store.set_messages("b", [user("b")])
        data = store.to_dict()
    assert [r["key"] for r in data["db_data"]] == ["a"] * len(every_kind()) + ["b"]
    with ElasticMemoryChatStore.from_dict(data) as again:
        assert again.get_messages("a") == every_kind()
        assert texts(again.get_messages("b")) == ["b"]


def test_a_memory_store_serialises_the_memory_file(tmp_path: Path) -> None:
    with CoreMemory.open(tmp_path / "shared.db", embedder=None) as core:
        store = ElasticMemoryChatStore(memory=core)
        store.add_message("k", user("kept"))
        data = store.to_dict()
        assert data["path"] == str(tmp_path / "shared.db")
        with ElasticMemoryChatStore.from_dict(data) as again:
            assert texts(again.get_messages("k")) == ["kept"]
        assert core.stats() is not None  # the rebuilt store closed its own connection only


def test_close_leaves_a_given_memory_open(mem: CoreMemory) -> None:
    ElasticMemoryChatStore(memory=mem).close()
    assert mem.recall("") == []


def test_close_closes_a_store_it_opened(tmp_path: Path) -> None:
    store = ElasticMemoryChatStore(path=tmp_path / "chat.db")
    store.close()
    with pytest.raises(Exception, match="closed"):
        store.get_messages("k")


def test_a_failed_batch_stores_nothing(store: ElasticMemoryChatStore) -> None:
    store.set_messages("k", [user("kept")])
    bad = ChatMessage(content="x", additional_kwargs={"handle": object()})
    with pytest.raises(UsageError, match=r"messages\[1\] \(user\) cannot be stored.*not JSON-serialisable"):
        store.set_messages("k", [user("new"), bad])
    assert texts(store.get_messages("k")) == ["kept"]


def test_a_message_that_is_not_json_is_refused(store: ElasticMemoryChatStore) -> None:
    with pytest.raises(UsageError, match="not JSON-serialisable"):
        store.add_message("k", ChatMessage(content="x", additional_kwargs={"handle": object()}))
    assert store.get_keys() == []


@pytest.mark.parametrize("key", ["", None, 7, b"k", "x" * 248])
def test_a_bad_key_is_refused(store: ElasticMemoryChatStore, key: Any) -> None:
    with pytest.raises(UsageError, match="a chat key must be a non-empty string of at most 247"):
        store.get_messages(key)


def test_the_longest_key_is_accepted(store: ElasticMemoryChatStore) -> None:
    store.add_message("k" * 247, user("fits"))
    assert store.get_keys() == ["k" * 247]


@pytest.mark.parametrize("idx", ["0", 1.0, True, None])
def test_a_bad_index_is_refused(store: ElasticMemoryChatStore, idx: Any) -> None:
    store.add_message("k", user("a"))
    with pytest.raises(UsageError, match="idx must be an integer"):
        store.delete_message("k", idx)


@pytest.mark.parametrize("idx", ["0", 1.0, True])
def test_a_bad_insert_index_is_refused_and_changes_nothing(store: ElasticMemoryChatStore, idx: Any) -> None:
    store.set_messages("k", [user("a"), bot("b")])
    with pytest.raises(UsageError, match="idx must be an integer"):
        store.add_message("k", user("new"), idx=idx)
    assert texts(store.get_messages("k")) == ["a", "b"]


@pytest.mark.parametrize("given", ["hello", user("hello"), [{"role": "user", "content": "hi"}], None])
def test_set_messages_takes_only_chat_messages(store: ElasticMemoryChatStore, given: Any) -> None:
    with pytest.raises(UsageError, match=r"messages must be a list of ChatMessage|not a llama_index ChatMessage"):
        store.set_messages("k", given)


def test_add_message_takes_only_a_chat_message(store: ElasticMemoryChatStore) -> None:
    with pytest.raises(UsageError, match="message must be a llama_index ChatMessage"):
        store.add_message("k", "hello")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "pass exactly one of path="),
        ({"path": ":memory:", "memory": "m"}, "pass exactly one of path="),
        ({"path": ":memory:", "agent_id": " "}, "agent_id must be a non-empty string"),
        ({"memory": "not a memory"}, "memory must be an elastic_memory Memory or AsyncMemory"),
        ({"path": ":memory:", "no_such_option": 1}, "no_such_option"),
    ],
)
def test_bad_constructor_arguments_are_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises((UsageError, TypeError), match=message):
        ElasticMemoryChatStore(**kwargs)


def test_a_memory_store_refuses_an_embedder(mem: CoreMemory) -> None:
    with pytest.raises(UsageError, match="embedder= applies when the store opens the file"):
        ElasticMemoryChatStore(memory=mem, embedder="auto")


def test_messages_live_under_a_dedicated_agent_id(mem: CoreMemory) -> None:
    ElasticMemoryChatStore(memory=mem).add_message("k", user("hello"))
    ElasticMemoryChatStore(memory=mem, agent_id="support-bot").add_message("k", user("hi"))
    assert sorted(h.agent_id for h in mem.recall("", filters=MESSAGES)) == ["default:llama_index_chat", "support-bot"]


def test_messages_stay_out_of_recall(mem: CoreMemory) -> None:
    ElasticMemoryChatStore(memory=mem).add_message("k", user("My kayak is bright orange."))
    note = mem.remember("The kayak lives in the garage.")
    assert [h.id for h in mem.recall("kayak")] == [note]


def test_messages_stay_out_of_a_retrievers_results(mem: CoreMemory) -> None:
    ElasticMemoryChatStore(memory=mem).add_message("k", user("My kayak is bright orange."))
    mem.remember("The kayak lives in the garage.")
    found = ElasticMemoryRetriever(memory=mem, mode="keyword").retrieve("kayak")
    assert [n.node.get_content() for n in found] == ["The kayak lives in the garage."]


def test_messages_written_as_notes_before_the_message_kind_are_still_read(mem: CoreMemory) -> None:
    old = {
        "content": "hello",
        "type": "episodic",
        "agent_id": "default:llama_index_chat",
        "session_id": "k",
        "pinned": True,
        "tags": ["chat-key:k", "chat-status:active"],
        "metadata": {"seq": 0, "message": user("hello").model_dump(mode="json")},
    }
    mem.remember_many([old], dedupe=False)
    store = ElasticMemoryChatStore(memory=mem)
    store.add_message("k", bot("hi"))
    assert texts(store.get_messages("k")) == ["hello", "hi"]


def test_messages_are_stored_as_the_message_kind(mem: CoreMemory) -> None:
    ElasticMemoryChatStore(memory=mem).add_message("k", user("hello"))
    assert [h.kind for h in mem.recall("", filters=MESSAGES)] == ["message"]


def test_agent_ids_separate_transcripts(mem: CoreMemory) -> None:
    ElasticMemoryChatStore(memory=mem, agent_id="one").add_message("k", user("for one"))
    assert ElasticMemoryChatStore(memory=mem, agent_id="two").get_messages("k") == []


def test_messages_stay_out_of_the_memory_loop(mem: CoreMemory) -> None:
    ElasticMemoryChatStore(memory=mem).add_message("k", user("My cat is called Tom."))
    assert mem.build_context("What is my cat called?", session_id="other").render() == ""
    assert mem.health()["turns"] == 0


def test_messages_are_pinned_so_a_prune_keeps_them(mem: CoreMemory) -> None:
    store = ElasticMemoryChatStore(memory=mem)
    store.set_messages("k", [user("a"), bot("b")])
    mem.remember("An unimportant note.", importance=0.1)
    report = mem.prune(max_entries=0, action="purge")
    assert report.count == 1
    assert texts(store.get_messages("k")) == ["a", "b"]


def test_a_path_store_does_not_embed_messages(tmp_path: Path) -> None:
    with ElasticMemoryChatStore(path=tmp_path / "chat.db") as store:
        store.add_message("k", user("no vector needed"))
        ids = [h.id for h in store.memory.recall("", filters=MESSAGES)]
        assert len(ids) == 1
        assert store.memory.vectors(ids) == {}


def test_add_message_does_not_wait_for_the_model(tmp_path: Path) -> None:
    """A chat store is a log read by position: writing a message runs no model, even on a memory that has one."""
    embedder = FakeEmbedder()
    with CoreMemory.open(tmp_path / "m.db", embedder=embedder, loop=LoopConfig(background=False)) as core:
        embedded = embedder.calls
        store = ElasticMemoryChatStore(memory=core)
        store.add_message("k", user("one"))
        store.add_message("k", bot("two"), idx=0)
        assert embedder.calls == embedded


async def test_classic_async_twins_never_use_the_sync_memory(
    store: ElasticMemoryChatStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    forbid_sync_memory(monkeypatch)
    await store.aset_messages("k", [user("a"), bot("b"), user("c")])
    await store.async_add_message("k", bot("d"))
    await store.async_add_message("k", bot("first"), idx=0)
    assert (await store.adelete_message("k", 0) or user("")).content == "first"
    assert texts(await store.aget_messages("k")) == ["a", "b", "c", "d"]
    assert (await store.adelete_message("k", 1) or user("")).content == "b"
    assert (await store.adelete_last_message("k") or user("")).content == "d"
    assert await store.aget_keys() == ["k"]
    assert texts(await store.adelete_messages("k") or []) == ["a", "c"]
    assert await store.adelete_messages("k") is None


async def test_classic_async_twins_refuse_bad_input(store: ElasticMemoryChatStore) -> None:
    with pytest.raises(UsageError, match="a chat key"):
        await store.aget_messages("")
    with pytest.raises(UsageError, match="idx must be an integer"):
        await store.adelete_message("k", "0")  # type: ignore[arg-type]


def test_classic_store_matches_simple_chat_store_on_one_scenario(store: ElasticMemoryChatStore) -> None:
    reference = SimpleChatStore()
    results: list[list[Any]] = [[], []]
    for n, s in enumerate((reference, store)):
        s.set_messages("a", [user("a1"), bot("a2"), user("a3")])
        s.add_message("a", bot("a4"))
        s.add_message("b", user("b1"))
        out = results[n]
        out.append(s.delete_message("a", 1))
        out.append(s.delete_message("a", 9))
        out.append(s.delete_last_message("a"))
        out.append(s.get_messages("a"))
        out.append(sorted(s.get_keys()))
        out.append(s.delete_messages("b"))
        out.append(s.delete_messages("b"))
        out.append(s.get_messages("b"))
    assert results[1] == results[0]


def test_chat_memory_buffer_keeps_its_history_in_the_store(store: ElasticMemoryChatStore) -> None:
    from llama_index.core.memory import ChatMemoryBuffer

    buffer = ChatMemoryBuffer.from_defaults(token_limit=40, chat_store=store, chat_store_key="u1")
    for message in chatty(8):
        buffer.put(message)
    assert texts(store.get_messages("u1")) == texts(chatty(8))
    window = buffer.get()
    assert window and texts(window) == texts(chatty(8))[-len(window) :]
    buffer.reset()
    assert store.get_keys() == []
