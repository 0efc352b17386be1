"""``ElasticMemoryHybridRetriever``: the core's hybrid recall (BM25 fused with a query embedding)."""

from __future__ import annotations

from typing import Any

from haystack import Document, component, default_to_dict
from haystack.document_stores.types import FilterPolicy

from haystack_integrations.document_stores.elastic_memory import ElasticMemoryDocumentStore

from ._common import check_store, check_top_k, filters_for, policy_of, rebuild, run_top_k

__all__ = ["ElasticMemoryHybridRetriever"]


def _weight(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        msg = f"vector_weight must be a number from 0 to 1, got {value!r}"
        raise ValueError(msg)
    return float(value)


@component
class ElasticMemoryHybridRetriever:
    """The ``top_k`` documents for a query text and an optional query embedding, best first.

    With ``query_embedding`` the core fuses its BM25 and vector legs (``vector_weight`` in [0, 1]
    weighs the vector leg; default: the store's recall configuration) and ``score`` is the fused
    score, in [0, 1] and absolute (an unrelated query scores low, whatever else matched); without
    it the search is BM25 only and ``score`` is the BM25 score.

    >>> from haystack import Document
    >>> store = ElasticMemoryDocumentStore(path=":memory:")
    >>> store.write_documents([Document(content="green tea", embedding=[1.0, 0.0]),
    ...                        Document(content="black coffee", embedding=[0.0, 1.0])])
    2
    >>> retriever = ElasticMemoryHybridRetriever(document_store=store, top_k=1)
    >>> [d.content for d in retriever.run(query="tea", query_embedding=[0.9, 0.1])["documents"]]
    ['green tea']
    >>> store.close()
    """

    def __init__(
        self,
        *,
        document_store: ElasticMemoryDocumentStore,
        filters: dict[str, Any] | None = None,
        top_k: int = 10,
        vector_weight: float | None = None,
        return_embedding: bool = False,
        filter_policy: str | FilterPolicy = FilterPolicy.REPLACE,
    ) -> None:
        self.document_store = check_store(document_store)
        self.filters = filters or {}
        self.top_k = check_top_k(top_k)
        self.vector_weight = _weight(vector_weight)
        self.return_embedding = return_embedding
        self.filter_policy = policy_of(filter_policy)

    def to_dict(self) -> dict[str, Any]:
        """Serialise the retriever, its store included."""
        return default_to_dict(
            self,
            document_store=self.document_store.to_dict(),
            filters=self.filters,
            top_k=self.top_k,
            vector_weight=self.vector_weight,
            return_embedding=self.return_embedding,
            filter_policy=self.filter_policy.value,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ElasticMemoryHybridRetriever:
        """Rebuild a retriever (and its store) from :meth:`to_dict`."""
        return rebuild(cls, data)  # type: ignore[no-any-return]

    def _args(self, filters: dict[str, Any] | None, top_k: int | None, vector_weight: float | None) -> dict[str, Any]:
        return {
            "filters": filters_for(self.filter_policy, self.filters, filters),
            "top_k": run_top_k(top_k, self.top_k),
            "vector_weight": self.vector_weight if vector_weight is None else _weight(vector_weight),
            "return_embedding": self.return_embedding,
        }

    @component.output_types(documents=list[Document])
    def run(
        self,
        query: str,
        query_embedding: list[float] | None = None,
        filters: dict[str, Any] | None = None,
        top_k: int | None = None,
        vector_weight: float | None = None,
    ) -> dict[str, list[Document]]:
        """Retrieve documents for ``query`` (and ``query_embedding``); ``filters`` follow ``filter_policy``."""
        args = self._args(filters, top_k, vector_weight)
        return {"documents": self.document_store.hybrid_retrieval(query, query_embedding, **args)}

    @component.output_types(documents=list[Document])
    async def run_async(
        self,
        query: str,
        query_embedding: list[float] | None = None,
        filters: dict[str, Any] | None = None,
        top_k: int | None = None,
        vector_weight: float | None = None,
    ) -> dict[str, list[Document]]:
        """Async :meth:`run`."""
        args = self._args(filters, top_k, vector_weight)
        return {"documents": await self.document_store.hybrid_retrieval_async(query, query_embedding, **args)}
