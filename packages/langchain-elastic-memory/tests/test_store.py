"""ElasticMemoryStore: LangGraph's BaseStore semantics, sync and async, on elastic-memory.

The behaviours follow LangGraph's own store tests (InMemoryStore, SqliteStore), restated
here: get/put/delete, prefix search (no leak across labels), query ranking, value filters,
paging, index fields, list_namespaces, batch ordering, TTL with an injected clock, and
namespace validation.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import math
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings
from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    PutOp,
    SearchItem,
    SearchOp,
)

from elastic_memory import Memory, UsageError
from langchain_elastic_memory import ElasticMemoryStore

DIMS = 64
_WORD = re.compile(r"\w+")


class Words(Embeddings):
    """Deterministic bag-of-words vectors: texts sharing words point the same way."""

    def vector(self, text: str) -> list[float]:
        out = [0.0] * DIMS
        for word in _WORD.findall(text.lower()):
            out[int(hashlib.sha256(word.encode()).hexdigest(), 16) % DIMS] += 1.0
        if not any(out):
            out[0] = 1e-3
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.vector(text)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / (math.hypot(*a) * math.hypot(*b))


class Clock:
    """Seconds since the epoch, moved only by the test."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(clock: Clock) -> Iterator[ElasticMemoryStore]:
    """A keyword-only store (no index), in memory, on the test's clock."""
    with ElasticMemoryStore(path=":memory:", clock=clock) as s:
        yield s


def indexed(clock: Clock, **kwargs: Any) -> ElasticMemoryStore:
    """A store embedding the ``text`` field with :class:`Words`."""
    index: Any = {"dims": DIMS, "embed": Words(), "fields": ["text"], **kwargs.pop("index", {})}
    return ElasticMemoryStore(path=":memory:", index=index, clock=clock, **kwargs)


@pytest.fixture
def vstore(clock: Clock) -> Iterator[ElasticMemoryStore]:
    """A semantic-mode store: the score is the cosine similarity."""
    with indexed(clock, search_mode="semantic") as s:
        yield s


def keys(items: Sequence[Item]) -> list[str]:
    return [i.key for i in items]


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


# ------------------------------------------------------------------ prefix search
def test_search_finds_the_namespace_and_those_below(store: ElasticMemoryStore) -> None:
    store.put(("test", "docs"), "doc1", {"v": 1})
    store.put(("test", "docs", "drafts"), "doc2", {"v": 2})
    store.put(("test", "images"), "img1", {"v": 3})
    assert sorted(keys(store.search(("test",)))) == ["doc1", "doc2", "img1"]
    assert sorted(keys(store.search(("test", "docs")))) == ["doc1", "doc2"]
    assert keys(store.search(("test", "docs", "drafts"))) == ["doc2"]


def test_a_prefix_never_matches_a_label_that_merely_starts_with_it(store: ElasticMemoryStore) -> None:
    """langgraph#8300: ("a",) must not match ("ab",); ("a", "b") not ("a", "bc")."""
    store.put(("a",), "in-a", {"v": 1})
    store.put(("ab",), "in-ab", {"v": 2})
    store.put(("a", "b"), "in-a-b", {"v": 3})
    store.put(("a", "bc"), "in-a-bc", {"v": 4})
    assert sorted(keys(store.search(("a",)))) == ["in-a", "in-a-b", "in-a-bc"]
    assert keys(store.search(("a", "b"))) == ["in-a-b"]
    assert keys(store.search(("ab",))) == ["in-ab"]


def test_the_empty_prefix_searches_everything(store: ElasticMemoryStore) -> None:
    store.put(("a",), "1", {"v": 1})
    store.put(("b", "c"), "2", {"v": 2})
    assert sorted(keys(store.search(()))) == ["1", "2"]


def test_search_accepts_a_list_prefix(store: ElasticMemoryStore) -> None:
    store.put(("test", "docs"), "doc1", {"v": 1})
    assert keys(store.search(["test"])) == ["doc1"]  # type: ignore[arg-type]


def test_search_items_carry_no_score_without_a_query(store: ElasticMemoryStore) -> None:
    store.put(("docs",), "a", {"v": 1})
    (found,) = store.search(("docs",))
    assert isinstance(found, SearchItem)
    assert found.score is None
    assert found.value == {"v": 1}


def test_without_a_query_items_come_in_insertion_order(store: ElasticMemoryStore, clock: Clock) -> None:
    """As InMemoryStore: first put first (the store listed the newest first before)."""
    for key in ("first", "second", "third"):
        store.put(("docs",), key, {"k": key})
        clock.now += 1
    assert keys(store.search(("docs",))) == ["first", "second", "third"]


def test_insertion_order_holds_for_puts_at_the_same_instant(store: ElasticMemoryStore) -> None:
    for key in ("b", "c", "a"):
        store.put(("docs",), key, {"k": key})
    assert keys(store.search(("docs",))) == ["b", "c", "a"]


def test_insertion_order_spans_namespaces(store: ElasticMemoryStore) -> None:
    store.put(("a",), "1", {"v": 1})
    store.put(("b",), "2", {"v": 2})
    store.put(("a",), "3", {"v": 3})
    assert keys(store.search(())) == ["1", "2", "3"]


