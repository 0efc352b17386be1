"""A LangChain retriever over everything an elastic-memory store holds.

Unlike :class:`~langchain_elastic_memory.ElasticMemoryVectorStore` (one collection of
notes), the retriever recalls any memory (notes, conversation turns, summaries, lessons)
that ``filters`` admit, and says where each came from in the document's metadata.

>>> from langchain_core.embeddings import DeterministicFakeEmbedding
>>> from elastic_memory import Memory
>>> from langchain_elastic_memory import LangChainEmbedder
>>> mem = Memory.open(":memory:", embedder=LangChainEmbedder(DeterministicFakeEmbedding(size=8)))
>>> _ = mem.remember("The user prefers metric units.", metadata={"from": "onboarding"})
>>> [doc] = ElasticMemoryRetriever(memory=mem, k=1, mode="keyword").invoke("metric units")
>>> doc.page_content, doc.metadata["type"], doc.metadata["metadata"]
('The user prefers metric units.', 'semantic', {'from': 'onboarding'})
>>> mem.close()
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field, PrivateAttr

from elastic_memory import AsyncMemory, Filters, Hit, Memory
from elastic_memory.adapters import provenance

from ._memory import Opened, open_memory

__all__ = ["ElasticMemoryRetriever", "RecallMode"]

#: How the retriever ranks: BM25, vector cosine, or both fused.
RecallMode = Literal["keyword", "semantic", "hybrid"]


def _document(hit: Hit) -> Document:
    """The memory as a document; provenance in metadata, the memory's own metadata under ``"metadata"``."""
    return Document(id=hit.id, page_content=hit.content, metadata=provenance(hit))


class ElasticMemoryRetriever(BaseRetriever):
    """Recall from an elastic-memory store as LangChain documents, best first.

    Construct with keyword-only ``path=`` (a database file or ``":memory:"``, opened with
    ``embedding=`` or the core's built-in model) or ``memory=`` (an open ``Memory`` or
    ``AsyncMemory``, left open). ``k`` documents come back (``invoke(query, k=3)`` overrides
    it per call), ranked by ``mode``; ``filters`` is the core's filter dict (``agent_id``,
    ``type``, ``kind``, ``session_id``, ``tags``, ``metadata`` with ``$eq``... operators).
    Each document's metadata holds ``id``, ``score``, ``tier``, ``type``, ``kind``,
    ``agent_id``, ``session_id``, ``created_at``... and the memory's own metadata under
    ``"metadata"``. Recalled memories count as accessed unless ``touch=False``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    k: int = Field(default=4, ge=1, le=1000)
    """How many documents to return."""
    mode: RecallMode = "hybrid"
    """``"keyword"`` (BM25), ``"semantic"`` (vector cosine) or ``"hybrid"`` (both fused)."""
    filters: dict[str, Any] | None = None
    """The core's recall filters, e.g. ``{"agent_id": "ana", "metadata": {"lang": "en"}}``."""
    touch: bool | None = None
    """Record an access on recalled memories (``None``: the store's ``RecallConfig.touch``)."""

    _opened: Opened = PrivateAttr()

    def __init__(
        self,
        *,
        path: str | Path | None = None,
        memory: Memory | AsyncMemory | None = None,
        embedding: Embeddings | None = None,
        **data: Any,
    ) -> None:
        super().__init__(**data)
        Filters.parse(self.filters)  # a bad filter fails here, not at the first query
        self._opened = open_memory(path, memory, embedding=embedding)

    @property
    def memory(self) -> Memory:
        """The core store (sync facade)."""
        return self._opened.sync

    def close(self) -> None:
        """Close the database if the retriever opened it (``path=``); idempotent."""
        self._opened.close()

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, k: int | None = None
    ) -> list[Document]:
        hits = self._opened.sync.recall(
            query, k=self.k if k is None else k, mode=self.mode, filters=self.filters, touch=self.touch
        )
        return [_document(h) for h in hits]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, k: int | None = None
    ) -> list[Document]:
        hits = await self._opened.aio.recall(
            query, k=self.k if k is None else k, mode=self.mode, filters=self.filters, touch=self.touch
        )
        return [_document(h) for h in hits]
