"""ElasticMemoryStore beside LangGraph's reference stores: the same calls, compared.

Each test runs the same calls on ``ElasticMemoryStore``, ``InMemoryStore`` and
``SqliteStore`` (langgraph-checkpoint-sqlite), all embedding with one deterministic
function, and compares items, orders and scores. Where the store differs on purpose, the
test asserts the difference, as listed in the ``ElasticMemoryStore`` docstring and
docs/langchain.md.

``SqliteStore`` 3.1.2 reads the embedded paths from ``text_fields`` (not ``fields``), so
its index config names both. Its vector search loads sqlite-vec, which needs an SQLite
that loads extensions: the stdlib one if it can, else pysqlite3 (the core's driver).
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import re
import sqlite3
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import timezone
from typing import Any, cast

import pytest
from langgraph.store.base import BaseStore, Item, SearchItem
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from langchain_elastic_memory import ElasticMemoryStore

# LangGraph's SqliteStore (the reference, not this package) stores datetimes through sqlite3's
# default adapter, which Python 3.12 deprecates: its warning is not ours to fix.
pytestmark = pytest.mark.filterwarnings("ignore:The default datetime adapter is deprecated:DeprecationWarning")
DIMS = 16
_WORD = re.compile(r"\w+")


def vector(text: str) -> list[float]:
    """Signed bag of words (two signed slots a word): shared words align, others may point apart."""
    out = [0.0] * DIMS
    for word in _WORD.findall(text.lower()):
        h = int(hashlib.sha256(word.encode()).hexdigest(), 16)
        out[h % DIMS] += 1.0 if h >> 8 & 1 else -1.0
        out[(h >> 16) % DIMS] += 0.5 if h >> 24 & 1 else -0.5
    if not any(out):
        out[0] = 1e-3
    return out


def embed(texts: Sequence[str]) -> list[list[float]]:
    """The embedding function every store is given."""
    return [vector(t) for t in texts]


INDEX: Any = {"dims": DIMS, "embed": embed, "fields": ["text"]}


def _extension_sqlite() -> Any:
    """A DB-API module whose connections load extensions (sqlite-vec), or skip."""
    if hasattr(sqlite3.Connection, "enable_load_extension"):
        return sqlite3
    try:
        return importlib.import_module("pysqlite3.dbapi2")
    except ImportError:
        pytest.skip("SqliteStore's vector search needs an SQLite that loads extensions")


@dataclass
class Stores:
    """The store under test and the two references, with the same configuration."""

    ours: ElasticMemoryStore
    memory: InMemoryStore
    sqlite: SqliteStore

    def all(self) -> list[tuple[str, BaseStore]]:
        return [("ElasticMemoryStore", self.ours), ("InMemoryStore", self.memory), ("SqliteStore", self.sqlite)]

    def put(self, namespace: tuple[str, ...], key: str, value: dict[str, Any], **kwargs: Any) -> None:
        for _, store in self.all():
            store.put(namespace, key, value, **kwargs)

    def each(self, call: Any) -> dict[str, Any]:
        """``call(store)`` on every store, by class name."""
        return {name: call(store) for name, store in self.all()}


def _stores(index: Any, path: str = ":memory:") -> Iterator[Stores]:
    module = _extension_sqlite() if index else sqlite3
    conn = module.connect(":memory:", check_same_thread=False, isolation_level=None)
    sqlite = SqliteStore(cast(Any, conn), index={**index, "text_fields": index["fields"]} if index else None)
    sqlite.setup()
    ours = ElasticMemoryStore(path=path, index=index)
    try:
        yield Stores(ours, InMemoryStore(index=index), sqlite)
    finally:
        ours.close()
        conn.close()


@pytest.fixture
def stores() -> Iterator[Stores]:
    """The three stores, embedding ``text`` with :func:`embed`."""
    yield from _stores(INDEX)


@pytest.fixture
def plain() -> Iterator[Stores]:
    """The three stores without an index (no vectors)."""
    yield from _stores(None)


@pytest.fixture
def each_backend(location: str) -> Iterator[Stores]:
    """The three stores without an index, ours on each backend (SQLite, then PostgreSQL)."""
    yield from _stores(None, location)


def keys(items: Sequence[Item]) -> list[str]:
    return [i.key for i in items]


def scored(items: Sequence[SearchItem]) -> list[tuple[str, float | None]]:
    return [(i.key, None if i.score is None else round(i.score, 4)) for i in items]


def _same(found: dict[str, Any]) -> Any:
    """The one value every store gave (fails naming each store's when they differ)."""
    values = list(found.values())
    assert all(v == values[0] for v in values), found
    return values[0]


# ------------------------------------------------------------------ items
def test_put_and_get_give_the_same_item(stores: Stores) -> None:
    stores.put(("users", "ana"), "prefs", {"text": "dark theme", "n": [1, {"a": None}]})
    found = stores.each(lambda s: s.get(("users", "ana"), "prefs"))
    assert _same({n: (i.namespace, i.key, i.value) for n, i in found.items()}) == (
        ("users", "ana"),
        "prefs",
        {"text": "dark theme", "n": [1, {"a": None}]},
    )


def test_get_of_a_missing_key_is_none_everywhere(stores: Stores) -> None:
    stores.put(("users", "ana"), "prefs", {"text": "x"})
    assert _same(stores.each(lambda s: (s.get(("users", "ana"), "other"), s.get(("users", "bob"), "prefs")))) == (
        None,
        None,
    )


def test_delete_removes_the_item_everywhere(stores: Stores) -> None:
    stores.put(("docs",), "a", {"text": "x"})
    stores.put(("docs",), "b", {"text": "y"})
    for _, store in stores.all():
        store.delete(("docs",), "a")
    assert _same(stores.each(lambda s: (s.get(("docs",), "a"), keys(s.search(("docs",)))))) == (None, ["b"])


def test_a_put_again_replaces_the_value_everywhere(stores: Stores) -> None:
    stores.put(("docs",), "a", {"text": "old"})
    stores.put(("docs",), "a", {"text": "new"})
    assert _same(stores.each(lambda s: s.get(("docs",), "a").value)) == {"text": "new"}


def test_a_put_again_keeps_created_at_where_the_references_reset_it(stores: Stores) -> None:
    """An intended difference: ``created_at`` stays the first put's."""
    stores.put(("docs",), "a", {"text": "old"})
    first = stores.each(lambda s: s.get(("docs",), "a").created_at)
    time.sleep(0.01)
    stores.ours.put(("docs",), "a", {"text": "new"})
    stores.memory.put(("docs",), "a", {"text": "new"})
    assert stores.ours.get(("docs",), "a").created_at == first["ElasticMemoryStore"]  # type: ignore[union-attr]
    assert stores.memory.get(("docs",), "a").created_at > first["InMemoryStore"]  # type: ignore[union-attr]


# ------------------------------------------------------------------ search without a query
def _three_then_update(stores: Stores) -> None:
    for key in ("first", "second", "third"):
        stores.put(("docs",), key, {"text": key})


def test_without_a_query_every_store_finds_the_same_items_unscored(stores: Stores) -> None:
    _three_then_update(stores)
    found = stores.each(lambda s: s.search(("docs",)))
    assert _same({n: sorted(scored(items)) for n, items in found.items()}) == [
        ("first", None),
        ("second", None),
        ("third", None),
    ]


def test_without_a_query_the_order_is_inmemorystores(stores: Stores) -> None:
    """Insertion order (the store listed the newest first before)."""
    _three_then_update(stores)
    assert keys(stores.ours.search(("docs",))) == keys(stores.memory.search(("docs",))) == ["first", "second", "third"]


def test_an_update_keeps_its_place_as_in_inmemorystore(stores: Stores) -> None:
    """SqliteStore orders by ``updated_at`` (last updated first, to the second): an intended difference."""
    _three_then_update(stores)
    time.sleep(1.1)
    stores.put(("docs",), "first", {"text": "first again"})
    assert keys(stores.ours.search(("docs",))) == keys(stores.memory.search(("docs",))) == ["first", "second", "third"]
    assert keys(stores.sqlite.search(("docs",)))[0] == "first"


def test_limit_and_offset_page_as_in_inmemorystore(stores: Stores) -> None:
    for i in range(5):
        stores.put(("docs",), f"doc{i}", {"text": f"item {i}"})
    pages = [(2, 0), (2, 2), (2, 4), (2, 5)]
    for limit, offset in pages:
        ours = keys(stores.ours.search(("docs",), limit=limit, offset=offset))
        assert ours == keys(stores.memory.search(("docs",), limit=limit, offset=offset))
    everything = stores.each(
        lambda s: sorted(k for o in (0, 2, 4) for k in keys(s.search(("docs",), limit=2, offset=o)))
    )
    assert _same(everything) == [f"doc{i}" for i in range(5)]


def test_a_prefix_matches_whole_labels_everywhere(stores: Stores) -> None:
    stores.put(("a",), "in-a", {"text": "x"})
    stores.put(("ab",), "in-ab", {"text": "x"})
    stores.put(("a", "b"), "in-a-b", {"text": "x"})
    found = stores.each(lambda s: (sorted(keys(s.search(("a",)))), keys(s.search(("a", "b"))), keys(s.search(("ab",)))))
    assert _same(found) == (["in-a", "in-a-b"], ["in-a-b"], ["in-ab"])


# ------------------------------------------------------------------ filters
def _priced(stores: Stores) -> None:
    stores.put(("items",), "cheap", {"text": "red apple", "price": 10, "color": "red", "fresh": True})
    stores.put(("items",), "mid", {"text": "blue car", "price": 20, "color": "blue", "fresh": False})
    stores.put(("items",), "dear", {"text": "red wine", "price": 30.5, "color": "red", "fresh": True})


@pytest.mark.parametrize(
    "condition",
    [
        {"color": "red"},
        {"price": 20},
        {"fresh": False},
        {"price": {"$eq": 20}},
        {"price": {"$ne": 20}},
        {"price": {"$gt": 10}},
        {"price": {"$gte": 20}},
        {"price": {"$lt": 20}},
        {"price": {"$lte": 20}},
        {"price": {"$gt": 10, "$lt": 30}},
        {"color": "red", "price": {"$gte": 20}},
        {"color": "green"},
    ],
    ids=["str", "int", "bool", "eq", "ne", "gt", "gte", "lt", "lte", "range", "and", "none"],
)
def test_filters_match_the_same_items(stores: Stores, condition: dict[str, Any]) -> None:
    _priced(stores)
    _same(stores.each(lambda s: sorted(keys(s.search(("items",), filter=condition)))))


def test_a_none_filter_matches_a_missing_field_everywhere(stores: Stores) -> None:
    _priced(stores)
    stores.put(("items",), "free", {"text": "green tea", "color": "green"})
    assert _same(stores.each(lambda s: keys(s.search(("items",), filter={"price": None})))) == ["free"]


def test_ne_matches_a_missing_field_as_in_inmemorystore(stores: Stores) -> None:
    """SqliteStore's ``$ne`` leaves out items without the field: an intended difference."""
    _priced(stores)
    stores.put(("items",), "free", {"text": "green tea", "color": "green"})
    found = stores.each(lambda s: sorted(keys(s.search(("items",), filter={"price": {"$ne": 20}}))))
    assert found["ElasticMemoryStore"] == found["InMemoryStore"] == ["cheap", "dear", "free"]
    assert found["SqliteStore"] == ["cheap", "dear"]


def test_nested_filters_take_both_forms(stores: Stores) -> None:
    """A nested dict matches part of a nested value, and ``"a.b"`` is a path (each reference has one form)."""
    stores.put(("u",), "ana", {"profile": {"city": "Oslo", "age": 30}})
    stores.put(("u",), "bob", {"profile": {"city": "Rome", "age": 30}})
    assert keys(stores.ours.search(("u",), filter={"profile": {"city": "Oslo"}})) == ["ana"]
    assert keys(stores.memory.search(("u",), filter={"profile": {"city": "Oslo"}})) == ["ana"]
    assert keys(stores.ours.search(("u",), filter={"profile.city": "Oslo"})) == ["ana"]
    assert keys(stores.sqlite.search(("u",), filter={"profile.city": "Oslo"})) == ["ana"]


#: Values whose fields are scalars in some items, lists (or dicts, or missing) in others.
MIXED: dict[str, dict[str, Any]] = {
    "scalar": {
        "tag": "x",
        "n": 1,
        "nums": 1,
        "flag": True,
        "opt": None,
        "info": {"city": "Oslo", "zip": None, "age": 30},
    },
    "listed": {"tag": ["x", "y"], "n": 1.0, "nums": [1, 2], "flag": [True], "opt": [None], "info": ["Oslo"]},
    "other": {"tag": "y", "n": 2.5, "nums": 2.0, "flag": False, "opt": "set", "info": {"city": "Rome", "age": 41.5}},
    "sparse": {"n": -3},
    "odd": {"tag": [], "n": 0, "nums": [], "flag": [False, True], "opt": [], "info": "Oslo"},
    "deep": {
        "tag": ["y"],
        "n": 10**6,
        "nums": [2.0],
        "flag": "true",
        "opt": {},
        "info": {"city": ["Oslo"], "zip": "0150", "age": 18},
    },
}
ALL = sorted(MIXED)


def _but(*left_out: str) -> list[str]:
    return [k for k in ALL if k not in left_out]


@pytest.mark.parametrize(
    ("condition", "expected", "as_sqlitestore"),
    [
        ({"tag": "x"}, ["scalar"], True),
        ({"tag": {"$eq": "y"}}, ["other"], True),
        ({"tag": {"$ne": "x"}}, _but("scalar"), False),
        ({"nums": 1}, ["scalar"], True),
        ({"nums": 2}, ["other"], True),
        ({"nums": {"$ne": 2}}, _but("other"), False),
        ({"n": 1}, ["listed", "scalar"], True),
        ({"n": {"$eq": 1.0}}, ["listed", "scalar"], True),
        ({"n": {"$ne": 1}}, _but("listed", "scalar"), True),
        ({"n": {"$gt": 0}}, ["deep", "listed", "other", "scalar"], True),
        ({"n": {"$gte": 1}}, ["deep", "listed", "other", "scalar"], True),
        ({"n": {"$lt": 1}}, ["odd", "sparse"], True),
        ({"n": {"$lte": 1.0}}, ["listed", "odd", "scalar", "sparse"], True),
        ({"n": {"$gt": 1, "$lte": 10**6}}, ["deep", "other"], True),
        ({"flag": True}, ["scalar"], True),
        ({"flag": False}, ["other"], True),
        ({"flag": {"$ne": True}}, _but("scalar"), False),
        ({"opt": None}, ["scalar", "sparse"], True),
        ({"opt": {"$eq": None}}, ["scalar", "sparse"], True),
        ({"opt": {"$ne": None}}, ["deep", "listed", "odd", "other"], True),
        ({"info": {"city": "Oslo"}}, ["scalar"], False),
        ({"info": {"city": {"$ne": "Oslo"}}}, ["deep", "other"], False),
        ({"info": {"zip": None}}, ["other", "scalar"], False),
        ({"info": {"zip": {"$ne": None}}}, ["deep"], False),
        ({"info": {"age": {"$gte": 30}}}, ["other", "scalar"], False),
        ({"info": {"age": {"$lt": 30}, "city": {"$ne": "Rome"}}}, ["deep"], False),
        ({"tag": "y", "n": {"$gt": 0}}, ["other"], True),
    ],
    ids=[
        "str-eq",
        "str-$eq",
        "str-$ne",
        "int-eq",
        "int-eq-float",
        "int-$ne",
        "int-float-eq",
        "float-int-$eq",
        "number-$ne",
        "$gt",
        "$gte",
        "$lt",
        "$lte",
        "range",
        "true",
        "false",
        "bool-$ne",
        "none",
        "none-$eq",
        "none-$ne",
        "nested-eq",
        "nested-$ne",
        "nested-none",
        "nested-none-$ne",
        "nested-$gte",
        "nested-two",
        "and",
    ],
)
def test_filters_compare_scalars_and_lists_as_inmemorystore(
    each_backend: Stores, condition: dict[str, Any], expected: list[str], as_sqlitestore: bool
) -> None:
    """A scalar never equals a list holding it (the core's own ``$eq`` would match it), as in both references.

    ``SqliteStore`` is compared too where it has the same semantics (its ``$ne`` leaves out
    items without the field, and it refuses nested dicts: it reads their keys as operators).
    """
    for key, value in MIXED.items():
        each_backend.put(("mix",), key, value)
    stores = [each_backend.ours, each_backend.memory, *([each_backend.sqlite] if as_sqlitestore else [])]
    found = {type(s).__name__: sorted(keys(s.search(("mix",), filter=condition))) for s in stores}
    assert _same(found) == expected


def test_comparisons_match_numbers_only_where_inmemorystore_raises(plain: Stores) -> None:
    """``$gt`` on a list, a missing field or a string: ``InMemoryStore`` raises (``float(...)``), ours never matches."""
    for key, value in MIXED.items():
        plain.put(("mix",), key, value)
    assert keys(plain.ours.search(("mix",), filter={"nums": {"$gt": 0}})) == ["scalar", "other"]
    assert keys(plain.ours.search(("mix",), filter={"tag": {"$lt": "z"}})) == ["scalar", "other"]
    with pytest.raises(TypeError):
        plain.memory.search(("mix",), filter={"nums": {"$gt": 0}})


def test_a_bool_is_not_a_number_here(plain: Stores) -> None:
    """An intended difference: both references take ``True == 1`` (Python's, SQLite's), ours compares types."""
    plain.put(("b",), "true", {"flag": True})
    plain.put(("b",), "one", {"flag": 1})
    plain.put(("b",), "float", {"flag": 1.0})
    found = plain.each(lambda s: sorted(keys(s.search(("b",), filter={"flag": True}))))
    assert found["InMemoryStore"] == found["SqliteStore"] == ["float", "one", "true"]
    assert found["ElasticMemoryStore"] == ["true"]
    assert sorted(keys(plain.ours.search(("b",), filter={"flag": 1}))) == ["float", "one"]


# ------------------------------------------------------------------ namespaces
NAMESPACES = [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "c", "f"), ("b", "a", "f"), ("users", "1")]


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"prefix": ("a",)},
        {"suffix": ("f",)},
        {"prefix": ("a", "*", "f")},
        {"max_depth": 2},
        {"limit": 2, "offset": 1},
        {"prefix": ("nope",)},
    ],
    ids=["all", "prefix", "suffix", "wildcard", "max-depth", "page", "none"],
)
def test_namespaces_are_listed_alike(stores: Stores, kwargs: dict[str, Any]) -> None:
    for i, namespace in enumerate(NAMESPACES):
        stores.put(namespace, f"k{i}", {"text": str(i)})
    _same(stores.each(lambda s: s.list_namespaces(**kwargs)))


