"""ElasticMemoryVectorStore: a contract suite (LlamaIndex ships none).

Writes (upsert, delete by document, delete_nodes, clear), reads (get_nodes, the node
round trip), every query mode with its scores, every filter operator and condition
(nested too), the truly async twins, the real consumers (VectorStoreIndex, VectorMemoryBlock
in Memory), serialisation and bad input. A fresh store per test.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import ChatMessage
from llama_index.core.memory import Memory as LlamaMemory
from llama_index.core.memory import VectorMemoryBlock
from llama_index.core.schema import (
    BaseNode,
    Document,
    IndexNode,
    MetadataMode,
    NodeRelationship,
    RelatedNodeInfo,
    TextNode,
)
from llama_index.core.vector_stores.types import (
    BasePydanticVectorStore,
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
)
from llama_index.core.vector_stores.utils import build_metadata_filter_fn

from elastic_memory import AsyncMemory, EmbeddingMismatchError, Memory
from elastic_memory.testing import FakeEmbedder
from llama_index.vector_stores.elastic_memory import NODE_ID_KEY, ElasticMemoryVectorStore

Mode = VectorStoreQueryMode
Op = FilterOperator


class HashEmbedding(BaseEmbedding):
    """A deterministic bag-of-words embedding (elastic-memory's FakeEmbedder) as a LlamaIndex model."""

    dim: int = 16

    @classmethod
    def class_name(cls) -> str:
        return "HashEmbedding"

    def _vector(self, text: str) -> list[float]:
        return [float(x) for x in FakeEmbedder(self.dim).embed([text])[0]]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    async def _aget_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)


class AsyncOnlyEmbedding(HashEmbedding):
    """Once ``refuse_sync`` is set, refuses every sync call: the async twins must embed through the async API."""

    refuse_sync: bool = False

    def _get_query_embedding(self, query: str) -> list[float]:
        assert not self.refuse_sync, "sync embedding called"
        return self._vector(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        assert not self.refuse_sync, "sync embedding called"
        return self._vector(text)


def node(
    id_: str,
    text: str,
    embedding: Sequence[float] | None,
    metadata: dict[str, Any] | None = None,
    ref_doc: str | None = None,
) -> TextNode:
    out = TextNode(id_=id_, text=text, embedding=None if embedding is None else list(embedding))
    out.metadata = metadata or {}
    if ref_doc is not None:
        out.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=ref_doc)
    return out


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def q(embedding: Sequence[float] | None = None, k: int = 10, **fields: Any) -> VectorStoreQuery:
    return VectorStoreQuery(
        query_embedding=None if embedding is None else list(embedding), similarity_top_k=k, **fields
    )


QUERY = [1.0, 0.0, 0.3]
# "pie" and its near-duplicate "tart" are nearest the query; "cake" points elsewhere; "far" away.
GEOMETRY = {
    "pie": [1.0, 0.0, 0.0],
    "tart": [1.0, 0.05, 0.0],
    "cake": [0.5, 0.0, 0.866],
    "far": [-1.0, 0.0, -0.3],
}
TEXTS = {
    "pie": "apple pie with cinnamon",
    "tart": "apple tart with cream",
    "cake": "cherry cake",
    "far": "winter tyres for the car",
}


@pytest.fixture
def store(location: str) -> Iterator[ElasticMemoryVectorStore]:
    """An empty store, on a SQLite file and on PostgreSQL (``conftest.py``)."""
    with ElasticMemoryVectorStore(path=location) as s:
        yield s


@pytest.fixture
def seeded(store: ElasticMemoryVectorStore) -> ElasticMemoryVectorStore:
    store.add([node(k, TEXTS[k], v, {"key": k}) for k, v in GEOMETRY.items()])
    return store


@pytest.fixture
def shared(tmp_path: Path) -> Iterator[Memory]:
    """An open core store with its own embedder (16-d hashing)."""
    with Memory.open(tmp_path / "shared.db", embedder=FakeEmbedder()) as mem:
        yield mem


def ids(store: ElasticMemoryVectorStore, query: VectorStoreQuery, **kwargs: Any) -> list[str]:
    return list(store.query(query, **kwargs).ids or [])


# ---------------------------------------------------------------- the class
def test_is_a_pydantic_vector_store_that_stores_text(store: ElasticMemoryVectorStore) -> None:
    assert isinstance(store, BasePydanticVectorStore)
    assert store.stores_text is True
    assert store.is_embedding_query is True
    assert ElasticMemoryVectorStore.class_name() == "ElasticMemoryVectorStore"


def test_client_is_the_core_memory(store: ElasticMemoryVectorStore) -> None:
    assert isinstance(store.client, Memory)
    assert store.client is store.memory
    assert isinstance(store.amemory, AsyncMemory)


# ------------------------------------------------------------------ writes
def test_add_returns_the_node_ids_in_order(store: ElasticMemoryVectorStore) -> None:
    assert store.add([node("b", "bee", [0, 1.0]), node("a", "ay", [1.0, 0])]) == ["b", "a"]


def test_add_of_nothing_stores_nothing(store: ElasticMemoryVectorStore) -> None:
    assert store.add([]) == []
    assert store.get_nodes() == []


def test_add_upserts_by_node_id(store: ElasticMemoryVectorStore) -> None:
    store.add([node("n", "first text", [1.0, 0], {"v": 1})])
    store.add([node("n", "second text", [0, 1.0], {"v": 2})])
    [found] = store.get_nodes()
    assert (found.get_content(), found.metadata) == ("second text", {"v": 2})
    assert ids(store, q([0, 1.0])) == ["n"]
    assert store.query(q([0, 1.0])).similarities == pytest.approx([1.0])


def test_a_repeated_id_in_one_batch_keeps_the_last_node(store: ElasticMemoryVectorStore) -> None:
    assert store.add([node("n", "old", [1.0, 0]), node("n", "new", [0, 1.0])]) == ["n", "n"]
    assert [n.get_content() for n in store.get_nodes()] == ["new"]


def test_the_stored_vector_is_the_nodes_embedding(store: ElasticMemoryVectorStore) -> None:
    """Kept as the unit vector of the node's embedding (cosine is what search uses)."""
    store.add([node("n", "text", [3.0, 0.0, 4.0])])
    assert store.memory.vectors(["n"])["n"] == pytest.approx([0.6, 0.0, 0.8], abs=1e-6)


def test_a_file_without_embed_model_is_pinned_to_supplied_vectors(store: ElasticMemoryVectorStore) -> None:
    store.add([node("n", "text", [1.0, 2.0, 3.0])])
    stats = store.memory.stats()
    assert (stats["embedding_model"], stats["embedding_dimension"]) == ("supplied", 3)


