"""ElasticMemoryVectorStore beyond LangChain's standard suite.

Filters, MMR, retrievers of every search type, scores, metadata exactness, truly async
methods, from_texts, collections, the built-in model and bad input. A fresh store per test.
"""

from __future__ import annotations

import doctest
import hashlib
import warnings
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings

from elastic_memory import AsyncMemory, EmbeddingMismatchError, Memory, RecallWarning, UsageError
from langchain_elastic_memory import ElasticMemoryVectorStore, LangChainEmbedder, vectorstores


class TableEmbeddings(Embeddings):
    """Chosen 3-d vectors for known texts (others hash to one), so a test sets the geometry."""

    def __init__(self, table: Mapping[str, Sequence[float]]) -> None:
        self.table = dict(table)

    def _vector(self, text: str) -> list[float]:
        if text in self.table:
            return [float(x) for x in self.table[text]]
        digest = hashlib.sha256(text.encode()).digest()
        return [(b - 127.5) / 127.5 for b in digest[:3]]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


# A, and a near-duplicate of it; C points elsewhere; OPPOSITE points away from the query.
GEOMETRY = {
    "query": [1.0, 0.0, 0.3],
    "apple pie": [1.0, 0.0, 0.0],
    "apple tart": [1.0, 0.05, 0.0],
    "cherry cake": [0.5, 0.0, 0.866],
    "opposite": [-1.0, 0.0, -0.3],
}
DOCS = [
    Document(page_content="apple pie", metadata={"n": 1, "lang": "en", "author": {"name": "ana"}}),
    Document(page_content="apple tart", metadata={"n": 2, "lang": "fr"}),
    Document(page_content="cherry cake", metadata={"n": 3}),
]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


@pytest.fixture
def store() -> Iterator[ElasticMemoryVectorStore]:
    """An empty in-memory store with LangChain's deterministic fake embeddings."""
    with ElasticMemoryVectorStore(path=":memory:", embedding=DeterministicFakeEmbedding(size=6)) as s:
        yield s


@pytest.fixture
def geo() -> Iterator[ElasticMemoryVectorStore]:
    """A store over TableEmbeddings holding DOCS."""
    with ElasticMemoryVectorStore(path=":memory:", embedding=TableEmbeddings(GEOMETRY)) as s:
        s.add_documents(DOCS, ids=["a", "b", "c"])
        yield s


@pytest.fixture
def mem() -> Iterator[Memory]:
    """An open Memory with the fake embeddings, shared by the stores of one test."""
    with Memory.open(":memory:", embedder=LangChainEmbedder(DeterministicFakeEmbedding(size=6))) as m:
        yield m


# ------------------------------------------------------------------ filters
@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ({"lang": "en"}, {"a"}),
        ({"lang": {"$eq": "fr"}}, {"b"}),
        ({"lang": {"$ne": "en"}}, {"b", "c"}),
        ({"n": {"$gt": 1}}, {"b", "c"}),
        ({"n": {"$gte": 2}}, {"b", "c"}),
        ({"n": {"$lt": 2}}, {"a"}),
        ({"n": {"$lte": 2}}, {"a", "b"}),
        ({"lang": {"$in": ["en", "fr"]}}, {"a", "b"}),
        ({"lang": {"$nin": ["en"]}}, {"b", "c"}),
        ({"lang": {"$exists": True}}, {"a", "b"}),
        ({"lang": {"$exists": False}}, {"c"}),
        ({"author.name": "ana"}, {"a"}),
        ({"n": {"$gte": 1, "$lt": 3}, "lang": "fr"}, {"b"}),
        ({"lang": {"$like": "e%"}}, {"a"}),
        ({"lang": {"$like": "E%"}}, set()),
        ({"lang": {"$ilike": "FR"}}, {"b"}),
        ({"author.name": {"$like": "a_a"}}, {"a"}),
        ({"n": {"$between": [2, 3]}}, {"b", "c"}),
        ({"lang": {"$contains": "n"}}, {"a"}),
        ({"lang": {"$icontains": "R"}}, {"b"}),
        ({"lang": {"$empty": True}}, {"c"}),
        ({"$or": [{"lang": "fr"}, {"n": 3}]}, {"b", "c"}),
    ],
    ids=[
        "implicit-eq",
        "$eq",
        "$ne",
        "$gt",
        "$gte",
        "$lt",
        "$lte",
        "$in",
        "$nin",
        "$exists",
        "not-$exists",
        "nested",
        "and",
        "$like",
        "$like-case",
        "$ilike",
        "$like-nested",
        "$between",
        "$contains",
        "$icontains",
        "$empty",
        "$or",
    ],
)
def test_a_metadata_filter_keeps_the_matching_documents(
    geo: ElasticMemoryVectorStore, condition: dict[str, Any], expected: set[str]
) -> None:
    assert {d.id for d in geo.similarity_search("query", k=10, filter=condition)} == expected


