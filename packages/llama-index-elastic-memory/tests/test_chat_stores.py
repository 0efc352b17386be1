"""Contract suite of the chat stores, after LlamaIndex's references.

``ElasticMemoryChatStore`` is checked against the behaviours of ``SimpleChatStore``,
``ElasticMemoryAsyncChatStore`` against ``SQLAlchemyChatStore`` (the reference semantics of
``AsyncDBChatStore``); a few differential tests run one scenario on both and compare.
Each test takes a fresh store.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.base.llms.types import (
    AudioBlock,
    CacheControl,
    CachePoint,
    CitableBlock,
    CitationBlock,
    DocumentBlock,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    VideoBlock,
)
from llama_index.core.bridge.pydantic import Field
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.memory import BaseMemoryBlock, Memory
from llama_index.core.storage.chat_store import SimpleChatStore
from llama_index.core.storage.chat_store.base import BaseChatStore
from llama_index.core.storage.chat_store.base_db import AsyncDBChatStore, MessageStatus
from llama_index.core.storage.chat_store.sql import SQLAlchemyChatStore

from elastic_memory import LoopConfig, UsageError
from elastic_memory import Memory as CoreMemory
from elastic_memory.testing import FakeEmbedder
from llama_index.retrievers.elastic_memory import ElasticMemoryRetriever
from llama_index.storage.chat_store.elastic_memory import ElasticMemoryAsyncChatStore, ElasticMemoryChatStore

ACTIVE, ARCHIVED = MessageStatus.ACTIVE, MessageStatus.ARCHIVED
#: The core filter that lists chat messages (recall leaves them out otherwise).
MESSAGES = {"kind": "message"}
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))


# ------------------------------------------------------------------------ helpers
@pytest.fixture
def mem() -> Iterator[CoreMemory]:
    """A fresh in-memory core store without an embedder; background work only on drain."""
    memory = CoreMemory.open(":memory:", embedder=None, loop=LoopConfig(tier="standard", background=False))
    yield memory
    memory.close()


@pytest.fixture
def store(mem: CoreMemory) -> ElasticMemoryChatStore:
    return ElasticMemoryChatStore(memory=mem)


@pytest.fixture
def astore(mem: CoreMemory) -> ElasticMemoryAsyncChatStore:
    return ElasticMemoryAsyncChatStore(memory=mem)


@pytest.fixture
async def reference() -> AsyncIterator[SQLAlchemyChatStore]:
    """The reference AsyncDBChatStore (in-memory SQLite through aiosqlite)."""
    ref = SQLAlchemyChatStore(table_name="reference")
    yield ref
    if ref._async_engine is not None:
        await ref._async_engine.dispose()


def every_kind() -> list[ChatMessage]:
    """Every role and every content-block type, with the fields a round trip could lose."""
    return [
        ChatMessage(role=MessageRole.SYSTEM, content="Be brief."),
        ChatMessage(role=MessageRole.DEVELOPER, content="Answer in metric units."),
        ChatMessage(
            role=MessageRole.USER,
            blocks=[
                TextBlock(text="What is in this picture?"),
                ImageBlock(image=PNG, image_mimetype="image/png", detail="high"),
                ImageBlock(url="https://example.com/cat.png"),
            ],
            additional_kwargs={"client": {"v": 2, "tags": ["a", "b"]}, "n": 1.5, "none": None},
        ),
        ChatMessage(
            role=MessageRole.ASSISTANT,
            blocks=[
                ThinkingBlock(content="The user wants a count.", num_tokens=6, additional_information={"sig": "x1"}),
                ToolCallBlock(tool_call_id="call-1", tool_name="count_cats", tool_kwargs={"picture": 1}),
            ],
            additional_kwargs={"tool_calls": [{"id": "call-1", "type": "function"}]},
        ),
        ChatMessage(role=MessageRole.TOOL, content="3", additional_kwargs={"tool_call_id": "call-1", "name": "count"}),
        ChatMessage(role=MessageRole.FUNCTION, content='{"cats": 3}', additional_kwargs={"name": "count_cats"}),
        ChatMessage(
            role=MessageRole.CHATBOT,
            blocks=[
                AudioBlock(audio=b"RIFF\x00\x00\x00\x00WAVE", format="wav"),
                VideoBlock(video=b"\x00\x00\x00\x18ftypmp42", video_mimetype="video/mp4", fps=24),
                DocumentBlock(data=b"%PDF-1.4 three cats", title="report", document_mimetype="application/pdf"),
            ],
        ),
        ChatMessage(
            role=MessageRole.MODEL,
            blocks=[
                CachePoint(cache_control=CacheControl(type="ephemeral", ttl="1h")),
                CitableBlock(content=[TextBlock(text="Cats sleep a lot.")], title="Cats", source="https://cats"),
                CitationBlock(
                    cited_content=TextBlock(text="sleep a lot"),
                    source="https://cats",
                    title="Cats",
                    additional_location_info={"page": 2},
                ),
            ],
        ),
        ChatMessage(role=MessageRole.ASSISTANT, blocks=[]),
        ChatMessage(role=MessageRole.ASSISTANT, content=""),
        ChatMessage(role=MessageRole.USER, content="ünïcödé ✓ 猫 \U0001f408"),
    ]


def texts(messages: list[ChatMessage]) -> list[str | None]:
    return [m.content for m in messages]


def user(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.USER, content=text)


def bot(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.ASSISTANT, content=text)


def frozen(at: float = 1_000.0) -> Callable[[], float]:
    return lambda: at


def forbid_sync_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every call of the core's sync facade fail (the async methods must not use it)."""
    for name in ("recall", "remember_many", "forget", "update", "tags", "get", "get_many", "remember", "vectors"):

        def boom(*args: Any, _name: str = name, **kwargs: Any) -> Any:
            raise AssertionError(f"the sync Memory.{_name} was called from an async method")

        monkeypatch.setattr(CoreMemory, name, boom)


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