# -------------------------------------------------------------- round trip
def rich_node() -> TextNode:
    n = TextNode(
        id_="chunk-1",
        text="Rivers flow to the sea.",
        embedding=[0.2, 0.4, 0.9],
        metadata={"file_name": "rivers.md", "page": 3, "authors": ["ana", "rui"], "extra": {"lang": "en"}},
        excluded_embed_metadata_keys=["file_name"],
        excluded_llm_metadata_keys=["page"],
        metadata_template="{key}=>{value}",
        text_template="{metadata_str}\n\n{content}",
    )
    n.relationships = {
        NodeRelationship.SOURCE: RelatedNodeInfo(node_id="doc-1", metadata={"kind": "doc"}),
        NodeRelationship.PREVIOUS: RelatedNodeInfo(node_id="chunk-0"),
        NodeRelationship.NEXT: RelatedNodeInfo(node_id="chunk-2"),
        NodeRelationship.PARENT: RelatedNodeInfo(node_id="section-1"),
    }
    return n


def assert_same_node(found: BaseNode, original: TextNode) -> None:
    assert isinstance(found, TextNode)
    assert found.node_id == original.node_id
    assert found.get_content() == original.get_content()
    assert found.metadata == original.metadata
    assert found.relationships == original.relationships
    assert found.ref_doc_id == "doc-1"
    assert found.excluded_embed_metadata_keys == original.excluded_embed_metadata_keys
    assert found.excluded_llm_metadata_keys == original.excluded_llm_metadata_keys
    assert found.get_content(MetadataMode.LLM) == original.get_content(MetadataMode.LLM)
    assert found.embedding is None  # nodes come back without their embedding


def test_get_nodes_round_trips_text_metadata_and_relationships(store: ElasticMemoryVectorStore) -> None:
    store.add([rich_node()])
    [found] = store.get_nodes(["chunk-1"])
    assert_same_node(found, rich_node())


def test_query_round_trips_text_metadata_and_relationships(store: ElasticMemoryVectorStore) -> None:
    store.add([rich_node()])
    [found] = store.query(q([0.2, 0.4, 0.9], k=1)).nodes or []
    assert_same_node(found, rich_node())


def test_an_index_node_keeps_its_type(store: ElasticMemoryVectorStore) -> None:
    store.add([IndexNode(id_="i", text="points at another index", index_id="other", embedding=[1.0, 0.0])])
    [found] = store.get_nodes(["i"])
    assert isinstance(found, IndexNode)
    assert found.index_id == "other"


def test_node_metadata_is_filterable_at_the_top_level(store: ElasticMemoryVectorStore) -> None:
    """What the core holds: the node's metadata keys, the serialised node and the id keys."""
    store.add([node("n", "text", [1.0, 0], {"lang": "en"}, ref_doc="d")])
    record = store.memory.get("n")
    assert record is not None
    assert record.content == "text"
    assert record.metadata["lang"] == "en"
    assert record.metadata["ref_doc_id"] == record.metadata["doc_id"] == "d"
    assert record.metadata[NODE_ID_KEY] == "n"
    assert set(record.metadata) >= {"_node_content", "_node_type", "document_id"}


# ----------------------------------------------------------------- deletes
def docs_store(store: ElasticMemoryVectorStore) -> ElasticMemoryVectorStore:
    store.add(
        [
            node("a1", "alpha one", [1.0, 0], ref_doc="A"),
            node("a2", "alpha two", [0.9, 0.1], ref_doc="A"),
            node("b1", "beta one", [0, 1.0], ref_doc="B"),
            node("loose", "no document", [0.5, 0.5]),
        ]
    )
    return store


def remaining(store: ElasticMemoryVectorStore) -> set[str]:
    return {n.node_id for n in store.get_nodes()}


def test_delete_erases_the_nodes_of_one_document(store: ElasticMemoryVectorStore) -> None:
    docs_store(store).delete("A")
    assert remaining(store) == {"b1", "loose"}


def test_delete_of_an_unknown_document_changes_nothing(store: ElasticMemoryVectorStore) -> None:
    docs_store(store).delete("nope")
    assert remaining(store) == {"a1", "a2", "b1", "loose"}


def test_delete_nodes_by_ids(store: ElasticMemoryVectorStore) -> None:
    docs_store(store).delete_nodes(["a1", "b1", "missing"])
    assert remaining(store) == {"a2", "loose"}


def test_delete_nodes_by_filters(store: ElasticMemoryVectorStore) -> None:
    docs_store(store).delete_nodes(filters=MetadataFilters.from_dicts([{"key": "ref_doc_id", "value": "A"}]))
    assert remaining(store) == {"b1", "loose"}


def test_delete_nodes_by_ids_and_filters_erases_only_nodes_meeting_both(store: ElasticMemoryVectorStore) -> None:
    docs_store(store).delete_nodes(["a1", "b1"], MetadataFilters.from_dicts([{"key": "ref_doc_id", "value": "A"}]))
    assert remaining(store) == {"a2", "b1", "loose"}


def test_delete_nodes_with_an_empty_id_list_erases_nothing(store: ElasticMemoryVectorStore) -> None:
    docs_store(store).delete_nodes([])
    assert remaining(store) == {"a1", "a2", "b1", "loose"}


def test_delete_nodes_without_ids_or_filters_is_refused(store: ElasticMemoryVectorStore) -> None:
    with pytest.raises(ValueError, match="clear"):
        docs_store(store).delete_nodes()
    assert len(remaining(store)) == 4


def test_clear_erases_every_node(store: ElasticMemoryVectorStore) -> None:
    docs_store(store).clear()
    assert store.get_nodes() == []
    assert store.query(q([1.0, 0])).ids == []


def test_clear_leaves_other_collections_and_the_memory_loop(shared: Memory) -> None:
    mine = ElasticMemoryVectorStore(memory=shared, collection="docs")
    theirs = ElasticMemoryVectorStore(memory=shared, collection="other")
    mine.add([node("m", "mine", None)])
    theirs.add([node("t", "theirs", None)])
    note = shared.remember("a note of the agent itself", agent_id="docs")
    shared.record_turn("I like tea.", "Noted.", session_id="s")
    shared.drain()  # the loop's background work is done before counting
    before = shared.stats()["active_memories"]
    mine.clear()
    assert [n.node_id for n in theirs.get_nodes()] == ["t"]
    assert shared.get(note) is not None
    assert shared.stats()["active_memories"] == before - 1
    assert shared.recall("", filters={"kind": "chunk"})


def test_clear_of_a_large_collection_erases_every_page(store: ElasticMemoryVectorStore) -> None:
    store.add([node(f"n{i}", f"text {i}", [1.0, i / 1000]) for i in range(1100)])
    store.clear()
    assert store.get_nodes() == []