@pytest.mark.parametrize(
    "search",
    [
        lambda s, f: s.similarity_search("query", k=10, filter=f),
        lambda s, f: [d for d, _ in s.similarity_search_with_score("query", k=10, filter=f)],
        lambda s, f: [d for d, _ in s.similarity_search_with_relevance_scores("query", k=10, filter=f)],
        lambda s, f: s.similarity_search_by_vector(GEOMETRY["query"], k=10, filter=f),
        lambda s, f: s.max_marginal_relevance_search("query", k=3, filter=f),
        lambda s, f: s.max_marginal_relevance_search_by_vector(GEOMETRY["query"], k=3, filter=f),
        lambda s, f: s.as_retriever(search_kwargs={"k": 10, "filter": f}).invoke("query"),
    ],
    ids=["similarity", "with_score", "relevance", "by_vector", "mmr", "mmr_by_vector", "as_retriever"],
)
def test_every_search_method_applies_the_filter(
    geo: ElasticMemoryVectorStore, search: Callable[[ElasticMemoryVectorStore, Any], list[Document]]
) -> None:
    assert [d.id for d in search(geo, {"n": {"$gte": 3}})] == ["c"]


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ({"tags": "plan"}, {"1", "3"}),
        ({"tags": {"$eq": "plan"}}, {"1", "3"}),
        ({"tags": {"$ne": "plan"}}, {"2", "4"}),
        ({"tags": {"$in": ["x", "y"]}}, {"1", "2"}),
        ({"tags": {"$nin": ["plan"]}}, {"2", "4"}),
        ({"tags": {"$like": "pl%"}}, {"1", "3"}),
    ],
    ids=["implicit-eq", "$eq", "$ne", "$in", "$nin", "$like"],
)
def test_equality_on_a_list_valued_field_means_the_list_holds_the_value(
    store: ElasticMemoryVectorStore, condition: dict[str, Any], expected: set[str]
) -> None:
    metadatas = [{"tags": ["plan", "x"]}, {"tags": ["x"]}, {"tags": "plan"}, {}]
    store.add_texts(["one", "two", "three", "four"], metadatas, ids=["1", "2", "3", "4"])
    assert {d.id for d in store.similarity_search("one", k=10, filter=condition)} == expected


def test_an_empty_filter_filters_nothing(geo: ElasticMemoryVectorStore) -> None:
    assert len(geo.similarity_search("query", k=10, filter={})) == 3


def test_an_unknown_filter_operator_is_refused_with_the_operators_listed(geo: ElasticMemoryVectorStore) -> None:
    with pytest.raises(UsageError, match=r"unknown operator '\$regex'.*\$exists"):
        geo.similarity_search("query", filter={"lang": {"$regex": "e.*"}})


def test_a_callable_filter_is_refused(geo: ElasticMemoryVectorStore) -> None:
    with pytest.raises(UsageError, match="filter must be a dict on metadata"):
        geo.similarity_search("query", filter=lambda doc: True)  # type: ignore[arg-type]


def test_filters_instead_of_filter_is_refused_with_a_hint(geo: ElasticMemoryVectorStore) -> None:
    with pytest.raises(UsageError, match="the metadata filter is filter="):
        geo.similarity_search("query", filters={"lang": "en"})


# ---------------------------------------------------------------------- MMR
def test_similarity_returns_the_near_duplicate_second(geo: ElasticMemoryVectorStore) -> None:
    """The baseline for the MMR tests: plain similarity ranks the near-duplicate second."""
    assert [d.id for d in geo.similarity_search("query", k=2)] == ["a", "b"]


def test_mmr_prefers_a_diverse_document_to_a_near_duplicate(geo: ElasticMemoryVectorStore) -> None:
    assert [d.id for d in geo.max_marginal_relevance_search("query", k=2, fetch_k=3)] == ["a", "c"]


def test_mmr_with_lambda_one_ranks_by_relevance_only(geo: ElasticMemoryVectorStore) -> None:
    assert [d.id for d in geo.max_marginal_relevance_search("query", k=2, fetch_k=3, lambda_mult=1.0)] == ["a", "b"]


def test_mmr_by_vector_is_mmr_of_that_vector(geo: ElasticMemoryVectorStore) -> None:
    by_vector = geo.max_marginal_relevance_search_by_vector(GEOMETRY["query"], k=2, fetch_k=3)
    assert [d.id for d in by_vector] == ["a", "c"]


def test_mmr_fetches_at_least_k_candidates(geo: ElasticMemoryVectorStore) -> None:
    assert len(geo.max_marginal_relevance_search("query", k=3, fetch_k=1)) == 3


async def test_async_mmr_chooses_like_sync_mmr(geo: ElasticMemoryVectorStore) -> None:
    chosen = await geo.amax_marginal_relevance_search("query", k=2, fetch_k=3)
    assert [d.id for d in chosen] == ["a", "c"]


@pytest.mark.parametrize("lambda_mult", [-0.1, 1.5, True])
def test_mmr_refuses_a_lambda_outside_zero_to_one(geo: ElasticMemoryVectorStore, lambda_mult: Any) -> None:
    with pytest.raises(UsageError, match="lambda_mult"):
        geo.max_marginal_relevance_search("query", lambda_mult=lambda_mult)


