"""Conformance drivers through the Haystack adapter: recall goes through its ``ElasticMemoryRetriever`` component.

Writes, reads by id and the memory loop go to the core store the component sits on; every
recall is a ``run``/``run_async``, and its documents are turned back into hits from the
provenance the component puts in their ``meta``. Importing this module fails when
elastic-memory-haystack is not installed, and the drivers are then left out.
"""

from __future__ import annotations

import asyncio
from typing import Any

from haystack import Document

from elastic_memory import Hit, MemoryType, Scope, Source
from haystack_integrations.components.retrievers.elastic_memory import ElasticMemoryRetriever

from .drivers import CoreAsyncDriver, CoreSyncDriver, MemoryDriver


def _hit(doc: Document) -> Hit:
    """The hit a retrieved document describes (its meta is the hit's provenance)."""
    md = doc.meta
    return Hit(
        id=md["id"],
        content=doc.content or "",
        score=doc.score if doc.score is not None else 0.0,
        type=MemoryType(md["type"]),
        metadata=md["metadata"],
        tags=tuple(md["tags"]),
        agent_id=md["agent_id"],
        scope=Scope(md["scope"]),
        pool=md["pool"],
        session_id=md["session_id"],
        importance=md["importance"],
        confidence=md["confidence"],
        pinned=md["pinned"],
        source=Source(md["source"]),
        created_at=md["created_at"],
        keyword_score=md["keyword_score"],
        vector_score=md["vector_score"],
        kind=md["kind"],
        tier=md["tier"],
    )


class HaystackAsyncDriver(CoreAsyncDriver):
    """``ElasticMemoryRetriever.run_async`` over an ``AsyncMemory``."""

    name = "haystack-async"
    adapter = True

    async def recall(
        self, query: str, *, k: int = 10, mode: str = "hybrid", filters: dict[str, Any] | None = None
    ) -> list[Hit]:
        retriever = ElasticMemoryRetriever(memory=self.mem, mode=mode, filters=filters)
        return [_hit(d) for d in (await retriever.run_async(query, top_k=k))["documents"]]


class HaystackSyncDriver(CoreSyncDriver):
    """``ElasticMemoryRetriever.run`` over a ``Memory``, from a worker thread like a sync host."""

    name = "haystack-sync"
    adapter = True

    async def recall(
        self, query: str, *, k: int = 10, mode: str = "hybrid", filters: dict[str, Any] | None = None
    ) -> list[Hit]:
        def run() -> list[Hit]:
            retriever = ElasticMemoryRetriever(memory=self.mem, mode=mode, filters=filters)
            return [_hit(d) for d in retriever.run(query, top_k=k)["documents"]]

        return await asyncio.to_thread(run)


HAYSTACK_DRIVERS: list[type[MemoryDriver]] = [HaystackAsyncDriver, HaystackSyncDriver]