# ------------------------------------------------------------------- reads
def test_get_nodes_by_ids_keeps_their_order_and_skips_missing(seeded: ElasticMemoryVectorStore) -> None:
    assert [n.node_id for n in seeded.get_nodes(["far", "missing", "pie"])] == ["far", "pie"]


def test_get_nodes_by_filters(seeded: ElasticMemoryVectorStore) -> None:
    filters = MetadataFilters.from_dicts([{"key": "key", "value": ["pie", "cake"], "operator": "in"}])
    assert {n.node_id for n in seeded.get_nodes(filters=filters)} == {"pie", "cake"}


def test_get_nodes_by_ids_and_filters(seeded: ElasticMemoryVectorStore) -> None:
    filters = MetadataFilters.from_dicts([{"key": "key", "value": "pie", "operator": "!="}])
    assert [n.node_id for n in seeded.get_nodes(["pie", "far", "tart"], filters)] == ["far", "tart"]


def test_get_nodes_without_arguments_lists_the_collection(seeded: ElasticMemoryVectorStore) -> None:
    assert {n.node_id for n in seeded.get_nodes()} == set(GEOMETRY)


def test_get_nodes_lists_past_one_page(store: ElasticMemoryVectorStore) -> None:
    store.add([node(f"n{i}", f"text {i}", [1.0, i / 1000]) for i in range(1005)])
    assert len({n.node_id for n in store.get_nodes()}) == 1005


def test_get_nodes_by_many_ids_and_filters(store: ElasticMemoryVectorStore) -> None:
    """More ids than one page holds, with a filter: every match, in the order asked."""
    store.add([node(f"n{i}", f"text {i}", [1.0, i / 1000], {"odd": i % 2}) for i in range(1205)])
    wanted = [f"n{i}" for i in reversed(range(1205))]
    found = store.get_nodes(wanted, MetadataFilters(filters=[f("odd", 1)]))
    assert [n.node_id for n in found] == [i for i in wanted if int(i[1:]) % 2]


def test_get_nodes_of_an_empty_store(store: ElasticMemoryVectorStore) -> None:
    assert store.get_nodes() == []
    assert store.get_nodes(["x"]) == []


# ----------------------------------------------------------------- queries
@pytest.mark.parametrize("mode", [Mode.DEFAULT, Mode.TEXT_SEARCH, Mode.SPARSE, Mode.HYBRID, Mode.MMR])
def test_an_empty_store_returns_nothing(store: ElasticMemoryVectorStore, mode: Mode) -> None:
    result = store.query(q(QUERY, query_str="apple", mode=mode))
    assert (result.nodes, result.similarities, result.ids) == ([], [], [])


def test_default_ranks_by_cosine_and_reports_it(seeded: ElasticMemoryVectorStore) -> None:
    result = seeded.query(q(QUERY, k=4))
    expected = sorted(GEOMETRY, key=lambda k: -cosine(QUERY, GEOMETRY[k]))
    assert result.ids == expected
    assert result.similarities == pytest.approx([cosine(QUERY, GEOMETRY[k]) for k in expected], abs=1e-5)
    assert [n.node_id for n in result.nodes or []] == expected


def test_similarity_top_k_limits_the_results(seeded: ElasticMemoryVectorStore) -> None:
    assert ids(seeded, q(QUERY, k=2)) == ["pie", "tart"]


@pytest.mark.parametrize("mode", [Mode.DEFAULT, Mode.TEXT_SEARCH, Mode.SPARSE, Mode.HYBRID, Mode.MMR])
def test_a_result_count_of_zero_returns_nothing(seeded: ElasticMemoryVectorStore, mode: Mode) -> None:
    result = seeded.query(q(QUERY, k=0, query_str="apple", mode=mode))
    assert (result.nodes, result.similarities, result.ids) == ([], [], [])


def test_a_zero_count_query_is_still_checked(seeded: ElasticMemoryVectorStore) -> None:
    with pytest.raises(ValueError, match="mmr_threshold"):
        seeded.query(q(QUERY, k=0, mode=Mode.MMR, mmr_threshold=2.0))


def test_query_str_alone_is_embedded_by_the_embed_model(tmp_path: Path) -> None:
    embed = HashEmbedding()
    with ElasticMemoryVectorStore(path=tmp_path / "e.db", embed_model=embed) as store:
        store.add([node("a", "apples", embed.get_text_embedding("apples")), node("b", "boats", None)])
        assert ids(store, VectorStoreQuery(query_str="boats", similarity_top_k=1)) == ["b"]


def test_text_search_ranks_by_bm25(seeded: ElasticMemoryVectorStore) -> None:
    result = seeded.query(q(None, query_str="apple cinnamon", mode=Mode.TEXT_SEARCH))
    assert result.ids == ["pie", "tart"]
    similarities = result.similarities or []
    assert similarities[0] > similarities[1] > 0


def test_text_search_needs_no_embedding_and_ignores_one(seeded: ElasticMemoryVectorStore) -> None:
    by_text = ids(seeded, q(None, query_str="cherry", mode=Mode.TEXT_SEARCH))
    assert by_text == ids(seeded, q([-1.0, 0, 0], query_str="cherry", mode=Mode.TEXT_SEARCH)) == ["cake"]


def test_text_search_of_a_blank_query_returns_nothing(seeded: ElasticMemoryVectorStore) -> None:
    assert ids(seeded, q(None, query_str="   ", mode=Mode.TEXT_SEARCH)) == []


def test_hybrid_alpha_one_follows_the_vector_leg(seeded: ElasticMemoryVectorStore) -> None:
    query = q(GEOMETRY["cake"], k=2, query_str="winter tyres", mode=Mode.HYBRID, alpha=1.0)
    assert ids(seeded, query)[0] == "cake"


def test_hybrid_alpha_zero_follows_the_keyword_leg(seeded: ElasticMemoryVectorStore) -> None:
    query = q(GEOMETRY["cake"], k=2, query_str="winter tyres", mode=Mode.HYBRID, alpha=0.0)
    assert ids(seeded, query)[0] == "far"


def test_hybrid_scores_are_fused_and_descending(seeded: ElasticMemoryVectorStore) -> None:
    result = seeded.query(q(QUERY, k=4, query_str="apple", mode=Mode.HYBRID, alpha=0.5))
    similarities = result.similarities or []
    assert similarities == sorted(similarities, reverse=True)
    assert result.ids is not None and result.ids[0] in {"pie", "tart"}


def test_hybrid_top_k_sets_the_result_count(seeded: ElasticMemoryVectorStore) -> None:
    assert len(ids(seeded, q(QUERY, k=1, query_str="apple", mode=Mode.HYBRID, hybrid_top_k=3))) == 3