# -------------------------------------------------------------- as_retriever
def test_as_retriever_similarity_returns_k_best(geo: ElasticMemoryVectorStore) -> None:
    retriever = geo.as_retriever(search_type="similarity", search_kwargs={"k": 2})
    assert [d.id for d in retriever.invoke("query")] == ["a", "b"]


def test_as_retriever_score_threshold_drops_the_less_relevant(geo: ElasticMemoryVectorStore) -> None:
    """Cherry cake (cosine 0.73 to the query) is less relevant than 0.9; the apple documents (0.96) are not."""
    retriever = geo.as_retriever(
        search_type="similarity_score_threshold", search_kwargs={"k": 3, "score_threshold": 0.9}
    )
    assert [d.id for d in retriever.invoke("query")] == ["a", "b"]


def test_as_retriever_mmr_diversifies(geo: ElasticMemoryVectorStore) -> None:
    retriever = geo.as_retriever(search_type="mmr", search_kwargs={"k": 2, "fetch_k": 3})
    assert [d.id for d in retriever.invoke("query")] == ["a", "c"]


@pytest.mark.parametrize(
    ("search_type", "search_kwargs", "expected"),
    [
        ("similarity", {"k": 2}, ["a", "b"]),
        ("similarity_score_threshold", {"k": 3, "score_threshold": 0.9}, ["a", "b"]),
        ("mmr", {"k": 2, "fetch_k": 3}, ["a", "c"]),
    ],
)
async def test_as_retriever_works_async_for_every_search_type(
    geo: ElasticMemoryVectorStore, search_type: str, search_kwargs: dict[str, Any], expected: list[str]
) -> None:
    retriever = geo.as_retriever(search_type=search_type, search_kwargs=search_kwargs)
    assert [d.id for d in await retriever.ainvoke("query")] == expected


# ------------------------------------------------------------------- scores
def test_scores_are_cosine_similarities_best_first(geo: ElasticMemoryVectorStore) -> None:
    scored = geo.similarity_search_with_score("query", k=3)
    expected = sorted(
        ((d.page_content, cosine(GEOMETRY["query"], GEOMETRY[d.page_content])) for d in DOCS), key=lambda p: -p[1]
    )
    assert [d.page_content for d, _ in scored] == [text for text, _ in expected]
    assert [s for _, s in scored] == pytest.approx([c for _, c in expected], abs=1e-5)


def test_semantic_relevance_scores_are_cosine_similarities(geo: ElasticMemoryVectorStore) -> None:
    """LangChain's cosine relevance (1 - cosine distance): the cosine itself; an opposite document gets 0."""
    geo.add_texts(["opposite"], ids=["o"])
    scored = geo.similarity_search_with_relevance_scores("query", k=4)
    hits = geo.memory.recall("query", k=4, mode="semantic", filters={"agent_id": geo.collection, "kind": "note"})
    assert [(d.id, score) for d, score in scored] == [(h.id, max(0.0, h.score)) for h in hits]
    assert scored[-1][0].id == "o" and scored[-1][1] == 0.0


def test_semantic_score_threshold_is_on_the_cosine(geo: ElasticMemoryVectorStore) -> None:
    """A threshold of 0.5 keeps cosines of 0.5 and more (not the core's (cos - 0.3) / 0.7)."""
    cosines = {d.id: s for d, s in geo.similarity_search_with_score("query", k=3)}
    kept = geo.similarity_search_with_relevance_scores("query", k=3, score_threshold=0.5)
    assert {d.id for d, _ in kept} == {i for i, c in cosines.items() if c >= 0.5}


def test_hybrid_relevance_scores_stay_between_zero_and_one(mem: Memory) -> None:
    store = ElasticMemoryVectorStore(memory=mem, search_mode="hybrid")
    store.add_texts(["apples and pears", "pears in syrup", "a red bicycle"])
    scored = store.similarity_search_with_relevance_scores("pears", k=3)
    assert len(scored) == 3 and all(0.0 <= s <= 1.0 for _, s in scored)


@pytest.fixture
def words(mem: Memory) -> ElasticMemoryVectorStore:
    """A keyword-mode store with three texts, two of which say "red"."""
    store = ElasticMemoryVectorStore(memory=mem, search_mode="keyword")
    store.add_texts(["the red bicycle", "a blue car", "red apples and red cherries"], ids=["bike", "car", "apples"])
    return store


def test_keyword_scores_are_bm25(words: ElasticMemoryVectorStore) -> None:
    """BM25 is positive and well above the 1e-6 the fused score used to give."""
    scored = words.similarity_search_with_score("red", k=3)
    assert {d.id for d, _ in scored} == {"bike", "apples"}
    assert all(score > 0.05 for _, score in scored)


def test_keyword_relevance_scores_are_the_hits_relevance(words: ElasticMemoryVectorStore) -> None:
    scored = words.similarity_search_with_relevance_scores("red", k=3)
    notes = {"agent_id": words.collection, "kind": "note"}
    hits = {h.id: h.relevance for h in words.memory.recall("red", k=3, mode="keyword", filters=notes)}
    assert [(d.id, score) for d, score in scored] == [(d.id, hits[d.id]) for d, _ in scored]
    assert all(0.0 < score <= 1.0 for _, score in scored)


