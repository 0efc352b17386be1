"""ElasticMemoryVectorStore beside LangChain's reference, ``InMemoryVectorStore``.

The same calls run on both stores, built from the same documents with the same deterministic
embeddings; the store searches in ``search_mode="semantic"`` (cosine, as the reference).
Results, orders and scores must agree. Each intended difference has its own test below
(``test_difference_*``) and a row in docs/langchain.md ("Beside InMemoryVectorStore").
"""

from __future__ import annotations

import hashlib
import itertools
import re
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import InMemoryVectorStore

from elastic_memory import UsageError
from langchain_elastic_memory import ElasticMemoryVectorStore


class WordEmbeddings(Embeddings):
    """Bag of words, each word hashed to three weights in [-1, 1] on 48 dimensions.

    Texts sharing words are near, others can be opposite; real-valued weights make ties unlikely.
    """

    def _vector(self, text: str) -> list[float]:
        vector = [0.0] * 48
        for word in re.findall(r"\w+", text.lower()):
            digest = hashlib.sha256(word.encode()).digest()
            for i in range(3):
                vector[digest[i] % 48] += (digest[3 + i] - 127.5) / 127.5
        return vector if any(vector) else [1.0] + [0.0] * 47

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


CORPUS = [
    Document(id="standup", page_content="The standup meeting is at ten every morning", metadata={"team": "core"}),
    Document(id="retro", page_content="The retro meeting is on Friday afternoon", metadata={"team": "web"}),
    Document(id="deploy", page_content="Deploys happen on Tuesday after the review", metadata={"team": "core"}),
    Document(id="lunch", page_content="Lunch is served in the canteen at noon", metadata={"team": "all"}),
    Document(id="oncall", page_content="The on call rota changes every Monday morning", metadata={"team": "ops"}),
    Document(id="garden", page_content="Tomatoes need sun and water in summer", metadata={"team": "home"}),
    Document(id="bikes", page_content="Bikes go in the shed behind the office", metadata={"team": "all", "n": 2}),
]
QUERIES = ["when is the standup meeting", "meeting on Friday", "sun and water", "office shed bikes morning"]


@pytest.fixture
def pair() -> Iterator[tuple[InMemoryVectorStore, ElasticMemoryVectorStore]]:
    """The reference and this store, each holding CORPUS under the same ids, embedded the same way."""
    embeddings = WordEmbeddings()
    reference = InMemoryVectorStore(embeddings)
    reference.add_documents(CORPUS)
    with ElasticMemoryVectorStore(path=":memory:", embedding=embeddings, search_mode="semantic") as ours:
        ours.add_documents(CORPUS)
        yield reference, ours


def ids(documents: list[Document]) -> list[str | None]:
    return [d.id for d in documents]


def distinct(scores: list[float]) -> bool:
    """No two scores so close that float32 and float64 could order them differently."""
    ordered = sorted(scores)
    return all(b - a > 1e-4 for a, b in itertools.pairwise(ordered))


# ------------------------------------------------------------ same results
@pytest.mark.parametrize("query", QUERIES)
def test_similarity_search_returns_the_same_documents_in_the_same_order(
    pair: tuple[InMemoryVectorStore, ElasticMemoryVectorStore], query: str
) -> None:
    reference, ours = pair
    assert distinct([s for _, s in reference.similarity_search_with_score(query, k=len(CORPUS))])
    assert ours.similarity_search(query, k=3) == reference.similarity_search(query, k=3)


@pytest.mark.parametrize("query", QUERIES)
def test_scores_are_the_same_cosine_similarities_negative_ones_included(
    pair: tuple[InMemoryVectorStore, ElasticMemoryVectorStore], query: str
) -> None:
    reference, ours = pair
    expected = reference.similarity_search_with_score(query, k=len(CORPUS))
    got = ours.similarity_search_with_score(query, k=len(CORPUS))
    assert [d for d, _ in got] == [d for d, _ in expected]
    assert [s for _, s in got] == pytest.approx([s for _, s in expected], abs=1e-5)


def test_the_corpus_has_negative_cosines_so_the_score_test_covers_them(
    pair: tuple[InMemoryVectorStore, ElasticMemoryVectorStore],
) -> None:
    reference, _ = pair
    assert any(s < 0 for q in QUERIES for _, s in reference.similarity_search_with_score(q, k=len(CORPUS)))