# ====================================================== AsyncDBChatStore (Memory)
def test_async_store_is_an_async_db_chat_store(astore: ElasticMemoryAsyncChatStore) -> None:
    assert isinstance(astore, AsyncDBChatStore)
    assert ElasticMemoryAsyncChatStore.class_name() == "ElasticMemoryAsyncChatStore"


async def test_async_store_round_trips_every_role_and_block(astore: ElasticMemoryAsyncChatStore) -> None:
    await astore.add_messages("k", every_kind())
    assert await astore.get_messages("k") == every_kind()


async def test_add_message_appends_one_at_a_time(astore: ElasticMemoryAsyncChatStore) -> None:
    for message in every_kind():
        await astore.add_message("k", message)
    assert await astore.get_messages("k") == every_kind()


async def test_get_messages_of_an_unknown_key_is_empty_async(
    astore: ElasticMemoryAsyncChatStore, reference: SQLAlchemyChatStore
) -> None:
    assert await astore.get_messages("nobody") == []
    assert await reference.get_messages("nobody") == []


async def test_get_messages_shows_active_ones_by_default(astore: ElasticMemoryAsyncChatStore) -> None:
    await astore.add_messages("k", [user("old"), bot("older reply")], status=ARCHIVED)
    await astore.add_messages("k", [user("new")])
    assert texts(await astore.get_messages("k")) == ["new"]


async def test_get_messages_by_status(astore: ElasticMemoryAsyncChatStore) -> None:
    await astore.add_messages("k", [user("a"), bot("b"), user("c")])
    await astore.archive_oldest_messages("k", 2)
    assert texts(await astore.get_messages("k", status=ARCHIVED)) == ["a", "b"]
    assert texts(await astore.get_messages("k", status=None)) == ["a", "b", "c"]


async def test_status_may_be_given_as_a_string(astore: ElasticMemoryAsyncChatStore) -> None:
    await astore.add_message("k", user("a"), status="archived")  # type: ignore[arg-type]
    assert await astore.count_messages("k", status="archived") == 1  # type: ignore[arg-type]