@pytest.mark.parametrize("mode", ["semantic", "hybrid", "keyword"])
@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
async def test_the_threshold_retriever_works_in_every_search_mode(mem: Memory, mode: str, asynchronous: bool) -> None:
    store = ElasticMemoryVectorStore(memory=mem, search_mode=mode)  # type: ignore[arg-type]
    store.add_texts(["red apples", "a blue car"], ids=["apples", "car"])
    everything = store.as_retriever(search_type="similarity_score_threshold", search_kwargs={"score_threshold": 0.0})
    nothing = store.as_retriever(search_type="similarity_score_threshold", search_kwargs={"score_threshold": 1.0})
    found = await everything.ainvoke("red apples") if asynchronous else everything.invoke("red apples")
    assert found[0].id == "apples"
    assert (await nothing.ainvoke("zebra") if asynchronous else nothing.invoke("zebra")) == []


# --------------------------------------------------------- search modes
def test_keyword_mode_ranks_by_words(words: ElasticMemoryVectorStore) -> None:
    assert {d.id for d in words.similarity_search("red", k=3)} == {"bike", "apples"}


def test_hybrid_mode_finds_by_words_and_vectors(mem: Memory) -> None:
    store = ElasticMemoryVectorStore(memory=mem, search_mode="hybrid")
    store.add_texts(["the red bicycle", "a blue car"], ids=["bike", "car"])
    assert store.similarity_search("red bicycle", k=2)[0].id == "bike"


def test_an_empty_query_matches_nothing(geo: ElasticMemoryVectorStore) -> None:
    assert geo.similarity_search("  ") == []
    assert geo.max_marginal_relevance_search("") == []


def test_a_vector_search_ranks_by_cosine(geo: ElasticMemoryVectorStore) -> None:
    assert geo.similarity_search_by_vector(GEOMETRY["cherry cake"], k=3)[0].id == "c"


# ------------------------------------------------------- metadata exactness
NESTED = {
    "source": "wiki",
    "page": 3,
    "score": 0.5,
    "tier": "gold",
    "tags": ["x", "y"],
    "deep": {"a": [1, {"b": None}]},
}


@pytest.mark.parametrize(
    "read",
    [
        lambda s: s.get_by_ids(["m"]),
        lambda s: s.similarity_search("exact metadata", k=1),
        lambda s: [d for d, _ in s.similarity_search_with_score("exact metadata", k=1)],
        lambda s: [d for d, _ in s.similarity_search_with_relevance_scores("exact metadata", k=1)],
        lambda s: s.similarity_search_by_vector(s.memory.embed_query("exact metadata"), k=1),
        lambda s: s.max_marginal_relevance_search("exact metadata", k=1),
        lambda s: s.as_retriever(search_kwargs={"k": 1}).invoke("exact metadata"),
    ],
    ids=["get_by_ids", "similarity", "with_score", "relevance", "by_vector", "mmr", "as_retriever"],
)
def test_returned_metadata_is_exactly_what_was_stored(
    store: ElasticMemoryVectorStore, read: Callable[[ElasticMemoryVectorStore], list[Document]]
) -> None:
    """Keys named like the core's columns (score, tier, tags, source) are the user's own."""
    store.add_documents([Document(page_content="exact metadata", metadata=NESTED)], ids=["m"])
    assert read(store) == [Document(id="m", page_content="exact metadata", metadata=NESTED)]


def test_bookkeeping_lives_in_the_core_columns(store: ElasticMemoryVectorStore) -> None:
    store.add_texts(["a note"], [{"k": "v"}], ids=["n"])
    record = store.memory.get("n")
    assert record is not None
    assert (record.metadata, record.agent_id, record.kind) == ({"k": "v"}, store.collection, "note")


def test_adding_documents_leaves_them_untouched(store: ElasticMemoryVectorStore) -> None:
    doc = Document(page_content="keep me", metadata={"k": ["v"]})
    before = doc.model_copy(deep=True)
    store.add_documents([doc])
    assert doc == before and doc.id is None


def test_the_same_text_under_two_ids_is_stored_twice(store: ElasticMemoryVectorStore) -> None:
    assert store.add_texts(["twice", "twice"], ids=["1", "2"]) == ["1", "2"]
    assert sorted(d.id or "" for d in store.similarity_search("twice", k=5)) == ["1", "2"]


# ---------------------------------------------------------- truly async
_SYNC_FACADE = ("open", "close", "recall", "explain", "remember", "remember_many", "get", "get_many", "update")
_SYNC_FACADE += ("forget", "vectors", "embed_query", "stats")