def test_a_document_scores_one_against_its_own_text(
    pair: tuple[InMemoryVectorStore, ElasticMemoryVectorStore],
) -> None:
    reference, ours = pair
    text = CORPUS[2].page_content
    assert ours.similarity_search_with_score(text, k=1)[0][1] == pytest.approx(1.0, abs=1e-6)
    assert reference.similarity_search_with_score(text, k=1)[0][1] == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("query", QUERIES)
def test_search_by_vector_agrees(pair: tuple[InMemoryVectorStore, ElasticMemoryVectorStore], query: str) -> None:
    reference, ours = pair
    vector = WordEmbeddings().embed_query(query)
    assert ours.similarity_search_by_vector(vector, k=4) == reference.similarity_search_by_vector(vector, k=4)


@pytest.mark.parametrize("k", [0, 1, len(CORPUS), len(CORPUS) + 5, 100])
def test_k_zero_one_all_and_more_than_the_store_holds(
    pair: tuple[InMemoryVectorStore, ElasticMemoryVectorStore], k: int
) -> None:
    reference, ours = pair
    expected = reference.similarity_search(QUERIES[0], k=k)
    assert len(expected) == min(k, len(CORPUS))
    assert ours.similarity_search(QUERIES[0], k=k) == expected


async def test_async_search_agrees(pair: tuple[InMemoryVectorStore, ElasticMemoryVectorStore]) -> None:
    reference, ours = pair
    expected = await reference.asimilarity_search_with_score(QUERIES[1], k=4)
    got = await ours.asimilarity_search_with_score(QUERIES[1], k=4)
    assert [d for d, _ in got] == [d for d, _ in expected]
    assert [s for _, s in got] == pytest.approx([s for _, s in expected], abs=1e-5)


@pytest.mark.parametrize("kwargs", [{"fetch_k": 10}, {"fetch_k": 10, "lambda_mult": 0.2}])
def test_mmr_arguments_on_a_similarity_search_are_ignored_by_both(
    pair: tuple[InMemoryVectorStore, ElasticMemoryVectorStore], kwargs: dict[str, Any]
) -> None:
    reference, ours = pair
    assert ours.similarity_search(QUERIES[0], k=2, **kwargs) == reference.similarity_search(QUERIES[0], k=2, **kwargs)


def test_a_retriever_with_mmr_search_kwargs_agrees_for_similarity_and_mmr(
    pair: tuple[InMemoryVectorStore, ElasticMemoryVectorStore],
) -> None:
    reference, ours = pair
    kwargs = {"k": 3, "fetch_k": 6, "lambda_mult": 0.3}
    for search_type in ("similarity", "mmr"):
        expected = reference.as_retriever(search_type=search_type, search_kwargs=kwargs).invoke(QUERIES[3])
        assert ours.as_retriever(search_type=search_type, search_kwargs=kwargs).invoke(QUERIES[3]) == expected


@pytest.mark.parametrize(("k", "fetch_k", "lambda_mult"), [(3, 6, 0.3), (2, 7, 0.0), (4, 7, 1.0), (3, 3, 0.5)])
@pytest.mark.parametrize("query", QUERIES)
def test_mmr_chooses_the_same_documents_in_the_same_order(
    pair: tuple[InMemoryVectorStore, ElasticMemoryVectorStore], query: str, k: int, fetch_k: int, lambda_mult: float
) -> None:
    reference, ours = pair
    expected = reference.max_marginal_relevance_search(query, k=k, fetch_k=fetch_k, lambda_mult=lambda_mult)
    assert ours.max_marginal_relevance_search(query, k=k, fetch_k=fetch_k, lambda_mult=lambda_mult) == expected


def test_mmr_with_k_zero_finds_nothing_in_both(pair: tuple[InMemoryVectorStore, ElasticMemoryVectorStore]) -> None:
    reference, ours = pair
    assert ours.max_marginal_relevance_search(QUERIES[0], k=0) == reference.max_marginal_relevance_search(
        QUERIES[0], k=0
    )


def test_get_by_ids_keeps_the_order_asked_and_leaves_missing_ids_out(
    pair: tuple[InMemoryVectorStore, ElasticMemoryVectorStore],
) -> None:
    reference, ours = pair
    asked = ["garden", "missing", "standup", "retro"]
    assert ours.get_by_ids(asked) == reference.get_by_ids(asked)
    assert ids(ours.get_by_ids(asked)) == ["garden", "standup", "retro"]


