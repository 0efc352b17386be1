"""LangChain's own conformance suites (langchain-tests, pinned), run unchanged.

``VectorStoreIntegrationTests`` gets an empty store per test;
``RetrieversIntegrationTests`` builds retrievers over one store seeded with five notes.
Both run twice: on SQLite in memory and on PostgreSQL (``conftest.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langchain_tests.integration_tests import RetrieversIntegrationTests, VectorStoreIntegrationTests

from elastic_memory import Memory
from langchain_elastic_memory import ElasticMemoryRetriever, ElasticMemoryVectorStore, LangChainEmbedder


class TestElasticMemoryVectorStore(VectorStoreIntegrationTests):
    @pytest.fixture
    def vectorstore(self, location: str) -> Iterator[ElasticMemoryVectorStore]:
        store = ElasticMemoryVectorStore(path=location, embedding=self.get_embeddings())
        try:
            yield store
        finally:
            store.close()


class TestElasticMemoryRetriever(RetrieversIntegrationTests):
    memory: Memory

    @pytest.fixture(autouse=True, scope="class")
    @classmethod
    def _seeded(cls, new_location: Callable[[], str]) -> Iterator[None]:
        """One store with five notes for the whole class; each retriever reads it, none closes it."""
        embedder = LangChainEmbedder(VectorStoreIntegrationTests.get_embeddings())
        with Memory.open(new_location(), embedder=embedder) as mem:
            mem.remember_many([f"fact number {i} about the garden" for i in range(5)], dedupe=False)
            cls.memory = mem
            yield

    @property
    def retriever_constructor(self) -> type[ElasticMemoryRetriever]:
        return ElasticMemoryRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"memory": self.memory, "mode": "hybrid"}

    @property
    def retriever_query_example(self) -> str:
        return "fact about the garden"