def _forbid_threads_and_the_sync_facade(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an async method went through the sync facade or a worker thread")

    for name in _SYNC_FACADE:
        monkeypatch.setattr(Memory, name, refuse)
    monkeypatch.setattr("langchain_core.vectorstores.base.run_in_executor", refuse)
    monkeypatch.setattr("langchain_core.retrievers.run_in_executor", refuse)


ASYNC_CALLS: dict[str, Callable[[ElasticMemoryVectorStore], Awaitable[Any]]] = {
    "aadd_documents": lambda s: s.aadd_documents([Document(page_content="new")], ids=["new"]),
    "aadd_texts": lambda s: s.aadd_texts(["new"], [{"k": 1}], ids=["new"]),
    "aget_by_ids": lambda s: s.aget_by_ids(["a", "missing"]),
    "adelete": lambda s: s.adelete(["a"]),
    "adelete-all": lambda s: s.adelete(),
    "asimilarity_search": lambda s: s.asimilarity_search("query", k=2),
    "asimilarity_search_with_score": lambda s: s.asimilarity_search_with_score("query", k=2),
    "asimilarity_search_with_relevance_scores": lambda s: s.asimilarity_search_with_relevance_scores("query"),
    "asimilarity_search_by_vector": lambda s: s.asimilarity_search_by_vector(GEOMETRY["query"]),
    "amax_marginal_relevance_search": lambda s: s.amax_marginal_relevance_search("query", k=2),
    "amax_marginal_relevance_search_by_vector": lambda s: s.amax_marginal_relevance_search_by_vector([1.0, 0, 0]),
    "as_retriever.ainvoke": lambda s: s.as_retriever(search_type="mmr").ainvoke("query"),
    "asearch": lambda s: s.asearch("query", search_type="similarity_score_threshold"),
}


@pytest.mark.parametrize("call", list(ASYNC_CALLS))
async def test_async_methods_use_the_async_core_not_threads(
    geo: ElasticMemoryVectorStore, monkeypatch: pytest.MonkeyPatch, call: str
) -> None:
    with monkeypatch.context() as patched:
        _forbid_threads_and_the_sync_facade(patched)
        await ASYNC_CALLS[call](geo)


async def test_afrom_texts_opens_and_fills_the_store_asynchronously(monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as patched:
        _forbid_threads_and_the_sync_facade(patched)
        store = await ElasticMemoryVectorStore.afrom_texts(
            ["async"], TableEmbeddings(GEOMETRY), ids=["x"], path=":memory:"
        )
        try:
            assert [d.id for d in await store.aget_by_ids(["x"])] == ["x"]
        finally:
            await store.aclose()


async def test_async_results_equal_sync_results(geo: ElasticMemoryVectorStore) -> None:
    assert await geo.asimilarity_search_with_score("query", k=3) == geo.similarity_search_with_score("query", k=3)


# --------------------------------------------------------------- from_texts
def test_from_texts_builds_an_in_memory_store() -> None:
    with ElasticMemoryVectorStore.from_texts(
        ["apple pie", "cherry cake"],
        TableEmbeddings(GEOMETRY),
        metadatas=[{"n": 1}, {"n": 2}],
        ids=["a", "c"],
        path=":memory:",
    ) as store:
        assert store.memory.path == ":memory:"
        assert store.get_by_ids(["a", "c"]) == [
            Document(id="a", page_content="apple pie", metadata={"n": 1}),
            Document(id="c", page_content="cherry cake", metadata={"n": 2}),
        ]


def test_from_texts_on_a_file_persists(tmp_path: Path) -> None:
    path = tmp_path / "vs.db"
    embeddings = TableEmbeddings(GEOMETRY)
    ElasticMemoryVectorStore.from_texts(["apple pie"], embeddings, ids=["a"], path=path).close()
    with ElasticMemoryVectorStore(path=path, embedding=embeddings) as store:
        assert [d.id for d in store.similarity_search("query", k=1)] == ["a"]


def test_from_texts_over_an_open_memory_leaves_it_open(mem: Memory) -> None:
    store = ElasticMemoryVectorStore.from_texts(["kept"], None, memory=mem, ids=["k"], collection="docs")
    store.close()
    assert [d.id for d in ElasticMemoryVectorStore(memory=mem, collection="docs").get_by_ids(["k"])] == ["k"]


def test_from_documents_keeps_document_ids() -> None:
    docs = [Document(page_content="apple pie", metadata={"n": 1}, id="a")]
    with ElasticMemoryVectorStore.from_documents(docs, TableEmbeddings(GEOMETRY), path=":memory:") as store:
        assert store.get_by_ids(["a"]) == docs


@pytest.mark.parametrize(
    "build",
    [
        lambda: ElasticMemoryVectorStore.from_texts(["apple pie"], TableEmbeddings(GEOMETRY)),
        lambda: ElasticMemoryVectorStore.from_documents([Document("apple pie")], TableEmbeddings(GEOMETRY)),
    ],
    ids=["from_texts", "from_documents"],
)
def test_building_without_a_path_warns_that_nothing_is_kept(build: Callable[[], ElasticMemoryVectorStore]) -> None:
    with pytest.warns(UserWarning, match=r"without path= keeps the documents in memory.*path='docs.db'"):
        store = build()
    with store:
        assert store.memory.path == ":memory:" and len(store.similarity_search("apple pie", k=5)) == 1


async def test_afrom_texts_without_a_path_warns_too() -> None:
    with pytest.warns(UserWarning, match=r"afrom_texts\(\) without path="):
        store = await ElasticMemoryVectorStore.afrom_texts(["apple pie"], TableEmbeddings(GEOMETRY))
    await store.aclose()


def test_an_explicit_path_builds_without_a_warning(tmp_path: Path, mem: Memory) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ElasticMemoryVectorStore.from_texts(["kept"], TableEmbeddings(GEOMETRY), path=tmp_path / "vs.db").close()
        ElasticMemoryVectorStore.from_texts(["kept"], None, memory=mem).close()


def test_from_texts_that_fails_stores_nothing_and_raises(mem: Memory) -> None:
    with pytest.raises(UsageError, match="JSON-serialisable"):
        ElasticMemoryVectorStore.from_texts(["ok", "bad"], None, [{}, {"x": object()}], memory=mem)
    assert mem.stats()["total_memories"] == 0


# -------------------------------------------------------------- collections
def test_the_default_collection_is_the_memory_agent() -> None:
    with Memory.open(":memory:", agent_id="ana", embedder=LangChainEmbedder(TableEmbeddings(GEOMETRY))) as mem:
        store = ElasticMemoryVectorStore(memory=mem)
        store.add_texts(["apple pie"], ids=["a"])
        record = mem.get("a")
    assert store.collection == "ana" and record is not None and record.agent_id == "ana"


def test_two_collections_do_not_see_each_other(mem: Memory) -> None:
    left = ElasticMemoryVectorStore(memory=mem, collection="left")
    right = ElasticMemoryVectorStore(memory=mem, collection="right")
    left.add_texts(["shared words here"], ids=["l"])
    right.add_texts(["shared words here"], ids=["r"])
    assert [d.id for d in left.similarity_search("shared words here", k=5)] == ["l"]
    assert right.get_by_ids(["l", "r"]) == [Document(id="r", page_content="shared words here")]


def test_deleting_all_spares_other_collections_and_the_memory_loop(mem: Memory) -> None:
    store = ElasticMemoryVectorStore(memory=mem, collection="docs")
    other = ElasticMemoryVectorStore(memory=mem, collection="other")
    store.add_texts(["doc one", "doc two"])
    other.add_texts(["other doc"], ids=["o"])
    receipt = mem.record_turn("My dog is called Biscuit.", "Nice name!", session_id="s1")
    mem.facts.set("user.dog_name", "Biscuit")
    before = mem.stats()["total_memories"]

    store.delete()

    assert store.similarity_search("doc", k=5) == []
    assert mem.stats()["total_memories"] == before - 2
    assert [d.id for d in other.get_by_ids(["o"])] == ["o"]
    assert all(mem.get(c) is not None for c in receipt.chunk_ids)
    fact = mem.facts.get("user.dog_name")
    assert fact is not None and fact.value == "Biscuit"


def test_deleting_all_empties_more_than_one_page(store: ElasticMemoryVectorStore) -> None:
    store.add_texts([f"note {i}" for i in range(1003)])
    store.delete()
    assert store.memory.stats()["total_memories"] == 0


def test_deleting_ids_of_another_collection_does_nothing(mem: Memory) -> None:
    ElasticMemoryVectorStore(memory=mem, collection="a").add_texts(["theirs"], ids=["x"])
    ElasticMemoryVectorStore(memory=mem, collection="b").delete(["x"])
    assert mem.get("x") is not None


def test_an_id_held_outside_the_collection_is_refused_and_nothing_is_stored(mem: Memory) -> None:
    mem.remember("the loop's own memory", id="taken", agent_id="someone-else")
    store = ElasticMemoryVectorStore(memory=mem, collection="docs")
    with pytest.raises(UsageError, match=r"\['taken'\] already name memories outside collection 'docs'"):
        store.add_texts(["fresh", "clash"], ids=["fresh", "taken"])
    assert mem.get("fresh") is None
    record = mem.get("taken")
    assert record is not None and record.content == "the loop's own memory"


# ------------------------------------------------------- built-in embedder
@pytest.mark.model
def test_the_builtin_model_ranks_by_meaning() -> None:
    with ElasticMemoryVectorStore(path=":memory:") as store:
        store.add_texts(["The cat sat on the mat.", "Stock markets fell sharply today."], ids=["cat", "stocks"])
        assert [d.id for d in store.similarity_search("a kitten resting", k=2)] == ["cat", "stocks"]


@pytest.mark.model
def test_mmr_works_with_the_builtin_model() -> None:
    with ElasticMemoryVectorStore(path=":memory:") as store:
        store.add_texts(["The cat sat on the mat.", "A cat sat on a mat.", "Stock markets fell sharply today."])
        chosen = store.max_marginal_relevance_search("a cat on a mat", k=2, fetch_k=3, lambda_mult=0.3)
        assert "Stock markets fell sharply today." in [d.page_content for d in chosen]


# ----------------------------------------------------------------- bad input
def test_non_serialisable_metadata_is_refused_and_nothing_stored(store: ElasticMemoryVectorStore) -> None:
    docs = [Document(page_content="fine"), Document(page_content="bad", metadata={"when": object()})]
    with pytest.raises(UsageError, match="JSON-serialisable"):
        store.add_documents(docs)
    assert store.memory.stats()["total_memories"] == 0


def test_an_empty_text_in_a_batch_stores_nothing(store: ElasticMemoryVectorStore) -> None:
    with pytest.raises(UsageError, match="content is empty"):
        store.add_texts(["fine", "  "])
    assert store.memory.stats()["total_memories"] == 0


@pytest.mark.parametrize(
    "add",
    [
        lambda s: s.add_texts(["a", "b"], ids=["1"]),
        lambda s: s.add_texts(["a", "b"], metadatas=[{}]),
        lambda s: s.add_documents([Document(page_content="a")], ids=["1", "2"]),
    ],
    ids=["ids", "metadatas", "document-ids"],
)
def test_counts_that_do_not_match_the_texts_are_a_value_error(
    store: ElasticMemoryVectorStore, add: Callable[[ElasticMemoryVectorStore], Any]
) -> None:
    with pytest.raises(ValueError, match="one per text"):
        add(store)


def test_a_vector_of_the_wrong_width_is_refused(geo: ElasticMemoryVectorStore) -> None:
    with pytest.raises(EmbeddingMismatchError, match="width 2"):
        geo.similarity_search_by_vector([1.0, 0.0])


def test_reopening_a_file_with_other_embeddings_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "vs.db"
    ElasticMemoryVectorStore.from_texts(["apple pie"], TableEmbeddings(GEOMETRY), path=path).close()
    with ElasticMemoryVectorStore(path=path, embedding=DeterministicFakeEmbedding(size=8)) as store:
        with pytest.warns(RecallWarning), pytest.raises(EmbeddingMismatchError, match="is pinned to"):
            store.add_texts(["would be stored without a vector"])
        assert store.memory.stats()["total_memories"] == 1


def test_a_semantic_store_over_a_keyword_only_memory_refuses_to_store() -> None:
    with Memory.open(":memory:", embedder=None) as mem:
        store = ElasticMemoryVectorStore(memory=mem)
        with pytest.raises(UsageError, match="needs embeddings"):
            store.add_texts(["text"])
        assert mem.stats()["total_memories"] == 0


def test_a_keyword_store_works_without_an_embedder() -> None:
    with Memory.open(":memory:", embedder=None) as mem:
        store = ElasticMemoryVectorStore(memory=mem, search_mode="keyword")
        store.add_texts(["plain words"], ids=["p"])
        assert [d.id for d in store.similarity_search("words")] == ["p"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"path": ":memory:", "search_mode": "vector"}, "search_mode must be one of"),
        ({"path": ":memory:", "collection": ""}, "collection must be"),
        ({}, "exactly one of path="),
        ({"path": ":memory:", "memory": "x"}, "exactly one of path="),
        ({"memory": "not a memory"}, "memory must be an elastic_memory Memory"),
    ],
)
def test_bad_constructor_arguments_are_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        ElasticMemoryVectorStore(embedding=DeterministicFakeEmbedding(size=6) if "path" in kwargs else None, **kwargs)