def test_mmr_picks_a_diverse_second_result(seeded: ElasticMemoryVectorStore) -> None:
    """Plain search returns the near-duplicate; MMR prefers the node pointing elsewhere."""
    assert ids(seeded, q(QUERY, k=2)) == ["pie", "tart"]
    result = seeded.query(q(QUERY, k=2, mode=Mode.MMR, mmr_threshold=0.5))
    assert result.ids == ["pie", "cake"]
    pie, cake = GEOMETRY["pie"], GEOMETRY["cake"]
    mmr = [0.5 * cosine(QUERY, pie), 0.5 * cosine(QUERY, cake) - 0.5 * cosine(cake, pie)]
    assert result.similarities == pytest.approx(mmr, abs=1e-5)


def test_mmr_threshold_one_is_plain_relevance(seeded: ElasticMemoryVectorStore) -> None:
    assert ids(seeded, q(QUERY, k=2, mode=Mode.MMR), mmr_threshold=1.0) == ["pie", "tart"]


def test_mmr_looks_only_at_the_prefetched_candidates(seeded: ElasticMemoryVectorStore) -> None:
    assert ids(seeded, q(QUERY, k=2, mode=Mode.MMR, mmr_threshold=0.5), mmr_prefetch_k=2) == ["pie", "tart"]


@pytest.mark.parametrize("mode", [Mode.DEFAULT, Mode.TEXT_SEARCH, Mode.HYBRID])
def test_similarities_never_increase(seeded: ElasticMemoryVectorStore, mode: Mode) -> None:
    similarities = seeded.query(q(QUERY, query_str="apple cherry car", mode=mode)).similarities or []
    assert len(similarities) >= 3
    assert similarities == sorted(similarities, reverse=True)


def test_doc_ids_keep_the_nodes_of_those_documents(store: ElasticMemoryVectorStore) -> None:
    assert set(ids(docs_store(store), q([1.0, 0], doc_ids=["B"]))) == {"b1"}


def test_node_ids_keep_those_nodes(seeded: ElasticMemoryVectorStore) -> None:
    assert ids(seeded, q(QUERY, node_ids=["far", "cake"])) == ["cake", "far"]


def test_an_empty_node_ids_list_restricts_nothing(seeded: ElasticMemoryVectorStore) -> None:
    """VectorStoreIndex.as_retriever passes node_ids=[] for a store that keeps text."""
    assert len(ids(seeded, q(QUERY, node_ids=[]))) == 4


def test_reads_record_no_access(seeded: ElasticMemoryVectorStore) -> None:
    seeded.query(q(QUERY))
    seeded.get_nodes(["pie"])
    record = seeded.memory.get("pie")
    assert record is not None and record.access_count == 0


# ----------------------------------------------------------------- filters
FILTER_DATA = {
    "n1": {"year": 2020, "genre": "drama", "tags": ["a", "b"], "title": "The Quiet Sea", "rating": 4.5},
    "n2": {"year": 2021, "genre": "comedy", "tags": ["b"], "title": "quiet riot", "rating": 3},
    "n3": {"year": 2022, "genre": "drama", "tags": [], "title": ""},
    "n4": {"genre": "horror"},
}


@pytest.fixture
def films(store: ElasticMemoryVectorStore) -> ElasticMemoryVectorStore:
    store.add([node(k, f"film {k}", [1.0, i / 10], md) for i, (k, md) in enumerate(FILTER_DATA.items())])
    return store


def reference(filters: MetadataFilters) -> set[str]:
    """What LlamaIndex's own filter function (SimpleVectorStore's) selects."""
    match = build_metadata_filter_fn(lambda k: FILTER_DATA[k], filters)
    return {k for k in FILTER_DATA if match(k)}


def selected(store: ElasticMemoryVectorStore, filters: MetadataFilters) -> set[str]:
    return set(ids(store, q([1.0, 0], filters=filters)))


@pytest.mark.parametrize(
    ("key", "operator", "value", "expected"),
    [
        ("genre", Op.EQ, "drama", {"n1", "n3"}),
        ("year", Op.EQ, 2021, {"n2"}),
        ("genre", Op.NE, "drama", {"n2", "n4"}),
        ("year", Op.GT, 2020, {"n2", "n3"}),
        ("year", Op.GTE, 2021, {"n2", "n3"}),
        ("year", Op.LT, 2021, {"n1"}),
        ("year", Op.LTE, 2021, {"n1", "n2"}),
        ("rating", Op.GT, 3.5, {"n1"}),
        ("title", Op.GT, "p", {"n2"}),
        ("genre", Op.IN, ["drama", "horror"], {"n1", "n3", "n4"}),
        ("year", Op.IN, [2020, 2022], {"n1", "n3"}),
        ("genre", Op.NIN, ["drama"], {"n2", "n4"}),
        ("tags", Op.ANY, ["a", "x"], {"n1"}),
        ("tags", Op.ANY, ["b"], {"n1", "n2"}),
        ("tags", Op.ALL, ["a", "b"], {"n1"}),
        ("tags", Op.ALL, ["b"], {"n1", "n2"}),
        ("tags", Op.CONTAINS, "b", {"n1", "n2"}),
        ("title", Op.TEXT_MATCH, "Quiet", {"n1"}),
        ("title", Op.TEXT_MATCH_INSENSITIVE, "QUIET", {"n1", "n2"}),
        ("tags", Op.IS_EMPTY, None, {"n3", "n4"}),
        ("title", Op.IS_EMPTY, None, {"n3", "n4"}),
        ("missing", Op.NE, "x", {"n1", "n2", "n3", "n4"}),
        ("missing", Op.EQ, "x", set()),
        ("rating", Op.EQ, 3.0, {"n2"}),
        ("tags", Op.ANY, [], set()),
        ("tags", Op.ALL, [], {"n1", "n2", "n3"}),
        ("genre", Op.IN, [], set()),
        ("genre", Op.NIN, [], {"n1", "n2", "n3", "n4"}),
    ],
)
def test_every_operator_selects_what_llamaindex_selects(
    films: ElasticMemoryVectorStore, key: str, operator: Op, value: Any, expected: set[str]
) -> None:
    filters = MetadataFilters(filters=[MetadataFilter(key=key, value=value, operator=operator)])
    assert reference(filters) == expected
    assert selected(films, filters) == expected


def f(key: str, value: Any, operator: Op = Op.EQ) -> MetadataFilter:
    return MetadataFilter(key=key, value=value, operator=operator)


