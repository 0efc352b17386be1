"""The PostgreSQL pool checks a connection before lending it only when it has been idle: a read costs one round trip."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from elastic_memory import Memory
from elastic_memory.storage.postgres import store as postgres_store
from elastic_memory.storage.postgres.store import FRESH_SECONDS, FreshConnections
from elastic_memory.testing import FakeEmbedder


class Conn:
    """A stand-in connection (the pool keeps them weakly: any object that takes weak references)."""


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def checked_by(clock: Clock) -> tuple[FreshConnections, list[Conn]]:
    seen: list[Conn] = []

    async def check(conn: Any) -> None:
        seen.append(conn)

    return FreshConnections(check, clock=clock), seen


def test_a_connection_given_back_a_moment_ago_is_lent_unchecked() -> None:
    clock = Clock()
    fresh, seen = checked_by(clock)
    conn = Conn()
    asyncio.run(fresh.returned(conn))
    clock.now += FRESH_SECONDS / 2
    asyncio.run(fresh.check(conn))
    assert seen == []


def test_a_connection_idle_for_longer_is_checked() -> None:
    clock = Clock()
    fresh, seen = checked_by(clock)
    conn = Conn()
    asyncio.run(fresh.returned(conn))
    clock.now += FRESH_SECONDS
    asyncio.run(fresh.check(conn))
    assert seen == [conn]


def test_a_connection_never_given_back_is_checked() -> None:
    fresh, seen = checked_by(Clock())
    conn = Conn()
    asyncio.run(fresh.check(conn))
    assert seen == [conn]


def test_being_lent_uses_up_the_freshness() -> None:
    """Lent once unchecked, a connection is checked again unless it comes back in between."""
    clock = Clock()
    fresh, seen = checked_by(clock)
    conn = Conn()
    asyncio.run(fresh.returned(conn))
    asyncio.run(fresh.check(conn))
    asyncio.run(fresh.check(conn))
    assert seen == [conn]


@pytest.fixture
def empty_queries() -> Iterator[list[str]]:
    """The empty queries psycopg's pool check sends, counted on every async cursor."""
    sent: list[str] = []
    original = psycopg.AsyncCursor.execute

    async def execute(cursor: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        if query == "":
            sent.append(query)
        return await original(cursor, query, *args, **kwargs)

    psycopg.AsyncCursor.execute = execute  # type: ignore[method-assign]
    try:
        yield sent
    finally:
        psycopg.AsyncCursor.execute = original  # type: ignore[method-assign]


def test_back_to_back_recalls_send_no_check(
    pg_location: str, empty_queries: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every connection the second recall borrows was given back within the window.

    The pool lends its least recently returned connection first, so on a loaded machine one
    may have idled since the open for longer than the real window: the test widens it.
    """
    monkeypatch.setattr(postgres_store, "FRESH_SECONDS", 600.0)
    with Memory.open(pg_location, embedder=FakeEmbedder()) as mem:
        mem.remember("The red crate went to shelf 3.")
        mem.recall("red crate", k=3)
        empty_queries.clear()
        hits = mem.recall("red crate", k=3)
        checks = list(empty_queries)
    assert [h.content for h in hits] == ["The red crate went to shelf 3."]
    assert checks == []
