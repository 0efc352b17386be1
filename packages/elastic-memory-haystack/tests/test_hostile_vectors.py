"""Huge caller vectors through the Haystack document store: stored exactly and found, or a ValueError.

A finite vector whose square overflows float64 (``1e160`` and up) has a direction; the core
scales it before normalising. A fresh store per test.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from haystack import Document

from haystack_integrations.document_stores.elastic_memory import ElasticMemoryDocumentStore


@pytest.fixture
def store(location: str) -> Iterator[ElasticMemoryDocumentStore]:
    s = ElasticMemoryDocumentStore(path=location)
    s.write_documents(
        [
            Document(id="north", content="north", embedding=[1e308, 0.0, 0.0]),
            Document(id="east", content="east", embedding=[0.0, -1e308, 0.0]),
        ]
    )
    yield s
    s.close()


def test_huge_embeddings_are_found_with_score_one(store: ElasticMemoryDocumentStore) -> None:
    """If this fails, check that the core scales supplied vectors before their length is squared."""
    found = store.embedding_retrieval([0.0, -1e160, 0.0], top_k=1, scale_score=False)
    assert [(d.id, round(d.score or 0.0, 5)) for d in found] == [("east", 1.0)]


def test_huge_embeddings_come_back_exactly(store: ElasticMemoryDocumentStore) -> None:
    """If this fails, check that the store keeps the caller's float64 embedding beside the unit vector."""
    found = store.embedding_retrieval([1e300, 0.0, 0.0], top_k=1, return_embedding=True)
    assert found[0].embedding == [1e308, 0.0, 0.0]


def test_a_query_number_past_float_range_is_a_value_error(store: ElasticMemoryDocumentStore) -> None:
    """If this fails, check that an int too large for a float is refused like any bad query_embedding."""
    with pytest.raises(ValueError, match="query_embedding"):
        store.embedding_retrieval([10**400, 0.0, 0.0], top_k=1)


def test_writing_a_number_past_float_range_is_a_value_error(store: ElasticMemoryDocumentStore) -> None:
    """If this fails, check that packing an embedding turns an OverflowError into a ValueError."""
    with pytest.raises(ValueError, match="not a list of floats"):
        store.write_documents([Document(id="far", content="far", embedding=[10**400, 0.0, 0.0])])
    assert store.count_documents() == 2
