"""``generation()``: a number that moves on with every write changing memories, whoever wrote; a cache's key."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

from elastic_memory import AsyncMemory, Memory, _runner
from elastic_memory.testing import FakeEmbedder


def test_a_write_moves_the_generation_on(mem: Memory) -> None:
    before = mem.generation()
    mem.remember("The lab's door code is 4711.")
    assert isinstance(before, int)
    after = mem.generation()
    assert after is not None and after > before


def test_reads_leave_the_generation_where_it_was(mem: Memory) -> None:
    stored = mem.remember("The lab's door code is 4711.")
    before = mem.generation()
    mem.recall("door code", k=3, touch=True)  # access tracking is bookkeeping: it moves nothing
    mem.get(stored)
    mem.tags()
    assert mem.generation() == before


def test_a_write_through_another_connection_moves_it_on(db_path: Path) -> None:
    with Memory.open(db_path, embedder=FakeEmbedder()) as mine, Memory.open(db_path, embedder=FakeEmbedder()) as theirs:
        before = mine.generation()
        theirs.remember("Written by the other connection.")
        after = mine.generation()
        assert before is not None and after is not None and after > before


def test_a_users_handle_reads_the_stores_generation(mem: Memory) -> None:
    alice = mem.for_user("alice")
    alice.remember("Alice likes tea.")
    assert alice.generation() == mem.generation()


async def test_the_async_facade_moves_on_with_a_write(amem: AsyncMemory) -> None:
    before = await amem.generation()
    await amem.remember("The lab's door code is 4711.")
    after = await amem.generation()
    assert before is not None and after is not None and after > before


def test_postgres_keeps_no_generation(pg_location: str) -> None:
    with Memory.open(pg_location, embedder=FakeEmbedder()) as mem:
        mem.remember("Stored on the server.")
        assert mem.generation() is None


def test_a_federation_keeps_no_generation(tmp_path: Path) -> None:
    with Memory.for_agent("ana", home=tmp_path, pools=["team"], embedder=FakeEmbedder()) as mem:
        mem.remember("Ana's note.")
        assert mem.generation() is None


def test_a_write_cancelled_while_it_commits_still_moves_the_generation(db_path: Path) -> None:
    """The COMMIT runs on the driver's thread even when the task awaiting it is cancelled."""
    with Memory.open(db_path, embedder=None) as mem:
        stored = mem.remember("A note to be forgotten.")
        before = mem.generation()
        conn = mem._ops.store._conn
        original = conn.execute

        def execute(sql: str, *args: Any, **kwargs: Any) -> Any:
            if sql == "COMMIT":
                task = asyncio.current_task()
                assert task is not None
                task.cancel()
            return original(sql, *args, **kwargs)

        async def cancelled_forget() -> None:
            conn.execute = execute
            try:
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.ensure_future(mem._ops.forget([stored], hard=True))
            finally:
                conn.execute = original

        _runner.run(cancelled_forget(), "cancelled_forget")
        assert mem.get(stored) is None, "the forget committed"
        after = mem.generation()
        assert before is not None and after is not None and after > before
