"""The loop's tables through the storage protocol, on SQLite and on PostgreSQL alike."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from elastic_memory.loop.tables import FactWrite, LoopStore
from elastic_memory.storage import Backend, PostgresStore, SQLiteStore

BACKENDS = ["sqlite", "postgres"]


async def _open(backend: str, where: str) -> Backend:
    if backend == "postgres":
        return await PostgresStore.open(where)
    return await SQLiteStore.open(where)


@pytest.fixture(params=BACKENDS)
async def two_writers(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[tuple[LoopStore, LoopStore]]:
    """Two stores on ONE database (two processes' view of it), each with its loop tables."""
    backend = str(request.param)
    where = request.getfixturevalue("pg_location") if backend == "postgres" else str(tmp_path / "shared.db")
    first, second = await _open(backend, where), await _open(backend, where)
    try:
        yield LoopStore(first), LoopStore(second)
    finally:
        await first.close()
        await second.close()


def _fact(value: str) -> FactWrite:
    return FactWrite("user.city", value, "profile", "extracted", "llm", 0.8, 0.5)


async def _pending_turn(loop: LoopStore) -> int:
    await loop.record_turn(
        agent_id="a",
        session_id="s",
        user="I moved.",
        reply="Where to?",
        importance=0.5,
        rows=[],
        facts=[],
        quarantine=[],
        extracted=False,
    )
    (turn,) = await loop.pending_turns("a", 10)
    return turn.seq


async def test_a_turn_extracted_by_another_writer_first_is_not_written_twice(
    two_writers: tuple[LoopStore, LoopStore],
) -> None:
    """Two processes extracting the same pending turn: the first result stands, the second writes nothing."""
    one, other = two_writers
    seq = await _pending_turn(one)
    await other.finish_extraction("a", [seq], rows=[], facts=[_fact("Leeds")], quarantine=[], session_id="s")
    late = await one.finish_extraction("a", [seq], rows=[], facts=[_fact("York")], quarantine=[], session_id="s")
    assert late == ([], [])
    assert [f.value for f in await one.fact_history("a", "user.city")] == ["Leeds"]


async def test_a_turn_extraction_writes_and_marks_the_turn_done(two_writers: tuple[LoopStore, LoopStore]) -> None:
    one, _ = two_writers
    seq = await _pending_turn(one)
    facts = [_fact("Leeds")]
    _, outcomes = await one.finish_extraction("a", [seq], rows=[], facts=facts, quarantine=[], session_id="s")
    assert outcomes == ["created"]
    assert await one.pending_turns("a", 10) == []