def test_a_namespace_goes_with_its_last_item_as_in_sqlitestore(stores: Stores) -> None:
    """InMemoryStore still lists a namespace whose items were all deleted."""
    stores.put(("a", "b"), "k", {"text": "x"})
    for _, store in stores.all():
        store.delete(("a", "b"), "k")
    found = stores.each(lambda s: s.list_namespaces())
    assert found["ElasticMemoryStore"] == found["SqliteStore"] == []
    assert found["InMemoryStore"] == [("a", "b")]


# ------------------------------------------------------------------ search with a query
def test_a_query_ranks_alike_with_the_same_cosines(stores: Stores) -> None:
    _priced(stores)
    stores.put(("items",), "tea", {"text": "green tea"})
    found = _same(stores.each(lambda s: scored(s.search(("items",), query="red apple"))))
    assert [k for k, _ in found] == ["cheap", "dear", "tea", "mid"]


def test_query_scores_are_the_cosine(stores: Stores) -> None:
    stores.put(("docs",), "a", {"text": "red wine"})
    expected = _cosine(vector("red apple"), vector("red wine"))
    found = stores.each(lambda s: s.search(("docs",), query="red apple")[0].score)
    assert all(score == pytest.approx(expected, abs=1e-5) for score in found.values()), found


def test_a_negative_cosine_is_kept_everywhere(stores: Stores) -> None:
    """The store gave 0.0 where SqliteStore gives the negative cosine."""
    stores.put(("docs",), "a", {"text": "blue car"})
    expected = _cosine(vector("red apple"), vector("blue car"))
    assert expected < 0
    found = stores.each(lambda s: s.search(("docs",), query="red apple")[0].score)
    assert all(score == pytest.approx(expected, abs=1e-5) for score in found.values()), found


