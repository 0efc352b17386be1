"""Shared fixtures: the backends every conformance test runs against, and fakes."""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from elastic_memory import AsyncMemory, Memory, MiniLMEmbedder
from elastic_memory.testing import FakeEmbedder, fresh_schema, postgres_session

#: The browser tests need Playwright and Chromium: they run in `nox -s browser`, not here.
collect_ignore = [] if importlib.util.find_spec("playwright") else ["browser"]

#: Where a conformance store lives: a file, memory, a file with the ANN vector tier forced,
#: or a schema on a PostgreSQL server (started once per session; needs the postgres-server extra).
BACKENDS = ["sqlite-file", "sqlite-memory", "sqlite-ann", "postgres"]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--backend", action="append", choices=BACKENDS, help="run the conformance suite on these backends only"
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        chosen = metafunc.config.getoption("backend") or BACKENDS
        metafunc.parametrize("backend", chosen)


class Clock:
    """A settable clock (seconds since the epoch) that moves only when a test moves it."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    """A fresh settable clock for ``Memory.open(..., clock=clock)``; advance it with ``clock.now += s``."""
    return Clock()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """A fresh database file path (not yet created)."""
    return tmp_path / "memory.db"


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL 18 + pgvector server on a free loopback port for the whole session (skips without it)."""
    yield from postgres_session()


@pytest.fixture
def pg_location(request: pytest.FixtureRequest) -> str:
    """A fresh schema on the session's PostgreSQL server (a new, empty store)."""
    return fresh_schema(request.getfixturevalue("postgres_url"))


@pytest.fixture
def location(backend: str, db_path: Path, request: pytest.FixtureRequest) -> str:
    """Where the store of one conformance test lives."""
    if backend == "postgres":
        return str(request.getfixturevalue("pg_location"))
    return ":memory:" if backend == "sqlite-memory" else str(db_path)


@pytest.fixture
def fake() -> FakeEmbedder:
    """A deterministic 16-d hashing embedder."""
    return FakeEmbedder()


@pytest.fixture
def mem(db_path: Path, fake: FakeEmbedder) -> Iterator[Memory]:
    """An empty sync store on a file with the fake embedder."""
    with Memory.open(db_path, embedder=fake) as m:
        yield m


@pytest.fixture
async def amem(db_path: Path, fake: FakeEmbedder) -> AsyncIterator[AsyncMemory]:
    """An empty async store on a file with the fake embedder."""
    async with await AsyncMemory.open(db_path, embedder=fake) as m:
        yield m


@pytest.fixture(scope="session")
def minilm() -> MiniLMEmbedder:
    """The real built-in embedder, loaded once per test session (offline)."""
    embedder = MiniLMEmbedder()
    embedder.embed(["warm up"])
    return embedder