def test_a_put_again_keeps_the_item_in_its_place(store: ElasticMemoryStore, clock: Clock) -> None:
    for key in ("a", "b", "c"):
        store.put(("docs",), key, {"v": 1})
    clock.now += 5
    store.put(("docs",), "a", {"v": 2})
    assert keys(store.search(("docs",))) == ["a", "b", "c"]


def test_a_put_after_a_delete_comes_last(store: ElasticMemoryStore) -> None:
    for key in ("a", "b", "c"):
        store.put(("docs",), key, {"v": 1})
    store.delete(("docs",), "a")
    store.put(("docs",), "a", {"v": 2})
    assert keys(store.search(("docs",))) == ["b", "c", "a"]


def test_each_backend_lists_in_insertion_order(location: str, clock: Clock) -> None:
    """SQLite in memory, and PostgreSQL (conftest.py)."""
    with ElasticMemoryStore(path=location, clock=clock) as store:
        for key in ("b", "c", "a"):
            store.put(("docs",), key, {"k": key})
        store.put(("docs",), "b", {"k": "again"})
        assert keys(store.search(("docs",))) == ["b", "c", "a"]


def test_limit_and_offset_page_through(store: ElasticMemoryStore, clock: Clock) -> None:
    for i in range(5):
        store.put(("docs",), f"doc{i}", {"i": i})
        clock.now += 1
    assert keys(store.search(("docs",), limit=2)) == ["doc0", "doc1"]
    assert keys(store.search(("docs",), limit=2, offset=2)) == ["doc2", "doc3"]
    assert keys(store.search(("docs",), limit=2, offset=4)) == ["doc4"]
    assert store.search(("docs",), limit=2, offset=5) == []


def test_a_filter_pages_in_insertion_order(store: ElasticMemoryStore) -> None:
    for i in range(6):
        store.put(("docs",), f"doc{i}", {"even": i % 2 == 0})
    assert keys(store.search(("docs",), filter={"even": True}, limit=2, offset=1)) == ["doc2", "doc4"]


def test_limit_zero_finds_nothing(store: ElasticMemoryStore) -> None:
    store.put(("docs",), "a", {"v": 1})
    assert store.search(("docs",), limit=0) == []


def test_pages_beyond_the_core_limit_are_refused(store: ElasticMemoryStore) -> None:
    with pytest.raises(ValueError, match="at most 1000"):
        store.search(("docs",), limit=10, offset=995)


def test_a_negative_limit_is_refused(store: ElasticMemoryStore) -> None:
    with pytest.raises(ValueError, match="non-negative"):
        store.search(("docs",), limit=-1)


# ------------------------------------------------------------------ value filters
@pytest.fixture
def priced(store: ElasticMemoryStore) -> ElasticMemoryStore:
    store.put(("items",), "cheap", {"price": 10, "color": "red", "tags": ["a"]})
    store.put(("items",), "mid", {"price": 20, "color": "blue"})
    store.put(("items",), "dear", {"price": 30.5, "color": "red"})
    store.put(("items",), "free", {"color": "green"})
    return store


def test_a_filter_value_is_an_exact_match(priced: ElasticMemoryStore) -> None:
    assert sorted(keys(priced.search(("items",), filter={"color": "red"}))) == ["cheap", "dear"]


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ({"$eq": 20}, ["mid"]),
        ({"$ne": 20}, ["cheap", "dear", "free"]),
        ({"$gt": 20}, ["dear"]),
        ({"$gte": 20}, ["dear", "mid"]),
        ({"$lt": 20}, ["cheap"]),
        ({"$lte": 20}, ["cheap", "mid"]),
        ({"$gt": 10, "$lt": 30}, ["mid"]),
    ],
    ids=["eq", "ne", "gt", "gte", "lt", "lte", "range"],
)
def test_filter_operators(priced: ElasticMemoryStore, condition: dict[str, Any], expected: list[str]) -> None:
    """``$ne`` also matches items without the field, as LangGraph's stores do."""
    assert sorted(keys(priced.search(("items",), filter={"price": condition}))) == expected


def test_filters_combine_with_and(priced: ElasticMemoryStore) -> None:
    found = priced.search(("items",), filter={"color": "red", "price": {"$gte": 20}})
    assert keys(found) == ["dear"]


def test_a_nested_dict_filter_matches_part_of_the_nested_value(store: ElasticMemoryStore) -> None:
    store.put(("u",), "ana", {"profile": {"city": "Oslo", "age": 30}})
    store.put(("u",), "bob", {"profile": {"city": "Rome", "age": 30}})
    assert keys(store.search(("u",), filter={"profile": {"city": "Oslo"}})) == ["ana"]
    assert sorted(keys(store.search(("u",), filter={"profile": {"age": {"$gte": 30}}}))) == ["ana", "bob"]


def test_a_dotted_filter_key_is_a_nested_path(store: ElasticMemoryStore) -> None:
    store.put(("u",), "ana", {"user": {"access-level": "admin"}, "123abc": "ok"})
    store.put(("u",), "bob", {"user": {"access-level": "guest"}})
    assert keys(store.search(("u",), filter={"user.access-level": "admin"})) == ["ana"]
    assert keys(store.search(("u",), filter={"123abc": "ok"})) == ["ana"]


