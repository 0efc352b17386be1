"""Recall over everything an elastic-memory store holds, as a Haystack component.

Unlike the document store's retrievers (one collection of documents, Haystack's filter DSL),
this one recalls any memory (notes, conversation turns, summaries, lessons) that the core's
``filters`` admit, keyword, semantic or hybrid, and says where each came from in ``meta``.

>>> from elastic_memory import Memory
>>> from elastic_memory.testing import FakeEmbedder
>>> mem = Memory.open(":memory:", embedder=FakeEmbedder())
>>> _ = mem.remember("The user prefers metric units.", metadata={"from": "onboarding"})
>>> [doc] = ElasticMemoryRetriever(memory=mem, top_k=1, mode="keyword").run("metric units")["documents"]
>>> doc.content, doc.meta["type"], doc.meta["metadata"]
('The user prefers metric units.', 'semantic', {'from': 'onboarding'})
>>> mem.close()
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from haystack import Document, component, default_from_dict, default_to_dict

from elastic_memory import AsyncMemory, Filters, Hit, Memory, UsageError
from elastic_memory.adapters import Opened, open_memory, provenance

__all__ = ["ElasticMemoryRetriever"]

_MODES = ("keyword", "semantic", "hybrid")


def _top_k(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1000:
        msg = f"top_k must be an integer in [1, 1000], got {value!r}"
        raise UsageError(msg)
    return value


def _document(hit: Hit) -> Document:
    """The memory as a document: provenance in ``meta``, the memory's own metadata under ``"metadata"``."""
    meta = {key: value for key, value in provenance(hit).items() if key != "score"}  # the score is the document's
    return Document(id=hit.id, content=hit.content, meta=meta, score=hit.score)


@component
class ElasticMemoryRetriever:
    """Recall from an elastic-memory store as Haystack documents, best first.

    Keyword-only ``path=`` (a database file or ``":memory:"``, opened with the core's built-in
    model unless ``embedder=`` says otherwise) or ``memory=`` (an open ``Memory``/``AsyncMemory``,
    left open). ``top_k`` documents come back, ranked by ``mode``; ``filters`` is the core's
    filter dict (``agent_id``, ``type``, ``kind``, ``session_id``, ``tags``, ``metadata``...),
    not Haystack's DSL: it filters memories, not documents. ``run_async`` runs on the core's
    ``AsyncMemory``. ``to_dict`` carries the path.
    """

    def __init__(
        self,
        *,
        path: str | Path | None = None,
        memory: Memory | AsyncMemory | None = None,
        top_k: int = 10,
        mode: str = "hybrid",
        filters: dict[str, Any] | None = None,
        touch: bool | None = None,
        **options: Any,
    ) -> None:
        if mode not in _MODES:
            msg = f"mode must be one of {list(_MODES)}, got {mode!r}"
            raise UsageError(msg)
        self.top_k = _top_k(top_k)
        Filters.parse(filters)  # a bad filter fails here, not at the first query
        self.mode = mode
        self.filters = filters
        self.touch = touch
        self._opened: Opened = open_memory(path, memory, **options)

    @property
    def memory(self) -> Memory:
        """The core store (sync facade)."""
        return self._opened.sync

    def close(self) -> None:
        """Close the database if the retriever opened it (``path=``); idempotent."""
        self._opened.close()

    def to_dict(self) -> dict[str, Any]:
        """Serialise: the store's path (absolute) and the settings; an in-memory store cannot be rebuilt."""
        return default_to_dict(
            self, path=self._opened.sync.path, top_k=self.top_k, mode=self.mode, filters=self.filters, touch=self.touch
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ElasticMemoryRetriever:
        """Rebuild from :meth:`to_dict` (reopens the file)."""
        retriever: ElasticMemoryRetriever = default_from_dict(cls, data)
        return retriever

    @component.output_types(documents=list[Document])
    def run(self, query: str, top_k: int | None = None, filters: dict[str, Any] | None = None) -> dict[str, Any]:
        """The ``top_k`` memories that best match ``query``; ``filters`` replace the constructor's."""
        k = self.top_k if top_k is None else _top_k(top_k)
        chosen = self.filters if filters is None else filters
        hits = self._opened.sync.recall(query, k=k, mode=self.mode, filters=chosen, touch=self.touch)
        return {"documents": [_document(h) for h in hits]}

    @component.output_types(documents=list[Document])
    async def run_async(
        self, query: str, top_k: int | None = None, filters: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """:meth:`run` on the core's ``AsyncMemory``."""
        k = self.top_k if top_k is None else _top_k(top_k)
        chosen = self.filters if filters is None else filters
        hits = await self._opened.aio.recall(query, k=k, mode=self.mode, filters=chosen, touch=self.touch)
        return {"documents": [_document(h) for h in hits]}
