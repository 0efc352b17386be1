"""ElasticMemoryVectorStore beside LlamaIndex's reference, ``SimpleVectorStore``: the same calls, compared.

Both stores get the same nodes with the same deterministic embeddings; each test runs one
call on both and compares ids, order and similarities. Where the stores differ on purpose,
the test asserts both behaviours (docs/llamaindex.md, "Differences from the references").
Scores follow the score contract (docs/concepts.md): cosine for the default mode, the MMR
score in MMR mode, BM25 for text search, the core's absolute hybrid score for hybrid.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode
from llama_index.core.vector_stores import SimpleVectorStore
from llama_index.core.vector_stores.types import (
    BasePydanticVectorStore,
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
    VectorStoreQueryResult,
)
from llama_index.core.vector_stores.utils import build_metadata_filter_fn

from llama_index.vector_stores.elastic_memory import ElasticMemoryVectorStore

Mode = VectorStoreQueryMode
Op = FilterOperator

#: id: (embedding, text, metadata, document). "tart" is a near-duplicate of "pie"; "tyres" points away.
NODES: dict[str, tuple[list[float], str, dict[str, Any], str | None]] = {
    "pie": (
        [1.0, 0.0, 0.0, 0.1],
        "apple pie with cinnamon",
        {"topic": "food", "year": 2021, "tags": ["sweet", "baked"], "rating": 4.5, "title": "Pie"},
        "doc-a",
    ),
    "tart": (
        [0.9, 0.1, 0.0, 0.1],
        "apple tart with cream",
        {"topic": "food", "year": 2022, "tags": ["sweet"], "rating": 3.0},
        "doc-a",
    ),
    "cake": (
        [0.5, 0.0, 0.8, 0.2],
        "cherry cake",
        {"topic": "food", "year": 2023, "tags": [], "title": "Cake Day"},
        "doc-b",
    ),
    "tyres": (
        [-1.0, 0.2, -0.3, 0.0],
        "winter tyres for the car",
        {"topic": "cars", "year": 2020, "tags": ["winter"]},
        "doc-c",
    ),
    "train": (
        [0.0, 1.0, 0.1, 0.0],
        "night train to Vienna",
        {"topic": "travel", "year": 2024, "title": "Night Train"},
        None,
    ),
    "ferry": ([0.1, 0.9, -0.2, 0.3], "ferry across the bay", {"topic": "travel", "title": ""}, None),
}
QUERY = [1.0, 0.2, 0.3, 0.0]


def nodes() -> list[TextNode]:
    out = []
    for id_, (embedding, text, metadata, document) in NODES.items():
        one = TextNode(id_=id_, text=text, embedding=list(embedding), metadata=dict(metadata))
        if document is not None:
            one.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=document)
        out.append(one)
    return out


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


def query(k: int = 10, **fields: Any) -> VectorStoreQuery:
    return VectorStoreQuery(query_embedding=QUERY, similarity_top_k=k, **fields)


@pytest.fixture
def ours(tmp_path: Path) -> Iterator[ElasticMemoryVectorStore]:
    with ElasticMemoryVectorStore(path=tmp_path / "vectors.db") as store:
        store.add(nodes())
        yield store


@pytest.fixture
def reference() -> SimpleVectorStore:
    store = SimpleVectorStore()
    store.add(nodes())
    return store


def same(mine: VectorStoreQueryResult, theirs: VectorStoreQueryResult) -> None:
    """The same ids in the same order, with the same similarities (ours are float32 vectors)."""
    assert mine.ids == theirs.ids
    assert mine.similarities == pytest.approx(list(theirs.similarities or []), abs=1e-5)


def stored_ids(store: BasePydanticVectorStore) -> set[str]:
    """The node ids a store holds (the reference keeps no nodes: its embedding table)."""
    if isinstance(store, SimpleVectorStore):
        return set(store.data.embedding_dict)
    return {n.node_id for n in store.get_nodes()}


# ------------------------------------------------------------------- writes
def test_add_returns_the_same_ids(tmp_path: Path) -> None:
    with ElasticMemoryVectorStore(path=tmp_path / "v.db") as mine:
        assert mine.add(nodes()) == SimpleVectorStore().add(nodes()) == list(NODES)


def test_add_of_a_known_id_replaces_the_node(ours: ElasticMemoryVectorStore, reference: SimpleVectorStore) -> None:
    moved = TextNode(id_="tyres", text="winter tyres, moved", embedding=[1.0, 0.2, 0.3, 0.0])
    ours.add([moved])
    reference.add([moved])
    same(ours.query(query(k=1)), reference.query(query(k=1)))
    assert ours.query(query(k=1)).ids == ["tyres"]


def test_delete_erases_the_same_document(ours: ElasticMemoryVectorStore, reference: SimpleVectorStore) -> None:
    ours.delete("doc-a")
    reference.delete("doc-a")
    assert stored_ids(ours) == stored_ids(reference) == {"cake", "tyres", "train", "ferry"}


def test_delete_of_the_none_document_erases_nodes_without_one(
    ours: ElasticMemoryVectorStore, reference: SimpleVectorStore
) -> None:
    """Both record a node without a source as document ``"None"``."""
    ours.delete("None")
    reference.delete("None")
    assert stored_ids(ours) == stored_ids(reference) == {"pie", "tart", "cake", "tyres"}


@pytest.mark.parametrize(
    ("node_ids", "filters"),
    [
        (["pie", "train", "unknown"], None),
        (None, MetadataFilters(filters=[MetadataFilter(key="topic", value="food")])),
        (["pie", "train"], MetadataFilters(filters=[MetadataFilter(key="topic", value="food")])),
    ],
    ids=["ids", "filters", "ids-and-filters"],
)
def test_delete_nodes_erases_the_same_nodes(
    ours: ElasticMemoryVectorStore,
    reference: SimpleVectorStore,
    node_ids: list[str] | None,
    filters: MetadataFilters | None,
) -> None:
    ours.delete_nodes(node_ids=node_ids, filters=filters)
    reference.delete_nodes(node_ids=node_ids, filters=filters)
    assert stored_ids(ours) == stored_ids(reference)


def test_clear_empties_both(ours: ElasticMemoryVectorStore, reference: SimpleVectorStore) -> None:
    ours.clear()
    reference.clear()
    assert stored_ids(ours) == stored_ids(reference) == set()


# -------------------------------------------------------------------- reads
@pytest.mark.parametrize(
    "filters",
    [
        None,
        MetadataFilters(filters=[MetadataFilter(key="topic", value="travel")]),
        MetadataFilters(filters=[MetadataFilter(key="tags", value=[], operator=Op.IS_EMPTY)]),
    ],
    ids=["all", "eq", "is-empty"],
)
def test_get_nodes_selects_what_the_reference_filter_selects(
    ours: ElasticMemoryVectorStore, reference: SimpleVectorStore, filters: MetadataFilters | None
) -> None:
    """SimpleVectorStore keeps no nodes (``get_nodes`` raises); its filter function over its data decides."""
    with pytest.raises(NotImplementedError):
        reference.get_nodes(filters=filters)
    match = build_metadata_filter_fn(lambda i: reference.data.metadata_dict[i], filters)
    assert {n.node_id for n in ours.get_nodes(filters=filters)} == {i for i in reference.data.metadata_dict if match(i)}


def test_get_nodes_returns_the_metadata_the_reference_keeps(
    ours: ElasticMemoryVectorStore, reference: SimpleVectorStore
) -> None:
    kept = {n.node_id: n.metadata for n in ours.get_nodes()}
    assert {i: {k: md[k] for k in NODES[i][2]} for i, md in reference.data.metadata_dict.items()} == kept


# ------------------------------------------------------------ default mode
def test_default_query_ranks_and_scores_by_cosine(ours: ElasticMemoryVectorStore, reference: SimpleVectorStore) -> None:
    same(ours.query(query()), reference.query(query()))


def test_default_query_keeps_negative_cosines(ours: ElasticMemoryVectorStore, reference: SimpleVectorStore) -> None:
    mine, theirs = ours.query(query()), reference.query(query())
    assert (mine.ids or [])[-1] == (theirs.ids or [])[-1] == "tyres"
    assert (mine.similarities or [])[-1] == pytest.approx(cosine(QUERY, NODES["tyres"][0]), abs=1e-5)
    assert (mine.similarities or [])[-1] < 0


def test_similarity_top_k_keeps_the_same_best(ours: ElasticMemoryVectorStore, reference: SimpleVectorStore) -> None:
    same(ours.query(query(k=3)), reference.query(query(k=3)))


def test_node_ids_restrict_the_query_alike(ours: ElasticMemoryVectorStore, reference: SimpleVectorStore) -> None:
    restricted = query(node_ids=["cake", "ferry", "tyres"])
    same(ours.query(restricted), reference.query(restricted))


FILTERS = [
    (Op.EQ, "topic", "food"),
    (Op.NE, "topic", "food"),
    (Op.GT, "year", 2021),
    (Op.GTE, "year", 2022),
    (Op.LT, "year", 2022),
    (Op.LTE, "rating", 3.0),
    (Op.IN, "topic", ["cars", "travel"]),
    (Op.NIN, "topic", ["food"]),
    (Op.CONTAINS, "tags", "sweet"),
    (Op.ANY, "tags", ["baked", "winter"]),
    (Op.ALL, "tags", ["sweet", "baked"]),
    (Op.TEXT_MATCH, "title", "Train"),
    (Op.TEXT_MATCH_INSENSITIVE, "title", "CAKE"),
    (Op.IS_EMPTY, "title", None),
]


@pytest.mark.parametrize(("operator", "key", "value"), FILTERS, ids=[op.value for op, _, _ in FILTERS])
def test_every_operator_selects_and_ranks_alike(
    ours: ElasticMemoryVectorStore, reference: SimpleVectorStore, operator: Op, key: str, value: Any
) -> None:
    filtered = query(filters=MetadataFilters(filters=[MetadataFilter(key=key, value=value, operator=operator)]))
    same(ours.query(filtered), reference.query(filtered))
    assert ours.query(filtered).ids  # the case selects something


@pytest.mark.parametrize("condition", [FilterCondition.AND, FilterCondition.OR, FilterCondition.NOT])
def test_conditions_combine_alike(
    ours: ElasticMemoryVectorStore, reference: SimpleVectorStore, condition: FilterCondition
) -> None:
    two = [MetadataFilter(key="topic", value="food"), MetadataFilter(key="year", value=2022, operator=Op.GTE)]
    filtered = query(filters=MetadataFilters(filters=two, condition=condition))
    same(ours.query(filtered), reference.query(filtered))


# ---------------------------------------------------------------- MMR mode
@pytest.mark.parametrize("threshold", [0.2, 0.5, 0.8, 1.0])
def test_mmr_picks_and_scores_like_the_reference(
    ours: ElasticMemoryVectorStore, reference: SimpleVectorStore, threshold: float
) -> None:
    """The first two picks and their MMR scores (both stores agree on the redundancy of a second pick)."""
    mmr = query(k=2, mode=Mode.MMR)
    same(ours.query(mmr, mmr_threshold=threshold), reference.query(mmr, mmr_threshold=threshold))


def test_mmr_scores_are_mmr_scores_not_cosines(ours: ElasticMemoryVectorStore) -> None:
    """threshold * cosine for the first pick; minus (1 - threshold) * its cosine to the first for the second."""
    result = ours.query(query(k=2, mode=Mode.MMR), mmr_threshold=0.5)
    assert result.ids == ["tart", "cake"]
    tart, cake = NODES["tart"][0], NODES["cake"][0]
    expected = [0.5 * cosine(QUERY, tart), 0.5 * cosine(QUERY, cake) - 0.5 * cosine(cake, tart)]
    assert result.similarities == pytest.approx(expected, abs=1e-5)


def test_mmr_threshold_one_scores_like_the_default_mode(
    ours: ElasticMemoryVectorStore, reference: SimpleVectorStore
) -> None:
    mmr = query(mode=Mode.MMR)
    same(ours.query(mmr, mmr_threshold=1.0), reference.query(query()))
    same(ours.query(mmr, mmr_threshold=1.0), reference.query(mmr, mmr_threshold=1.0))


def test_mmr_threshold_may_come_with_the_query(ours: ElasticMemoryVectorStore, reference: SimpleVectorStore) -> None:
    """VectorStoreQuery.mmr_threshold works here; SimpleVectorStore reads only the keyword argument."""
    same(
        ours.query(query(k=2, mode=Mode.MMR, mmr_threshold=0.2)),
        reference.query(query(k=2, mode=Mode.MMR), mmr_threshold=0.2),
    )


def test_mmr_redundancy_is_to_every_earlier_pick(ours: ElasticMemoryVectorStore, reference: SimpleVectorStore) -> None:
    """Intended difference: the reference compares a candidate with the last pick only, so the near-duplicate
    of the first pick comes back third; here it is compared with every earlier pick."""
    mmr = query(k=3, mode=Mode.MMR)
    assert reference.query(mmr, mmr_threshold=0.5).ids == ["tart", "cake", "pie"]
    assert ours.query(mmr, mmr_threshold=0.5).ids == ["tart", "cake", "train"]


# ------------------------------------------------------ intended differences
def test_similarity_top_k_zero_returns_nothing(ours: ElasticMemoryVectorStore, reference: SimpleVectorStore) -> None:
    """The reference reads 0 as "no limit"; here it is zero results (as LangChain's k=0)."""
    assert len(reference.query(query(k=0)).ids or []) == len(NODES)
    assert ours.query(query(k=0)).ids == []


def test_an_empty_node_ids_list_restricts_nothing(ours: ElasticMemoryVectorStore, reference: SimpleVectorStore) -> None:
    """VectorStoreIndex.as_retriever passes [] for a store that keeps text: it must not hide every node."""
    assert reference.query(query(node_ids=[])).ids == []
    assert len(ours.query(query(node_ids=[])).ids or []) == len(NODES)


def test_doc_ids_restrict_the_query(ours: ElasticMemoryVectorStore, reference: SimpleVectorStore) -> None:
    """The reference ignores VectorStoreQuery.doc_ids."""
    assert len(reference.query(query(doc_ids=["doc-b"])).ids or []) == len(NODES)
    assert ours.query(query(doc_ids=["doc-b"])).ids == ["cake"]


def test_nested_filters_are_supported(ours: ElasticMemoryVectorStore, reference: SimpleVectorStore) -> None:
    inner = MetadataFilters(filters=[MetadataFilter(key="topic", value="cars")])
    nested = query(
        filters=MetadataFilters(filters=[inner, MetadataFilter(key="year", value=2024)], condition=FilterCondition.OR)
    )
    with pytest.raises(ValueError, match="Nested"):
        reference.query(nested)
    assert ours.query(nested).ids == ["train", "tyres"]


@pytest.mark.parametrize("mode", [Mode.TEXT_SEARCH, Mode.SPARSE, Mode.HYBRID])
def test_text_and_hybrid_modes_are_supported(
    ours: ElasticMemoryVectorStore, reference: SimpleVectorStore, mode: Mode
) -> None:
    with pytest.raises(ValueError, match="Invalid query mode"):
        reference.query(query(mode=mode, query_str="apple"))
    assert set(ours.query(query(mode=mode, query_str="apple")).ids or []) >= {"pie", "tart"}


# ------------------------------------------------------------------ scores
def bm25_idf(total: int, having: int) -> float:
    """The contract's Lucene-style IDF."""
    return math.log(1 + (total - having + 0.5) / (having + 0.5))


@pytest.fixture
def notes(tmp_path: Path) -> Iterator[ElasticMemoryVectorStore]:
    """Five nodes of one length, all with "meeting", one with each other word."""
    with ElasticMemoryVectorStore(path=tmp_path / "notes.db") as store:
        words = ["alpha", "beta", "gamma", "delta", "omega"]
        store.add([TextNode(id_=w, text=f"meeting note {w}", embedding=[1.0, float(i)]) for i, w in enumerate(words)])
        yield store


@pytest.mark.parametrize("mode", [Mode.TEXT_SEARCH, Mode.SPARSE])
def test_text_search_scores_are_bm25(notes: ElasticMemoryVectorStore, mode: Mode) -> None:
    """One occurrence in documents of equal length: BM25 is the term's IDF, summed over terms."""
    result = notes.query(VectorStoreQuery(query_str="alpha meeting", mode=mode, similarity_top_k=5))
    assert (result.ids or [])[0] == "alpha"
    assert (result.similarities or [])[0] == pytest.approx(bm25_idf(5, 1) + bm25_idf(5, 5), rel=1e-3)


def test_a_word_in_every_node_keeps_some_weight(notes: ElasticMemoryVectorStore) -> None:
    result = notes.query(VectorStoreQuery(query_str="meeting", mode=Mode.TEXT_SEARCH, similarity_top_k=5))
    assert result.similarities == pytest.approx([bm25_idf(5, 5)] * 5, rel=1e-3)


def test_sparse_top_k_sets_the_text_search_count(notes: ElasticMemoryVectorStore) -> None:
    text = VectorStoreQuery(query_str="meeting", mode=Mode.SPARSE, similarity_top_k=1, sparse_top_k=3)
    assert len(notes.query(text).ids or []) == 3


def test_hybrid_scores_are_the_core_hybrid_scores(ours: ElasticMemoryVectorStore) -> None:
    hybrid = query(k=4, mode=Mode.HYBRID, query_str="apple cherry", alpha=0.5)
    hits = ours.memory.recall("apple cherry", k=4, mode="hybrid", vector=QUERY, vector_weight=0.5, touch=False)
    result = ours.query(hybrid)
    assert result.ids == [h.id for h in hits]
    assert result.similarities == pytest.approx([h.score for h in hits])
    assert all(0.0 <= s <= 1.0 for s in result.similarities or [])


def test_hybrid_of_an_unrelated_query_does_not_score_one(tmp_path: Path) -> None:
    """The contract's hybrid score is absolute: no word in common and an orthogonal vector score low."""
    with ElasticMemoryVectorStore(path=tmp_path / "one.db") as store:
        store.add([TextNode(id_="only", text="apple pie with cinnamon", embedding=[1.0, 0.0, 0.0])])
        unrelated = VectorStoreQuery(query_embedding=[0.0, 1.0, 0.0], query_str="zebra", mode=Mode.HYBRID)
        assert all(s < 0.5 for s in store.query(unrelated).similarities or [])


# --------------------------------------------------------- VectorStoreIndex
ASKED = "something sweet"


class TableEmbedding(BaseEmbedding):
    """The embeddings of NODES by text, and QUERY for ASKED: deterministic, and no two nodes tie."""

    @classmethod
    def class_name(cls) -> str:
        return "TableEmbedding"

    def _vector(self, text: str) -> list[float]:
        return QUERY if text == ASKED else next(e for e, t, _, _ in NODES.values() if t == text)

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)


def retrieved(store: BasePydanticVectorStore, **retriever: Any) -> list[tuple[str, float]]:
    index = VectorStoreIndex(
        [TextNode(id_=i, text=text) for i, (_, text, _, _) in NODES.items()],
        storage_context=StorageContext.from_defaults(vector_store=store),
        embed_model=TableEmbedding(),
    )
    return [(n.node.node_id, float(n.score or 0.0)) for n in index.as_retriever(**retriever).retrieve(ASKED)]


@pytest.mark.parametrize(
    "retriever",
    [
        {"similarity_top_k": 4},
        {"similarity_top_k": 2, "vector_store_query_mode": "mmr", "vector_store_kwargs": {"mmr_threshold": 0.5}},
    ],
    ids=["default", "mmr"],
)
def test_a_vector_store_index_retrieves_alike(tmp_path: Path, retriever: dict[str, Any]) -> None:
    with ElasticMemoryVectorStore(path=tmp_path / "index.db") as mine:
        ours, theirs = retrieved(mine, **retriever), retrieved(SimpleVectorStore(), **retriever)
    assert [i for i, _ in ours] == [i for i, _ in theirs]
    assert [s for _, s in ours] == pytest.approx([s for _, s in theirs], abs=1e-5)
