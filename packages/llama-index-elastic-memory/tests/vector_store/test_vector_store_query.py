"""ElasticMemoryVectorStore: every query mode with its scores, every filter operator and condition
(nested too), and bad input. A fresh store per test.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.vector_stores.types import FilterCondition, MetadataFilter, MetadataFilters, VectorStoreQuery
from llama_index.core.vector_stores.utils import build_metadata_filter_fn

from elastic_memory import EmbeddingMismatchError, Memory
from llama_index.vector_stores.elastic_memory import ElasticMemoryVectorStore

from .support import GEOMETRY, QUERY, HashEmbedding, Mode, Op, cosine, docs_store, f, ids, node, q


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