@pytest.mark.parametrize(
    ("condition", "filters", "expected"),
    [
        (FilterCondition.AND, [("genre", "drama", Op.EQ), ("year", 2020, Op.GT)], {"n3"}),
        (FilterCondition.OR, [("genre", "drama", Op.EQ), ("year", 2021, Op.EQ)], {"n1", "n2", "n3"}),
        (FilterCondition.NOT, [("genre", "drama", Op.EQ)], {"n2", "n4"}),
    ],
)
def test_conditions_combine_like_llamaindex(
    films: ElasticMemoryVectorStore,
    condition: FilterCondition,
    filters: list[tuple[str, Any, Op]],
    expected: set[str],
) -> None:
    combined = MetadataFilters(filters=[f(*args) for args in filters], condition=condition)
    assert reference(combined) == expected
    assert selected(films, combined) == expected


def test_not_means_none_of_the_filters_match(films: ElasticMemoryVectorStore) -> None:
    filters = MetadataFilters(filters=[f("genre", "drama"), f("year", 2021)], condition=FilterCondition.NOT)
    assert reference(filters) == {"n4"}
    assert selected(films, filters) == {"n4"}


def test_nested_filters_and_of_or(films: ElasticMemoryVectorStore) -> None:
    inner = MetadataFilters(filters=[f("year", 2020), f("title", None, Op.IS_EMPTY)], condition=FilterCondition.OR)
    assert selected(films, MetadataFilters(filters=[f("genre", "drama"), inner])) == {"n1", "n3"}


def test_nested_filters_or_of_not(films: ElasticMemoryVectorStore) -> None:
    not_drama = MetadataFilters(filters=[f("genre", "drama")], condition=FilterCondition.NOT)
    outer = MetadataFilters(filters=[not_drama, f("year", 2022)], condition=FilterCondition.OR)
    assert selected(films, outer) == {"n2", "n3", "n4"}


def test_nested_filters_three_levels(films: ElasticMemoryVectorStore) -> None:
    deepest = MetadataFilters(filters=[f("tags", "a", Op.CONTAINS)], condition=FilterCondition.NOT)
    middle = MetadataFilters(filters=[deepest, f("year", 2021, Op.GTE)], condition=FilterCondition.AND)
    outer = MetadataFilters(filters=[middle, f("genre", "horror")], condition=FilterCondition.OR)
    assert selected(films, outer) == {"n2", "n3", "n4"}


def test_empty_filters_match_everything(films: ElasticMemoryVectorStore) -> None:
    assert selected(films, MetadataFilters(filters=[])) == set(FILTER_DATA)
    empty_not = MetadataFilters(filters=[MetadataFilters(filters=[])], condition=FilterCondition.NOT)
    assert selected(films, empty_not) == set()


def test_filters_nested_too_deep_are_refused(films: ElasticMemoryVectorStore) -> None:
    filters = MetadataFilters(filters=[f("genre", "drama")])
    for _ in range(20):
        filters = MetadataFilters(filters=[filters], condition=FilterCondition.NOT)
    with pytest.raises(ValueError, match="levels deep"):
        films.query(q([1.0, 0], filters=filters))


def test_dotted_keys_reach_nested_metadata(store: ElasticMemoryVectorStore) -> None:
    store.add([node("x", "nested", [1.0, 0], {"author": {"name": "ana"}}), node("y", "other", [1.0, 0])])
    assert selected(store, MetadataFilters(filters=[f("author.name", "ana")])) == {"x"}


@pytest.mark.parametrize("mode", [Mode.TEXT_SEARCH, Mode.SPARSE, Mode.HYBRID, Mode.MMR])
def test_filters_apply_in_every_mode(films: ElasticMemoryVectorStore, mode: Mode) -> None:
    filters = MetadataFilters(filters=[f("genre", "drama")])
    assert set(ids(films, q([1.0, 0], query_str="film", mode=mode, filters=filters))) == {"n1", "n3"}


def test_a_selective_filter_still_returns_k(store: ElasticMemoryVectorStore) -> None:
    """The matching nodes are the farthest from the query, yet k of them come back."""
    store.add([node(f"near{i}", f"near {i}", [1.0, i / 100], {"rare": "no"}) for i in range(60)])
    store.add([node(f"far{i}", f"far {i}", [-1.0, i / 100], {"rare": "yes"}) for i in range(3)])
    found = ids(store, q([1.0, 0], k=3, filters=MetadataFilters(filters=[f("rare", "yes")])))
    assert sorted(found) == ["far0", "far1", "far2"]


# -------------------------------------------------------------- bad input
@pytest.mark.parametrize("mode", [Mode.SEMANTIC_HYBRID, Mode.SVM, Mode.LOGISTIC_REGRESSION, Mode.LINEAR_REGRESSION])
def test_unsupported_modes_are_refused(seeded: ElasticMemoryVectorStore, mode: Mode) -> None:
    with pytest.raises(ValueError, match="not supported"):
        seeded.query(q(QUERY, query_str="apple", mode=mode))


@pytest.mark.parametrize(
    ("operator", "value"),
    [
        (Op.GT, [1, 2]),
        (Op.EQ, ["a"]),
        (Op.IN, "drama"),
        (Op.NIN, 3),
        (Op.ANY, "a"),
        (Op.ALL, "a"),
        (Op.CONTAINS, ["a"]),
        (Op.TEXT_MATCH, 3),
        (Op.TEXT_MATCH_INSENSITIVE, ["a"]),
        (Op.EQ, None),
        (Op.LT, None),
    ],
)
def test_filter_values_of_the_wrong_type_are_refused(films: ElasticMemoryVectorStore, operator: Op, value: Any) -> None:
    filters = MetadataFilters(filters=[f("genre", value, operator)])
    with pytest.raises(ValueError, match="genre"):
        films.query(q([1.0, 0], filters=filters))
    with pytest.raises(ValueError, match="genre"):
        films.delete_nodes(filters=filters)
    assert len(films.get_nodes()) == 4


def test_a_filter_key_the_store_cannot_address_is_refused(films: ElasticMemoryVectorStore) -> None:
    with pytest.raises(ValueError, match="not allowed"):
        films.query(q([1.0, 0], filters=MetadataFilters(filters=[f("file name", "x")])))


def test_filters_of_another_type_are_refused(films: ElasticMemoryVectorStore) -> None:
    with pytest.raises(ValueError, match="MetadataFilters"):
        films.get_nodes(filters={"genre": "drama"})  # type: ignore[arg-type]


def test_nodes_without_embeddings_are_refused_when_the_store_cannot_embed(store: ElasticMemoryVectorStore) -> None:
    with pytest.raises(ValueError, match="no embedding"):
        store.add([node("ok", "has one", [1.0, 0]), node("bad", "has none", None)])
    assert store.get_nodes() == []


def test_a_node_without_text_is_refused(store: ElasticMemoryVectorStore) -> None:
    with pytest.raises(ValueError, match="no text"):
        store.add([node("ok", "text", [1.0, 0]), node("blank", "  ", [1.0, 0])])
    assert store.get_nodes() == []