def test_embedding_with_an_open_memory_is_refused(mem: Memory) -> None:
    with pytest.raises(UsageError, match="embedding= applies when the adapter opens the store"):
        ElasticMemoryVectorStore(memory=mem, embedding=DeterministicFakeEmbedding(size=6))


def test_open_options_with_an_open_memory_are_refused(mem: Memory) -> None:
    with pytest.raises(UsageError, match=r"\['agent_id'\] apply when the adapter opens the store"):
        ElasticMemoryVectorStore(memory=mem, agent_id="ana")


@pytest.mark.parametrize("k", [-1, 1001, 2.0, True])
def test_k_out_of_range_is_refused(geo: ElasticMemoryVectorStore, k: Any) -> None:
    with pytest.raises(UsageError, match="k must be an integer from 0 to 1000"):
        geo.similarity_search("query", k=k)


SEARCHES: dict[str, Callable[..., Any]] = {
    "similarity_search": lambda s, **kw: s.similarity_search("query", **kw),
    "similarity_search_with_score": lambda s, **kw: s.similarity_search_with_score("query", **kw),
    "similarity_search_with_relevance_scores": lambda s, **kw: s.similarity_search_with_relevance_scores("query", **kw),
    "similarity_search_by_vector": lambda s, **kw: s.similarity_search_by_vector(GEOMETRY["query"], **kw),
    "max_marginal_relevance_search": lambda s, **kw: s.max_marginal_relevance_search("query", **kw),
    "max_marginal_relevance_search_by_vector": lambda s, **kw: s.max_marginal_relevance_search_by_vector(
        GEOMETRY["query"], **kw
    ),
}
ASYNC_SEARCHES: dict[str, Callable[..., Awaitable[Any]]] = {
    "asimilarity_search": lambda s, **kw: s.asimilarity_search("query", **kw),
    "asimilarity_search_with_score": lambda s, **kw: s.asimilarity_search_with_score("query", **kw),
    "asimilarity_search_with_relevance_scores": lambda s, **kw: s.asimilarity_search_with_relevance_scores(
        "query", **kw
    ),
    "asimilarity_search_by_vector": lambda s, **kw: s.asimilarity_search_by_vector(GEOMETRY["query"], **kw),
    "amax_marginal_relevance_search": lambda s, **kw: s.amax_marginal_relevance_search("query", **kw),
    "amax_marginal_relevance_search_by_vector": lambda s, **kw: s.amax_marginal_relevance_search_by_vector(
        GEOMETRY["query"], **kw
    ),
}


