"""Parity with Haystack's reference: the same calls on ElasticMemoryDocumentStore and InMemoryDocumentStore.

Orders, scores, ``scale_score``, ``top_k``, filters and ``filter_documents`` order are compared
side by side. BM25 is compared with the reference's default algorithm, BM25L: both use the IDF
``log(1 + (N - n + 0.5) / (n + 0.5))``, so a word found in most documents keeps some weight.
The intended differences (docs/haystack.md, "Parity with InMemoryDocumentStore") are asserted
too: English stop words are not searched, words are stemmed, a blank query is refused, a
duplicate under ``FAIL`` writes nothing, and the term-frequency part is Lucene's (k1 = 1.2,
b = 0.75) where BM25L's is k1 = 1.5, delta = 0.5, so values differ while orders agree here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from haystack import Document
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever, InMemoryEmbeddingRetriever
from haystack.document_stores.errors import DuplicateDocumentError
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack.document_stores.types import DuplicatePolicy, FilterPolicy
from haystack.errors import FilterError
from haystack.utils.misc import expit

from haystack_integrations.components.retrievers.elastic_memory import (
    ElasticMemoryBM25Retriever,
    ElasticMemoryEmbeddingRetriever,
)
from haystack_integrations.document_stores.elastic_memory import ElasticMemoryDocumentStore

#: The issue's five documents: "meeting" is in four of them.
MEETINGS = {
    "standup": "The daily standup meeting is at 9:30 every weekday",
    "retro": "The retro meeting happens every other Friday",
    "deploy": "Deploy to production after the meeting on Thursday",
    "planning": "Quarterly planning meeting with the whole product team today",
    "lunch": "Lunch is served at noon in the cafeteria",
}
#: Two documents say "standup"; only the longer one also says the common word "meeting".
STANDUPS = {
    "moved": "Standup moved to the big room",
    "standup": "The daily standup meeting is at 9:30 every weekday",
    "retro": "The retro meeting happens every other Friday",
    "deploy": "Deploy to production after the meeting on Thursday",
    "planning": "Planning meeting for the quarter",
}
PETS = {
    "biscuit": "Biscuit is a golden retriever who loves the garden",
    "miso": "Miso the cat sleeps all day on the sofa",
    "play": "The cat and the dog play together in the garden every morning",
    "feed": "Feed the dog twice a day",
    "shed": "Garden tools are kept in the shed",
}
#: Repeated words and lengths that differ: term-frequency saturation decides.
DRINKS = {
    "much-tea": "tea tea tea with a little coffee",
    "green": "green tea",
    "cake": "coffee and cake",
    "both": "tea and coffee and cake and biscuits",
    "water": "water",
}
#: (corpus, query) pairs without stop words or words that stem alike: the orders must be equal.
AGREED = [
    (STANDUPS, "standup meeting"),
    (STANDUPS, "meeting"),
    (STANDUPS, "standup"),
    (MEETINGS, "friday retro meeting"),
    (PETS, "cat"),
    (PETS, "dog garden"),
    (PETS, "cat dog"),
    (PETS, "golden retriever garden"),
    (PETS, "sofa cat"),
    (DRINKS, "tea"),
    (DRINKS, "tea coffee"),
    (DRINKS, "coffee cake"),
]
#: Unit-free embeddings, one pointing away from every query below, one document without any.
VECTORS = {
    "north": [0.0, 1.0, 0.0],
    "north-east": [0.7, 0.7, 0.1],
    "east": [1.0, 0.05, 0.0],
    "south": [0.0, -1.0, 0.0],
    "up": [0.1, 0.2, 3.0],
}
QUERIES = [[0.0, 2.0, 0.0], [1.0, 0.3, -0.2], [-0.5, -0.5, 0.5]]
FILTERS = [
    {"field": "meta.team", "operator": "==", "value": "core"},
    {"field": "meta.team", "operator": "in", "value": ["web", "ops"]},
    {"field": "meta.rank", "operator": ">", "value": 1},
    {"operator": "NOT", "conditions": [{"field": "meta.team", "operator": "==", "value": "core"}]},
    {
        "operator": "OR",
        "conditions": [
            {"field": "meta.rank", "operator": "<=", "value": 0},
            {"field": "meta.team", "operator": "==", "value": "ops"},
        ],
    },
]

Pair = tuple[ElasticMemoryDocumentStore, InMemoryDocumentStore]


@pytest.fixture
def stores() -> Iterator[Callable[..., Pair]]:
    """Makes a fresh pair (ours, the reference) holding the same documents."""
    made: list[Pair] = []

    def make(documents: list[Document], **reference: Any) -> Pair:
        pair = (ElasticMemoryDocumentStore(path=":memory:"), InMemoryDocumentStore(shared=False, **reference))
        for store in pair:
            store.write_documents(documents)
        made.append(pair)
        return pair

    yield make
    for ours, reference in made:
        ours.close()
        reference.shutdown()


def texts(corpus: dict[str, str]) -> list[Document]:
    return [Document(id=key, content=text, meta={"rank": n}) for n, (key, text) in enumerate(corpus.items())]


def embedded() -> list[Document]:
    teams = ["core", "web", "ops", "core", "web"]
    docs = [
        Document(id=key, content=f"{key} wind", embedding=vector, meta={"team": team, "rank": n})
        for n, ((key, vector), team) in enumerate(zip(VECTORS.items(), teams, strict=True))
    ]
    return [*docs, Document(id="still", content="no wind at all", meta={"team": "core", "rank": 9})]


def ids(documents: list[Document]) -> list[str]:
    return [d.id for d in documents]


# ------------------------------------------------------------------------------------------ BM25
def test_bm25_issue_query_ranks_standup_then_retro_then_deploy(stores: Callable[..., Pair]) -> None:
    ours, reference = stores(texts(MEETINGS))
    query = "when is the standup meeting"
    found, expected = ids(ours.bm25_retrieval(query)), ids(reference.bm25_retrieval(query))
    assert [i for i in found if i in ("standup", "retro", "deploy")] == ["standup", "retro", "deploy"]
    assert found == [i for i in expected if i in found]  # the reference's order (it also matches "is": lunch)


def test_bm25_common_word_keeps_weight(stores: Callable[..., Pair]) -> None:
    """ "meeting" is in four of five documents: it still lifts the standup that says it over the one that does not."""
    ours, reference = stores(texts(STANDUPS))
    assert ids(reference.bm25_retrieval("standup meeting"))[:2] == ["standup", "moved"]
    assert ids(ours.bm25_retrieval("standup meeting"))[:2] == ["standup", "moved"]


@pytest.mark.parametrize(("corpus", "query"), AGREED, ids=[q for _, q in AGREED])
def test_bm25_order_matches_bm25l(stores: Callable[..., Pair], corpus: dict[str, str], query: str) -> None:
    ours, reference = stores(texts(corpus))
    assert ids(ours.bm25_retrieval(query)) == ids(reference.bm25_retrieval(query))


def test_bm25_scores_are_on_the_reference_scale(stores: Callable[..., Pair]) -> None:
    """Within a factor of two of BM25L's, common words included: ``scale_score`` means the same on both."""
    ours, reference = stores(texts(STANDUPS))
    for query in ("standup meeting", "meeting", "retro"):
        expected = {d.id: d.score for d in reference.bm25_retrieval(query)}
        for doc in ours.bm25_retrieval(query):
            assert doc.score is not None and expected[doc.id] is not None
            assert 0.5 < doc.score / expected[doc.id] < 2, (query, doc.id, doc.score, expected[doc.id])