@pytest.mark.parametrize("embedding", [[], [0.0, 0.0], [1.0, math.nan]])
def test_an_unusable_embedding_is_refused(store: ElasticMemoryVectorStore, embedding: list[float]) -> None:
    with pytest.raises(ValueError, match="unusable embedding"):
        store.add([node("ok", "text", [1.0, 0]), node("bad", "text", embedding)])
    assert store.get_nodes() == []


def test_an_embedding_of_another_width_is_refused(store: ElasticMemoryVectorStore) -> None:
    store.add([node("a", "two wide", [1.0, 0])])
    with pytest.raises(EmbeddingMismatchError):
        store.add([node("b", "three wide", [0, 1.0, 0]), node("c", "three wide", [1.0, 0, 0])])
    assert [n.node_id for n in store.get_nodes()] == ["a"]


def test_embeddings_of_several_widths_in_one_batch_are_refused(store: ElasticMemoryVectorStore) -> None:
    with pytest.raises(ValueError, match="widths"):
        store.add([node("b", "ok", [0, 1.0]), node("c", "three wide", [1.0, 0, 0])])
    assert store.get_nodes() == []


def test_a_query_embedding_of_another_width_is_refused(seeded: ElasticMemoryVectorStore) -> None:
    with pytest.raises(EmbeddingMismatchError):
        seeded.query(q([1.0, 0.0]))


def test_a_query_without_an_embedding_the_store_cannot_make_is_refused(seeded: ElasticMemoryVectorStore) -> None:
    with pytest.raises(ValueError, match="cannot embed"):
        seeded.query(VectorStoreQuery(query_str="apple"))


def test_a_query_with_neither_embedding_nor_text_is_refused(seeded: ElasticMemoryVectorStore) -> None:
    with pytest.raises(ValueError, match="query_embedding"):
        seeded.query(VectorStoreQuery())


@pytest.mark.parametrize("mode", [Mode.TEXT_SEARCH, Mode.SPARSE])
def test_text_search_without_query_str_is_refused(seeded: ElasticMemoryVectorStore, mode: Mode) -> None:
    with pytest.raises(ValueError, match="query_str"):
        seeded.query(q(QUERY, mode=mode))


@pytest.mark.parametrize(
    ("fields", "kwargs", "match"),
    [
        ({"similarity_top_k": -1}, {}, "similarity_top_k"),
        ({"mode": Mode.HYBRID, "hybrid_top_k": -1, "query_str": "x"}, {}, "hybrid_top_k"),
        ({"mode": Mode.SPARSE, "sparse_top_k": 1001, "query_str": "x"}, {}, "sparse_top_k"),
        ({"similarity_top_k": 1001}, {}, "similarity_top_k"),
        ({"mode": Mode.HYBRID, "alpha": 1.5, "query_str": "x"}, {}, "alpha"),
        ({"mode": Mode.MMR, "mmr_threshold": -0.1}, {}, "mmr_threshold"),
        ({"mode": Mode.MMR}, {"mmr_prefetch_factor": 0.5}, "mmr_prefetch_factor"),
        ({}, {"unknown_option": 1}, "unknown_option"),
    ],
)
def test_bad_query_settings_are_refused(
    seeded: ElasticMemoryVectorStore, fields: dict[str, Any], kwargs: dict[str, Any], match: str
) -> None:
    query = VectorStoreQuery(query_embedding=QUERY, **{"similarity_top_k": 2, **fields})
    with pytest.raises(ValueError, match=match):
        seeded.query(query, **kwargs)


@pytest.mark.parametrize("method", ["add", "delete", "delete_nodes"])
def test_unknown_keyword_arguments_are_refused(seeded: ElasticMemoryVectorStore, method: str) -> None:
    calls: dict[str, Callable[[], Any]] = {
        "add": lambda: seeded.add([node("x", "x", [1.0, 0, 0])], batch=2),
        "delete": lambda: seeded.delete("doc", hard=True),
        "delete_nodes": lambda: seeded.delete_nodes(["pie"], hard=True),
    }
    with pytest.raises(ValueError, match="unexpected"):
        calls[method]()
    assert len(seeded.get_nodes()) == 4


def test_an_id_held_outside_the_collection_is_refused(shared: Memory) -> None:
    shared.remember("the agent's own note", id="taken")
    store = ElasticMemoryVectorStore(memory=shared)
    with pytest.raises(ValueError, match="taken"):
        store.add([node("taken", "a node", None)])
    record = shared.get("taken")
    assert record is not None and record.content == "the agent's own note"


# ------------------------------------------------------------ construction
def test_path_and_memory_are_exclusive(tmp_path: Path, shared: Memory) -> None:
    with pytest.raises(ValueError, match="exactly one"):
        ElasticMemoryVectorStore()
    with pytest.raises(ValueError, match="exactly one"):
        ElasticMemoryVectorStore(path=tmp_path / "x.db", memory=shared)


def test_embed_model_with_an_open_memory_is_refused(shared: Memory) -> None:
    with pytest.raises(ValueError, match="embed_model"):
        ElasticMemoryVectorStore(memory=shared, embed_model=HashEmbedding())


def test_stores_text_cannot_be_turned_off(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="stores_text"):
        ElasticMemoryVectorStore(path=tmp_path / "x.db", stores_text=False)


def test_a_bad_collection_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="collection"):
        ElasticMemoryVectorStore(path=tmp_path / "x.db", collection=" ")


def test_flat_metadata_refuses_nested_metadata(tmp_path: Path) -> None:
    with ElasticMemoryVectorStore(path=tmp_path / "x.db", flat_metadata=True) as store:
        with pytest.raises(ValueError, match="Value for metadata a"):
            store.add([node("ok", "flat", [1.0, 0], {"a": 1}), node("n", "nested", [1.0, 0], {"a": {"b": 1}})])
        assert store.get_nodes() == []


def test_collections_on_one_memory_do_not_see_each_other(shared: Memory) -> None:
    a = ElasticMemoryVectorStore(memory=shared, collection="a")
    b = ElasticMemoryVectorStore(memory=shared, collection="b")
    a.add([node("in-a", "apple", None)])
    b.add([node("in-b", "apple", None)])
    assert ids(a, VectorStoreQuery(query_str="apple", similarity_top_k=5)) == ["in-a"]
    assert [n.node_id for n in b.get_nodes()] == ["in-b"]


def test_notes_written_through_the_core_are_not_nodes(shared: Memory) -> None:
    shared.remember("apple notes of the agent")
    store = ElasticMemoryVectorStore(memory=shared)
    store.add([node("n", "apple node", None)])
    assert ids(store, VectorStoreQuery(query_str="apple", similarity_top_k=5)) == ["n"]
    assert ids(store, q(None, query_str="apple", mode=Mode.TEXT_SEARCH)) == ["n"]


