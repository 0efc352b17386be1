"""LangChain's own conformance suites (langchain-tests, pinned), run unchanged.

``VectorStoreIntegrationTests`` gets an empty in-memory store per test;
``RetrieversIntegrationTests`` builds retrievers over one store seeded with five notes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_tests.integration_tests import RetrieversIntegrationTests, VectorStoreIntegrationTests

from elastic_memory import Memory
from langchain_elastic_memory import ElasticMemoryRetriever, ElasticMemoryVectorStore, LangChainEmbedder


class TestElasticMemoryVectorStore(VectorStoreIntegrationTests):
    @pytest.fixture
    def vectorstore(self) -> Iterator[ElasticMemoryVectorStore]:
        store = ElasticMemoryVectorStore(path=":memory:", embedding=self.get_embeddings())
        try:
            yield store
        finally:
            store.close()


class TestElasticMemoryRetriever(RetrieversIntegrationTests):
    memory: Memory

    @pytest.fixture(autouse=True, scope="class")
    @classmethod
    def _seeded(cls) -> Iterator[None]:
        """One store with five notes for the whole class; each retriever reads it, none closes it."""
        embedder = LangChainEmbedder(VectorStoreIntegrationTests.get_embeddings())
        with Memory.open(":memory:", embedder=embedder) as mem:
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