def test_a_bool_filter_matches_bools_only(store: ElasticMemoryStore) -> None:
    store.put(("f",), "on", {"active": True})
    store.put(("f",), "off", {"active": False})
    store.put(("f",), "one", {"active": 1})
    assert keys(store.search(("f",), filter={"active": True})) == ["on"]
    assert keys(store.search(("f",), filter={"active": False})) == ["off"]


def test_a_none_filter_matches_null_and_missing(store: ElasticMemoryStore) -> None:
    store.put(("n",), "null", {"x": None})
    store.put(("n",), "missing", {})
    store.put(("n",), "set", {"x": 1})
    assert sorted(keys(store.search(("n",), filter={"x": None}))) == ["missing", "null"]


def test_infinite_bounds_and_huge_integers_compare(priced: ElasticMemoryStore) -> None:
    assert len(priced.search(("items",), filter={"price": {"$lt": float("inf")}})) == 3
    assert len(priced.search(("items",), filter={"price": {"$gt": float("-inf")}})) == 3
    assert len(priced.search(("items",), filter={"price": {"$lt": 10**100}})) == 3


def test_filter_values_are_data_not_sql(priced: ElasticMemoryStore) -> None:
    assert priced.search(("items",), filter={"color": "red' OR '1'='1"}) == []


def test_an_unsupported_operator_is_refused(priced: ElasticMemoryStore) -> None:
    with pytest.raises(ValueError, match=r"\$in"):
        priced.search(("items",), filter={"price": {"$in": [10, 20]}})


def test_a_filter_key_the_core_cannot_address_is_refused(priced: ElasticMemoryStore) -> None:
    with pytest.raises(ValueError, match="not allowed"):
        priced.search(("items",), filter={"price') OR 1=1 --": 1})


def test_comparing_with_a_list_is_refused(priced: ElasticMemoryStore) -> None:
    """A documented gap: list equality is not expressible as a core metadata filter."""
    with pytest.raises(ValueError, match="lists and dicts"):
        priced.search(("items",), filter={"tags": ["a"]})


def test_a_bad_filter_fails_the_batch_before_any_write(store: ElasticMemoryStore) -> None:
    with pytest.raises(ValueError, match="operator"):
        store.batch([PutOp(("items",), "a", {"price": 1}), SearchOp(("items",), filter={"price": {"$near": 1}})])
    assert store.memory.stats()["total_memories"] == 0


def test_an_empty_dict_filter_is_refused(priced: ElasticMemoryStore) -> None:
    with pytest.raises(ValueError, match="empty dict"):
        priced.search(("items",), filter={"color": {}})


# ------------------------------------------------------------------ query search
def test_a_query_ranks_the_closest_item_first(vstore: ElasticMemoryStore) -> None:
    vstore.put(("docs",), "zebra", {"text": "zany zebra xerxes"})
    vstore.put(("docs",), "dogs", {"text": "something about dogs"})
    vstore.put(("docs",), "birds", {"text": "text about birds"})
    found = vstore.search(("docs",), query="zany xerxes")
    assert keys(found)[0] == "zebra"
    assert len(found) == 3


def test_semantic_scores_are_cosine_similarities(vstore: ElasticMemoryStore) -> None:
    vstore.put(("docs",), "a", {"text": "red apple pie"})
    (found,) = vstore.search(("docs",), query="apple tart")
    words = Words()
    assert found.score == pytest.approx(cosine(words.vector("apple tart"), words.vector("red apple pie")), abs=1e-5)


def test_scores_descend_and_pages_do_not_overlap(vstore: ElasticMemoryStore) -> None:
    for i, text in enumerate(["apple", "apple pie", "apple pie crust", "pie crust dough", "bread"]):
        vstore.put(("docs",), f"doc{i}", {"text": text})
    first = vstore.search(("docs",), query="apple pie", limit=2)
    second = vstore.search(("docs",), query="apple pie", limit=2, offset=2)
    everything = vstore.search(("docs",), query="apple pie", limit=10)
    assert keys(first) + keys(second) == keys(everything)[:4]
    scores = [i.score for i in everything]
    assert all(s is not None for s in scores)
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]


def test_a_query_search_respects_the_filter(vstore: ElasticMemoryStore) -> None:
    vstore.put(("docs",), "red-apple", {"text": "red apple", "color": "red"})
    vstore.put(("docs",), "red-car", {"text": "red car", "color": "red"})
    vstore.put(("docs",), "green-apple", {"text": "green apple", "color": "green"})
    assert keys(vstore.search(("docs",), query="apple", filter={"color": "red"})) == ["red-apple", "red-car"]


def test_a_query_search_stays_in_the_prefix(vstore: ElasticMemoryStore) -> None:
    vstore.put(("a",), "in-a", {"text": "apple"})
    vstore.put(("ab",), "in-ab", {"text": "apple"})
    assert keys(vstore.search(("a",), query="apple")) == ["in-a"]


def test_hybrid_search_ranks_matches_first(clock: Clock) -> None:
    with indexed(clock, search_mode="hybrid") as store:
        store.put(("docs",), "match", {"text": "the quarterly report on revenue"})
        store.put(("docs",), "other", {"text": "lunch menu for friday"})
        found = store.search(("docs",), query="revenue report")
        assert keys(found) == ["match", "other"]
        assert found[0].score is not None and found[1].score is not None
        assert found[0].score > found[1].score


