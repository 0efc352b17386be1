"""``ElasticMemoryEmbeddingRetriever``: vector (cosine) retrieval from an ElasticMemoryDocumentStore."""

from __future__ import annotations

from typing import Any

from haystack import Document, component, default_to_dict
from haystack.document_stores.types import FilterPolicy

from haystack_integrations.document_stores.elastic_memory import ElasticMemoryDocumentStore

from ._common import check_store, check_top_k, filters_for, policy_of, rebuild, run_top_k

__all__ = ["ElasticMemoryEmbeddingRetriever"]


@component
class ElasticMemoryEmbeddingRetriever:
    """The ``top_k`` documents most cosine-similar to a query embedding, best first.

    ``score`` is the cosine similarity in [-1, 1]; ``scale_score=True`` maps it into [0, 1] as
    ``InMemoryDocumentStore(embedding_similarity_function="cosine")`` does: ``(score + 1) / 2``.

    >>> from haystack import Document
    >>> store = ElasticMemoryDocumentStore(path=":memory:")
    >>> store.write_documents([Document(content="a", embedding=[1.0, 0.0]),
    ...                        Document(content="b", embedding=[0.0, 1.0])])
    2
    >>> retriever = ElasticMemoryEmbeddingRetriever(document_store=store, top_k=1)
    >>> [d.content for d in retriever.run(query_embedding=[0.2, 0.9])["documents"]]
    ['b']
    >>> store.close()
    """

    def __init__(
        self,
        *,
        document_store: ElasticMemoryDocumentStore,
        filters: dict[str, Any] | None = None,
        top_k: int = 10,
        scale_score: bool = False,
        return_embedding: bool = False,
        filter_policy: str | FilterPolicy = FilterPolicy.REPLACE,
    ) -> None:
        self.document_store = check_store(document_store)
        self.filters = filters or {}
        self.top_k = check_top_k(top_k)
        self.scale_score = scale_score
        self.return_embedding = return_embedding
        self.filter_policy = policy_of(filter_policy)

    def to_dict(self) -> dict[str, Any]:
        """Serialise the retriever, its store included."""
        return default_to_dict(
            self,
            document_store=self.document_store.to_dict(),
            filters=self.filters,
            top_k=self.top_k,
            scale_score=self.scale_score,
            return_embedding=self.return_embedding,
            filter_policy=self.filter_policy.value,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ElasticMemoryEmbeddingRetriever:
        """Rebuild a retriever (and its store) from :meth:`to_dict`."""
        return rebuild(cls, data)  # type: ignore[no-any-return]

    def _args(
        self,
        filters: dict[str, Any] | None,
        top_k: int | None,
        scale_score: bool | None,
        return_embedding: bool | None,
    ) -> dict[str, Any]:
        return {
            "filters": filters_for(self.filter_policy, self.filters, filters),
            "top_k": run_top_k(top_k, self.top_k),
            "scale_score": self.scale_score if scale_score is None else scale_score,
            "return_embedding": self.return_embedding if return_embedding is None else return_embedding,
        }

    @component.output_types(documents=list[Document])
    def run(
        self,
        query_embedding: list[float],
        filters: dict[str, Any] | None = None,
        top_k: int | None = None,
        scale_score: bool | None = None,
        return_embedding: bool | None = None,
    ) -> dict[str, list[Document]]:
        """Retrieve documents for ``query_embedding``; ``filters`` follow the retriever's ``filter_policy``."""
        args = self._args(filters, top_k, scale_score, return_embedding)
        return {"documents": self.document_store.embedding_retrieval(query_embedding, **args)}

    @component.output_types(documents=list[Document])
    async def run_async(
        self,
        query_embedding: list[float],
        filters: dict[str, Any] | None = None,
        top_k: int | None = None,
        scale_score: bool | None = None,
        return_embedding: bool | None = None,
    ) -> dict[str, list[Document]]:
        """Async :meth:`run`."""
        args = self._args(filters, top_k, scale_score, return_embedding)
        return {"documents": await self.document_store.embedding_retrieval_async(query_embedding, **args)}