@pytest.mark.parametrize("search", list(SEARCHES))
def test_k_zero_finds_nothing(geo: ElasticMemoryVectorStore, search: str) -> None:
    assert SEARCHES[search](geo, k=0) == []


@pytest.mark.parametrize("search", list(ASYNC_SEARCHES))
async def test_k_zero_finds_nothing_async(geo: ElasticMemoryVectorStore, search: str) -> None:
    assert await ASYNC_SEARCHES[search](geo, k=0) == []


def test_k_zero_still_refuses_a_bad_filter(geo: ElasticMemoryVectorStore) -> None:
    with pytest.raises(UsageError, match="unknown operator"):
        geo.similarity_search("query", k=0, filter={"lang": {"$regex": "e"}})


@pytest.mark.parametrize("search", list(SEARCHES))
def test_mmr_arguments_are_accepted_by_every_search(geo: ElasticMemoryVectorStore, search: str) -> None:
    """fetch_k and lambda_mult, as a retriever's search_kwargs hold them whatever the search type."""
    assert len(SEARCHES[search](geo, k=2, fetch_k=10, lambda_mult=0.5)) == 2


@pytest.mark.parametrize("search", list(ASYNC_SEARCHES))
async def test_mmr_arguments_are_accepted_by_every_async_search(geo: ElasticMemoryVectorStore, search: str) -> None:
    assert len(await ASYNC_SEARCHES[search](geo, k=2, fetch_k=10, lambda_mult=0.5)) == 2


