"""Query embedding: remembered for repeated inputs, batched when recalls run at once, each query once."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from elastic_memory import AsyncMemory, EmbedderError
from elastic_memory.testing import FakeEmbedder


class BatchRecorder(FakeEmbedder):
    """A fake embedder that notes the texts of each call."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []
        self.fail = False
        self.delay = 0.0

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.batches.append(list(texts))
        time.sleep(self.delay)
        if self.fail:
            raise RuntimeError("the model is gone")
        return super().embed(texts)


@pytest.fixture
async def store(db_path: Path) -> tuple[AsyncMemory, BatchRecorder]:
    embedder = BatchRecorder()
    mem = await AsyncMemory.open(db_path, embedder=embedder)
    await mem.remember_many(["The boat is at pier nine.", "Lunch is at noon.", "The key is under the mat."])
    embedder.batches.clear()
    return mem, embedder


async def test_a_repeated_query_is_embedded_once(store: tuple[AsyncMemory, BatchRecorder]) -> None:
    mem, embedder = store
    async with mem:
        await mem.recall("where is the boat", mode="semantic")
        await mem.recall("where is the boat", mode="semantic")
    assert embedder.batches == [["where is the boat"]]


async def test_recalls_started_together_share_embedding_calls(store: tuple[AsyncMemory, BatchRecorder]) -> None:
    mem, embedder = store
    queries = ["where is the boat", "when is lunch", "where is the key"]
    embedder.delay = 0.3
    async with mem:
        results = await asyncio.gather(*(mem.recall(q, mode="semantic", k=1) for q in queries))
    # The facade hands each call to the library's loop on its own: the first query may go
    # alone, the others wait for it (a slow model here) and go together.
    assert len(embedder.batches) <= 2
    assert sorted(t for b in embedder.batches for t in b) == sorted(queries)
    async with await AsyncMemory.open(":memory:", embedder=FakeEmbedder()) as alone:
        await alone.remember_many(["The boat is at pier nine.", "Lunch is at noon.", "The key is under the mat."])
        one_by_one = [await alone.recall(q, mode="semantic", k=1) for q in queries]
    assert [r[0].content for r in results] == [r[0].content for r in one_by_one]  # each got its own vector


async def test_the_same_query_asked_at_once_is_embedded_once(store: tuple[AsyncMemory, BatchRecorder]) -> None:
    mem, embedder = store
    async with mem:
        await asyncio.gather(*(mem.recall("where is the boat", mode="semantic") for _ in range(4)))
    assert embedder.batches == [["where is the boat"]]


async def test_a_failing_batch_fails_each_recall_and_the_next_one_retries(
    store: tuple[AsyncMemory, BatchRecorder],
) -> None:
    mem, embedder = store
    async with mem:
        embedder.fail = True
        outcomes = await asyncio.gather(
            *(mem.recall(q, mode="semantic") for q in ("boat", "lunch")), return_exceptions=True
        )
        embedder.fail = False
        hits = await mem.recall("boat", mode="semantic", k=1)
    assert all(isinstance(o, EmbedderError) for o in outcomes)
    assert hits[0].content == "The boat is at pier nine."
