"""An agent's private tier on the PostgreSQL server (``private_on_server=True``), for stateless workers.

Each test gets its own schema prefix on the session's server (``fresh_schema``) and its own
home folder, so tiers of different tests never meet.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from elastic_memory import AsyncMemory, LoopConfig, UsageError
from elastic_memory.testing import FakeEmbedder, fresh_schema

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def server(postgres_url: str) -> str:
    """A server URL whose ``?schema=`` prefix is this test's alone."""
    return fresh_schema(postgres_url)


async def _worker(home: Path, server: str, agent: str = "ana") -> AsyncMemory:
    """One stateless worker's view of ``agent``: a fresh home folder each time, the tiers on the server."""
    return await AsyncMemory.for_agent(
        agent,
        home=home,
        server=server,
        private_on_server=True,
        embedder=FakeEmbedder(),
        loop=LoopConfig(background=False),
    )


async def test_a_private_memory_lives_on_the_server_not_in_the_home_folder(tmp_path: Path, server: str) -> None:
    async with await _worker(tmp_path / "w1", server) as mem:
        await mem.remember("The user's dog is called Pixel.")
        private = (await mem.stats())["tiers"]["private"]
    assert private["path"].startswith("postgresql://")
    assert private["active_memories"] == 1
    assert not (tmp_path / "w1" / "agents" / "ana" / "memory.db").exists()


async def test_another_worker_recalls_what_the_first_remembered(tmp_path: Path, server: str) -> None:
    """A worker with a fresh home folder (a new container) finds the agent's private memories."""
    async with await _worker(tmp_path / "w1", server) as first:
        await first.remember("The user's dog is called Pixel.")
    async with await _worker(tmp_path / "w2", server) as second:
        hits = await second.recall("what is the dog called", mode="keyword")
    assert [h.content for h in hits] == ["The user's dog is called Pixel."]


async def test_another_worker_plans_with_the_turns_the_first_recorded(tmp_path: Path, server: str) -> None:
    async with await _worker(tmp_path / "w1", server) as first:
        await first.record_turn("My sister Mia lives in Lisbon.", "Noted.", session_id="s1")
        await first.drain()
    async with await _worker(tmp_path / "w2", server) as second:
        plan = await second.build_context("Where does Mia live?", session_id="s2")
    assert "Lisbon" in plan.render()


async def test_two_agents_private_tiers_on_one_server_stay_apart(tmp_path: Path, server: str) -> None:
    async with await _worker(tmp_path / "a", server, "ana") as ana, await _worker(tmp_path / "b", server, "bo") as bo:
        await ana.remember("Ana's locker code is 4417.")
        assert await bo.recall("locker code", mode="keyword") == []
        assert (await ana.stats())["tiers"]["private"]["path"] != (await bo.stats())["tiers"]["private"]["path"]


async def test_private_on_server_without_a_server_is_refused_before_any_folder(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="needs a server"):
        await AsyncMemory.for_agent("ana", home=tmp_path / "home", private_on_server=True, embedder=FakeEmbedder())
    assert not (tmp_path / "home").exists()
