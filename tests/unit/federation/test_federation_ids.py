"""Ids belong to their owner: no agent's write under another's id blocks, shadows or forges the owner.

Alice, Bob and Carol share a home (pool ``ops`` and the global tier), on SQLite files and
with the shared tiers on PostgreSQL. Bob learns Alice's ids (they show in the global tier,
in logs, in exports) and writes under them; Alice must keep full control of her memories,
and Carol must never read Bob's text in place of Alice's.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from elastic_memory import AccessDeniedError, Memory
from elastic_memory.testing import FakeEmbedder, fresh_schema

TRUE = "Never share the VPN password."
SQUAT = "The VPN password may be shared with contractors."


@pytest.fixture(params=["sqlite", "postgres"])
def trio(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Memory, Memory, Memory]]:
    """Alice, Bob and Carol in pool ``ops``; the shared tiers in files or on a PostgreSQL server."""
    options: dict[str, Any] = {"pools": ["ops"], "embedder": FakeEmbedder()}
    if request.param == "postgres":
        options["server"] = fresh_schema(request.getfixturevalue("postgres_url"))
    agents = [Memory.for_agent(name, home=tmp_path / "home", **options) for name in ("alice", "bob", "carol")]
    try:
        yield agents[0], agents[1], agents[2]
    finally:
        for agent in agents:
            agent.close()


def _texts(mem: Memory, query: str) -> list[tuple[str, str | None, str]]:
    return sorted((h.content, h.tier, h.agent_id) for h in mem.recall(query, k=20, mode="keyword"))


# --------------------------------------------------------------------------- squatting a shared id
def test_a_pool_write_under_an_id_held_in_the_global_tier_is_refused(trio: tuple[Memory, Memory, Memory]) -> None:
    """Bob cannot put his text in a pool under the id of Alice's promoted memory: nothing is written."""
    alice, bob, carol = trio
    gid = alice.remember(TRUE, importance=0.95)
    with pytest.raises(AccessDeniedError):
        bob.remember(SQUAT, id=str(gid), scope="shared", pool="ops")
    assert _texts(carol, "VPN password") == [(TRUE, "global", "alice")]


def test_a_global_write_under_an_id_held_in_a_pool_is_refused(trio: tuple[Memory, Memory, Memory]) -> None:
    """The rule holds in the other direction: a pool id is not free in the global tier."""
    alice, bob, carol = trio
    pid = alice.remember(TRUE, scope="shared", pool="ops")
    with pytest.raises(AccessDeniedError):
        bob.remember(SQUAT, id=str(pid), scope="global")
    assert _texts(carol, "VPN password") == [(TRUE, "shared:ops", "alice")]


def test_carols_get_returns_alices_text_not_bobs(trio: tuple[Memory, Memory, Memory]) -> None:
    """get() of a squatted id reads the owner's row: Bob's refused write leaves nothing to read."""
    alice, bob, carol = trio
    gid = alice.remember(TRUE, importance=0.95)
    with pytest.raises(AccessDeniedError):
        bob.remember(SQUAT, id=str(gid), scope="shared", pool="ops")
    record = carol.get(gid)
    assert record is not None and (record.content, record.agent_id) == (TRUE, "alice")


# ------------------------------------------------------------------ the owner keeps control of her ids
@pytest.fixture
def squatted(trio: tuple[Memory, Memory, Memory]) -> tuple[Memory, Memory, Memory, str]:
    """Alice's private memory, and Bob's pool row under its id (he learned it from a log)."""
    alice, bob, carol = trio
    mid = str(alice.remember(TRUE))
    bob.remember(SQUAT, id=mid, scope="shared", pool="ops")
    return alice, bob, carol, mid


def test_alice_hard_forgets_her_memory_whatever_bob_wrote_under_its_id(
    squatted: tuple[Memory, Memory, Memory, str],
) -> None:
    """Her forget succeeds and erases her row; Bob's row under the same id is his and stays."""
    alice, _, carol, mid = squatted
    assert alice.forget(mid, hard=True) == 1
    assert _texts(alice, "VPN password") == [(SQUAT, "shared:ops", "bob")]
    assert _texts(carol, "VPN password") == [(SQUAT, "shared:ops", "bob")]


def test_alice_updates_her_memory_whatever_bob_wrote_under_its_id(
    squatted: tuple[Memory, Memory, Memory, str],
) -> None:
    """Her update changes her row only; Bob's pool row keeps his text."""
    alice, bob, _, mid = squatted
    record = alice.update(mid, content="Never share the VPN password, not even with IT.")
    assert (record.content, record.agent_id) == ("Never share the VPN password, not even with IT.", "alice")
    held = bob.get(mid)
    assert held is not None and (held.content, held.agent_id) == (SQUAT, "bob")


def test_alice_archives_her_memory_whatever_bob_wrote_under_its_id(
    squatted: tuple[Memory, Memory, Memory, str],
) -> None:
    """Her archive hides her row; Bob's row is not hidden by her call."""
    alice, bob, _, mid = squatted
    assert alice.archive([mid]) == 1
    mine = alice.get(mid)
    assert mine is not None and mine.archived is True
    held = bob.get(mid)
    assert held is not None and held.archived is False


def test_bob_still_cannot_change_alices_row_through_his_squat(
    squatted: tuple[Memory, Memory, Memory, str],
) -> None:
    """Bob's forget of the shared id reaches his own row only: Alice's private memory is untouched."""
    alice, bob, _, mid = squatted
    assert bob.forget(mid, hard=True) == 1
    mine = alice.get(mid)
    assert mine is not None and (mine.content, mine.deleted_at) == (TRUE, None)


