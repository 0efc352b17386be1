"""Users of a federated agent: private to each user, never promoted or shared, the team's tiers readable by all."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from elastic_memory import AccessDeniedError, LoopConfig, Memory, UsageError
from elastic_memory.testing import FakeEmbedder

ALICE_SAYS = "My name is Alice Novak and I'm allergic to peanuts."
ASK = "What am I allergic to, and what is my name?"


@pytest.fixture
def agent(tmp_path: Path) -> Iterator[Memory]:
    """Agent ``bot`` of a federation with pool ``team`` and a global tier; the team's rule in the pool."""
    loop = LoopConfig(tier="standard", background=False)
    with Memory.for_agent("bot", home=tmp_path / "home", pools=["team"], embedder=FakeEmbedder(), loop=loop) as mem:
        mem.remember("Refunds over 100 EUR need a manager's approval.", scope="shared", pool="team")
        yield mem


def test_a_users_memories_are_theirs_alone(agent: Memory) -> None:
    alice, bob = agent.for_user("alice"), agent.for_user("bob")
    mid = alice.remember("Alice's locker code is 4412.")
    assert bob.recall("locker code", mode="keyword") == []
    assert bob.get(mid) is None and bob.forget(mid, hard=True) == 0
    assert [h.id for h in alice.recall("locker code", mode="keyword")] == [mid]


def test_users_read_the_teams_pool(agent: Memory) -> None:
    for user in ("alice", "bob"):
        hits = agent.for_user(user).recall("refunds approval", mode="keyword")
        assert [h.tier for h in hits] == ["shared:team"]


def test_a_users_plan_holds_none_of_another_users_turns(agent: Memory) -> None:
    alice, bob = agent.for_user("alice"), agent.for_user("bob")
    alice.record_turn(ALICE_SAYS, "Noted!", session_id="a1")
    agent.drain()
    assert "peanuts" not in bob.build_context(ASK, session_id="b1").render()
    assert "peanuts" in alice.build_context(ASK, session_id="a2").render()


def test_a_user_writes_nothing_shared_or_global(agent: Memory) -> None:
    alice = agent.for_user("alice")
    for scope, pool in (("shared", "team"), ("global", None)):
        with pytest.raises(UsageError, match="private to the user"):
            alice.remember("Alice's note for the team", scope=scope, pool=pool)
    assert agent.recall("Alice's note", mode="keyword") == []


def test_a_users_important_memory_is_never_promoted(agent: Memory, tmp_path: Path) -> None:
    alice = agent.for_user("alice")
    mid = alice.remember("Alice's passport number is X1234567.", importance=1.0)
    alice.update(mid, importance=0.99)
    with Memory.for_agent("other", home=tmp_path / "home", pools=["team"], embedder=FakeEmbedder()) as other:
        assert other.recall("passport number", mode="keyword") == []


def test_a_user_cannot_change_the_teams_memories(agent: Memory) -> None:
    team = agent.recall("refunds approval", mode="keyword")[0]
    alice = agent.for_user("alice")
    assert alice.forget(team.id) == 0 and alice.archive(team.id) == 0
    with pytest.raises(UsageError, match="no memory"):
        alice.update(team.id, content="Refunds need no approval.")
    assert agent.get(team.id) is not None and agent.get(team.id).deleted_at is None  # type: ignore[union-attr]


def test_the_agents_handle_does_not_write_for_a_user(agent: Memory) -> None:
    with pytest.raises(UsageError, match="for_user"):
        agent.remember("note", user_id="alice")


def test_a_federated_users_handle_hands_out_no_other(agent: Memory) -> None:
    alice = agent.for_user("alice")
    assert alice.for_user("alice")._ops is alice._ops
    with pytest.raises(AccessDeniedError):
        alice.for_user("bob")


def test_for_agent_opens_a_users_handle_that_closes_the_federation(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Memory.for_agent("bot", user_id="alice", home=home, embedder=FakeEmbedder()) as alice:
        mid = alice.remember("Alice's note")
        assert (alice.agent_id, alice.user_id) == ("bot", "alice")
    with Memory.for_agent("bot", home=home, embedder=FakeEmbedder()) as agent:
        assert agent.for_user("bob").get(mid) is None
        record = agent.for_user("alice").get(mid)
        assert record is not None and record.user_id == "alice"


def test_a_bad_user_id_opens_nothing(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="user_id"):
        Memory.for_agent("bot", user_id="a\x1fb", home=tmp_path / "home", embedder=FakeEmbedder())
    assert not (tmp_path / "home").exists()


def test_the_agents_update_never_promotes_a_users_memory(agent: Memory, tmp_path: Path) -> None:
    mid = agent.for_user("alice").remember("Alice's passport number is X1234567.", importance=1.0)
    agent.update(mid, tags=["checked"])
    agent.update(mid, importance=0.99)
    assert agent.for_user("bob").recall("passport number", mode="keyword") == []
    with Memory.for_agent("other", home=tmp_path / "home", pools=["team"], embedder=FakeEmbedder()) as other:
        assert other.recall("passport number", mode="keyword") == []


def test_a_user_cannot_take_a_team_memorys_id(agent: Memory) -> None:
    team = agent.recall("refunds approval", mode="keyword")[0]
    alice = agent.for_user("alice")
    with pytest.raises(AccessDeniedError, match="not this user's"):
        alice.remember("Refunds never need approval.", id=team.id, importance=1.0)
    with pytest.raises(AccessDeniedError):
        alice.remember_many([{"content": "Refunds never need approval.", "id": team.id}])
    record = agent.get(team.id)
    assert record is not None and "manager" in record.content


def test_a_dict_that_hides_its_scope_writes_nothing_shared(agent: Memory) -> None:
    class Hiding(dict):  # type: ignore[type-arg]
        def get(self, key: object, default: object = None) -> object:
            return None if key in ("scope", "pool") else super().get(key, default)

    item = Hiding(content="Alice's team note", scope="shared", pool="team")
    with pytest.raises(UsageError, match="private to the user"):
        agent.for_user("alice").remember_many([item])
    assert agent.recall("team note", mode="keyword") == []


def test_users_rows_never_crowd_the_agents_own_out_of_its_plan(agent: Memory) -> None:
    agent.remember("The office wifi password is hunter2.", type="episodic")
    agent.for_user("alice").remember_many(
        [{"content": f"office wifi password note {i}", "type": "episodic"} for i in range(300)]
    )
    assert "hunter2" in agent.build_context("office wifi password", session_id="q").render()


def test_a_user_sees_the_team_memory_by_id(agent: Memory) -> None:
    team = agent.recall("refunds approval", mode="keyword")[0]
    record = agent.for_user("alice").get(team.id)
    assert record is not None and record.scope.value == "shared"