@pytest.mark.parametrize("store_index", [0, 1], ids=["ours", "reference"])
def test_bm25_scale_score_is_expit_of_score_over_8(stores: Callable[..., Pair], store_index: int) -> None:
    store = stores(texts(STANDUPS))[store_index]
    raw = store.bm25_retrieval("standup meeting")
    scaled = store.bm25_retrieval("standup meeting", scale_score=True)
    assert ids(scaled) == ids(raw)
    assert [d.score for d in scaled] == pytest.approx([expit((d.score or 0.0) / 8) for d in raw])
    assert all(0.5 < (d.score or 0.0) < 1 for d in scaled)


def test_bm25_retrievers_scale_score_agree(stores: Callable[..., Pair]) -> None:
    """``scale_score=True`` at init, ``False`` at run time: the run's value wins, on both retrievers."""
    ours, reference = stores(texts(PETS))
    retrievers = [
        ElasticMemoryBM25Retriever(document_store=ours, scale_score=True),
        InMemoryBM25Retriever(document_store=reference, scale_score=True),
    ]
    orders = []
    for retriever in retrievers:
        scaled = retriever.run(query="dog garden")["documents"]
        raw = retriever.run(query="dog garden", scale_score=False)["documents"]
        assert [d.score for d in scaled] == pytest.approx([expit((d.score or 0.0) / 8) for d in raw])
        orders.append(ids(scaled))
    assert orders[0] == orders[1]


