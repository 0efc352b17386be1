"""What adapters build on: the other facade over one store, stored vectors, query embeddings."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

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


def test_tags_counts_live_memories_per_tag(mem: Memory) -> None:
    """Forgotten and expired memories are not counted; tags come back sorted."""
    mem.remember("one", tags=["b", "a"])
    mem.remember("two", tags=["a"])
    mem.forget(mem.remember("gone", tags=["a", "c"]))
    mem.remember("short-lived", tags=["d"], expires_at=1.0)
    assert mem.tags() == {"a": 2, "b": 1}


def test_tags_narrowed_by_filters_and_prefix(mem: Memory) -> None:
    """``filters`` pick the memories counted, ``prefix`` the tags kept."""
    mem.remember("mine", tags=["ns:x", "ns:y", "other"], agent_id="store")
    mem.remember("theirs", tags=["ns:x"], agent_id="loop")
    assert mem.tags(filters={"agent_id": "store"}, prefix="ns:") == {"ns:x": 1, "ns:y": 1}
    assert mem.tags(prefix="ns:x") == {"ns:x": 2}


async def test_async_tags_match_the_sync_ones(amem: AsyncMemory) -> None:
    """The async facade counts the same."""
    await amem.remember("tagged", tags=["t"])
    assert await amem.tags() == {"t": 1}


def test_clock_is_the_one_the_store_was_opened_with(db_path: Path, clock: Any) -> None:
    """Adapters measure expiry with the store's own clock."""
    with Memory.open(db_path, embedder=None, clock=clock) as mem:
        assert mem.clock is clock
        assert mem.as_async().clock is clock


def test_a_relative_path_comes_back_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """mem.path is absolute: what an adapter serialises reopens the same file from any folder."""
    monkeypatch.chdir(tmp_path)
    with Memory.open("relative.db", embedder=None) as mem:
        assert mem.path == str(tmp_path / "relative.db")
