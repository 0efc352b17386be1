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

from elastic_memory import AsyncMemory, Filters, Hit, Memory, UsageError
from elastic_memory.adapters import StoreLifecycle, provenance

from ._memory import Opened, open_memory
from .vectorstores import cosine_relevance

__all__ = ["ElasticMemoryRetriever", "RecallMode"]

#: What ``search_kwargs`` may hold (VectorStoreRetriever's keys that mean something here).
_SEARCH_KWARGS = frozenset({"k", "filter", "filters", "score_threshold", "mode", "fetch_k", "lambda_mult"})

#: How the retriever ranks: BM25, vector cosine, or both fused.
RecallMode = Literal["keyword", "semantic", "hybrid"]


def _document(hit: Hit) -> Document:
    """The memory as a document; provenance in metadata, the memory's own metadata under ``"metadata"``."""
    return Document(id=hit.id, page_content=hit.content, metadata=provenance(hit))


class ElasticMemoryRetriever(StoreLifecycle, BaseRetriever):
    """Recall from an elastic-memory store as LangChain documents, best first.

    Construct with keyword-only ``path=`` (a database file or ``":memory:"``, opened with
    ``embedding=`` or the core's built-in model) or ``memory=`` (an open ``Memory`` or
    ``AsyncMemory``, left open). ``k`` documents come back (``invoke(query, k=3)`` overrides
    it per call), ranked by ``mode``; ``filters`` is the core's filter dict (``agent_id``,
    ``type``, ``kind``, ``session_id``, ``tags``, ``metadata`` with ``$eq``... operators).
    Each document's metadata holds ``id``, ``score``, ``tier``, ``type``, ``kind``,
    ``agent_id``, ``session_id``, ``created_at``... and the memory's own metadata under
    ``"metadata"``. Recalled memories count as accessed unless ``touch=False``.

    ``search_kwargs`` works as ``VectorStoreRetriever``'s, so settings ported from another
    store's retriever apply: ``{"k": 3, "filter": {...}, "score_threshold": 0.5}`` (``filter``
    is the core's filter dict; ``mode`` too; MMR's ``fetch_k``/``lambda_mult`` are ignored).
    ``score_threshold`` is a relevance: the cosine in semantic mode (as the vector store's),
    the core's ``Hit.relevance`` otherwise.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid", validate_assignment=True)

    k: int = Field(default=4, ge=1, le=1000)
    """How many documents to return."""
    mode: RecallMode = "hybrid"
    """``"keyword"`` (BM25), ``"semantic"`` (vector cosine) or ``"hybrid"`` (both fused)."""
    filters: dict[str, Any] | None = None
    """The core's recall filters, e.g. ``{"agent_id": "ana", "metadata": {"lang": "en"}}``."""
    touch: bool | None = None
    """Record an access on recalled memories (``None``: the store's ``RecallConfig.touch``)."""
    search_kwargs: dict[str, Any] = Field(default_factory=dict)
    """As ``VectorStoreRetriever``'s: ``k``, ``filter`` (or ``filters``), ``score_threshold`` and
    ``mode`` override the fields above; MMR's ``fetch_k``/``lambda_mult`` are accepted and ignored."""

    score_threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    """The least relevance a document must have (semantic: the cosine; else the core's ``Hit.relevance``)."""

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
        self._apply_search_kwargs()
        Filters.parse(self.filters)  # a bad filter fails here, not at the first query
        self._opened = open_memory(path, memory, embedding=embedding)

    def _apply_search_kwargs(self) -> None:
        """Fold ``search_kwargs`` into the fields; an argument the retriever cannot honour is refused."""
        given = dict(self.search_kwargs)
        unknown = sorted(set(given) - _SEARCH_KWARGS)
        if unknown:
            msg = f"search_kwargs has unknown key(s) {unknown}; the retriever takes {sorted(_SEARCH_KWARGS)}"
            raise UsageError(msg)
        if "filter" in given and "filters" in given:
            msg = "search_kwargs takes filter or filters (the same core filter dict), not both"
            raise UsageError(msg)
        for name in ("fetch_k", "lambda_mult"):  # MMR's, which other stores' retrievers pass along
            given.pop(name, None)
        if "filter" in given:
            given["filters"] = given.pop("filter")
        for name, value in given.items():
            setattr(self, name, value)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, k: int | None = None
    ) -> list[Document]:
        hits = self._opened.sync.recall(
            query, k=self.k if k is None else k, mode=self.mode, filters=self.filters, touch=self.touch
        )
        return [_document(h) for h in self._kept(hits)]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, k: int | None = None
    ) -> list[Document]:
        hits = await self._opened.aio.recall(
            query, k=self.k if k is None else k, mode=self.mode, filters=self.filters, touch=self.touch
        )
        return [_document(h) for h in self._kept(hits)]

    def _kept(self, hits: list[Hit]) -> list[Hit]:
        """The hits at least ``score_threshold`` relevant, as the vector store measures relevance."""
        if self.score_threshold is None:
            return hits
        return [h for h in hits if cosine_relevance(h, self.mode) >= self.score_threshold]
