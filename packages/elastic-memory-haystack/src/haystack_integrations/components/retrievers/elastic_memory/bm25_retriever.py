"""``ElasticMemoryBM25Retriever``: keyword (BM25, SQLite FTS5) retrieval from an ElasticMemoryDocumentStore."""

from __future__ import annotations

from typing import Any

from haystack import Document, component, default_to_dict
from haystack.document_stores.types import FilterPolicy

from haystack_integrations.document_stores.elastic_memory import ElasticMemoryDocumentStore

from ._common import check_store, check_top_k, filters_for, policy_of, rebuild, run_top_k

__all__ = ["ElasticMemoryBM25Retriever"]


@component
class ElasticMemoryBM25Retriever:
    """The ``top_k`` documents best matching a query by BM25, best first.

    ``score`` is the BM25 score (positive; the core's Lucene-style IDF); ``scale_score=True``
    maps it into (0, 1) as ``InMemoryBM25Retriever`` does: ``expit(score / 8)``.

    >>> from haystack import Document
    >>> store = ElasticMemoryDocumentStore(path=":memory:")
    >>> store.write_documents([Document(content="Tea is a drink."), Document(content="Paris is in France.")])
    2
    >>> [d.content for d in ElasticMemoryBM25Retriever(document_store=store).run(query="tea")["documents"]]
    ['Tea is a drink.']
    >>> store.close()
    """

    def __init__(
        self,
        *,
        document_store: ElasticMemoryDocumentStore,
        filters: dict[str, Any] | None = None,
        top_k: int = 10,
        scale_score: bool = False,
        filter_policy: str | FilterPolicy = FilterPolicy.REPLACE,
    ) -> None:
        self.document_store = check_store(document_store)
        self.filters = filters or {}
        self.top_k = check_top_k(top_k)
        self.scale_score = scale_score
        self.filter_policy = policy_of(filter_policy)

    def to_dict(self) -> dict[str, Any]:
        """Serialise the retriever, its store included."""
        return default_to_dict(
            self,
            document_store=self.document_store.to_dict(),
            filters=self.filters,
            top_k=self.top_k,
            scale_score=self.scale_score,
            filter_policy=self.filter_policy.value,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ElasticMemoryBM25Retriever:
        """Rebuild a retriever (and its store) from :meth:`to_dict`."""
        return rebuild(cls, data)  # type: ignore[no-any-return]

    def _args(self, filters: dict[str, Any] | None, top_k: int | None, scale_score: bool | None) -> dict[str, Any]:
        return {
            "filters": filters_for(self.filter_policy, self.filters, filters),
            "top_k": run_top_k(top_k, self.top_k),
            "scale_score": self.scale_score if scale_score is None else scale_score,
        }

    @component.output_types(documents=list[Document])
    def run(
        self,
        query: str,
        filters: dict[str, Any] | None = None,
        top_k: int | None = None,
        scale_score: bool | None = None,
    ) -> dict[str, list[Document]]:
        """Retrieve documents for ``query``; ``filters`` follow the retriever's ``filter_policy``."""
        return {"documents": self.document_store.bm25_retrieval(query, **self._args(filters, top_k, scale_score))}

    @component.output_types(documents=list[Document])
    async def run_async(
        self,
        query: str,
        filters: dict[str, Any] | None = None,
        top_k: int | None = None,
        scale_score: bool | None = None,
    ) -> dict[str, list[Document]]:
        """Async :meth:`run`."""
        args = self._args(filters, top_k, scale_score)
        return {"documents": await self.document_store.bm25_retrieval_async(query, **args)}