def test_without_an_index_a_query_ranks_keyword_matches_then_the_rest(store: ElasticMemoryStore) -> None:
    """Nothing is lost against LangGraph's query-less semantics: non-matches follow."""
    store.put(("docs",), "other", {"text": "lunch menu"})
    store.put(("docs",), "match", {"text": "quarterly revenue"})
    assert keys(store.search(("docs",), query="revenue")) == ["match", "other"]


def test_without_an_index_every_score_is_none(store: ElasticMemoryStore) -> None:
    """As LangGraph's stores: no vectors, no score (the store returned BM25 near 1e-6 before)."""
    store.put(("docs",), "match", {"text": "quarterly revenue"})
    store.put(("docs",), "other", {"text": "lunch menu"})
    assert [i.score for i in store.search(("docs",), query="revenue")] == [None, None]


def test_keyword_mode_scores_are_bm25_without_an_index(clock: Clock) -> None:
    with ElasticMemoryStore(path=":memory:", clock=clock, search_mode="keyword") as store:
        store.put(("docs",), "match", {"text": "quarterly revenue"})
        store.put(("docs",), "other", {"text": "lunch menu"})
        found = store.search(("docs",), query="revenue")
        assert keys(found) == ["match", "other"]
        assert found[0].score is not None and found[0].score > 0
        assert found[1].score is None


# ------------------------------------------------------------------ scores
class Signed(Embeddings):
    """Deterministic signed bag-of-words vectors: unrelated texts can point apart (negative cosine)."""

    def vector(self, text: str) -> list[float]:
        out = [0.0] * DIMS
        for word in _WORD.findall(text.lower()):
            h = int(hashlib.sha256(word.encode()).hexdigest(), 16)
            out[h % DIMS] += 1.0 if h >> 8 & 1 else -1.0
        if not any(out):
            out[0] = 1e-3
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.vector(text)


def _opposed() -> tuple[str, str]:
    """Two words whose Signed vectors have a negative cosine."""
    signed = Signed()
    words = [f"w{i}" for i in range(200)]
    return next((a, b) for a in words for b in words if cosine(signed.vector(a), signed.vector(b)) < 0)


def test_the_default_mode_is_semantic(store: ElasticMemoryStore) -> None:
    assert store.search_mode == "semantic"


def test_an_unrelated_query_does_not_score_one(clock: Clock) -> None:
    """The default mode scored every item 1.0 for ``query="zebra"`` (per-query min-max)."""
    with indexed(clock) as store:
        store.put(("docs",), "a", {"text": "apple pie"})
        store.put(("docs",), "b", {"text": "lunch menu"})
        found = store.search(("docs",), query="zebra")
        assert len(found) == 2
        assert all(i.score is not None and i.score < 0.5 for i in found)


def test_the_only_item_does_not_score_one_for_anything(clock: Clock) -> None:
    with indexed(clock) as store:
        store.put(("docs",), "a", {"text": "apple pie"})
        (found,) = store.search(("docs",), query="zebra crossing")
        assert found.score is not None and found.score < 0.5


def test_the_default_score_is_the_cosine(clock: Clock) -> None:
    with indexed(clock) as store:
        store.put(("docs",), "a", {"text": "red apple pie"})
        store.put(("docs",), "b", {"text": "green apple"})
        words = Words()
        query = words.vector("apple tart")
        found = {i.key: i.score for i in store.search(("docs",), query="apple tart")}
        assert found["a"] == pytest.approx(cosine(query, words.vector("red apple pie")), abs=1e-5)
        assert found["b"] == pytest.approx(cosine(query, words.vector("green apple")), abs=1e-5)


def test_a_negative_cosine_is_kept(clock: Clock) -> None:
    """SqliteStore returns -0.289 where the store returned 0.0."""
    word, opposite = _opposed()
    signed = Signed()
    index: Any = {"dims": DIMS, "embed": signed, "fields": ["text"]}
    with ElasticMemoryStore(path=":memory:", index=index, clock=clock) as store:
        store.put(("docs",), "a", {"text": opposite})
        (found,) = store.search(("docs",), query=word)
        expected = cosine(signed.vector(word), signed.vector(opposite))
        assert expected < 0
        assert found.score == pytest.approx(expected, abs=1e-5)


def test_hybrid_scores_are_absolute(clock: Clock) -> None:
    """The core's hybrid score in [0, 1]: the only item does not score 1.0 for an unrelated query."""
    with indexed(clock, search_mode="hybrid") as store:
        store.put(("docs",), "a", {"text": "apple pie"})
        (found,) = store.search(("docs",), query="zebra crossing")
        assert found.score is not None and 0 <= found.score < 0.5


def test_hybrid_scores_stay_in_the_unit_interval(clock: Clock) -> None:
    with indexed(clock, search_mode="hybrid") as store:
        store.put(("docs",), "a", {"text": "the quarterly report on revenue"})
        store.put(("docs",), "b", {"text": "lunch menu"})
        found = store.search(("docs",), query="quarterly revenue report")
        assert keys(found)[0] == "a"
        assert all(i.score is not None and 0 <= i.score <= 1 for i in found)


