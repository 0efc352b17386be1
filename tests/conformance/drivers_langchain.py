"""Conformance drivers through the LangChain adapter: recall goes through ``ElasticMemoryRetriever``.

Writes, reads by id and the memory loop go to the core store the retriever sits on (LangChain
has no API for them); every recall is a retriever call, and its documents are turned back into
hits from the provenance the retriever puts in their metadata. Importing this module fails
when langchain-elastic-memory is not installed, and the drivers are then left out.
"""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.documents import Document

from elastic_memory import Hit
from langchain_elastic_memory import ElasticMemoryRetriever

from .drivers import CoreAsyncDriver, CoreSyncDriver, MemoryDriver, hit_from_provenance


def _hit(doc: Document) -> Hit:
    """The hit a retriever document describes (its metadata is the hit's provenance)."""
    return hit_from_provenance(doc.metadata, doc.page_content, doc.metadata["score"])


class LangChainAsyncDriver(CoreAsyncDriver):
    """``ElasticMemoryRetriever.ainvoke`` over an ``AsyncMemory``."""

    name = "langchain-async"
    adapter = True

    async def recall(
        self, query: str, *, k: int = 10, mode: str = "hybrid", filters: dict[str, Any] | None = None
    ) -> list[Hit]:
        retriever = ElasticMemoryRetriever(memory=self.mem, mode=mode, filters=filters)
        return [_hit(d) for d in await retriever.ainvoke(query, k=k)]


class LangChainSyncDriver(CoreSyncDriver):
    """``ElasticMemoryRetriever.invoke`` over a ``Memory``, from a worker thread like a sync host."""

    name = "langchain-sync"
    adapter = True

    async def recall(
        self, query: str, *, k: int = 10, mode: str = "hybrid", filters: dict[str, Any] | None = None
    ) -> list[Hit]:
        def run() -> list[Hit]:
            retriever = ElasticMemoryRetriever(memory=self.mem, mode=mode, filters=filters)
            return [_hit(d) for d in retriever.invoke(query, k=k)]

        return await asyncio.to_thread(run)


LANGCHAIN_DRIVERS: list[type[MemoryDriver]] = [LangChainAsyncDriver, LangChainSyncDriver]