def test_an_unrelated_query_scores_alike_and_below_one(stores: Stores) -> None:
    """The store's hybrid default scored every item 1.0 for ``query="zebra"``."""
    _priced(stores)
    found = _same(stores.each(lambda s: scored(s.search(("items",), query="zebra"))))
    assert all(score is not None and score < 0.5 for _, score in found)


def test_the_only_item_scores_alike_and_below_one(stores: Stores) -> None:
    stores.put(("docs",), "a", {"text": "red apple"})
    (found,) = _same(stores.each(lambda s: scored(s.search(("docs",), query="blue car"))))
    assert found[1] is not None and found[1] < 0.5


def test_a_query_pages_alike(stores: Stores) -> None:
    _priced(stores)
    stores.put(("items",), "tea", {"text": "green tea"})
    _same(stores.each(lambda s: scored(s.search(("items",), query="red apple", limit=2, offset=1))))


def test_a_query_with_a_filter_ranks_alike(stores: Stores) -> None:
    _priced(stores)
    found = _same(stores.each(lambda s: scored(s.search(("items",), query="red wine", filter={"fresh": True}))))
    assert [k for k, _ in found] == ["dear", "cheap"]


def test_put_index_paths_rank_alike(stores: Stores) -> None:
    stores.put(("docs",), "a", {"text": "zebra", "title": "red apple"}, index=["title"])
    stores.put(("docs",), "b", {"text": "red apple", "title": "blue car"}, index=["title"])
    assert _same(stores.each(lambda s: keys(s.search(("docs",), query="red apple")))) == ["a", "b"]