def test_with_memory_the_core_embedder_embeds_nodes_and_queries(shared: Memory) -> None:
    store = ElasticMemoryVectorStore(memory=shared)
    store.add([node("a", "red apples", None), node("b", "blue boats", None)])
    assert ids(store, VectorStoreQuery(query_str="boats", similarity_top_k=1)) == ["b"]
    assert store.memory.vectors(["a"])["a"] == pytest.approx(FakeEmbedder().embed(["red apples"])[0].tolist())


def test_the_embed_model_embeds_nodes_without_an_embedding(tmp_path: Path) -> None:
    """As LlamaIndex embeds nodes: their content with the metadata meant for embedding."""
    embed = HashEmbedding()
    with ElasticMemoryVectorStore(path=tmp_path / "e.db", embed_model=embed) as store:
        n = node("a", "red apples", None, {"colour": "red"})
        store.add([n])
        expected = embed.get_text_embedding(n.get_content(metadata_mode=MetadataMode.EMBED))
        assert store.memory.vectors(["a"])["a"] == pytest.approx(list(np.asarray(expected) / np.linalg.norm(expected)))


def test_closing_a_path_store_closes_its_memory(tmp_path: Path) -> None:
    store = ElasticMemoryVectorStore(path=tmp_path / "x.db")
    store.close()
    with pytest.raises(ValueError, match="closed"):
        store.memory.stats()


def test_closing_a_memory_store_leaves_the_memory_open(shared: Memory) -> None:
    ElasticMemoryVectorStore(memory=shared).close()
    assert shared.stats()["path"]


# ----------------------------------------------------------- serialisation
def test_to_dict_carries_the_path_and_collection(tmp_path: Path) -> None:
    with ElasticMemoryVectorStore(path=tmp_path / "x.db", collection="docs") as store:
        data = store.to_dict()
    assert data["path"] == str(tmp_path / "x.db")
    assert data["collection"] == "docs"
    assert data["class_name"] == "ElasticMemoryVectorStore"


def test_to_dict_holds_an_absolute_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with ElasticMemoryVectorStore(path="relative.db") as store:
        assert store.to_dict()["path"] == str(tmp_path / "relative.db")


def test_from_dict_reopens_the_same_file(tmp_path: Path) -> None:
    with ElasticMemoryVectorStore(path=tmp_path / "x.db", collection="docs") as store:
        store.add([node("n", "kept", [1.0, 0])])
        data = store.to_dict()
    with ElasticMemoryVectorStore.from_dict(data) as again:
        assert again.collection == "docs"
        assert [n.get_content() for n in again.get_nodes()] == ["kept"]
        assert again.query(q([1.0, 0])).ids == ["n"]


def test_from_json_reopens_the_same_file(tmp_path: Path) -> None:
    with ElasticMemoryVectorStore(path=tmp_path / "x.db") as store:
        store.add([node("n", "kept", [1.0, 0])])
        text = store.to_json()
    with ElasticMemoryVectorStore.from_json(text) as again:
        assert [n.node_id for n in again.get_nodes()] == ["n"]


def test_from_dict_takes_the_embed_model_again(tmp_path: Path) -> None:
    embed = HashEmbedding()
    with ElasticMemoryVectorStore(path=tmp_path / "x.db", embed_model=embed) as store:
        store.add([node("n", "boats", None)])
        data = store.to_dict()
    assert "embed_model" not in data
    with ElasticMemoryVectorStore.from_dict(data, embed_model=embed) as again:
        assert ids(again, VectorStoreQuery(query_str="boats", similarity_top_k=1)) == ["n"]


# ---------------------------------------------------------- truly async
SYNC_CORE = ["remember_many", "recall", "get_many", "forget", "vectors", "embed_query", "explain"]
SYNC_STORE = ["add", "query", "get_nodes", "delete", "delete_nodes", "clear"]


@pytest.fixture
def no_sync(monkeypatch: pytest.MonkeyPatch, astore: ElasticMemoryVectorStore) -> None:
    """Every sync path of the core facade, of the store and of its embed model raises from here on."""
    assert isinstance(astore.embed_model, AsyncOnlyEmbedding)
    astore.embed_model.refuse_sync = True

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a sync method was called by an async one")

    for name in SYNC_CORE:
        monkeypatch.setattr(Memory, name, refuse)
    for name in SYNC_STORE:
        monkeypatch.setattr(ElasticMemoryVectorStore, name, refuse)


@pytest.fixture
async def astore(tmp_path: Path) -> AsyncIterator[ElasticMemoryVectorStore]:
    store = ElasticMemoryVectorStore(path=tmp_path / "async.db", embed_model=AsyncOnlyEmbedding())
    await store.async_add([node(k, TEXTS[k], None, {"key": k}, ref_doc=f"doc-{k}") for k in GEOMETRY])
    yield store
    await store.aclose()


async def test_async_add_is_truly_async(astore: ElasticMemoryVectorStore, no_sync: None) -> None:
    assert await astore.async_add([node("new", "new text", None)]) == ["new"]
    assert [n.node_id for n in await astore.aget_nodes(["new"])] == ["new"]


@pytest.mark.parametrize("mode", [Mode.DEFAULT, Mode.TEXT_SEARCH, Mode.HYBRID, Mode.MMR])
async def test_aquery_is_truly_async(astore: ElasticMemoryVectorStore, no_sync: None, mode: Mode) -> None:
    result = await astore.aquery(VectorStoreQuery(query_str="apple pie", similarity_top_k=2, mode=mode))
    assert result.ids and result.ids[0] in {"pie", "tart"}


async def test_aget_nodes_is_truly_async(astore: ElasticMemoryVectorStore, no_sync: None) -> None:
    filters = MetadataFilters(filters=[f("key", ["pie", "far"], Op.IN)])
    assert {n.node_id for n in await astore.aget_nodes(filters=filters)} == {"pie", "far"}
    assert [n.node_id for n in await astore.aget_nodes(["cake"])] == ["cake"]


async def test_adelete_is_truly_async(astore: ElasticMemoryVectorStore, no_sync: None) -> None:
    await astore.adelete("doc-pie")
    assert {n.node_id for n in await astore.aget_nodes()} == {"tart", "cake", "far"}


async def test_adelete_nodes_is_truly_async(astore: ElasticMemoryVectorStore, no_sync: None) -> None:
    await astore.adelete_nodes(["pie"], MetadataFilters(filters=[f("key", "pie")]))
    await astore.adelete_nodes(filters=MetadataFilters(filters=[f("key", "far")]))
    assert {n.node_id for n in await astore.aget_nodes()} == {"tart", "cake"}


async def test_aclear_is_truly_async(astore: ElasticMemoryVectorStore, no_sync: None) -> None:
    await astore.aclear()
    assert await astore.aget_nodes() == []