def test_bm25_filters_narrow_without_reweighing(stores: Callable[..., Pair]) -> None:
    """A filtered document scores as it does unfiltered (the statistics are the whole collection's), on both."""
    rank = {"field": "meta.rank", "operator": ">=", "value": 2}
    for store in stores(texts(MEETINGS)):
        everything = {d.id: d.score for d in store.bm25_retrieval("meeting")}
        narrowed = store.bm25_retrieval("meeting", filters=rank)
        assert ids(narrowed) == ["deploy", "planning"]
        assert [d.score for d in narrowed] == [everything["deploy"], everything["planning"]]


def test_bm25_stop_words_are_not_searched(stores: Callable[..., Pair]) -> None:
    """Intended difference: the reference matches "the"; this store drops English stop words from queries."""
    ours, reference = stores(texts(MEETINGS))
    assert ids(reference.bm25_retrieval("the")) != []
    assert ours.bm25_retrieval("the") == []


def test_bm25_words_are_stemmed(stores: Callable[..., Pair]) -> None:
    """Intended difference: "production" finds "product" too (Porter stemming); the reference matches words exactly."""
    ours, reference = stores(texts(MEETINGS))
    assert ids(reference.bm25_retrieval("production")) == ["deploy"]
    assert ids(ours.bm25_retrieval("production")) == ["deploy", "planning"]


def test_bm25_blank_query_raises(stores: Callable[..., Pair]) -> None:
    """Intended difference: a query of spaces is refused here (the reference returns no documents)."""
    ours, reference = stores(texts(MEETINGS))
    assert reference.bm25_retrieval("   ") == []
    with pytest.raises(ValueError, match="non-empty string"):
        ours.bm25_retrieval("   ")


# ------------------------------------------------------------------------------------ embeddings
def test_embedding_order_and_cosine_match(stores: Callable[..., Pair]) -> None:
    """Raw cosine, negative values kept; the document without an embedding is skipped by both."""
    ours, reference = stores(embedded(), embedding_similarity_function="cosine")
    for query in QUERIES:
        found, expected = ours.embedding_retrieval(query), reference.embedding_retrieval(query)
        assert ids(found) == ids(expected) and "still" not in ids(found)
        assert [d.score for d in found] == pytest.approx([d.score for d in expected], abs=1e-6)
    assert min(d.score or 0.0 for d in ours.embedding_retrieval(QUERIES[0])) == pytest.approx(-1.0, abs=1e-6)


