"""The ``AsyncDBChatStore``: ``ElasticMemoryAsyncChatStore`` against ``SQLAlchemyChatStore``.

``SQLAlchemyChatStore`` gives the reference semantics of ``AsyncDBChatStore``; a few
differential tests run one scenario on both and compare. Each test takes a fresh store.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.llms import ChatMessage
from llama_index.core.storage.chat_store.base_db import AsyncDBChatStore
from llama_index.core.storage.chat_store.sql import SQLAlchemyChatStore

from elastic_memory import Memory as CoreMemory
from elastic_memory import UsageError
from llama_index.storage.chat_store.elastic_memory import ElasticMemoryAsyncChatStore

from .support import ACTIVE, ARCHIVED, MESSAGES, bot, every_kind, forbid_sync_memory, frozen, texts, user


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