def test_keyword_mode_ranks_by_words_only(clock: Clock) -> None:
    with indexed(clock, search_mode="keyword") as store:
        store.put(("docs",), "other", {"text": "lunch menu"})
        store.put(("docs",), "match", {"text": "quarterly revenue"})
        found = store.search(("docs",), query="revenue")
        assert keys(found) == ["match", "other"]
        assert found[1].score is None


@pytest.mark.parametrize("query", ["", None, "test " * 100, "test!@#$%^&*()"])
def test_odd_queries_still_find_the_item(vstore: ElasticMemoryStore, query: str | None) -> None:
    vstore.put(("test",), "doc1", {"text": "test document"})
    assert keys(vstore.search(("test",), query=query)) == ["doc1"]


def test_an_unindexed_item_comes_after_the_ranked_ones_without_score(vstore: ElasticMemoryStore) -> None:
    vstore.put(("docs",), "a", {"text": "new text about dogs"})
    vstore.put(("docs",), "b", {"text": "cats"})
    vstore.put(("docs",), "hidden", {"text": "new text about dogs"}, index=False)
    found = vstore.search(("docs",), query="new text about dogs")
    assert keys(found) == ["a", "b", "hidden"]
    assert found[-1].score is None
    assert "hidden" not in keys(vstore.search(("docs",), query="new text about dogs", limit=2))


def test_an_unindexed_item_is_found_without_a_query(vstore: ElasticMemoryStore) -> None:
    vstore.put(("docs",), "hidden", {"text": "x"}, index=False)
    assert keys(vstore.search(("docs",))) == ["hidden"]


def test_an_item_without_text_at_the_fields_is_unranked(vstore: ElasticMemoryStore) -> None:
    vstore.put(("docs",), "textless", {"other": "apple"})
    vstore.put(("docs",), "apple", {"text": "apple"})
    found = vstore.search(("docs",), query="apple")
    assert keys(found) == ["apple", "textless"]
    assert found[1].score is None


def test_put_index_fields_override_the_configured_ones(vstore: ElasticMemoryStore) -> None:
    vstore.put(("docs",), "doc3", {"key0": "aaa", "key1": "bbb", "key2": "ccc"}, index=["key0", "key1"])
    vstore.put(("docs",), "doc4", {"key0": "eee", "key1": "bbb", "key3": "ggg"}, index=["key1", "key3"])
    assert keys(vstore.search(("docs",), query="aaa"))[0] == "doc3"
    assert keys(vstore.search(("docs",), query="ggg"))[0] == "doc4"
    ranked = vstore.search(("docs",), query="ccc")
    assert all(i.score is not None and i.score < 0.5 for i in ranked)


def test_a_nested_field_path_is_indexed(clock: Clock) -> None:
    with indexed(clock, index={"fields": ["meta.title"]}, search_mode="semantic") as store:
        store.put(("docs",), "a", {"meta": {"title": "gardening tips"}, "text": "unrelated"})
        store.put(("docs",), "b", {"meta": {"title": "car repair"}, "text": "gardening"})
        found = store.search(("docs",), query="gardening tips")
        assert keys(found)[0] == "a"
        assert found[0].score == pytest.approx(1.0, abs=1e-5)


def test_an_array_wildcard_path_indexes_every_element(clock: Clock) -> None:
    with indexed(clock, index={"fields": ["messages[*].text"]}, search_mode="semantic") as store:
        store.put(("chats",), "a", {"messages": [{"text": "hello there"}, {"text": "weather in oslo"}]})
        store.put(("chats",), "b", {"messages": [{"text": "hello there"}]})
        assert keys(store.search(("chats",), query="oslo weather"))[0] == "a"


def test_the_whole_value_is_indexed_by_default(clock: Clock) -> None:
    with ElasticMemoryStore(path=":memory:", index={"dims": DIMS, "embed": Words()}, clock=clock) as store:
        store.put(("docs",), "a", {"note": "violin lessons"})
        store.put(("docs",), "b", {"note": "bicycle"})
        assert keys(store.search(("docs",), query="violin"))[0] == "a"


def test_an_updated_item_is_embedded_again(vstore: ElasticMemoryStore) -> None:
    vstore.put(("docs",), "a", {"text": "zany zebra"})
    vstore.put(("docs",), "b", {"text": "dogs"})
    before = vstore.search(("docs",), query="zany zebra")[0]
    vstore.put(("docs",), "a", {"text": "more about dogs"})
    after = {i.key: i.score for i in vstore.search(("docs",), query="zany zebra")}
    assert before.key == "a"
    assert before.score is not None and after["a"] is not None
    assert after["a"] < before.score


def test_the_embed_option_may_be_a_function(clock: Clock) -> None:
    words = Words()
    index: Any = {"dims": DIMS, "embed": words.embed_documents, "fields": ["text"]}
    with ElasticMemoryStore(path=":memory:", index=index, clock=clock, search_mode="semantic") as store:
        store.put(("docs",), "a", {"text": "apple"})
        store.put(("docs",), "b", {"text": "pear"})
        assert keys(store.search(("docs",), query="apple"))[0] == "a"


