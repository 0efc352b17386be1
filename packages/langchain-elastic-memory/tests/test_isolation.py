"""Isolation of collections in one database: LangGraph's store (search, get, list_namespaces) and the vector store.

Two stores share one ``Memory`` (one file, or one PostgreSQL schema), each on its own
``collection`` (a core ``agent_id``) whose name is an adversarial pair of the other's
(prefixes, ``%``, ``_``, ``*``, ``.``, a Cyrillic look-alike, case, quotes). Both hold items
matching the same queries; each must read its own items only. The LangChain retriever's
isolation runs in the shared conformance suite (tests/conformance/test_isolation.py).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from langchain_core.documents import Document

from elastic_memory import Memory, UsageError
from elastic_memory.testing import LOOKALIKE_NAMES, FakeEmbedder
from langchain_elastic_memory import ElasticMemoryStore, ElasticMemoryVectorStore

PAIRS = [pytest.param(a, b, id=name) for name, a, b in LOOKALIKE_NAMES]
#: Namespace labels (LangGraph refuses "." in a label, so no dotted pairs here).
LABELS = [p for p in PAIRS if "." not in "".join(p.values)]
MODES = ["keyword", "semantic", "hybrid"]
QUERY = "harbour lantern"


@pytest.fixture
def mem(location: str) -> Iterator[Memory]:
    """One database both collections live in (``:memory:`` or a fresh PostgreSQL schema)."""
    with Memory.open(location, embedder=FakeEmbedder()) as m:
        yield m


def _fill(store: ElasticMemoryStore, side: str, namespace: tuple[str, ...] = ("users", "u1")) -> None:
    for i in range(4):
        store.put(namespace, f"k{i}", {"text": f"{QUERY} {i} from {side}", "side": side})


# --------------------------------------------------------------------------- LangGraph store
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("query", [None, QUERY])
@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_store_search_returns_only_its_collections_items(
    mem: Memory, a: str, b: str, query: str | None, mode: str
) -> None:
    """search() (ranked by a query, or listed without one) returns only the store's collection.

    Both collections put the same namespace and keys. A leak means _search's recall filters
    lost ``agent_id`` or _live accepts a record of another collection.
    """
    stores = {
        side: ElasticMemoryStore(memory=mem, collection=name, search_mode=mode) for side, name in (("a", a), ("b", b))
    }
    for side, store in stores.items():
        _fill(store, side)
    for side, store in stores.items():
        for prefix in ((), ("users",), ("users", "u1")):
            items = store.search(prefix, query=query, limit=50)
            assert sorted(i.key for i in items) == ["k0", "k1", "k2", "k3"], (side, prefix)
            assert {i.value["side"] for i in items} == {side}


@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_store_get_and_delete_stay_in_their_collection(mem: Memory, a: str, b: str) -> None:
    """The same (namespace, key) in both collections is two items: get reads its own; a delete in B leaves A's.

    Item ids are uuid5 of (collection, namespace, key): a collision would show here.
    """
    one = ElasticMemoryStore(memory=mem, collection=a)
    two = ElasticMemoryStore(memory=mem, collection=b)
    one.put(("users",), "prefs", {"side": "a"})
    two.put(("users",), "prefs", {"side": "b"})
    two.delete(("users",), "prefs")
    item = one.get(("users",), "prefs")
    assert item is not None and item.value == {"side": "a"}
    assert two.get(("users",), "prefs") is None


@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_list_namespaces_lists_only_its_collections(mem: Memory, a: str, b: str) -> None:
    """list_namespaces (no condition, prefix, suffix, max_depth) of one store names none of the other's namespaces.

    A leak means the tags() read of ``lg:n:`` tags lost its ``agent_id`` filter.
    """
    one = ElasticMemoryStore(memory=mem, collection=a)
    two = ElasticMemoryStore(memory=mem, collection=b)
    one.put(("docs", "mine-a"), "k", {"v": 1})
    two.put(("docs", "mine-b"), "k", {"v": 1})
    two.put(("other-b",), "k", {"v": 1})
    assert one.list_namespaces() == [("docs", "mine-a")]
    assert one.list_namespaces(prefix=("docs",)) == [("docs", "mine-a")]
    assert one.list_namespaces(suffix=("mine-b",)) == []
    assert one.list_namespaces(max_depth=1) == [("docs",)]
    assert two.list_namespaces() == [("docs", "mine-b"), ("other-b",)]


@pytest.mark.parametrize(("x", "y"), LABELS)
def test_a_namespace_prefix_never_matches_a_longer_or_look_alike_label(mem: Memory, x: str, y: str) -> None:
    """In one collection, the prefix (x,) finds x's items only, never those of (y,), and list_namespaces agrees.

    A leak means a prefix is matched as a string (LIKE, GLOB, startswith) instead of the
    exact ``lg:p:`` tag, or _tag_prefix/_matches compare labels loosely.
    """
    store = ElasticMemoryStore(memory=mem, collection="one")
    _fill(store, "x", (x, "inner"))
    _fill(store, "y", (y, "inner"))
    for label, side in ((x, "x"), (y, "y")):
        items = store.search((label,), query=QUERY, limit=50)
        assert {i.value["side"] for i in items} == {side} and len(items) == 4
        assert store.list_namespaces(prefix=(label,)) == [(label, "inner")]
        assert store.list_namespaces(prefix=(label, "*")) == [(label, "inner")]


# ------------------------------------------------------------------------- LangChain vector store
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_vector_store_search_returns_only_its_collection(mem: Memory, a: str, b: str, mode: str) -> None:
    """similarity_search of one collection's vector store returns none of the other's documents.

    A leak means the store's base filters (``agent_id``, ``kind``) were dropped.
    """
    stores = {
        side: ElasticMemoryVectorStore(memory=mem, collection=name, search_mode=mode)
        for side, name in (("a", a), ("b", b))
    }
    for side, store in stores.items():
        store.add_documents([Document(page_content=f"{QUERY} {i}", metadata={"side": side}) for i in range(4)])
    for side, store in stores.items():
        found = store.similarity_search(QUERY, k=50)
        assert len(found) == 4 and {d.metadata["side"] for d in found} == {side}


@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_vector_store_get_by_ids_returns_nothing_of_another_collection(mem: Memory, a: str, b: str) -> None:
    """get_by_ids with the other collection's ids returns nothing; an id held there is refused, its document kept.

    Ids are unique across the database: the refusal must not overwrite or move B's row.
    """
    one = ElasticMemoryVectorStore(memory=mem, collection=a)
    two = ElasticMemoryVectorStore(memory=mem, collection=b)
    theirs = two.add_texts([f"{QUERY} of b"], ids=["shared-id"])
    assert one.get_by_ids(theirs) == []
    with pytest.raises(UsageError):
        one.add_texts([f"{QUERY} of a"], ids=["shared-id"])
    assert [d.page_content for d in two.get_by_ids(["shared-id"])] == [f"{QUERY} of b"]