async def test_async_add_refuses_like_add(astore: ElasticMemoryVectorStore, no_sync: None) -> None:
    with pytest.raises(ValueError, match="no text"):
        await astore.async_add([node("blank", " ", [1.0] * 16)])


@pytest.mark.parametrize("mode", [Mode.DEFAULT, Mode.TEXT_SEARCH, Mode.SPARSE, Mode.HYBRID, Mode.MMR])
async def test_aquery_returns_what_query_returns(seeded: ElasticMemoryVectorStore, mode: Mode) -> None:
    query = q(QUERY, k=3, query_str="apple cherry", mode=mode)
    sync = await asyncio.to_thread(seeded.query, query)
    result = await seeded.aquery(query)
    assert (result.ids, result.similarities) == (sync.ids, sync.similarities)


async def test_the_store_works_from_another_event_loop(tmp_path: Path) -> None:
    """The core runs on its own loop: a store is usable from any loop, here a worker thread's."""
    store = ElasticMemoryVectorStore(path=tmp_path / "x.db")
    await store.async_add([node("n", "text", [1.0, 0])])

    def other_loop() -> list[str]:
        return asyncio.run(store.aquery(q([1.0, 0]))).ids or []

    assert await asyncio.to_thread(other_loop) == ["n"]
    await store.aclose()


# ----------------------------------------------------------- consumers
def corpus() -> list[Document]:
    return [
        Document(text="The blue kettle is on the stove.", doc_id="kettle", metadata={"room": "kitchen"}),
        Document(text="Winter tyres go on in November.", doc_id="tyres", metadata={"room": "garage"}),
        Document(text="The red kettle is broken.", doc_id="broken", metadata={"room": "garage"}),
    ]


def index_over(store: ElasticMemoryVectorStore, embed: BaseEmbedding) -> VectorStoreIndex:
    context = StorageContext.from_defaults(vector_store=store)
    return VectorStoreIndex.from_documents(corpus(), storage_context=context, embed_model=embed)


def test_vector_store_index_from_vector_store_retrieves(store: ElasticMemoryVectorStore) -> None:
    embed = HashEmbedding()
    index_over(store, embed)
    retriever = VectorStoreIndex.from_vector_store(store, embed_model=embed).as_retriever(similarity_top_k=1)
    [found] = retriever.retrieve("winter tyres")
    assert found.node.ref_doc_id == "tyres"
    assert found.score is not None and 0 < found.score <= 1


def test_vector_store_index_retrieves_with_mock_embedding(store: ElasticMemoryVectorStore) -> None:
    """MockEmbedding gives every text the same vector: every node scores 1."""
    embed = MockEmbedding(embed_dim=8)
    index_over(store, embed)
    found = VectorStoreIndex.from_vector_store(store, embed_model=embed).as_retriever(similarity_top_k=5).retrieve("x")
    assert {n.node.ref_doc_id for n in found} == {"kettle", "tyres", "broken"}
    assert [n.score for n in found] == pytest.approx([1.0, 1.0, 1.0])


def test_vector_store_index_retriever_filters(store: ElasticMemoryVectorStore) -> None:
    embed = HashEmbedding()
    index_over(store, embed)
    filters = MetadataFilters(filters=[f("room", "garage")])
    retriever = VectorStoreIndex.from_vector_store(store, embed_model=embed).as_retriever(
        similarity_top_k=5, filters=filters
    )
    assert {n.node.ref_doc_id for n in retriever.retrieve("kettle")} == {"tyres", "broken"}


def test_vector_store_index_hybrid_retriever_with_alpha(store: ElasticMemoryVectorStore) -> None:
    embed = HashEmbedding()
    index_over(store, embed)
    retriever = VectorStoreIndex.from_vector_store(store, embed_model=embed).as_retriever(
        similarity_top_k=1, vector_store_query_mode="hybrid", alpha=0.0
    )
    [found] = retriever.retrieve("broken")
    assert found.node.ref_doc_id == "broken"


async def test_vector_store_index_aretrieve(store: ElasticMemoryVectorStore) -> None:
    embed = HashEmbedding()
    await asyncio.to_thread(index_over, store, embed)
    retriever = VectorStoreIndex.from_vector_store(store, embed_model=embed).as_retriever(similarity_top_k=1)
    [found] = await retriever.aretrieve("blue kettle stove")
    assert found.node.ref_doc_id == "kettle"


def test_vector_store_index_delete_ref_doc_reaches_the_store(store: ElasticMemoryVectorStore) -> None:
    index = index_over(store, HashEmbedding())
    index.delete_ref_doc("kettle")
    assert {n.ref_doc_id for n in store.get_nodes()} == {"tyres", "broken"}


async def test_vector_memory_block_inside_llamaindex_memory(store: ElasticMemoryVectorStore) -> None:
    """frameworks.md §2.5: flushed turns land in the store as one node per batch, and come back."""
    block = VectorMemoryBlock(vector_store=store, embed_model=MockEmbedding(embed_dim=8), similarity_top_k=2)
    memory = LlamaMemory.from_defaults(
        session_id="s1", token_limit=50, chat_history_token_ratio=0.3, token_flush_size=5, memory_blocks=[block]
    )
    for i in range(10):
        role = "user" if i % 2 == 0 else "assistant"
        await memory.aput(ChatMessage(role=role, content=f"turn {i} mentions the blue kettle"))
    try:
        nodes = await store.aget_nodes()
        assert nodes and all(n.metadata == {"session_id": "s1"} for n in nodes)
        assert any("blue kettle" in (m.content or "") for m in await memory.aget())
    finally:
        engine = memory.sql_store._async_engine  # LlamaIndex's default chat store leaves its engine open
        if engine is not None:
            await engine.dispose()


async def test_vector_memory_block_keeps_sessions_apart(store: ElasticMemoryVectorStore) -> None:
    embed = MockEmbedding(embed_dim=8)
    await store.async_add(
        [node("other", "a secret of session two", embed.get_text_embedding("x"), {"session_id": "s2"})]
    )
    asked = [ChatMessage(role="user", content="what secret?")]
    for session, sees in (("s1", False), ("s2", True)):
        block = VectorMemoryBlock(vector_store=store, embed_model=embed, similarity_top_k=5)  # one per session
        assert ("secret of session two" in await block.aget(asked, session_id=session)) is sees


def test_prune_never_archives_nodes(seeded: ElasticMemoryVectorStore) -> None:
    """Nodes are pinned: a prune of the file leaves every node of the collection searchable.

    If this fails, check that add() writes the notes pinned.
    """
    seeded.memory.prune(max_entries=1)
    assert sorted(n.node_id for n in seeded.get_nodes()) == sorted(GEOMETRY)