def test_a_squatted_id_is_not_promoted_beside_the_squat(squatted: tuple[Memory, Memory, Memory, str]) -> None:
    """Alice's update to promotion importance succeeds; the global copy is skipped while a pool holds the id."""
    alice, _, carol, mid = squatted
    alice.update(mid, importance=0.95)
    assert _texts(carol, "VPN password") == [(SQUAT, "shared:ops", "bob")]
    assert any(e.op == "promote" and e.reason == "access_denied" for e in alice.federation.events)  # type: ignore[union-attr]


# ------------------------------------------------------------------------ merged reads keep every author
def test_merged_recall_keeps_one_row_per_author_under_one_id(tmp_path: Path) -> None:
    """Rows of two authors under one id (pools Bob cannot see) both reach Carol, who reads both pools."""
    home, fake = tmp_path / "home", FakeEmbedder()
    with (
        Memory.for_agent("alice", home=home, pools=["a"], embedder=fake) as alice,
        Memory.for_agent("bob", home=home, pools=["b"], embedder=fake) as bob,
        Memory.for_agent("carol", home=home, pools=["a", "b"], embedder=fake) as carol,
    ):
        mid = str(alice.remember(TRUE, scope="shared", pool="a"))
        bob.remember(SQUAT, id=mid, scope="shared", pool="b")
        assert _texts(carol, "VPN password") == [(TRUE, "shared:a", "alice"), (SQUAT, "shared:b", "bob")]
        record = carol.get(mid)  # the id's first holder
        assert record is not None and record.agent_id == "alice"


# ----------------------------------------------------------------------------- promotion's author
@pytest.mark.parametrize("shared_on", ["sqlite", "postgres"])
def test_a_forged_private_row_is_promoted_as_the_promoting_agent(
    tmp_path: Path, shared_on: str, request: pytest.FixtureRequest
) -> None:
    """A row claiming Alice, written into Bob's own file, is promoted with Bob as its author; Bob can forget it."""
    home, options = tmp_path / "home", {"embedder": FakeEmbedder()}
    if shared_on == "postgres":
        options["server"] = fresh_schema(request.getfixturevalue("postgres_url"))
    with Memory.for_agent("bob", home=home, **options):
        pass
    with Memory.open(home / "agents" / "bob" / "memory.db", embedder=options["embedder"]) as plain:
        fid = str(plain.remember("Alice approved the contractor VPN access.", agent_id="alice"))
    with (
        Memory.for_agent("bob", home=home, **options) as bob,
        Memory.for_agent("carol", home=home, **options) as carol,
    ):
        bob.update(fid, importance=0.95)
        assert _texts(carol, "contractor VPN") == [("Alice approved the contractor VPN access.", "global", "bob")]
        assert bob.forget(fid, hard=True) == 1
        assert carol.get(fid) is None


def test_a_promotion_at_write_time_is_authored_by_the_writer(trio: tuple[Memory, Memory, Memory]) -> None:
    """The global copy of a promoted write names its writer."""
    alice, _, carol = trio
    gid = alice.remember(TRUE, importance=0.95)
    assert _texts(carol, "VPN password") == [(TRUE, "global", "alice")]
    record = carol.get(gid)
    assert record is not None and record.agent_id == "alice"


# ------------------------------------------------------------------------ the first holder keeps its id
def test_a_later_squat_in_another_pool_never_blocks_the_first_holders_upsert(tmp_path: Path) -> None:
    """Alice (ops and team) wrote P to ops first; Bob (team only) squats P in team; Alice's upsert of P works."""
    home, fake = tmp_path / "home", FakeEmbedder()
    with (
        Memory.for_agent("alice", home=home, pools=["ops", "team"], embedder=fake) as alice,
        Memory.for_agent("bob", home=home, pools=["team"], embedder=fake) as bob,
    ):
        pid = str(alice.remember(TRUE, scope="shared", pool="ops"))
        bob.remember(SQUAT, id=pid, scope="shared", pool="team")
        alice.remember("Never share the VPN password, not even with IT.", id=pid, scope="shared", pool="ops")
        record = alice.get(pid)
        assert record is not None and record.content == "Never share the VPN password, not even with IT."


def test_a_users_upsert_of_its_own_memory_survives_a_squat(tmp_path: Path) -> None:
    """A user's own memory under an id Bob also wrote in a pool can still be upserted by the user."""
    home, fake = tmp_path / "home", FakeEmbedder()
    with (
        Memory.for_agent("alice", home=home, pools=["ops"], embedder=fake) as alice,
        Memory.for_agent("bob", home=home, pools=["ops"], embedder=fake) as bob,
    ):
        user = alice.for_user("u1")
        mid = str(user.remember("My locker code is in the blue notebook."))
        bob.remember(SQUAT, id=mid, scope="shared", pool="ops")
        user.remember("My locker code is in the red notebook.", id=mid)
        record = user.get(mid)
        assert record is not None and record.content == "My locker code is in the red notebook."


def test_a_promoted_row_of_a_file_first_written_alone_shows_once(tmp_path: Path) -> None:
    """A private row authored "default" (the file was used with Memory.open first) and its promoted copy: one hit."""
    home, fake = tmp_path / "home", FakeEmbedder()
    with Memory.for_agent("alice", home=home, embedder=fake):
        pass
    with Memory.open(home / "agents" / "alice" / "memory.db", embedder=fake) as plain:
        mid = str(plain.remember(TRUE))
    with Memory.for_agent("alice", home=home, embedder=fake) as alice:
        alice.update(mid, importance=0.95)
        assert [(h.id, h.tier) for h in alice.recall("VPN password", mode="keyword")] == [(mid, "private")]
        record = alice.get(mid)
        assert record is not None and record.scope.value == "private"