async def test_limit_and_offset_slice_like_sql(
    astore: ElasticMemoryAsyncChatStore, reference: SQLAlchemyChatStore
) -> None:
    for s in (astore, reference):
        await s.add_messages("k", [user(f"m{n}") for n in range(6)])
        await s.archive_oldest_messages("k", 1)
    for kwargs in ({"limit": 2}, {"offset": 3}, {"limit": 2, "offset": 1}, {"limit": 0}, {"limit": 9, "offset": 4}):
        for status in (ACTIVE, None):
            mine = await astore.get_messages("k", status=status, **kwargs)
            theirs = await reference.get_messages("k", status=status, **kwargs)
            assert texts(mine) == texts(theirs), (status, kwargs)


async def test_count_messages_by_status(astore: ElasticMemoryAsyncChatStore) -> None:
    await astore.add_messages("k", [user(f"m{n}") for n in range(5)])
    await astore.archive_oldest_messages("k", 2)
    assert await astore.count_messages("k") == 3
    assert await astore.count_messages("k", status=ARCHIVED) == 2
    assert await astore.count_messages("k", status=None) == 5
    assert await astore.count_messages("nobody") == 0


async def test_add_messages_with_nothing_is_a_no_op(astore: ElasticMemoryAsyncChatStore) -> None:
    await astore.add_messages("k", [])
    assert await astore.get_keys() == []


