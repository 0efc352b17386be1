"""Conformance drivers through the LlamaIndex adapter: recall goes through its ``ElasticMemoryRetriever``.

Writes, reads by id and the memory loop go to the core store the retriever sits on; every
recall is a ``retrieve``/``aretrieve``, and its nodes are turned back into hits from the
provenance the retriever puts in their metadata. Importing this module fails when
llama-index-elastic-memory is not installed, and the drivers are then left out.
"""

from __future__ import annotations

import asyncio
from typing import Any

from llama_index.core.schema import NodeWithScore

from elastic_memory import Hit
from llama_index.retrievers.elastic_memory import ElasticMemoryRetriever

from .drivers import CoreAsyncDriver, CoreSyncDriver, MemoryDriver, hit_from_provenance


def _hit(found: NodeWithScore) -> Hit:
    """The hit a retrieved node describes (its metadata is the hit's provenance)."""
    return hit_from_provenance(found.node.metadata, found.node.get_content(), found.node.metadata["score"])


class LlamaIndexAsyncDriver(CoreAsyncDriver):
    """``ElasticMemoryRetriever.aretrieve`` over an ``AsyncMemory``."""

    name = "llamaindex-async"
    adapter = True

    async def recall(
        self, query: str, *, k: int = 10, mode: str = "hybrid", filters: dict[str, Any] | None = None
    ) -> list[Hit]:
        retriever = ElasticMemoryRetriever(memory=self.mem, similarity_top_k=k, mode=mode, filters=filters)
        return [_hit(n) for n in await retriever.aretrieve(query)]


class LlamaIndexSyncDriver(CoreSyncDriver):
    """``ElasticMemoryRetriever.retrieve`` over a ``Memory``, from a worker thread like a sync host."""

    name = "llamaindex-sync"
    adapter = True

    async def recall(
        self, query: str, *, k: int = 10, mode: str = "hybrid", filters: dict[str, Any] | None = None
    ) -> list[Hit]:
        def run() -> list[Hit]:
            retriever = ElasticMemoryRetriever(memory=self.mem, similarity_top_k=k, mode=mode, filters=filters)
            return [_hit(n) for n in retriever.retrieve(query)]

        return await asyncio.to_thread(run)


LLAMAINDEX_DRIVERS: list[type[MemoryDriver]] = [LlamaIndexAsyncDriver, LlamaIndexSyncDriver]
