"""ElasticMemoryStore: prefix search, value filters and list_namespaces, as LangGraph's stores.

No leak across labels, insertion order and paging, value filters compared as
``InMemoryStore`` compares them, and namespace listing.
"""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.store.base import PutOp, SearchItem, SearchOp

from langchain_elastic_memory import ElasticMemoryStore

from .support import NAMESPACES, Clock, keys


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


# ------------------------------------------------------------------ list_namespaces


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