def test_similarity_with_mmr_arguments_ranks_as_without(geo: ElasticMemoryVectorStore) -> None:
    with_them = geo.similarity_search_with_score("query", k=3, fetch_k=10, lambda_mult=0.1)
    assert with_them == geo.similarity_search_with_score("query", k=3)


def test_a_retriever_keeps_working_when_its_search_type_changes(geo: ElasticMemoryVectorStore) -> None:
    kwargs = {"k": 2, "fetch_k": 3, "lambda_mult": 0.5}
    assert [d.id for d in geo.as_retriever(search_type="mmr", search_kwargs=kwargs).invoke("query")] == ["a", "c"]
    assert [d.id for d in geo.as_retriever(search_kwargs=kwargs).invoke("query")] == ["a", "b"]


@pytest.mark.parametrize("search", list(SEARCHES))
def test_score_threshold_drops_the_less_relevant_in_every_search(geo: ElasticMemoryVectorStore, search: str) -> None:
    """Cherry cake (cosine 0.73 to the query) is less relevant than 0.9; the apple documents (0.96) are not."""
    found = SEARCHES[search](geo, k=3, fetch_k=3, score_threshold=0.9)
    assert {(d[0] if isinstance(d, tuple) else d).id for d in found} == {"a", "b"}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"fetch_k": -1}, "fetch_k must be an integer"),
        ({"lambda_mult": 2}, "lambda_mult must be a number"),
        ({"score_threshold": 1.5}, "score_threshold must be a relevance"),
        ({"score_threshold": "high"}, "score_threshold must be a relevance"),
        ({"where_document": {"$contains": "x"}}, r"unexpected argument\(s\) \['where_document'\]"),
    ],
)
def test_bad_search_arguments_are_refused(geo: ElasticMemoryVectorStore, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        geo.similarity_search("query", k=2, **kwargs)


def test_an_unknown_keyword_argument_is_refused(store: ElasticMemoryVectorStore) -> None:
    with pytest.raises(UsageError, match=r"unexpected argument\(s\) \['namespace'\]"):
        store.add_texts(["x"], namespace="docs")


# --------------------------------------------------------------- lifecycle
def test_a_store_over_an_open_memory_does_not_close_it(mem: Memory) -> None:
    ElasticMemoryVectorStore(memory=mem).close()
    assert mem.stats()["total_memories"] == 0


async def test_a_store_over_an_async_memory_works_both_ways() -> None:
    async with await AsyncMemory.open(":memory:", embedder=LangChainEmbedder(TableEmbeddings(GEOMETRY))) as amem:
        store = ElasticMemoryVectorStore(memory=amem)
        await store.aadd_texts(["apple pie"], ids=["a"])
        assert [d.id for d in await store.asimilarity_search("query", k=1)] == ["a"]


def test_embeddings_are_the_ones_given() -> None:
    embeddings = TableEmbeddings(GEOMETRY)
    with ElasticMemoryVectorStore(path=":memory:", embedding=embeddings) as store:
        assert store.embeddings is embeddings


def test_the_module_example_runs() -> None:
    assert doctest.testmod(vectorstores, raise_on_error=True).attempted > 0