def test_the_embed_option_may_be_an_async_function(clock: Clock) -> None:
    words = Words()

    async def embed(texts: Sequence[str]) -> list[list[float]]:
        await asyncio.sleep(0)
        return words.embed_documents(list(texts))

    index: Any = {"dims": DIMS, "embed": embed, "fields": ["text"]}
    with ElasticMemoryStore(path=":memory:", index=index, clock=clock, search_mode="semantic") as store:
        store.put(("docs",), "a", {"text": "apple"})
        store.put(("docs",), "b", {"text": "pear"})
        assert keys(store.search(("docs",), query="apple"))[0] == "a"


def test_dims_must_match_the_embeddings() -> None:
    with pytest.raises(UsageError, match="dims"):
        ElasticMemoryStore(path=":memory:", index={"dims": DIMS + 1, "embed": Words()})


def test_unknown_index_keys_are_refused() -> None:
    with pytest.raises(UsageError, match="text_fields"):
        ElasticMemoryStore(path=":memory:", index={"dims": DIMS, "embed": Words(), "text_fields": ["a"]})  # type: ignore[arg-type]


def test_embed_does_not_apply_to_an_open_memory(clock: Clock) -> None:
    with Memory.open(":memory:", embedder=None, clock=clock) as mem, pytest.raises(UsageError, match="memory="):
        ElasticMemoryStore(memory=mem, index={"dims": DIMS, "embed": Words()})


# ------------------------------------------------------------------ list_namespaces
NAMESPACES = [
    ("a", "b", "c"),
    ("a", "b", "d", "e"),
    ("a", "b", "d", "i"),
    ("a", "b", "f"),
    ("a", "c", "f"),
    ("b", "a", "f"),
    ("users", "123"),
    ("users", "456", "settings"),
    ("admin", "users", "789"),
]