def test_embedding_scale_score_is_half_of_cosine_plus_one(stores: Callable[..., Pair]) -> None:
    ours, reference = stores(embedded(), embedding_similarity_function="cosine")
    for query in QUERIES:
        raw = ours.embedding_retrieval(query)
        scaled = ours.embedding_retrieval(query, scale_score=True)
        assert [d.score for d in scaled] == pytest.approx([((d.score or 0.0) + 1) / 2 for d in raw])
        expected = reference.embedding_retrieval(query, scale_score=True)
        assert [d.score for d in scaled] == pytest.approx([d.score for d in expected], abs=1e-6)


def test_embedding_retrievers_agree(stores: Callable[..., Pair]) -> None:
    ours, reference = stores(embedded(), embedding_similarity_function="cosine")
    mine = ElasticMemoryEmbeddingRetriever(document_store=ours, top_k=3, return_embedding=True)
    theirs = InMemoryEmbeddingRetriever(document_store=reference, top_k=3, return_embedding=True)
    found, expected = mine.run(query_embedding=QUERIES[1]), theirs.run(query_embedding=QUERIES[1])
    assert ids(found["documents"]) == ids(expected["documents"])
    assert [d.embedding for d in found["documents"]] == [d.embedding for d in expected["documents"]]


# ----------------------------------------------------------------------------------------- top_k
@pytest.mark.parametrize("top_k", [1, 2, 5, 50])
def test_top_k_cuts_the_same_list(stores: Callable[..., Pair], top_k: int) -> None:
    ours, reference = stores(embedded(), embedding_similarity_function="cosine")
    assert ids(ours.embedding_retrieval(QUERIES[1], top_k=top_k)) == ids(
        reference.embedding_retrieval(QUERIES[1], top_k=top_k)
    )
    assert ids(ours.bm25_retrieval("wind", top_k=top_k)) == ids(reference.bm25_retrieval("wind", top_k=top_k))


def test_run_top_k_zero_returns_nothing(stores: Callable[..., Pair]) -> None:
    ours, reference = stores(embedded(), embedding_similarity_function="cosine")
    assert InMemoryBM25Retriever(document_store=reference).run(query="wind", top_k=0)["documents"] == []
    assert ElasticMemoryBM25Retriever(document_store=ours).run(query="wind", top_k=0)["documents"] == []
    theirs = InMemoryEmbeddingRetriever(document_store=reference).run(query_embedding=QUERIES[0], top_k=0)
    mine = ElasticMemoryEmbeddingRetriever(document_store=ours).run(query_embedding=QUERIES[0], top_k=0)
    assert theirs["documents"] == mine["documents"] == []


def test_bad_top_k_raises_value_error(stores: Callable[..., Pair]) -> None:
    ours, reference = stores(embedded(), embedding_similarity_function="cosine")
    for cls, store in ((InMemoryBM25Retriever, reference), (ElasticMemoryBM25Retriever, ours)):
        with pytest.raises(ValueError, match="top_k"):
            cls(document_store=store, top_k=0)
        with pytest.raises(ValueError, match="top_k"):
            cls(document_store=store).run(query="wind", top_k=-1)


# --------------------------------------------------------------------------------------- filters
@pytest.mark.parametrize("filters", FILTERS, ids=["eq", "in", "gt", "not", "or"])
def test_filters_select_the_same_documents(stores: Callable[..., Pair], filters: dict[str, Any]) -> None:
    ours, reference = stores(embedded(), embedding_similarity_function="cosine")
    assert ids(ours.filter_documents(filters)) == ids(reference.filter_documents(filters))
    assert ids(ours.bm25_retrieval("wind", filters=filters)) == ids(reference.bm25_retrieval("wind", filters=filters))
    found = ours.embedding_retrieval(QUERIES[1], filters=filters)
    assert ids(found) == ids(reference.embedding_retrieval(QUERIES[1], filters=filters))


