"""``elastic-memory mcp --user``: one user per server; its tools never reach another user's memory."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("mcp.server.mcpserver", reason="needs the 'mcp' extra")

from elastic_memory import LoopConfig, Memory

from .test_mcp_server import call, serve

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A store where alice told the agent her name and allergy."""
    path = tmp_path / "memory.db"
    with Memory.open(path, agent_id="bot", embedder=None, loop=LoopConfig(background=False)) as mem:
        alice = mem.for_user("alice")
        alice.record_turn("My name is Alice Novak and I'm allergic to peanuts.", "Noted!", session_id="a")
    return path


async def test_a_users_server_never_shows_another_users_memory(db: Path) -> None:
    async with serve("--db", db, "--agent", "bot", "--user", "bob") as session:
        hits = (await call(session, "recall", query="peanuts Alice allergic", k=10))["hits"]
        plan = await call(session, "build_context", user_input="What am I allergic to? What's my name?")
        profile = await session.read_resource("memory://profile")
    assert hits == []
    assert "peanuts" not in plan["context"] and "Alice" not in plan["context"]
    assert "peanuts" not in str(profile)


async def test_a_users_server_shows_their_own_memory(db: Path) -> None:
    async with serve("--db", db, "--agent", "bot", "--user", "alice") as session:
        plan = await call(session, "build_context", user_input="What am I allergic to?", session_id="a2")
    assert "peanuts" in plan["context"]


async def test_what_a_users_server_stores_is_that_users(db: Path) -> None:
    async with serve("--db", db, "--agent", "bot", "--user", "bob") as session:
        await call(session, "remember", content="Bob prefers tea.")
    with Memory.open(db, agent_id="bot", embedder=None) as mem:
        assert [h.user_id for h in mem.recall("tea", mode="keyword")] == ["bob"]


async def test_the_agents_server_refuses_a_user_filter(db: Path) -> None:
    async with serve("--db", db, "--agent", "bot") as session:
        result = await session.call_tool("recall", {"query": "peanuts", "filters": {"user_id": "alice"}})
        hits = (await call(session, "recall", query="peanuts Alice allergic", k=10))["hits"]
    assert result.is_error and "user_id" in result.content[0].text  # type: ignore[union-attr]
    assert hits == []


async def test_the_agents_server_cannot_change_a_users_memory(db: Path) -> None:
    with Memory.open(db, agent_id="bot", embedder=None) as mem:
        mid = mem.for_user("alice").remember("Alice's locker code is 4412.")
    async with serve("--db", db, "--agent", "bot") as session:
        got = await call(session, "get", id=str(mid))
        forgot = await session.call_tool("forget", {"ids": [str(mid)]})
    assert "memory" in got and got["memory"] is None
    assert forgot.is_error
    with Memory.open(db, agent_id="bot", embedder=None) as mem:
        record = mem.get(mid)
        assert record is not None and record.deleted_at is None


@pytest.fixture
def home(tmp_path: Path) -> tuple[Path, str, str]:
    """A federation: agent bot with pool team holding a rule; alice's private memory; (home, team id, alice's id)."""
    path = tmp_path / "home"
    with Memory.for_agent("bot", home=path, pools=["team"], embedder=None) as agent:
        team = agent.remember("Refunds over 100 EUR need a manager's approval.", scope="shared", pool="team")
        mine = agent.for_user("alice").remember("Alice's locker code is 4412.")
    return path, str(team), str(mine)


async def test_a_federated_users_server_reads_the_team_pool(home: tuple[Path, str, str]) -> None:
    path, team, _ = home
    async with serve("--home", path, "--agent", "bot", "--pool", "team", "--user", "bob") as session:
        hits = (await call(session, "recall", query="refunds approval", k=5, mode="keyword"))["hits"]
        got = await call(session, "get", id=team)
        locker = (await call(session, "recall", query="locker code", k=5, mode="keyword"))["hits"]
    assert [h["id"] for h in hits] == [team] and got["memory"] is not None
    assert locker == []


async def test_the_federated_agents_server_cannot_forget_a_users_memory(home: tuple[Path, str, str]) -> None:
    path, _, mine = home
    async with serve("--home", path, "--agent", "bot", "--pool", "team") as session:
        forgot = await session.call_tool("forget", {"ids": [mine]})
        hits = (await call(session, "recall", query="locker code", k=5, mode="keyword"))["hits"]
    assert forgot.is_error and hits == []