def test_unindexed_items_follow_unscored_as_in_inmemorystore(stores: Stores) -> None:
    """SqliteStore leaves items put with ``index=False`` out of a query search: an intended difference."""
    stores.put(("docs",), "a", {"text": "red apple"})
    stores.put(("docs",), "hidden", {"text": "red apple"}, index=False)
    stores.put(("docs",), "b", {"text": "blue car"})
    found = stores.each(lambda s: scored(s.search(("docs",), query="red apple")))
    assert found["ElasticMemoryStore"] == found["InMemoryStore"]
    assert [k for k, _ in found["InMemoryStore"]] == ["a", "b", "hidden"]
    assert found["InMemoryStore"][-1] == ("hidden", None)
    assert [k for k, _ in found["SqliteStore"]] == ["a", "b"]


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (sum(x * x for x in a) ** 0.5 * sum(y * y for y in b) ** 0.5)


# ------------------------------------------------------------------ no index
def test_without_an_index_scores_are_none_everywhere(plain: Stores) -> None:
    """The store returned ``score=1e-06`` here."""
    plain.put(("docs",), "other", {"text": "lunch menu"})
    plain.put(("docs",), "match", {"text": "quarterly revenue"})
    found = plain.each(lambda s: sorted(scored(s.search(("docs",), query="revenue"))))
    assert _same(found) == [("match", None), ("other", None)]


