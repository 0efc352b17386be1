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

from elastic_memory import Hit
from haystack_integrations.components.retrievers.elastic_memory import ElasticMemoryRetriever

from .drivers import CoreAsyncDriver, CoreSyncDriver, MemoryDriver, hit_from_provenance


def _hit(doc: Document) -> Hit:
    """The hit a retrieved document describes (its meta is the hit's provenance)."""
    return hit_from_provenance(doc.meta, doc.content or "", doc.score if doc.score is not None else 0.0)


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
