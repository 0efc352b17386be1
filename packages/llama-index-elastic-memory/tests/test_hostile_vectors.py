"""Huge caller vectors through the LlamaIndex vector store: stored and found, or a UsageError.

A finite vector whose square overflows float64 (``1e160`` and up) has a direction; the core
scales it before normalising. A fresh store per test, on a file and on PostgreSQL.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import pytest
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import VectorStoreQuery, VectorStoreQueryMode

from elastic_memory import UsageError
from llama_index.vector_stores.elastic_memory import ElasticMemoryVectorStore


@pytest.fixture
def store(location: str) -> Iterator[ElasticMemoryVectorStore]:
    s = ElasticMemoryVectorStore(path=location)
    s.add(
        [
            TextNode(id_="north", text="north", embedding=[1e308, 0.0, 0.0]),
            TextNode(id_="east", text="east", embedding=[0.0, 1e308, 0.0]),
            TextNode(id_="up", text="up", embedding=[0.0, 0.0, 1e160]),
        ]
    )
    yield s
    s.close()


def test_huge_embeddings_are_found_with_similarity_one(store: ElasticMemoryVectorStore) -> None:
    """If this fails, check that the core scales supplied vectors before their length is squared."""
    result = store.query(VectorStoreQuery(query_embedding=[0.0, 1e300, 0.0], similarity_top_k=1))
    assert result.ids == ["east"]
    assert result.similarities == pytest.approx([1.0], abs=1e-5)


def test_mmr_with_a_huge_query_ranks_without_overflow(store: ElasticMemoryVectorStore) -> None:
    """If this fails, check that the adapter's MMR scales the query before taking its norm."""
    query = VectorStoreQuery(query_embedding=[1e160, 1e159, 0.0], similarity_top_k=2, mode=VectorStoreQueryMode.MMR)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow in numpy would be a RuntimeWarning
        result = store.query(query)
    assert result.ids == ["north", "east"]


def test_a_query_number_past_float_range_is_a_usage_error(store: ElasticMemoryVectorStore) -> None:
    """If this fails, check that converting query_embedding turns an OverflowError into a UsageError."""
    with pytest.raises(UsageError, match="query_embedding"):
        store.query(VectorStoreQuery(query_embedding=[10**400, 0.0, 0.0], similarity_top_k=1))