def test_without_an_index_a_query_puts_keyword_matches_first(plain: Stores) -> None:
    """An intended difference: the references ignore the query there."""
    plain.put(("docs",), "other", {"text": "lunch menu"})
    plain.put(("docs",), "match", {"text": "quarterly revenue"})
    assert keys(plain.ours.search(("docs",), query="revenue")) == ["match", "other"]
    assert keys(plain.memory.search(("docs",), query="revenue")) == ["other", "match"]


# ------------------------------------------------------------------ TTL
def _past(minutes: float) -> None:
    """Sleep until ``minutes`` have passed and SQLite's CURRENT_TIMESTAMP (whole seconds) shows it."""
    deadline = time.time() + minutes * 60
    time.sleep(max(0.0, int(deadline) + 1.05 - time.time()))


def test_inmemorystore_has_no_ttl_and_the_sqlite_stores_do(plain: Stores) -> None:
    assert _same({"ours": plain.ours.supports_ttl, "sqlite": plain.sqlite.supports_ttl}) is True
    assert plain.memory.supports_ttl is False


def test_sweep_ttl_erases_and_counts_as_sqlitestore(plain: Stores) -> None:
    for store in (plain.ours, plain.sqlite):
        store.put(("t",), "short", {"v": 1}, ttl=0.001)
        store.put(("t",), "long", {"v": 1}, ttl=10)
        store.put(("t",), "forever", {"v": 1})
    _past(0.001)
    assert plain.ours.sweep_ttl() == plain.sqlite.sweep_ttl() == 1
    assert sorted(keys(plain.ours.search(("t",)))) == sorted(keys(plain.sqlite.search(("t",)))) == ["forever", "long"]
    assert plain.ours.sweep_ttl() == plain.sqlite.sweep_ttl() == 0


