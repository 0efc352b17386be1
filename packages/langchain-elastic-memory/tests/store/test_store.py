"""ElasticMemoryStore: LangGraph's BaseStore items, sync and async, on elastic-memory.

The behaviours follow LangGraph's own store tests (InMemoryStore, SqliteStore), restated
here: get/put/delete, namespace validation, batch ordering, the lifecycle and the async twins.
Search is in test_store_search.py and test_store_query.py, TTL in test_store_ttl.py.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import GetOp, InvalidNamespaceError, Item, ListNamespacesOp, PutOp, SearchOp

from elastic_memory import Memory, UsageError
from langchain_elastic_memory import ElasticMemoryStore

from .support import DIMS, NAMESPACES, Clock, Words, keys


# ------------------------------------------------------------------ get / put / delete
def test_put_then_get_returns_the_item(store: ElasticMemoryStore, clock: Clock) -> None:
    store.put(("users", "ana"), "prefs", {"theme": "dark"})
    item = store.get(("users", "ana"), "prefs")
    assert item is not None
    assert (item.namespace, item.key, item.value) == (("users", "ana"), "prefs", {"theme": "dark"})
    when = datetime.fromtimestamp(clock.now, tz=timezone.utc)
    assert item.created_at == item.updated_at == when


def test_get_of_a_missing_key_or_namespace_is_none(store: ElasticMemoryStore) -> None:
    store.put(("users", "ana"), "prefs", {"theme": "dark"})
    assert store.get(("users", "ana"), "other") is None
    assert store.get(("users", "bob"), "prefs") is None


def test_put_again_replaces_the_value_and_keeps_created_at(store: ElasticMemoryStore, clock: Clock) -> None:
    store.put(("docs",), "a", {"v": 1})
    first = store.get(("docs",), "a")
    clock.now += 10
    store.put(("docs",), "a", {"v": 2})
    second = store.get(("docs",), "a")
    assert first is not None and second is not None
    assert second.value == {"v": 2}
    assert second.created_at == first.created_at
    assert second.updated_at > first.updated_at


def test_delete_removes_the_item(store: ElasticMemoryStore) -> None:
    store.put(("docs",), "a", {"v": 1})
    store.delete(("docs",), "a")
    assert store.get(("docs",), "a") is None
    assert store.search(("docs",)) == []
    assert store.memory.stats()["total_memories"] == 0


def test_delete_of_a_missing_key_is_fine(store: ElasticMemoryStore) -> None:
    store.delete(("docs",), "never-there")
    assert store.get(("docs",), "never-there") is None


def test_values_round_trip_as_json(store: ElasticMemoryStore) -> None:
    value = {
        "text": "naïve café 東京 🙂",
        "n": 3,
        "big": 2**70,
        "x": 0.1,
        "ok": True,
        "none": None,
        "nested": {"list": [1, "two", {"three": [3.0]}], "empty": {}},
        "pair": (1, 2),
    }
    store.put(("docs",), "a", value)
    item = store.get(("docs",), "a")
    assert item is not None
    assert item.value == {**value, "pair": [1, 2]}


def test_keys_are_any_string(store: ElasticMemoryStore) -> None:
    key = "a/b.c d\t" + "k" * 400
    store.put(("docs",), key, {"v": 1})
    item = store.get(("docs",), key)
    assert item is not None and item.key == key


def test_returned_values_are_copies(store: ElasticMemoryStore) -> None:
    store.put(("docs",), "a", {"list": [1]})
    item = store.get(("docs",), "a")
    assert item is not None
    item.value["list"].append(2)
    again = store.get(("docs",), "a")
    assert again is not None and again.value == {"list": [1]}


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        ({"s": {1, 2}}, UsageError),
        ({"o": object()}, UsageError),
        ({"b": b"bytes"}, UsageError),
        ({"nested": {1: "int key"}}, UsageError),
        ({"nan": float("nan")}, ValueError),
        ({"inf": [float("inf")]}, ValueError),
        ({"surrogate": "\ud800"}, ValueError),
    ],
)
def test_values_json_cannot_hold_are_refused_and_nothing_is_stored(
    store: ElasticMemoryStore, bad: dict[str, Any], error: type[Exception]
) -> None:
    with pytest.raises(error):
        store.batch([PutOp(("docs",), "good", {"v": 1}), PutOp(("docs",), "bad", bad)])
    assert store.get(("docs",), "good") is None
    assert store.memory.stats()["total_memories"] == 0


def test_a_value_that_is_not_a_dict_is_refused(store: ElasticMemoryStore) -> None:
    with pytest.raises(UsageError, match="dict"):
        store.batch([PutOp(("docs",), "a", ["not", "a", "dict"])])  # type: ignore[arg-type]


def test_collections_keep_items_apart(clock: Clock) -> None:
    with Memory.open(":memory:", embedder=None, clock=clock) as mem:
        mem.remember("a memory of the loop")
        one = ElasticMemoryStore(memory=mem, collection="one")
        two = ElasticMemoryStore(memory=mem, collection="two")
        one.put(("docs",), "a", {"v": 1})
        assert two.get(("docs",), "a") is None
        assert two.search(()) == []
        assert keys(one.search(())) == ["a"]
        assert two.list_namespaces() == []


def test_the_memory_given_stays_open(clock: Clock) -> None:
    with Memory.open(":memory:", embedder=None, clock=clock) as mem:
        store = ElasticMemoryStore(memory=mem)
        store.put(("docs",), "a", {"v": 1})
        store.close()
        assert mem.stats()["active_memories"] == 1


def test_a_file_keeps_the_items(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    with ElasticMemoryStore(path=path) as store:
        store.put(("docs",), "a", {"v": 1})
    with ElasticMemoryStore(path=path) as store:
        item = store.get(("docs",), "a")
        assert item is not None and item.value == {"v": 1}


def test_path_or_memory_exactly_one() -> None:
    with pytest.raises(UsageError, match="exactly one"):
        ElasticMemoryStore()


def test_an_unknown_search_mode_is_refused() -> None:
    with pytest.raises(UsageError, match="search_mode"):
        ElasticMemoryStore(path=":memory:", search_mode="fuzzy")  # type: ignore[arg-type]


# ------------------------------------------------------------------ namespaces
@pytest.mark.parametrize(
    "namespace",
    [(), ("a.b",), ("a", ""), ("langgraph", "x"), ("a\x00b",), ("a", 1)],
    ids=["empty", "period", "empty-label", "langgraph-root", "nul", "not-str"],
)
def test_invalid_namespaces_are_refused_on_put(store: ElasticMemoryStore, namespace: tuple[Any, ...]) -> None:
    with pytest.raises(InvalidNamespaceError):
        store.put(namespace, "k", {"v": 1})


@pytest.mark.parametrize(
    "op", [GetOp(("a.b",), "k"), SearchOp(("a.b",)), PutOp(("a.b",), "k", {"v": 1}), PutOp((), "k", {})]
)
def test_raw_ops_are_validated_in_batch(store: ElasticMemoryStore, op: Any) -> None:
    with pytest.raises(InvalidNamespaceError):
        store.batch([op])


def test_list_namespaces_validates_its_conditions(store: ElasticMemoryStore) -> None:
    with pytest.raises(InvalidNamespaceError):
        store.list_namespaces(prefix=("a.b",))


def test_a_namespace_too_long_for_a_tag_is_refused(store: ElasticMemoryStore) -> None:
    with pytest.raises(InvalidNamespaceError, match="too long"):
        store.put(("x" * 200, "y" * 60), "k", {"v": 1})


def test_langgraph_may_be_a_label_below_the_root(store: ElasticMemoryStore) -> None:
    store.put(("foo", "langgraph", "foo"), "bar", {"v": 1})
    assert keys(store.search(("foo", "langgraph"))) == ["bar"]


# ------------------------------------------------------------------ batch semantics
def test_reads_in_a_batch_see_the_state_before_its_puts(store: ElasticMemoryStore) -> None:
    store.put(("test", "foo"), "key1", {"data": "value1"})
    results = store.batch(
        [
            PutOp(("test", "bar"), "key2", {"data": "value2"}),
            GetOp(("test", "bar"), "key2"),
            SearchOp(("test",)),
            ListNamespacesOp(),
            PutOp(("test", "foo"), "key1", None),
            GetOp(("test", "foo"), "key1"),
        ]
    )
    assert results[0] is None and results[4] is None
    assert results[1] is None
    assert keys(results[2]) == ["key1"]  # type: ignore[arg-type]
    assert results[3] == [("test", "foo")]
    assert isinstance(results[5], Item) and results[5].value == {"data": "value1"}
    assert store.get(("test", "foo"), "key1") is None
    assert store.get(("test", "bar"), "key2") is not None


def test_the_last_put_to_a_key_wins(store: ElasticMemoryStore) -> None:
    store.batch([PutOp(("t",), "k", {"v": 1}), PutOp(("t",), "k", {"v": 2})])
    item = store.get(("t",), "k")
    assert item is not None and item.value == {"v": 2}


def test_a_delete_after_a_put_in_one_batch_deletes(store: ElasticMemoryStore) -> None:
    store.batch([PutOp(("t",), "k", {"v": 1}), PutOp(("t",), "k", None)])
    assert store.get(("t",), "k") is None


def test_a_put_after_a_delete_in_one_batch_stores(store: ElasticMemoryStore) -> None:
    store.put(("t",), "k", {"v": 0})
    store.batch([PutOp(("t",), "k", None), PutOp(("t",), "k", {"v": 1})])
    item = store.get(("t",), "k")
    assert item is not None and item.value == {"v": 1}


def test_batch_results_line_up_with_the_ops(store: ElasticMemoryStore) -> None:
    store.put(("test",), "key1", {"data": "value1"})
    results = store.batch([GetOp(("test",), "key1"), GetOp(("test",), "nope"), SearchOp(("none",)), ListNamespacesOp()])
    assert isinstance(results[0], Item) and results[1] is None
    assert results[2] == [] and results[3] == [("test",)]


def test_an_unknown_op_is_refused(store: ElasticMemoryStore) -> None:
    with pytest.raises(UsageError, match="unknown store operation"):
        store.batch(["not an op"])  # type: ignore[list-item]


def test_an_empty_batch_does_nothing(store: ElasticMemoryStore) -> None:
    assert store.batch([]) == []


# ------------------------------------------------------------------ lifecycle
def test_setup_is_idempotent_and_checks_the_store_is_open(clock: Clock) -> None:
    store = ElasticMemoryStore(path=":memory:", clock=clock)
    store.setup()
    store.setup()
    store.put(("t",), "k", {"v": 1})
    store.close()
    with pytest.raises(UsageError, match="closed"):
        store.setup()


async def test_asetup_checks_the_store_is_open(clock: Clock) -> None:
    store = ElasticMemoryStore(path=":memory:", clock=clock)
    await store.asetup()
    await store.aclose()
    with pytest.raises(UsageError, match="closed"):
        await store.asetup()


def test_from_conn_string_opens_and_closes_a_file(tmp_path: Path) -> None:
    path = str(tmp_path / "store.db")
    with ElasticMemoryStore.from_conn_string(path, ttl={"default_ttl": 5}) as store:
        store.setup()
        store.put(("docs",), "a", {"v": 1})
        assert store.ttl_config == {"default_ttl": 5}
    with pytest.raises(UsageError, match="closed"):
        store.get(("docs",), "a")
    with ElasticMemoryStore.from_conn_string(path) as again:
        item = again.get(("docs",), "a")
        assert item is not None and item.value == {"v": 1}


def test_from_conn_string_takes_the_index(clock: Clock) -> None:
    index: Any = {"dims": DIMS, "embed": Words(), "fields": ["text"]}
    with ElasticMemoryStore.from_conn_string(":memory:", index=index, clock=clock) as store:
        store.put(("docs",), "a", {"text": "apple"})
        (found,) = store.search(("docs",), query="apple")
        assert found.score == pytest.approx(1.0, abs=1e-5)


def test_from_conn_string_closes_on_an_error(tmp_path: Path) -> None:
    opened: list[ElasticMemoryStore] = []
    with pytest.raises(RuntimeError, match="inside"), ElasticMemoryStore.from_conn_string(":memory:") as store:
        opened.append(store)
        raise RuntimeError("inside")
    with pytest.raises(UsageError, match="closed"):
        opened[0].setup()


async def test_async_with_closes_the_store(clock: Clock) -> None:
    async with ElasticMemoryStore(path=":memory:", clock=clock) as store:
        await store.aput(("t",), "k", {"v": 1})
    with pytest.raises(UsageError, match="closed"):
        await store.aget(("t",), "k")


# ------------------------------------------------------------------ async
async def test_async_put_get_delete(clock: Clock) -> None:
    async with _astore(clock) as store:
        await store.aput(("users", "ana"), "prefs", {"theme": "dark"})
        item = await store.aget(("users", "ana"), "prefs")
        assert item is not None and item.value == {"theme": "dark"}
        await store.adelete(("users", "ana"), "prefs")
        assert await store.aget(("users", "ana"), "prefs") is None


async def test_async_search_with_prefix_filter_and_query(clock: Clock) -> None:
    async with _astore(clock, indexed=True) as store:
        await store.aput(("a",), "red", {"text": "red apple", "color": "red"})
        await store.aput(("a",), "green", {"text": "green apple", "color": "green"})
        await store.aput(("ab",), "leak", {"text": "red apple", "color": "red"})
        found = await store.asearch(("a",), query="red apple", filter={"color": {"$ne": "green"}})
        assert keys(found) == ["red"]
        assert found[0].score is not None


async def test_async_list_namespaces(clock: Clock) -> None:
    async with _astore(clock) as store:
        for ns in NAMESPACES:
            await store.aput(ns, "k", {"v": 1})
        assert await store.alist_namespaces(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]


async def test_async_batch_reads_before_puts(clock: Clock) -> None:
    async with _astore(clock) as store:
        results = await store.abatch([PutOp(("t",), "k", {"v": 1}), GetOp(("t",), "k")])
        assert results == [None, None]
        assert await store.aget(("t",), "k") is not None


async def test_async_ttl_expiry_and_refresh(clock: Clock) -> None:
    async with _astore(clock) as store:
        await store.aput(("t",), "k", {"v": 1}, ttl=1)
        clock.now += 50
        assert await store.aget(("t",), "k") is not None
        clock.now += 50
        assert await store.aget(("t",), "k") is not None
        clock.now += 61
        assert await store.aget(("t",), "k") is None


async def test_async_refuses_bad_values_and_namespaces(clock: Clock) -> None:
    async with _astore(clock) as store:
        with pytest.raises(UsageError):
            await store.aput(("t",), "k", {"v": {1, 2}})
        with pytest.raises(InvalidNamespaceError):
            await store.aput(("langgraph",), "k", {"v": 1})
        assert await store.asearch(()) == []


async def test_abatch_runs_on_the_async_facade_only(clock: Clock, monkeypatch: pytest.MonkeyPatch) -> None:
    """The async path awaits AsyncMemory; the sync facade is never called."""
    async with _astore(clock) as store:
        for name in ("get_many", "explain", "list", "tags", "update", "forget", "remember_many"):
            monkeypatch.setattr(store.memory, name, _refuse(name))
        await store.aput(("t",), "k", {"v": 1}, ttl=5)
        assert await store.aget(("t",), "k") is not None
        assert keys(await store.asearch(("t",), query="v")) == ["k"]
        assert await store.alist_namespaces() == [("t",)]
        await store.adelete(("t",), "k")


def test_a_store_over_an_async_memory_works_both_ways(clock: Clock) -> None:
    async def scenario() -> None:
        from elastic_memory import AsyncMemory

        async with await AsyncMemory.open(":memory:", embedder=None, clock=clock) as amem:
            store = ElasticMemoryStore(memory=amem)
            await store.aput(("t",), "k", {"v": 1})
            item = await asyncio.to_thread(store.get, ("t",), "k")
            assert item is not None and item.value == {"v": 1}

    asyncio.run(scenario())


def _refuse(name: str) -> Any:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"the sync Memory.{name}() was called from abatch")

    return refuse


class _astore:
    """``async with`` a fresh store, closed through the async facade."""

    def __init__(self, clock: Clock, *, indexed: bool = False) -> None:
        index: Any = {"dims": DIMS, "embed": Words(), "fields": ["text"]} if indexed else None
        self.store = ElasticMemoryStore(path=":memory:", clock=clock, index=index)

    async def __aenter__(self) -> ElasticMemoryStore:
        return self.store

    async def __aexit__(self, *exc: object) -> None:
        await self.store.aclose()


class Flaky(Words):
    """Fails to embed any text containing "boom", as a provider outage would."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if any("boom" in t for t in texts):
            msg = "provider down"
            raise RuntimeError(msg)
        return super().embed_documents(texts)


def test_a_batch_whose_puts_fail_changes_nothing(clock: Clock) -> None:
    """A delete and a put in one batch: when the put cannot be embedded, the delete is not applied either.

    If this fails, check that ElasticMemoryStore._write upserts before it deletes.
    """
    with ElasticMemoryStore(
        path=":memory:", index={"dims": DIMS, "embed": Flaky(), "fields": ["text"]}, clock=clock
    ) as s:
        s.put(("docs",), "a", {"text": "keep me"})
        with pytest.raises(Exception, match="provider down"):
            s.batch([PutOp(("docs",), "a", None), PutOp(("docs",), "b", {"text": "boom"})])
        assert s.get(("docs",), "a") is not None
        assert s.get(("docs",), "b") is None
