"""Huge caller vectors through the LangChain vector store: found as the core finds them, or a UsageError.

A finite vector whose square overflows float64 (``1e160`` and up) has a direction; the core
scales it before normalising. A fresh in-memory store per test.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from elastic_memory import UsageError
from langchain_elastic_memory import ElasticMemoryVectorStore

AXES = {"north": [1.0, 0.0, 0.0], "east": [0.0, 1.0, 0.0], "up": [0.0, 0.0, 1.0]}


class HugeEmbeddings(Embeddings):
    """Axis vectors (other texts: the diagonal) times ``1e300``: a model whose output overflows when squared."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_query(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return [x * 1e300 for x in AXES.get(text, [1.0, 1.0, 1.0])]


@pytest.fixture
def store() -> Iterator[ElasticMemoryVectorStore]:
    with ElasticMemoryVectorStore(path=":memory:", embedding=HugeEmbeddings()) as s:
        s.add_documents([Document(page_content=t) for t in AXES], ids=list(AXES))
        yield s


def test_huge_embeddings_are_found_by_their_query(store: ElasticMemoryVectorStore) -> None:
    """If this fails, check that the core normalises embedder output without overflow."""
    found = store.similarity_search_with_relevance_scores("east", k=1)
    assert [(d.id, round(s, 5)) for d, s in found] == [("east", 1.0)]


def test_a_huge_query_vector_finds_its_match(store: ElasticMemoryVectorStore) -> None:
    """If this fails, check that recall(vector=...) scales the vector before its length is squared."""
    found = store.similarity_search_by_vector([0.0, 0.0, 1e160], k=1)
    assert [d.id for d in found] == ["up"]


def test_mmr_by_a_huge_vector_picks_without_overflow(store: ElasticMemoryVectorStore) -> None:
    """If this fails, check that the adapter scales the query before LangChain's MMR squares it."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow in numpy would be a RuntimeWarning
        found = store.max_marginal_relevance_search_by_vector([1e300, 1e299, 0.0], k=2, fetch_k=3)
    assert [d.id for d in found] == ["north", "east"]


def test_a_query_number_past_float_range_is_a_usage_error(store: ElasticMemoryVectorStore) -> None:
    """If this fails, check that an int too large for a float becomes the core's UsageError."""
    with pytest.raises(UsageError, match="too large"):
        store.similarity_search_by_vector([10**400, 0.0, 0.0], k=1)