def test_an_expired_item_is_hidden_before_the_sweep(plain: Stores) -> None:
    """An intended difference: SqliteStore returns expired items until a sweep erases them."""
    for store in (plain.ours, plain.sqlite):
        store.put(("t",), "short", {"v": 1}, ttl=0.001)
    _past(0.001)
    assert plain.ours.get(("t",), "short", refresh_ttl=False) is None
    assert plain.sqlite.get(("t",), "short", refresh_ttl=False) is not None


def test_the_ttl_sweeper_starts_and_stops_as_sqlitestores(plain: Stores) -> None:
    plain.ours.ttl_config = plain.sqlite.ttl_config = {"sweep_interval_minutes": 60}
    futures = {name: store.start_ttl_sweeper() for name, store in (("ours", plain.ours), ("sqlite", plain.sqlite))}
    assert not any(f.done() for f in futures.values())
    assert plain.ours.stop_ttl_sweeper(timeout=10) is plain.sqlite.stop_ttl_sweeper(timeout=10) is True
    assert all(f.done() for f in futures.values())
    assert plain.ours.stop_ttl_sweeper() is plain.sqlite.stop_ttl_sweeper() is True


# ------------------------------------------------------------------ lifecycle
@pytest.mark.parametrize("cls", [ElasticMemoryStore, SqliteStore], ids=["ElasticMemoryStore", "SqliteStore"])
def test_from_conn_string_setup_and_with_work_alike(cls: Any) -> None:
    with cls.from_conn_string(":memory:", ttl={"default_ttl": 5}) as store:
        store.setup()
        store.setup()
        store.put(("users", "ana"), "prefs", {"theme": "dark"})
        item = store.get(("users", "ana"), "prefs")
        assert item is not None and item.value == {"theme": "dark"}
        assert store.ttl_config == {"default_ttl": 5}


