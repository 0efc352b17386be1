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

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from haystack import Document, component, default_from_dict, default_to_dict

from elastic_memory import AsyncMemory, Filters, Hit, Memory, UsageError
from elastic_memory.adapters import Opened, StoreLifecycle, open_memory, provenance
from haystack_integrations.document_stores.elastic_memory.filters import (
    Compiled,
    compile_filters,
    select,
    validate_filters,
)

__all__ = ["ElasticMemoryRetriever"]

_MODES = ("keyword", "semantic", "hybrid")
#: Output ``meta`` keys that are core filter keys (``==`` a string or ``in`` strings, under a top-level AND).
_ATTRIBUTES = ("type", "kind", "source", "agent_id", "scope", "pool", "session_id")
_KEY = re.compile(r"[A-Za-z0-9_\-]+(\.[A-Za-z0-9_\-]+)*")
_MOST = 1000


def is_haystack(filters: Any) -> bool:
    """Whether ``filters`` is in Haystack's filter DSL (else the core's filter dict)."""
    return isinstance(filters, Mapping) and any(k in filters for k in ("operator", "conditions", "field"))


def _memory_path(field: Any) -> str | None:
    """``meta.metadata.<key>``: the memory's own metadata key; anything else is checked in Python."""
    if isinstance(field, str) and field.startswith("meta.metadata."):
        key = field.removeprefix("meta.metadata.")
        return key if _KEY.fullmatch(key) else None
    return None


def translate(filters: Mapping[str, Any]) -> tuple[dict[str, Any], Compiled]:
    """Haystack filters on the retriever's documents as core filters, and whether they are exact.

    ``meta.type``, ``meta.kind``, ``meta.source``, ``meta.agent_id``, ``meta.scope``,
    ``meta.pool``, ``meta.session_id`` with ``==`` (a string) or ``in`` (strings), directly
    under the top-level ``AND``, become the core's filter keys; ``meta.metadata.<key>``
    conditions compile to the core's metadata filters (SQL); any other condition is checked
    in Python on the documents (Haystack's ``document_matches_filter``).
    """
    validate_filters(dict(filters))
    top = filters.get("conditions") if filters.get("operator") == "AND" and "field" not in filters else [filters]
    core: dict[str, Any] = {}
    rest: list[Any] = []
    for cond in top if isinstance(top, list) else [filters]:
        field = cond.get("field") if isinstance(cond, Mapping) else None
        name = field.removeprefix("meta.") if isinstance(field, str) and field.startswith("meta.") else None
        op, value = (cond.get("operator"), cond.get("value")) if isinstance(cond, Mapping) else (None, None)
        usable = (op == "==" and isinstance(value, str)) or (
            op == "in" and isinstance(value, list) and value and all(isinstance(v, str) for v in value)
        )
        if name in _ATTRIBUTES and usable and name not in core:
            core[name] = value
        else:
            rest.append(cond)
    compiled = compile_filters({"operator": "AND", "conditions": rest}, _memory_path) if rest else None
    if compiled is None:
        return core, Compiled(None, never=False, exact=True)
    if compiled.sql is not None:
        core["metadata"] = compiled.sql
    return core, compiled


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
class ElasticMemoryRetriever(StoreLifecycle):
    """Recall from an elastic-memory store as Haystack documents, best first.

    Keyword-only ``path=`` (a database file or ``":memory:"``, opened with the core's built-in
    model unless ``embedder=`` says otherwise) or ``memory=`` (an open ``Memory``/``AsyncMemory``,
    left open). ``top_k`` documents come back, ranked by ``mode``. ``filters`` is Haystack's
    filter DSL over the documents it returns (``meta.type``, ``meta.session_id``,
    ``meta.metadata.<key>``..., see :func:`translate`: in SQL where the core can, else checked
    in Python), or the core's own filter dict (``agent_id``, ``type``, ``kind``, ``tags``,
    ``metadata``...). ``run_async`` runs on the core's ``AsyncMemory``. ``to_dict`` carries the path.
    """

    _opened: Opened

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
        self._plan(filters)  # a bad filter fails here, not at the first query
        self.mode = mode
        self.filters = filters
        self.touch = touch
        self._opened = open_memory(path, memory, **options)

    async def close_async(self) -> None:
        """:meth:`aclose` under Haystack's name for it, which its ``Agent`` and ``DocumentWriter`` call."""
        await self.aclose()

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
        core, compiled = self._plan(chosen)
        fetch = k
        while True:
            hits = self._opened.sync.recall(query, k=fetch, mode=self.mode, filters=core, touch=self.touch)
            docs, done = self._keep(hits, chosen, compiled, k, fetch)
            if done:
                return {"documents": docs}
            fetch = min(fetch * 8, _MOST)

    @component.output_types(documents=list[Document])
    async def run_async(
        self, query: str, top_k: int | None = None, filters: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """:meth:`run` on the core's ``AsyncMemory``."""
        k = self.top_k if top_k is None else _top_k(top_k)
        chosen = self.filters if filters is None else filters
        core, compiled = self._plan(chosen)
        fetch = k
        while True:
            hits = await self._opened.aio.recall(query, k=fetch, mode=self.mode, filters=core, touch=self.touch)
            docs, done = self._keep(hits, chosen, compiled, k, fetch)
            if done:
                return {"documents": docs}
            fetch = min(fetch * 8, _MOST)

    @staticmethod
    def _plan(filters: Any) -> tuple[Any, Compiled | None]:
        """The core filters of a run, and (for Haystack filters) how exact they are."""
        if not is_haystack(filters):
            Filters.parse(filters)
            return filters, None
        core, compiled = translate(filters)
        Filters.parse(core)
        return core, compiled

    @staticmethod
    def _keep(
        hits: Sequence[Hit], filters: Any, compiled: Compiled | None, k: int, fetch: int
    ) -> tuple[list[Document], bool]:
        """The run's documents from ``hits``, and whether they are final (else recall further down)."""
        if compiled is not None and compiled.never:
            return [], True
        docs = [_document(h) for h in hits]
        if compiled is None or compiled.exact:
            return docs, True
        kept = select(docs, filters)
        return kept[:k], len(kept) >= k or len(hits) < fetch or fetch >= _MOST