@pytest.fixture
def spaced(store: ElasticMemoryStore) -> ElasticMemoryStore:
    for i, ns in enumerate(NAMESPACES):
        store.put(ns, f"id_{i}", {"data": i})
    return store


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({}, sorted(NAMESPACES)),
        ({"prefix": ("a", "b")}, [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f")]),
        ({"suffix": ("f",)}, [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")]),
        ({"prefix": ("a",), "suffix": ("f",)}, [("a", "b", "f"), ("a", "c", "f")]),
        ({"prefix": ("a", "*", "f")}, [("a", "b", "f"), ("a", "c", "f")]),
        ({"suffix": ("*", "f")}, [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")]),
        ({"prefix": ("*", "users")}, [("admin", "users", "789")]),
        ({"prefix": ("a", "b"), "max_depth": 3}, [("a", "b", "c"), ("a", "b", "d"), ("a", "b", "f")]),
        ({"max_depth": 1}, [("a",), ("admin",), ("b",), ("users",)]),
        ({"prefix": ("a", "b"), "limit": 2}, [("a", "b", "c"), ("a", "b", "d", "e")]),
        ({"prefix": ("a", "b"), "offset": 2}, [("a", "b", "d", "i"), ("a", "b", "f")]),
        ({"prefix": ("users", "123")}, [("users", "123")]),
        ({"prefix": ("user",)}, []),
        ({"prefix": ("nonexistent",)}, []),
    ],
    ids=[
        "all",
        "prefix",
        "suffix",
        "prefix-and-suffix",
        "prefix-wildcard",
        "suffix-wildcard",
        "leading-wildcard",
        "max-depth",
        "max-depth-1",
        "limit",
        "offset",
        "exact",
        "no-partial-label",
        "none",
    ],
)
def test_list_namespaces(spaced: ElasticMemoryStore, kwargs: dict[str, Any], expected: list[tuple[str, ...]]) -> None:
    assert spaced.list_namespaces(**kwargs) == expected


def test_list_namespaces_of_an_empty_store(store: ElasticMemoryStore) -> None:
    assert store.list_namespaces() == []


def test_a_namespace_goes_with_its_last_item(store: ElasticMemoryStore) -> None:
    store.put(("a", "b"), "1", {"v": 1})
    store.put(("a", "b"), "2", {"v": 2})
    store.delete(("a", "b"), "1")
    assert store.list_namespaces() == [("a", "b")]
    store.delete(("a", "b"), "2")
    assert store.list_namespaces() == []


def test_list_namespaces_pages_in_order(store: ElasticMemoryStore) -> None:
    for i in range(20):
        store.put(("namespace", f"sub_{i:02d}"), "k", {"i": i})
    page = store.list_namespaces(prefix=("namespace",), limit=5, offset=15)
    assert page == [("namespace", f"sub_{i:02d}") for i in range(15, 20)]


def test_a_non_positive_max_depth_is_refused(store: ElasticMemoryStore) -> None:
    with pytest.raises(ValueError, match="max_depth"):
        store.list_namespaces(max_depth=0)


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


# ------------------------------------------------------------------ TTL
def test_the_store_supports_ttl(store: ElasticMemoryStore) -> None:
    assert store.supports_ttl is True


def test_an_item_expires_after_its_ttl(store: ElasticMemoryStore, clock: Clock) -> None:
    store.put(("t",), "k", {"v": 1}, ttl=1)
    clock.now += 59
    assert store.get(("t",), "k", refresh_ttl=False) is not None
    clock.now += 2
    assert store.get(("t",), "k") is None
    assert store.search(("t",)) == []
    assert store.list_namespaces() == []


def test_a_get_refreshes_the_ttl(store: ElasticMemoryStore, clock: Clock) -> None:
    store.put(("t",), "k", {"v": 1}, ttl=1)
    clock.now += 50
    assert store.get(("t",), "k") is not None
    clock.now += 50
    assert store.get(("t",), "k") is not None


def test_a_search_refreshes_the_ttl(store: ElasticMemoryStore, clock: Clock) -> None:
    store.put(("t",), "k", {"v": 1}, ttl=1)
    clock.now += 50
    assert keys(store.search(("t",))) == ["k"]
    clock.now += 50
    assert store.get(("t",), "k", refresh_ttl=False) is not None


def test_refresh_ttl_false_leaves_the_expiry(store: ElasticMemoryStore, clock: Clock) -> None:
    store.put(("t",), "k", {"v": 1}, ttl=1)
    clock.now += 50
    assert store.get(("t",), "k", refresh_ttl=False) is not None
    assert store.search(("t",), refresh_ttl=False) != []
    clock.now += 50
    assert store.get(("t",), "k") is None


def test_the_default_ttl_applies_to_puts(clock: Clock) -> None:
    with ElasticMemoryStore(path=":memory:", clock=clock, ttl={"default_ttl": 2}) as store:
        store.put(("t",), "k", {"v": 1})
        store.put(("t",), "forever", {"v": 1}, ttl=None)
        clock.now += 121
        assert store.get(("t",), "k") is None
        assert store.get(("t",), "forever") is not None


def test_refresh_on_read_off_in_the_config(clock: Clock) -> None:
    with ElasticMemoryStore(path=":memory:", clock=clock, ttl={"refresh_on_read": False}) as store:
        store.put(("t",), "k", {"v": 1}, ttl=1)
        clock.now += 50
        assert store.get(("t",), "k") is not None
        clock.now += 50
        assert store.get(("t",), "k") is None


def test_an_item_without_ttl_never_expires(store: ElasticMemoryStore, clock: Clock) -> None:
    store.put(("t",), "k", {"v": 1})
    clock.now += 10 * 365 * 86_400
    assert store.get(("t",), "k") is not None


def test_a_put_after_expiry_starts_a_new_item(store: ElasticMemoryStore, clock: Clock) -> None:
    store.put(("t",), "k", {"v": 1}, ttl=1)
    clock.now += 120
    store.put(("t",), "k", {"v": 2})
    item = store.get(("t",), "k")
    assert item is not None and item.value == {"v": 2}
    assert item.created_at == datetime.fromtimestamp(clock.now, tz=timezone.utc)


@pytest.mark.parametrize("ttl", [0, -1, float("nan")])
def test_a_ttl_must_be_positive(store: ElasticMemoryStore, ttl: float) -> None:
    with pytest.raises(ValueError, match="ttl"):
        store.put(("t",), "k", {"v": 1}, ttl=ttl)


# ------------------------------------------------------------------ TTL sweeps
def test_sweep_ttl_erases_the_expired_items_and_counts_them(store: ElasticMemoryStore, clock: Clock) -> None:
    store.put(("t",), "short", {"v": 1}, ttl=1)
    store.put(("t",), "shorter", {"v": 1}, ttl=0.5)
    store.put(("t",), "long", {"v": 1}, ttl=10)
    store.put(("t",), "forever", {"v": 1})
    clock.now += 61
    assert store.sweep_ttl() == 2
    assert store.memory.stats()["total_memories"] == 2
    assert sorted(keys(store.search(("t",)))) == ["forever", "long"]


def test_sweep_ttl_with_nothing_expired_erases_nothing(store: ElasticMemoryStore, clock: Clock) -> None:
    store.put(("t",), "k", {"v": 1}, ttl=1)
    clock.now += 30
    assert store.sweep_ttl() == 0
    assert store.get(("t",), "k", refresh_ttl=False) is not None


def test_sweep_ttl_spares_a_refreshed_item(store: ElasticMemoryStore, clock: Clock) -> None:
    store.put(("t",), "k", {"v": 1}, ttl=1)
    clock.now += 50
    assert store.get(("t",), "k") is not None
    clock.now += 50
    assert store.sweep_ttl() == 0


def test_sweep_ttl_spares_an_item_renewed_just_before_the_delete(
    store: ElasticMemoryStore, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A put(ttl=...) from another thread landing between the sweep's check and its delete wins."""
    store.put(("t",), "renewed", {"v": 1}, ttl=1)
    store.put(("t",), "stale", {"v": 1}, ttl=1)
    clock.now += 61
    sweep = store._sweep

    def racing() -> Any:
        plan, reply = sweep(), None
        try:
            while True:
                name, args, kwargs = plan.send(reply)
                if name in ("forget", "purge"):  # the sweep's delete is about to reach the core
                    store.put(("t",), "renewed", {"v": 2}, ttl=60)
                reply = yield name, args, kwargs
        except StopIteration as done:
            return done.value

    monkeypatch.setattr(store, "_sweep", racing)
    assert store.sweep_ttl() == 1
    item = store.get(("t",), "renewed", refresh_ttl=False)
    assert item is not None and item.value == {"v": 2}
    assert store.get(("t",), "stale") is None


def test_sweep_ttl_keeps_to_its_collection(clock: Clock) -> None:
    with Memory.open(":memory:", embedder=None, clock=clock) as mem:
        mem.remember("a loop memory that expires", ttl=30)
        one = ElasticMemoryStore(memory=mem, collection="one")
        two = ElasticMemoryStore(memory=mem, collection="two")
        one.put(("t",), "k", {"v": 1}, ttl=1)
        two.put(("t",), "k", {"v": 1}, ttl=1)
        clock.now += 61
        assert one.sweep_ttl() == 1
        assert mem.stats()["total_memories"] == 2


async def test_asweep_ttl_erases_the_expired_items(clock: Clock) -> None:
    async with ElasticMemoryStore(path=":memory:", clock=clock) as store:
        await store.aput(("t",), "k", {"v": 1}, ttl=1)
        clock.now += 61
        assert await store.asweep_ttl() == 1
        assert await store.asweep_ttl() == 0


def _until(condition: Any, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return False


def test_the_sweeper_erases_expired_items_in_the_background(store: ElasticMemoryStore, clock: Clock) -> None:
    store.put(("t",), "k", {"v": 1}, ttl=1)
    clock.now += 61
    future = store.start_ttl_sweeper(sweep_interval_minutes=0.001)
    try:
        assert _until(lambda: store.memory.stats()["total_memories"] == 0)
        assert not future.done()
    finally:
        assert store.stop_ttl_sweeper(timeout=10) is True
    assert future.done() and future.result() is None


def test_the_sweeper_interval_comes_from_the_ttl_config(clock: Clock) -> None:
    ttl: Any = {"sweep_interval_minutes": 0.001}
    with ElasticMemoryStore(path=":memory:", clock=clock, ttl=ttl) as store:
        store.put(("t",), "k", {"v": 1}, ttl=1)
        clock.now += 61
        store.start_ttl_sweeper()
        assert _until(lambda: store.memory.stats()["total_memories"] == 0)


def test_starting_the_sweeper_twice_gives_the_running_one(store: ElasticMemoryStore) -> None:
    first = store.start_ttl_sweeper(60)
    assert store.start_ttl_sweeper(60) is first
    assert store.stop_ttl_sweeper(timeout=10) is True


def test_close_stops_the_sweeper(clock: Clock) -> None:
    store = ElasticMemoryStore(path=":memory:", clock=clock)
    future = store.start_ttl_sweeper(60)
    store.close()
    assert future.done()
    assert not [t for t in threading.enumerate() if t.name == "elastic-memory-ttl-sweeper" and t.is_alive()]


async def test_async_with_stops_the_sweeper(clock: Clock) -> None:
    async with ElasticMemoryStore(path=":memory:", clock=clock) as store:
        future = store.start_ttl_sweeper(60)
    assert future.done()


def test_cancelling_the_future_stops_the_sweeper(store: ElasticMemoryStore) -> None:
    future = store.start_ttl_sweeper(60)
    assert future.cancel()
    assert store.stop_ttl_sweeper(timeout=10) is True


def test_a_dropped_store_stops_its_sweeper(clock: Clock) -> None:
    mem = Memory.open(":memory:", embedder=None, clock=clock)
    try:
        store = ElasticMemoryStore(memory=mem)
        future = store.start_ttl_sweeper(0.001)
        del store
        gc.collect()
        assert _until(future.done)
    finally:
        mem.close()


_LEFT_OPEN = """
import sys, time
from langchain_elastic_memory import ElasticMemoryStore
store = ElasticMemoryStore(path=sys.argv[1])
store.put(("t",), "k", {"v": 1}, ttl=0.0001)
store.start_ttl_sweeper(0.0002)
time.sleep(0.3)
print("left open")
"""


def test_a_sweeper_left_running_ends_quietly_at_exit(tmp_path: Path) -> None:
    """A store never closed, its sweeper sweeping every 12 ms: the interpreter exits cleanly."""
    done = subprocess.run(
        [sys.executable, "-c", _LEFT_OPEN, str(tmp_path / "store.db")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "left open\n", "")


def test_stopping_without_a_sweeper_is_fine(store: ElasticMemoryStore) -> None:
    assert store.stop_ttl_sweeper() is True


@pytest.mark.parametrize("minutes", [0, -1, float("nan"), float("inf"), 1e300, "5", True])
def test_a_bad_sweep_interval_is_refused(store: ElasticMemoryStore, minutes: Any) -> None:
    with pytest.raises(UsageError, match="sweep_interval_minutes"):
        store.start_ttl_sweeper(minutes)
    assert store.stop_ttl_sweeper() is True


@pytest.mark.parametrize("timeout", [-1, float("nan"), "1", True])
def test_a_bad_stop_timeout_is_refused(store: ElasticMemoryStore, timeout: Any) -> None:
    with pytest.raises(UsageError, match="timeout"):
        store.stop_ttl_sweeper(timeout)


def test_each_backend_sweeps_the_expired_items(location: str, clock: Clock) -> None:
    """SQLite in memory, and PostgreSQL (conftest.py)."""
    with ElasticMemoryStore(path=location, clock=clock) as store:
        store.put(("t",), "short", {"v": 1}, ttl=1)
        store.put(("t",), "forever", {"v": 1})
        clock.now += 61
        assert store.sweep_ttl() == 1
        assert keys(store.search(("t",))) == ["forever"]


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