async def test_add_messages_writes_one_batch(
    astore: ElasticMemoryAsyncChatStore, mem: CoreMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    batches: list[int] = []
    aio = astore.async_memory
    real = aio.remember_many

    async def counting(items: Any, **kwargs: Any) -> Any:
        items = list(items)
        batches.append(len(items))
        return await real(items, **kwargs)

    monkeypatch.setattr(aio, "remember_many", counting)
    await astore.add_messages("k", every_kind())
    assert batches == [len(every_kind())]


async def test_set_messages_replaces_both_statuses(astore: ElasticMemoryAsyncChatStore) -> None:
    await astore.add_messages("k", [user("a"), bot("b"), user("c")])
    await astore.archive_oldest_messages("k", 2)
    await astore.set_messages("k", [user("x"), bot("y")])
    assert texts(await astore.get_messages("k", status=None)) == ["x", "y"]
    assert await astore.count_messages("k", status=ARCHIVED) == 0


async def test_set_messages_with_a_status(astore: ElasticMemoryAsyncChatStore) -> None:
    await astore.set_messages("k", [user("x")], status=ARCHIVED)
    assert await astore.get_messages("k") == []
    assert texts(await astore.get_messages("k", status=ARCHIVED)) == ["x"]


async def test_delete_messages_erases_all_by_default(astore: ElasticMemoryAsyncChatStore) -> None:
    await astore.add_messages("k", [user("a"), bot("b")])
    await astore.archive_oldest_messages("k", 1)
    await astore.delete_messages("k")
    assert await astore.get_messages("k", status=None) == []
    assert await astore.get_keys() == []


async def test_delete_messages_with_a_status_keeps_the_others(astore: ElasticMemoryAsyncChatStore) -> None:
    await astore.add_messages("k", [user("a"), bot("b"), user("c")])
    await astore.archive_oldest_messages("k", 2)
    await astore.delete_messages("k", status=ARCHIVED)
    assert texts(await astore.get_messages("k", status=None)) == ["c"]


async def test_delete_messages_of_an_unknown_key_is_a_no_op(astore: ElasticMemoryAsyncChatStore) -> None:
    await astore.add_messages("k", [user("kept")])
    await astore.delete_messages("nobody")
    assert texts(await astore.get_messages("k")) == ["kept"]


async def test_delete_message_takes_a_position_in_the_whole_transcript(astore: ElasticMemoryAsyncChatStore) -> None:
    await astore.add_messages("k", [user("a"), bot("b"), user("c")])
    await astore.archive_oldest_messages("k", 1)
    removed = await astore.delete_message("k", 0)
    assert removed is not None and removed.content == "a"
    assert (await astore.delete_message("k", -1) or user("")).content == "c"
    assert texts(await astore.get_messages("k", status=None)) == ["b"]


async def test_delete_message_out_of_range_or_unknown_key_returns_none(
    astore: ElasticMemoryAsyncChatStore, reference: SQLAlchemyChatStore
) -> None:
    await astore.add_messages("k", [user("a")])
    assert await astore.delete_message("k", 1) is None
    assert await astore.delete_message("nobody", 0) is None
    assert await reference.delete_message("nobody", 0) is None
    assert texts(await astore.get_messages("k")) == ["a"]


async def test_delete_oldest_messages_erases_active_ones_only(astore: ElasticMemoryAsyncChatStore) -> None:
    await astore.add_messages("k", [user(f"m{n}") for n in range(5)])
    await astore.archive_oldest_messages("k", 1)
    assert texts(await astore.delete_oldest_messages("k", 2)) == ["m1", "m2"]
    assert texts(await astore.get_messages("k", status=None)) == ["m0", "m3", "m4"]


async def test_delete_oldest_messages_beyond_the_count_takes_them_all(astore: ElasticMemoryAsyncChatStore) -> None:
    await astore.add_messages("k", [user("a"), bot("b")])
    assert texts(await astore.delete_oldest_messages("k", 10)) == ["a", "b"]
    assert await astore.delete_oldest_messages("k", 1) == []
    assert await astore.delete_oldest_messages("nobody", 1) == []


async def test_zero_oldest_messages_is_nothing(astore: ElasticMemoryAsyncChatStore) -> None:
    await astore.add_messages("k", [user("a")])
    assert await astore.delete_oldest_messages("k", 0) == []
    assert await astore.archive_oldest_messages("k", 0) == []
    assert await astore.count_messages("k") == 1


async def test_archive_oldest_messages_returns_them_and_changes_their_status(
    astore: ElasticMemoryAsyncChatStore,
) -> None:
    await astore.add_messages("k", [user("a"), bot("b"), user("c")])
    assert texts(await astore.archive_oldest_messages("k", 2)) == ["a", "b"]
    assert texts(await astore.get_messages("k")) == ["c"]
    assert texts(await astore.archive_oldest_messages("k", 5)) == ["c"]
    assert await astore.archive_oldest_messages("k", 1) == []


async def test_archiving_updates_the_rows_in_place(astore: ElasticMemoryAsyncChatStore, mem: CoreMemory) -> None:
    await astore.add_messages("k", every_kind())
    before = {h.id: (h.content, h.created_at, h.metadata) for h in mem.recall("", k=100, filters=MESSAGES)}
    await astore.archive_oldest_messages("k", 3)
    after = mem.recall("", k=100, filters=MESSAGES)
    assert {h.id: (h.content, h.created_at, h.metadata) for h in after} == before
    assert sorted(t for h in after for t in h.tags if t.startswith("chat-status:")) == [
        *["chat-status:active"] * (len(every_kind()) - 3),
        *["chat-status:archived"] * 3,
    ]
    assert await astore.get_messages("k", status=None) == every_kind()


async def test_archiving_calls_update_not_a_rewrite(
    astore: ElasticMemoryAsyncChatStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    await astore.add_messages("k", [user("a"), bot("b")])
    calls: list[tuple[str, dict[str, Any]]] = []
    aio = astore.async_memory
    real_update = aio.update

    async def update(id: str, **changes: Any) -> Any:
        calls.append((id, changes))
        return await real_update(id, **changes)

    async def no_write(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("archiving must not write rows anew")

    monkeypatch.setattr(aio, "update", update)
    monkeypatch.setattr(aio, "remember_many", no_write)
    monkeypatch.setattr(aio, "forget", no_write)
    await astore.archive_oldest_messages("k", 2)
    assert [set(changes) for _, changes in calls] == [{"tags"}, {"tags"}]


async def test_get_keys_includes_keys_with_only_archived_messages(astore: ElasticMemoryAsyncChatStore) -> None:
    await astore.add_messages("b", [user("b")])
    await astore.add_messages("a", [user("a")], status=ARCHIVED)
    assert await astore.get_keys() == ["a", "b"]


async def test_sessions_are_isolated(astore: ElasticMemoryAsyncChatStore) -> None:
    await astore.add_messages("a", [user("a1"), bot("a2")])
    await astore.add_messages("b", [user("b1")])
    await astore.archive_oldest_messages("b", 1)
    await astore.delete_oldest_messages("a", 1)
    assert texts(await astore.get_messages("a", status=None)) == ["a2"]
    assert texts(await astore.get_messages("b", status=ARCHIVED)) == ["b1"]
    assert await astore.count_messages("a", status=ARCHIVED) == 0


async def test_order_holds_with_tied_timestamps_through_archiving() -> None:
    async with ElasticMemoryAsyncChatStore(path=":memory:", clock=frozen()) as store:
        for n in range(4):
            await store.add_message("k", user(f"q{n}"))
            await store.add_messages("k", [bot(f"a{n}"), bot(f"b{n}")])
        await store.archive_oldest_messages("k", 4)
        assert texts(await store.get_messages("k", status=ARCHIVED)) == ["q0", "a0", "b0", "q1"]
        assert texts(await store.get_messages("k")) == ["a1", "b1", "q2", "a2", "b2", "q3", "a3", "b3"]


async def test_more_than_a_thousand_messages_by_status() -> None:
    async with ElasticMemoryAsyncChatStore(path=":memory:", clock=frozen()) as store:
        await store.add_messages("k", [user(f"m{n}") for n in range(2_300)])
        await store.archive_oldest_messages("k", 1_100)
        await store.add_message("k", bot("last"))
        assert await store.count_messages("k", status=ARCHIVED) == 1_100
        assert await store.count_messages("k") == 1_201
        assert texts(await store.get_messages("k", status=ARCHIVED)) == [f"m{n}" for n in range(1_100)]
        assert texts(await store.get_messages("k")) == [*(f"m{n}" for n in range(1_100, 2_300)), "last"]
        everything = await store.get_messages("k", status=None, offset=1_099, limit=3)
        assert texts(everything) == ["m1099", "m1100", "m1101"]
        assert (await store.delete_message("k", -1) or user("")).content == "last"


async def test_async_store_survives_reopening_the_file(tmp_path: Path) -> None:
    async with ElasticMemoryAsyncChatStore(path=tmp_path / "chat.db") as store:
        await store.add_messages("k", every_kind())
        await store.archive_oldest_messages("k", 2)
    async with ElasticMemoryAsyncChatStore(path=tmp_path / "chat.db") as again:
        assert await again.get_messages("k", status=None) == every_kind()
        assert await again.count_messages("k", status=ARCHIVED) == 2


async def test_async_store_to_dict_from_dict_reopens_the_file(tmp_path: Path) -> None:
    async with ElasticMemoryAsyncChatStore(path=tmp_path / "chat.db") as store:
        await store.add_messages("k", [user("a"), bot("b")])
        await store.archive_oldest_messages("k", 1)
        data = store.to_dict()
    assert data == {
        "path": str(tmp_path / "chat.db"),
        "agent_id": "default:llama_index_chat",
        "class_name": "ElasticMemoryAsyncChatStore",
    }
    async with ElasticMemoryAsyncChatStore.from_dict(data) as again:
        assert texts(await again.get_messages("k", status=ARCHIVED)) == ["a"]
        assert texts(await again.get_messages("k")) == ["b"]


async def test_async_in_memory_store_serialises_its_messages_and_statuses() -> None:
    async with ElasticMemoryAsyncChatStore(path=":memory:") as store:
        await store.add_messages("k", every_kind())
        await store.archive_oldest_messages("k", 3)
        data = store.model_dump()
    async with ElasticMemoryAsyncChatStore.from_dict(data) as again:
        assert await again.get_messages("k", status=None) == every_kind()
        assert await again.count_messages("k", status=ARCHIVED) == 3


async def test_from_dict_refuses_malformed_db_data() -> None:
    with pytest.raises(UsageError, match=r"db_data\[0\] is not a"):
        ElasticMemoryAsyncChatStore.from_dict({"path": ":memory:", "db_data": [{"key": "k"}]})


async def test_async_methods_never_use_the_sync_memory(
    astore: ElasticMemoryAsyncChatStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    forbid_sync_memory(monkeypatch)
    await astore.set_messages("k", [user("a"), bot("b")])
    await astore.add_messages("k", [user("c"), bot("d")])
    await astore.add_message("k", user("e"))
    assert texts(await astore.archive_oldest_messages("k", 1)) == ["a"]
    assert texts(await astore.delete_oldest_messages("k", 1)) == ["b"]
    assert await astore.count_messages("k", status=None) == 4
    assert (await astore.delete_message("k", 0) or user("")).content == "a"
    assert texts(await astore.get_messages("k")) == ["c", "d", "e"]
    assert await astore.get_keys() == ["k"]
    await astore.delete_messages("k")
    assert await astore.get_keys() == []


async def test_async_methods_yield_to_the_event_loop(astore: ElasticMemoryAsyncChatStore) -> None:
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(ticker())
    await astore.add_messages("k", [user(f"m{n}") for n in range(300)])
    assert len(await astore.get_messages("k")) == 300
    task.cancel()
    assert ticks > 0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: s.get_messages("k", status="deleted"), "status must be MessageStatus"),
        (lambda s: s.add_message("k", user("x"), status=None), "status must be MessageStatus"),
        (lambda s: s.get_messages("k", limit=-1), "limit must be a non-negative integer"),
        (lambda s: s.get_messages("k", offset=1.5), "offset must be a non-negative integer"),
        (lambda s: s.delete_oldest_messages("k", -1), "n must be a non-negative integer"),
        (lambda s: s.archive_oldest_messages("k", "2"), "n must be a non-negative integer"),
        (lambda s: s.delete_message("k", None), "idx must be an integer"),
        (lambda s: s.count_messages(""), "a chat key must be"),
        (lambda s: s.add_messages("k", user("x")), "messages must be a list of ChatMessage"),
        (lambda s: s.add_message("k", {"role": "user"}), "message must be a llama_index ChatMessage"),
    ],
)
async def test_async_store_refuses_bad_input(
    astore: ElasticMemoryAsyncChatStore, call: Callable[[Any], Any], message: str
) -> None:
    await astore.add_message("k", user("kept"))
    with pytest.raises(UsageError, match=message):
        await call(astore)
    assert texts(await astore.get_messages("k", status=None)) == ["kept"]


async def test_async_store_refuses_a_batch_with_one_bad_message(astore: ElasticMemoryAsyncChatStore) -> None:
    bad = ChatMessage(content="x", additional_kwargs={"handle": object()})
    with pytest.raises(UsageError, match=r"messages\[2\]"):
        await astore.add_messages("k", [user("a"), bot("b"), bad])
    assert await astore.get_keys() == []


async def test_async_store_matches_sqlalchemy_on_one_scenario(
    astore: ElasticMemoryAsyncChatStore, reference: SQLAlchemyChatStore
) -> None:
    results: list[list[Any]] = [[], []]
    for n, s in enumerate((reference, astore)):
        out = results[n]
        await s.set_messages("a", every_kind())
        await s.add_message("a", user("late"), status=ARCHIVED)
        await s.add_messages("b", [user("b1"), bot("b2"), user("b3")])
        out.append(await s.archive_oldest_messages("a", 4))
        out.append(await s.delete_oldest_messages("b", 1))
        for key in ("a", "b", "nobody"):
            for status in (ACTIVE, ARCHIVED, None):
                out.append(await s.get_messages(key, status=status))
                out.append(await s.count_messages(key, status=status))
        out.append(sorted(await s.get_keys()))
        await s.delete_messages("a", status=ARCHIVED)
        out.append(await s.get_messages("a", status=None))
        await s.set_messages("b", [])
        out.append(await s.get_messages("b", status=None))
    assert results[1] == results[0]


# ---------------------------------------------------------- under the new Memory
class Recorder(BaseMemoryBlock[str]):
    """A block that keeps what the FIFO flushes to it."""

    name: str = "Recorder"
    seen: list[str] = Field(default_factory=list)

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        return ""

    async def _aput(self, messages: list[ChatMessage]) -> None:
        self.seen.extend(m.content or "" for m in messages)


def chatty(n: int) -> list[ChatMessage]:
    return [(user if i % 2 == 0 else bot)(f"message number {i} about the blue kettle") for i in range(n)]


async def test_memory_flushes_its_fifo_into_archived_messages(astore: ElasticMemoryAsyncChatStore) -> None:
    recorder = Recorder()
    memory = Memory.from_defaults(
        session_id="s1",
        chat_store=astore,
        token_limit=60,
        chat_history_token_ratio=0.5,
        token_flush_size=10,
        memory_blocks=[recorder],
    )
    for message in chatty(12):
        await memory.aput(message)
    archived = await memory.aget_all(status=ARCHIVED)
    active = await memory.aget_all(status=ACTIVE)
    assert archived and active
    assert texts(archived + active) == texts(chatty(12))
    assert recorder.seen == texts(archived)
    assert await astore.count_messages("s1", status=ARCHIVED) == len(archived)


async def test_memory_over_our_store_behaves_like_over_the_reference(
    astore: ElasticMemoryAsyncChatStore, reference: SQLAlchemyChatStore
) -> None:
    seen: list[tuple[list[Any], list[Any], list[Any]]] = []
    for chat_store in (reference, astore):
        memory = Memory.from_defaults(
            session_id="s1", chat_store=chat_store, token_limit=80, chat_history_token_ratio=0.5, token_flush_size=12
        )
        for message in chatty(9):
            await memory.aput(message)
        await memory.aput_messages(chatty(5))
        seen.append(
            (
                await memory.aget(),
                await memory.aget_all(status=ARCHIVED),
                await memory.aget_all(),
            )
        )
    assert seen[1] == seen[0]


async def test_memory_reset_clears_the_session(astore: ElasticMemoryAsyncChatStore) -> None:
    memory = Memory.from_defaults(session_id="s1", chat_store=astore, token_limit=60, chat_history_token_ratio=0.5)
    await memory.aput_messages(chatty(10))
    await memory.aput(user("other session stays"))
    other = Memory.from_defaults(session_id="s2", chat_store=astore)
    await other.aput(user("kept"))
    await memory.areset()
    assert await memory.aget_all() == []
    assert texts(await other.aget_all()) == ["kept"]


def test_memory_sync_api_and_initial_history_work(astore: ElasticMemoryAsyncChatStore) -> None:
    memory = Memory.from_defaults(session_id="s1", chat_store=astore, chat_history=[user("hello"), bot("hi")])
    memory.put(user("how are you?"))
    assert texts(memory.get_all()) == ["hello", "hi", "how are you?"]


async def test_memory_history_survives_a_restart(tmp_path: Path) -> None:
    async with ElasticMemoryAsyncChatStore(path=tmp_path / "chat.db") as first:
        memory = Memory.from_defaults(
            session_id="s1", chat_store=first, token_limit=60, chat_history_token_ratio=0.5, token_flush_size=10
        )
        for message in chatty(10):
            await memory.aput(message)
        before = (await memory.aget(), await memory.aget_all(status=None))
    async with ElasticMemoryAsyncChatStore(path=tmp_path / "chat.db") as second:
        memory = Memory.from_defaults(session_id="s1", chat_store=second, token_limit=60)
        assert (await memory.aget(), await memory.aget_all(status=None)) == before


async def test_classic_store_shows_the_whole_transcript_the_memory_kept(mem: CoreMemory) -> None:
    astore = ElasticMemoryAsyncChatStore(memory=mem)
    memory = Memory.from_defaults(
        session_id="s1", chat_store=astore, token_limit=60, chat_history_token_ratio=0.5, token_flush_size=10
    )
    for message in chatty(10):
        await memory.aput(message)
    assert await astore.count_messages("s1", status=ARCHIVED) > 0
    assert texts(await ElasticMemoryChatStore(memory=mem).aget_messages("s1")) == texts(chatty(10))