def test_deleted_documents_are_gone_from_get_and_search_in_both(
    pair: tuple[InMemoryVectorStore, ElasticMemoryVectorStore],
) -> None:
    reference, ours = pair
    for store in pair:
        store.delete(["standup", "missing"])
    assert ours.get_by_ids(["standup", "retro"]) == reference.get_by_ids(["standup", "retro"])
    assert ours.similarity_search(QUERIES[0], k=len(CORPUS)) == reference.similarity_search(QUERIES[0], k=len(CORPUS))
    assert "standup" not in ids(ours.similarity_search(QUERIES[0], k=len(CORPUS)))


def test_adding_an_existing_id_replaces_the_document_in_both(
    pair: tuple[InMemoryVectorStore, ElasticMemoryVectorStore],
) -> None:
    reference, ours = pair
    new = Document(id="lunch", page_content="Lunch moved to the terrace", metadata={"team": "all", "moved": True})
    for store in pair:
        store.add_documents([new])
    assert ours.get_by_ids(["lunch"]) == reference.get_by_ids(["lunch"]) == [new]
    assert ours.similarity_search("terrace", k=1) == reference.similarity_search("terrace", k=1)


def test_a_metadata_dict_filter_selects_what_the_reference_callable_selects(
    pair: tuple[InMemoryVectorStore, ElasticMemoryVectorStore],
) -> None:
    reference, ours = pair
    expected = reference.similarity_search(QUERIES[0], k=5, filter=lambda d: d.metadata["team"] in ("core", "ops"))
    assert ours.similarity_search(QUERIES[0], k=5, filter={"team": {"$in": ["core", "ops"]}}) == expected