@pytest.mark.parametrize("name", ["setup", "sweep_ttl", "start_ttl_sweeper", "stop_ttl_sweeper", "from_conn_string"])
def test_the_lifecycle_methods_take_sqlitestores_arguments(name: str) -> None:
    """The same parameters (the store's ``from_conn_string`` also takes the constructor's others)."""
    ours = inspect.signature(getattr(ElasticMemoryStore, name)).parameters
    theirs = inspect.signature(getattr(SqliteStore, name)).parameters
    assert [(p.name, p.kind, p.default) for p in theirs.values()] == [
        (p.name, p.kind, p.default) for p in ours.values() if p.kind is not p.VAR_KEYWORD
    ]


async def test_async_calls_give_what_inmemorystore_gives() -> None:
    memory = InMemoryStore(index=INDEX)
    async with ElasticMemoryStore(path=":memory:", index=INDEX) as ours:
        for store in (ours, memory):
            await store.aput(("docs",), "a", {"text": "red apple"})
            await store.aput(("docs",), "b", {"text": "blue car"})
        found = [scored(await s.asearch(("docs",), query="red wine")) for s in (ours, memory)]
        assert found[0] == found[1]
        assert [keys(await s.asearch(("docs",))) for s in (ours, memory)] == [["a", "b"], ["a", "b"]]


def test_times_are_aware_utc_as_in_inmemorystore(stores: Stores) -> None:
    """SqliteStore's are naive datetimes."""
    stores.put(("docs",), "a", {"text": "x"})
    found = stores.each(lambda s: s.get(("docs",), "a"))
    for name in ("ElasticMemoryStore", "InMemoryStore"):
        assert found[name].created_at.tzinfo == found[name].updated_at.tzinfo == timezone.utc
    assert found["SqliteStore"].created_at.tzinfo is None