def test_filter_policy_merge_agrees(stores: Callable[..., Pair]) -> None:
    ours, reference = stores(embedded(), embedding_similarity_function="cosine")
    init, runtime = FILTERS[3], FILTERS[2]
    mine = ElasticMemoryBM25Retriever(document_store=ours, filters=init, filter_policy=FilterPolicy.MERGE)
    theirs = InMemoryBM25Retriever(document_store=reference, filters=init, filter_policy=FilterPolicy.MERGE)
    expected = ids(theirs.run(query="wind", filters=runtime)["documents"])
    assert expected and ids(mine.run(query="wind", filters=runtime)["documents"]) == expected


@pytest.mark.parametrize(
    ("filters", "error"),
    [
        ({"team": "core"}, ValueError),  # the legacy syntax
        ({"field": "meta.team", "operator": "like", "value": "c"}, FilterError),
        ({"field": "meta.rank", "operator": "in", "value": 1}, FilterError),
    ],
    ids=["legacy", "unknown-operator", "in-not-list"],
)
def test_bad_filters_raise_the_same_errors(
    stores: Callable[..., Pair], filters: dict[str, Any], error: type[Exception]
) -> None:
    for store in stores(embedded(), embedding_similarity_function="cosine"):
        with pytest.raises(error):
            store.filter_documents(filters)
        with pytest.raises(error):
            store.bm25_retrieval("wind", filters=filters)


# ------------------------------------------------------------------------------ filter_documents
def test_filter_documents_keeps_insertion_order(stores: Callable[..., Pair]) -> None:
    first = texts(PETS)
    ours, reference = stores(first[3:])
    for store in (ours, reference):
        store.write_documents(first[:3])
    assert (
        ids(ours.filter_documents()) == ids(reference.filter_documents()) == ["feed", "shed", "biscuit", "miso", "play"]
    )


def test_overwrite_moves_to_the_end_and_skip_keeps_place(stores: Callable[..., Pair]) -> None:
    ours, reference = stores(texts(PETS))
    for store in (ours, reference):
        store.write_documents([Document(id="miso", content="Miso now sleeps on the bed")], DuplicatePolicy.OVERWRITE)
        store.write_documents([Document(id="biscuit", content="ignored")], DuplicatePolicy.SKIP)
    assert ids(ours.filter_documents()) == ids(reference.filter_documents())
    assert ids(ours.filter_documents())[-1] == "miso"
    assert [d.content for d in ours.filter_documents()] == [d.content for d in reference.filter_documents()]


def test_update_by_filter_keeps_order_and_delete_then_write_goes_last(stores: Callable[..., Pair]) -> None:
    ours, reference = stores(texts(PETS))
    cats = {"field": "content", "operator": "in", "value": [PETS["miso"], PETS["play"]]}
    for store in (ours, reference):
        assert store.update_by_filter(cats, {"cat": True}) == 2
        store.delete_documents(["biscuit"])
        store.write_documents([Document(id="biscuit", content=PETS["biscuit"], meta={"rank": 0})])
    assert (
        ids(ours.filter_documents()) == ids(reference.filter_documents()) == ["miso", "play", "feed", "shed", "biscuit"]
    )
    assert ours.filter_documents() == reference.filter_documents()


def test_duplicate_with_fail_writes_nothing(stores: Callable[..., Pair]) -> None:
    """Intended difference: the reference keeps the documents before the duplicate; this store writes none of them."""
    ours, reference = stores(texts(PETS))
    batch = [Document(id="new", content="A new pet"), Document(id="miso", content="Miso again")]
    for store in (ours, reference):
        with pytest.raises(DuplicateDocumentError):
            store.write_documents(batch, DuplicatePolicy.FAIL)
    assert "new" in ids(reference.filter_documents())
    assert ids(ours.filter_documents()) == list(PETS)


def test_filter_documents_scores_are_none_after_retrieval(stores: Callable[..., Pair]) -> None:
    ours, reference = stores(embedded(), embedding_similarity_function="cosine")
    for store in (ours, reference):
        assert store.bm25_retrieval("wind") and store.embedding_retrieval(QUERIES[0])
        assert all(d.score is None for d in store.filter_documents())
    assert ours.filter_documents() == reference.filter_documents()