# ------------------------------------------------------ intended differences
class CosineDistanceReference(InMemoryVectorStore):
    """InMemoryVectorStore scored as Chroma and PGVector score cosine: a distance, made a relevance by LangChain.

    ``_relevance_scores`` goes through the base ``VectorStore`` code with ``_cosine_relevance_score_fn``.
    """

    def _select_relevance_score_fn(self) -> Any:
        return self._cosine_relevance_score_fn

    def _similarity_search_with_relevance_scores(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        distances = [(d, 1.0 - s) for d, s in self.similarity_search_with_score(query, k, **kwargs)]
        return [(d, self._select_relevance_score_fn()(distance)) for d, distance in distances]


@pytest.fixture
def cosine_pair() -> Iterator[tuple[CosineDistanceReference, ElasticMemoryVectorStore]]:
    embeddings = WordEmbeddings()
    reference = CosineDistanceReference(embeddings)
    reference.add_documents(CORPUS)
    with ElasticMemoryVectorStore(path=":memory:", embedding=embeddings, search_mode="semantic") as ours:
        ours.add_documents(CORPUS)
        yield reference, ours


@pytest.mark.parametrize("query", QUERIES)
def test_relevance_scores_are_langchains_cosine_relevance(
    cosine_pair: tuple[CosineDistanceReference, ElasticMemoryVectorStore], query: str
) -> None:
    """Relevance = _cosine_relevance_score_fn(cosine distance), as the reference stores report (negative: 0)."""
    reference, ours = cosine_pair
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the reference warns of its negative relevances
        expected = reference.similarity_search_with_relevance_scores(query, k=len(CORPUS))
    found = ours.similarity_search_with_relevance_scores(query, k=len(CORPUS))
    assert [d for d, _ in found] == [d for d, _ in expected]
    assert [r for _, r in found] == pytest.approx([max(0.0, r) for _, r in expected], abs=1e-5)


@pytest.mark.parametrize("threshold", [0.0, 0.2, 0.5, 0.8])
def test_the_threshold_retriever_keeps_what_the_reference_keeps(
    cosine_pair: tuple[CosineDistanceReference, ElasticMemoryVectorStore], threshold: float
) -> None:
    """A score_threshold ported from a cosine store means the same cosine here."""
    reference, ours = cosine_pair
    kwargs = {"k": len(CORPUS), "score_threshold": threshold}
    for query in QUERIES:
        expected = reference.as_retriever(search_type="similarity_score_threshold", search_kwargs=kwargs)
        found = ours.as_retriever(search_type="similarity_score_threshold", search_kwargs=kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # the reference warns of its negative relevances
            assert found.invoke(query) == expected.invoke(query)


def test_difference_relevance_scores_exist_here_and_not_in_the_reference(
    pair: tuple[InMemoryVectorStore, ElasticMemoryVectorStore],
) -> None:
    """InMemoryVectorStore has no relevance function; here it is the cosine (LangChain's cosine relevance)."""
    reference, ours = pair
    with pytest.raises(NotImplementedError):
        reference.similarity_search_with_relevance_scores(QUERIES[0])
    cosines = reference.similarity_search_with_score(QUERIES[0], k=len(CORPUS))
    relevance = ours.similarity_search_with_relevance_scores(QUERIES[0], k=len(CORPUS))
    assert [d for d, _ in relevance] == [d for d, _ in cosines]
    assert [r for _, r in relevance] == pytest.approx([max(0.0, c) for _, c in cosines], abs=1e-5)


def test_difference_the_filter_is_a_dict_not_a_callable(
    pair: tuple[InMemoryVectorStore, ElasticMemoryVectorStore],
) -> None:
    _, ours = pair
    with pytest.raises(UsageError, match="filter must be a dict on metadata"):
        ours.similarity_search(QUERIES[0], filter=lambda d: True)  # type: ignore[arg-type]


def test_difference_an_unknown_search_argument_is_refused_not_ignored(
    pair: tuple[InMemoryVectorStore, ElasticMemoryVectorStore],
) -> None:
    """The reference ignores it; here a misspelt argument (filters=) must not return unfiltered documents."""
    reference, ours = pair
    assert len(reference.similarity_search(QUERIES[0], k=2, filters={"team": "web"})) == 2
    with pytest.raises(UsageError, match="the metadata filter is filter="):
        ours.similarity_search(QUERIES[0], k=2, filters={"team": "web"})


@pytest.mark.parametrize("k", [-1, 1001])
def test_difference_a_negative_k_or_one_above_1000_is_refused(
    pair: tuple[InMemoryVectorStore, ElasticMemoryVectorStore], k: int
) -> None:
    """The reference slices with k (-1: all but the last one); here k is from 0 to 1000."""
    reference, ours = pair
    assert len(reference.similarity_search(QUERIES[0], k=k)) == (len(CORPUS) - 1 if k < 0 else len(CORPUS))
    with pytest.raises(UsageError, match="k must be an integer from 0 to 1000"):
        ours.similarity_search(QUERIES[0], k=k)


def test_difference_mmr_fetches_at_least_k_candidates(
    pair: tuple[InMemoryVectorStore, ElasticMemoryVectorStore],
) -> None:
    reference, ours = pair
    assert len(reference.max_marginal_relevance_search(QUERIES[0], k=3, fetch_k=1)) == 1
    assert len(ours.max_marginal_relevance_search(QUERIES[0], k=3, fetch_k=1)) == 3


def test_difference_an_empty_query_matches_nothing(
    pair: tuple[InMemoryVectorStore, ElasticMemoryVectorStore],
) -> None:
    reference, ours = pair
    assert len(reference.similarity_search("", k=2)) == 2
    assert ours.similarity_search("", k=2) == []


def test_difference_delete_returns_true(pair: tuple[InMemoryVectorStore, ElasticMemoryVectorStore]) -> None:
    reference, ours = pair
    assert reference.delete(["retro"]) is None
    assert ours.delete(["retro"]) is True


def test_difference_get_by_ids_returns_a_repeated_id_once(
    pair: tuple[InMemoryVectorStore, ElasticMemoryVectorStore],
) -> None:
    reference, ours = pair
    assert ids(reference.get_by_ids(["retro", "retro"])) == ["retro", "retro"]
    assert ids(ours.get_by_ids(["retro", "retro"])) == ["retro"]


def test_difference_from_texts_without_a_path_warns() -> None:
    """Both keep the documents in memory; this store says so, since a file is what it is for."""
    texts = [d.page_content for d in CORPUS]
    reference = InMemoryVectorStore.from_texts(texts, WordEmbeddings())
    with pytest.warns(UserWarning, match="without path="):
        ours = ElasticMemoryVectorStore.from_texts(texts, WordEmbeddings())
    with ours:
        expected = [d.page_content for d in reference.similarity_search(QUERIES[0], k=3)]
        assert [d.page_content for d in ours.similarity_search(QUERIES[0], k=3)] == expected
