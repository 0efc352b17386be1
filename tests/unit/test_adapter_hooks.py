"""What adapters build on: the other facade over one store, stored vectors, query embeddings."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from elastic_memory import AsyncMemory, Memory
from elastic_memory.testing import FakeEmbedder


def test_as_async_shares_the_open_store(mem: Memory) -> None:
    """A write through one facade is read through the other."""
    mid = mem.remember("shared between facades")
    record = asyncio.run(mem.as_async().get(mid))
    assert record is not None and record.content == "shared between facades"


async def test_as_sync_shares_the_open_store(amem: AsyncMemory) -> None:
    """AsyncMemory.as_sync() is a Memory over the same store."""
    mid = await amem.remember("shared the other way")
    record = await asyncio.to_thread(amem.as_sync().get, mid)
    assert record is not None and record.content == "shared the other way"


def test_vectors_returns_unit_vectors_of_existing_ids(mem: Memory) -> None:
    """Ids without a memory are left out; the vectors are the stored unit vectors."""
    mid = mem.remember("a vector please")
    found = mem.vectors([mid, "no-such-id"])
    assert list(found) == [mid]
    assert np.isclose(np.linalg.norm(found[mid]), 1.0, atol=1e-5)


def test_vectors_is_empty_without_an_embedder(db_path: Path) -> None:
    """A keyword-only store has no vectors to give."""
    with Memory.open(db_path, embedder=None) as mem:
        assert mem.vectors([mem.remember("no vector")]) == {}


class QueryAware(FakeEmbedder):
    """Embeds queries through embed_query, and counts the calls."""

    def __init__(self) -> None:
        super().__init__()
        self.queries: list[str] = []

    def embed_query(self, text: str) -> Sequence[float]:
        self.queries.append(text)
        return list(self.embed([text])[0])


def test_an_embedder_with_embed_query_embeds_queries_through_it(db_path: Path) -> None:
    """Models that embed questions differently get their query method."""
    embedder = QueryAware()
    with Memory.open(db_path, embedder=embedder) as mem:
        mem.remember("the answer")
        mem.recall("the question", mode="semantic")
    assert embedder.queries == ["the question"]
