"""Faults in one federation tier: it hangs, raises, is corrupted, removed, or shared by many processes.

Every test opens fresh SQLite files under a temporary home. The faulty tier is either a
real file damaged on disk, or a real file behind :class:`Faulty`, a store of the protocol
that hangs or raises on demand and counts the calls that reached it.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from elastic_memory import Memory, MemoryWriteError, RoutingError, TierWriteError
from elastic_memory.federation import (
    BreakerState,
    CoreStore,
    DegradedEvent,
    Entry,
    MemoryFederation,
    MemoryRouter,
    TierBudget,
    TierHealth,
    build_federation,
)
from elastic_memory.federation.ops import FederatedOps
from elastic_memory.testing import FakeEmbedder
from elastic_memory.types import Hit, MemoryId, MemoryRecord

T = TypeVar("T")

#: The faulty tier's budget: small timeouts, a breaker that opens after two failures.
SMALL = TierBudget(
    read_timeout_ms=100,
    semantic_timeout_ms=100,
    write_timeout_ms=100,
    write_per_entry_ms=1,
    fail_threshold=2,
    reset_after_s=30.0,
)
#: A bound for a call that SMALL's 0.1 s budget cut short. The fault hangs forever, so any bound
#: far below the test's own timeout tells a cut call from a hang; a loaded machine cannot reach it.
WITHIN_BUDGET_S = 20.0


class Monotonic:
    """A settable monotonic clock for the breakers (seconds)."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


class Faulty:
    """A real store behind a switch: ``fault`` None passes calls through, "hang" never returns, "raise" raises.

    ``calls`` counts the data calls (search, get, write, delete) that reached this store;
    ``delay`` (seconds) slows passing calls down so concurrent ones overlap.
    """

    def __init__(self, inner: CoreStore) -> None:
        self.inner = inner
        self.name = inner.name
        self.fault: str | None = None
        self.delay = 0.0
        self.calls = 0

    async def _call(self, make: Callable[[], Awaitable[T]]) -> T:
        self.calls += 1
        if self.fault == "hang":
            await asyncio.Event().wait()  # nobody sets it
        if self.fault == "raise":
            msg = "backend unreachable"
            raise ConnectionError(msg)
        if self.delay:
            await asyncio.sleep(self.delay)
        return await make()

    async def search(
        self, query: str = "", *, k: int = 10, mode: str = "hybrid", filters: Mapping[str, Any] | None = None
    ) -> list[Hit]:
        return await self._call(lambda: self.inner.search(query, k=k, mode=mode, filters=filters))

    async def write(self, entries: Sequence[Entry]) -> list[MemoryId]:
        return await self._call(lambda: self.inner.write(entries))

    async def get(self, ids: Sequence[str]) -> list[MemoryRecord]:
        return await self._call(lambda: self.inner.get(ids))

    async def delete(self, ids: Sequence[str], *, hard: bool = False) -> int:
        return await self._call(lambda: self.inner.delete(ids, hard=hard))

    async def health_check(self) -> TierHealth:
        return await self.inner.health_check()

    async def aclose(self) -> None:
        await self.inner.aclose()


@dataclass
class Rig:
    """A hand-wired federation: private, pool ``good`` and pool ``flaky``, each a real file behind a switch."""

    federation: MemoryFederation
    ops: FederatedOps
    tiers: dict[str, Faulty]
    ids: dict[str, str]  # tier name -> the id of the one "zebra" memory it holds
    monotonic: Monotonic

    def contents(self, hits: Sequence[Hit]) -> set[str]:
        return {h.content for h in hits}


async def _sqlite(home: Path, folder: str, name: str, clock: Callable[[], float]) -> CoreStore:
    path = home / folder / "memory.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    return await CoreStore.open(path, name=name, agent_id="ana", embedder=FakeEmbedder(), clock=clock)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty federation home."""
    return tmp_path / "home"


@pytest.fixture
async def make_rig(home: Path, clock: Callable[[], float]) -> AsyncIterator[Callable[[str], Awaitable[Rig]]]:
    """Build a Rig whose tier ``small`` gets ``budget`` (others the defaults); each tier holds one "zebra"."""
    built: list[Rig] = []

    async def make(small: str = "shared:flaky", budget: TierBudget = SMALL) -> Rig:
        tiers = {
            "private": Faulty(await _sqlite(home, "agents/ana", "private", clock)),
            "shared:good": Faulty(await _sqlite(home, "pools/good", "shared:good", clock)),
            "shared:flaky": Faulty(await _sqlite(home, "pools/flaky", "shared:flaky", clock)),
        }
        router = MemoryRouter(
            private=tiers["private"], pools={"good": tiers["shared:good"], "flaky": tiers["shared:flaky"]}, clock=clock
        )
        monotonic = Monotonic()
        federation = MemoryFederation(router, budgets={small: budget}, monotonic=monotonic)
        ops = FederatedOps(federation, tiers["private"].inner.core)
        ids = {}
        for tier, fields in (
            ("private", {}),
            ("shared:good", {"scope": "shared", "pool": "good"}),
            ("shared:flaky", {"scope": "shared", "pool": "flaky"}),
        ):
            entry = Entry.create(f"zebra seen by {tier}", now=clock(), default_agent="ana", **fields)
            ids[tier] = str((await federation.write([entry]))[0])
        for faulty in tiers.values():
            faulty.calls = 0
        rig = Rig(federation, ops, tiers, ids, monotonic)
        built.append(rig)
        return rig

    yield make
    for rig in built:
        for faulty in rig.tiers.values():
            faulty.fault = None
        await rig.federation.aclose()
        for faulty in rig.tiers.values():  # a removed pool is no longer the federation's to close
            await faulty.aclose()


OTHERS = {"zebra seen by private", "zebra seen by shared:good"}
EVERYONE = OTHERS | {"zebra seen by shared:flaky"}


# ------------------------------------------------------------------------------ a tier that hangs
@pytest.mark.parametrize("mode", ["keyword", "hybrid"])  # read_timeout_ms, semantic_timeout_ms
async def test_a_hanging_pool_costs_a_read_its_budget_and_the_others_still_answer(make_rig: Any, mode: str) -> None:
    """A pool whose search never returns: recall comes back after ~read budget with the other tiers' hits.

    If this hangs or is slow, check ResilientTier.search's asyncio.wait_for and the budget lookup
    in MemoryFederation._budget (the "shared:flaky" key).
    """
    rig = await make_rig()
    rig.tiers["shared:flaky"].fault = "hang"
    started = time.perf_counter()
    hits = await rig.ops.recall("zebra", mode=mode)
    assert time.perf_counter() - started < WITHIN_BUDGET_S
    assert rig.contents(hits) == OTHERS


async def test_a_hanging_pool_read_is_flagged_degraded_everywhere(make_rig: Any) -> None:
    """The timed-out tier shows in federation.events, health_check() and explain()'s details.

    If one place misses it, check MemoryFederation._record (events), ResilientTier.health_check
    (degraded_reads, last_error) and MemoryFederation.search_tiers (details["degraded"]).
    """
    rig = await make_rig()
    rig.tiers["shared:flaky"].fault = "hang"
    explanation = await rig.ops.explain("zebra", mode="keyword")
    assert explanation.details["federation"]["degraded"] == ["shared:flaky"]
    flaky_detail = explanation.details["federation"]["tiers"]["shared:flaky"]
    assert (flaky_detail["hits"], flaky_detail["degraded"]) == (0, True)
    assert [(e.tier, e.op, e.reason) for e in rig.federation.events] == [("shared:flaky", "read", "timeout")]
    health = await rig.federation.health_check()
    flaky = health.detail["tiers"]["shared:flaky"]
    assert flaky["degraded_reads"] == 1 and flaky["last_error"].startswith("TimeoutError")
    assert health.detail["recent_degraded"][-1]["reason"] == "timeout"


async def test_a_recall_that_lost_a_tier_says_so_on_its_hits(make_rig: Any) -> None:
    """recall()'s Hits name the tier that timed out and why; the hits are the other tiers'."""
    rig = await make_rig()
    rig.tiers["shared:flaky"].fault = "hang"
    hits = await rig.ops.recall("zebra", mode="keyword")
    assert (hits.degraded, rig.contents(hits)) == ({"shared:flaky": "timeout"}, OTHERS)


async def test_explain_names_the_tier_lost_to_a_timeout(make_rig: Any) -> None:
    """explain().degraded maps the timed-out tier to its reason."""
    rig = await make_rig()
    rig.tiers["shared:flaky"].fault = "hang"
    assert (await rig.ops.explain("zebra", mode="keyword")).degraded == {"shared:flaky": "timeout"}


async def test_a_recall_every_tier_answered_has_no_degraded_tier(make_rig: Any) -> None:
    """With every tier answering, the Hits say nothing was lost."""
    rig = await make_rig()
    hits = await rig.ops.recall("zebra", mode="keyword")
    assert (hits.degraded, rig.contents(hits)) == ({}, EVERYONE)


async def test_a_concurrent_healthy_read_is_not_flagged_degraded(make_rig: Any) -> None:
    """Only the read that timed out says so: a read of the same tier that succeeded alongside it is clean.

    If the good read lists the tier as degraded, MemoryFederation.search_tiers is attributing
    another call's failure to it (a tier-wide counter instead of this call's own events).
    """
    rig = await make_rig(budget=TierBudget(read_timeout_ms=1_000, fail_threshold=5))
    flaky = rig.tiers["shared:flaky"]
    flaky.fault = "hang"
    hanging = asyncio.create_task(rig.ops.explain("zebra", mode="keyword"))  # times out at 1.0 s
    await asyncio.sleep(0.5)
    flaky.fault, flaky.delay = None, 0.6  # the next read succeeds at ~1.1 s, after that timeout
    slow = await rig.ops.explain("zebra", mode="keyword")
    assert (await hanging).details["federation"]["degraded"] == ["shared:flaky"]
    assert slow.details["federation"]["degraded"] == []
    assert rig.contents(slow.hits) == EVERYONE


async def test_a_hanging_get_returns_the_other_tiers_records(make_rig: Any) -> None:
    """get() of ids from every tier returns the records of the tiers that answered, within budget.

    If it hangs, check ResilientTier.get's timeout; if it raises, MemoryFederation.get's gather.
    """
    rig = await make_rig()
    rig.tiers["shared:flaky"].fault = "hang"
    started = time.perf_counter()
    records = await rig.federation.get(list(rig.ids.values()))
    assert time.perf_counter() - started < WITHIN_BUDGET_S
    assert [r.id for r in records] == [rig.ids["private"], rig.ids["shared:good"]]


async def test_a_hanging_shared_write_degrades_instead_of_raising(make_rig: Any) -> None:
    """A shared write that times out comes back with status "degraded" and a write event.

    If it raises, check MemoryFederation.write's handling of TierWriteError for non-private legs.
    """
    rig = await make_rig()
    rig.tiers["shared:flaky"].fault = "hang"
    entry = Entry.create("flaky standup note", now=0.0, default_agent="ana", scope="shared", pool="flaky")
    started = time.perf_counter()
    [mid] = await rig.federation.write([entry])
    assert time.perf_counter() - started < WITHIN_BUDGET_S
    assert (mid, mid.status) == (entry.id, "degraded")
    assert [(e.tier, e.op, e.reason) for e in rig.federation.events] == [("shared:flaky", "write", "timeout")]


async def test_a_hanging_private_write_raises_memory_write_error(make_rig: Any) -> None:
    """The private tier is the durability anchor: a timed-out private write raises, with the tier's error as cause.

    If it degrades silently, check MemoryFederation.write's private_error branch.
    """
    rig = await make_rig(small="private")
    rig.tiers["private"].fault = "hang"
    entry = Entry.create("private note", now=0.0, default_agent="ana")
    with pytest.raises(MemoryWriteError) as caught:
        await rig.federation.write([entry])
    cause = caught.value.__cause__
    assert isinstance(cause, TierWriteError) and (cause.tier, cause.reason) == ("private", "timeout")


# ------------------------------------------------------------------------------ a tier that raises
async def test_a_raising_pool_is_dropped_from_reads(make_rig: Any) -> None:
    """A pool whose calls raise gives no hits; the other tiers still answer and the error is recorded.

    If the error escapes, check ResilientTier._call's generic except branch.
    """
    rig = await make_rig()
    rig.tiers["shared:flaky"].fault = "raise"
    hits = await rig.ops.recall("zebra", mode="hybrid")
    assert rig.contents(hits) == OTHERS
    [event] = rig.federation.events
    assert (event.tier, event.reason, event.error) == (
        "shared:flaky",
        "backend_error",
        "ConnectionError: backend unreachable",
    )


async def test_the_breaker_opens_after_fail_threshold_failures_and_stops_calling(make_rig: Any) -> None:
    """After fail_threshold (2) failures the pool is not called any more; reads say breaker_open.

    If calls keep reaching the store, check CircuitBreaker.failure/allow and that the budget's
    fail_threshold reached the breaker (ResilientTier.__init__).
    """
    rig = await make_rig()
    flaky = rig.tiers["shared:flaky"]
    flaky.fault = "raise"
    for _ in range(2):
        await rig.ops.recall("zebra", mode="keyword")
    assert flaky.calls == 2
    for _ in range(3):
        assert rig.contents(await rig.ops.recall("zebra", mode="keyword")) == OTHERS
    assert flaky.calls == 2
    assert [e.reason for e in rig.federation.events] == ["backend_error"] * 2 + ["breaker_open"] * 3


async def test_an_open_breaker_shows_in_health(make_rig: Any) -> None:
    """health_check() reports the open tier as not ok, the federation as still usable.

    If ok is wrong, check ResilientTier.health_check (breaker state) and MemoryFederation.health_check.
    """
    rig = await make_rig()
    rig.tiers["shared:flaky"].fault = "raise"
    for _ in range(2):
        await rig.ops.recall("zebra", mode="keyword")
    health = await rig.federation.health_check()
    flaky = health.detail["tiers"]["shared:flaky"]
    assert health.ok and health.reason == "degraded tiers: shared:flaky"
    assert (flaky["ok"], flaky["breaker"], flaky["quarantined"]) == (False, "open", False)
    assert "circuit breaker open after 2 failures" in flaky["reason"]


async def test_after_reset_one_probe_goes_through_and_its_success_closes_the_breaker(make_rig: Any) -> None:
    """reset_after_s later, of three concurrent reads exactly one reaches the store; it succeeds and closes.

    If more than one call gets through, check CircuitBreaker.allow's HALF_OPEN transition; if the
    breaker stays open, check CircuitBreaker.success. The clock is MemoryFederation(monotonic=...).
    """
    rig = await make_rig(budget=TierBudget(read_timeout_ms=5_000, fail_threshold=2, reset_after_s=30.0))
    flaky = rig.tiers["shared:flaky"]
    flaky.fault = "raise"
    for _ in range(2):
        await rig.ops.recall("zebra", mode="keyword")
    flaky.fault, flaky.delay = None, 0.05  # healthy again, and slow enough for the reads to overlap
    rig.monotonic.now += 29.0
    await rig.ops.recall("zebra", mode="keyword")
    assert flaky.calls == 2  # not yet
    rig.monotonic.now += 1.0
    results = await asyncio.gather(*(rig.ops.recall("zebra", mode="keyword") for _ in range(3)))
    assert flaky.calls == 3
    assert sorted(len(r) for r in results) == [2, 2, 3]  # the probe's read has the pool's hit
    assert rig.federation.router.tier("shared:flaky").store.breaker.state is BreakerState.CLOSED
    assert rig.contents(await rig.ops.recall("zebra", mode="keyword")) == EVERYONE
    assert flaky.calls == 4


async def test_a_failed_probe_reopens_the_breaker_at_once(make_rig: Any) -> None:
    """A half-open probe that fails opens the breaker again for another reset_after_s.

    If the store is called again right away, check CircuitBreaker.failure in HALF_OPEN.
    """
    rig = await make_rig()
    flaky = rig.tiers["shared:flaky"]
    flaky.fault = "raise"
    for _ in range(2):
        await rig.ops.recall("zebra", mode="keyword")
    rig.monotonic.now += 30.0
    await rig.ops.recall("zebra", mode="keyword")  # the probe
    await rig.ops.recall("zebra", mode="keyword")
    assert flaky.calls == 3
    assert rig.federation.router.tier("shared:flaky").store.breaker.state is BreakerState.OPEN


# ------------------------------------------------------------------------- a tier corrupted on disk
def corrupt(db: Path) -> None:
    """Overwrite the database, its WAL and its shared-memory index in place (same inodes) with garbage.

    Garbage in the main file alone is invisible to an open connection: it keeps its page cache
    while the WAL index says nothing changed. Trashing the -shm makes it rebuild the index from
    the (trashed) WAL and read page 1 from disk: "file is not a database".
    """
    for suffix in ("", "-wal", "-shm"):
        part = Path(f"{db}{suffix}")
        size = part.stat().st_size
        with part.open("r+b") as f:
            f.write((b"\xde\xad\xbe\xef" * (size // 4 + 1))[:size])


def _write_resilience(home: Path, pool: Mapping[str, Any]) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "resilience.json").write_text(json.dumps({"shared": {"team": dict(pool)}}), encoding="utf-8")


@pytest.fixture
def ana(home: Path) -> Iterator[Memory]:
    """Agent ana over her private file, pool "team" and global; the pool's breaker would retry at once."""
    _write_resilience(home, {"reset_after_s": 0})
    with Memory.for_agent("ana", home=home, pools=["team"], embedder=FakeEmbedder()) as mem:
        mem.remember("The zebra lives in ana's notes.")
        mem.remember("The zebra lives in the team pool.", scope="shared", pool="team")
        mem.remember("The zebra is known to everyone.", scope="global")
        yield mem


def _events(mem: Memory) -> list[DegradedEvent]:
    assert mem.federation is not None
    return list(mem.federation.events)


def test_a_pool_corrupted_mid_session_is_dropped_from_reads(ana: Memory, home: Path) -> None:
    """Recall after the pool's file was trashed returns the private and global hits; the event says corruption.

    If the pool's hits still come back, the corruption did not reach the connection (see corrupt());
    if an error escapes, check ResilientTier._call's CorruptDatabaseError branch.
    """
    corrupt(home / "pools" / "team" / "memory.db")
    hits = ana.recall("zebra", mode="keyword")
    assert {h.tier for h in hits} == {"private", "global"}
    [event] = _events(ana)
    assert (event.tier, event.op, event.reason) == ("shared:team", "read", "corruption")
    assert event.error is not None and event.error.startswith("CorruptDatabaseError")


def test_a_corrupted_pool_is_quarantined_for_the_session(ana: Memory, home: Path) -> None:
    """After corruption the pool is never called again, even with reset_after_s 0; health says quarantined.

    If later events say "corruption" again, the breaker let a probe through: check
    CircuitBreaker.force_open/allow. If health is ok, check ResilientTier.health_check.
    """
    corrupt(home / "pools" / "team" / "memory.db")
    ana.recall("zebra", mode="keyword")
    ana.recall("zebra", mode="hybrid")
    mid = ana.remember("One more zebra for the team.", scope="shared", pool="team")
    assert mid.status == "degraded"
    assert [(e.op, e.reason) for e in _events(ana)] == [
        ("read", "corruption"),
        ("read", "breaker_open"),
        ("write", "breaker_open"),
    ]
    federation = ana.health()["federation"]
    team = federation["tiers"]["shared:team"]
    assert federation["ok"] and not team["ok"]
    assert (team["breaker"], team["quarantined"]) == ("open", True)


def test_no_exception_escapes_a_corrupted_pool(ana: Memory, home: Path) -> None:
    """Every read and maintenance call keeps working on the other tiers after the pool is trashed.

    The failing call's name is in the traceback; its tier handling is in federation.ops.
    """
    private_id = ana.recall("zebra", scope="private")[0].id
    corrupt(home / "pools" / "team" / "memory.db")
    for mode in ("keyword", "semantic", "hybrid"):
        assert {h.tier for h in ana.recall("zebra", mode=mode)} == {"private", "global"}
    assert ana.recall("zebra", scope="shared") == []
    assert ana.explain("zebra").details["federation"]["degraded"] == ["shared:team"]
    assert [r.id for r in ana.get_many([private_id])] == [private_id]
    assert "error" in ana.stats()["tiers"]["shared:team"]
    assert "zebra" in ana.build_context("Where does the zebra live?").render()
    assert ana.forget(private_id) == 1
    ana.close()


def test_a_corrupt_private_file_at_open_is_moved_to_quarantine_and_replaced(home: Path) -> None:
    """The garbage file and its WAL move to agents/<id>/quarantine/ byte for byte; a fresh file takes over.

    If bytes differ or are missing, check assembly._quarantine (os.replace of each part).
    """
    folder = home / "agents" / "ana"
    folder.mkdir(parents=True)
    garbage, wal = b"not a database, only noise " * 300, b"wal noise " * 100
    (folder / "memory.db").write_bytes(garbage)
    (folder / "memory.db-wal").write_bytes(wal)
    with Memory.for_agent("ana", home=home, embedder=FakeEmbedder()) as mem:
        mid = mem.remember("A fresh start.")
        assert [h.id for h in mem.recall("fresh")] == [mid]
        private = mem.health()["federation"]["tiers"]["private"]
    [moved] = (folder / "quarantine").glob("*.corrupt")
    assert moved.read_bytes() == garbage
    assert Path(f"{moved}-wal").read_bytes() == wal
    assert private["ok"] and private["quarantined_file"] == str(moved)


# ------------------------------------------------------------------------------ a pool removed
class Gated(Faulty):
    """A real store whose searches wait at a gate; ``entered`` counts the searches waiting there."""

    def __init__(self, inner: CoreStore) -> None:
        super().__init__(inner)
        self.gate = asyncio.Event()
        self.entered = 0

    async def search(
        self, query: str = "", *, k: int = 10, mode: str = "hybrid", filters: Mapping[str, Any] | None = None
    ) -> list[Hit]:
        self.entered += 1
        await self.gate.wait()
        return await super().search(query, k=k, mode=mode, filters=filters)


@pytest.fixture
async def team(home: Path, clock: Callable[[], float]) -> AsyncIterator[tuple[MemoryFederation, Gated]]:
    """A federation from build_federation plus pool "team" behind a gate; each tier holds one zebra."""
    federation = await build_federation("ana", home=home, embedder=FakeEmbedder(), clock=clock)
    pool = Gated(await _sqlite(home, "pools/team", "shared:team", clock))
    federation.add_pool("team", pool)
    pool.gate.set()
    await federation.write(
        [
            Entry.create("zebra in private", now=clock(), default_agent="ana"),
            Entry.create("zebra in team", now=clock(), default_agent="ana", scope="shared", pool="team"),
        ]
    )
    pool.gate.clear()
    yield federation, pool
    pool.gate.set()
    await federation.aclose()
    await pool.aclose()


async def test_reads_in_flight_finish_when_their_pool_is_removed(team: tuple[MemoryFederation, Gated]) -> None:
    """Reads that fanned out before remove_pool() complete without error, the pool's hits included.

    If they raise, check that MemoryFederation.search_tiers holds the tier refs it started with.
    """
    federation, pool = team
    reads = [asyncio.create_task(federation.search("zebra", mode=m)) for m in ("keyword", "semantic", "hybrid")]
    while pool.entered < len(reads):
        await asyncio.sleep(0.001)
    assert federation.remove_pool("team") is pool
    pool.gate.set()
    for hits in await asyncio.gather(*reads):
        assert {h.content for h in hits} == {"zebra in private", "zebra in team"}


async def test_a_removed_pool_is_a_routing_error_for_writes_and_named_reads(
    team: tuple[MemoryFederation, Gated],
) -> None:
    """After remove_pool() a write to it and a read naming it raise RoutingError.

    If not, check MemoryRouter.remove_pool / route_write / route_read.
    """
    federation, _ = team
    federation.remove_pool("team")
    with pytest.raises(RoutingError, match="team"):
        await federation.write([Entry.create("late", now=0.0, default_agent="ana", scope="shared", pool="team")])
    with pytest.raises(RoutingError, match="team"):
        await federation.search("zebra", filters={"pool": "team"})


async def test_a_merged_read_after_removal_leaves_the_pool_out(team: tuple[MemoryFederation, Gated]) -> None:
    """A read without scope after remove_pool() neither asks the pool nor waits for it.

    If it hangs, the removed (gated) pool is still being asked: check MemoryRouter.tiers.
    """
    federation, pool = team
    federation.remove_pool("team")
    hits, details = await federation.search_tiers("zebra", mode="keyword")
    assert [h.content for h in hits] == ["zebra in private"]
    assert "shared:team" not in details["tiers"] and pool.entered == 0


async def test_closing_a_removed_pool_under_in_flight_reads_raises_nothing(home: Path) -> None:
    """remove_pool() then aclose() of its store while reads are in flight: the reads end without error.

    The in-flight reads meet a closed store; CoreStore must fail them as a backend
    error (the tier degrades) rather than as the caller's UsageError.
    """
    federation = await build_federation("ana", home=home, pools=["team"], embedder=FakeEmbedder())
    await federation.write(
        [Entry.create(f"zebra {i}", now=0.0, default_agent="ana", scope="shared", pool="team") for i in range(20)]
        + [Entry.create("zebra in private", now=0.0, default_agent="ana")]
    )
    reads = [asyncio.create_task(federation.search("zebra", mode=m, k=30)) for m in ("keyword", "hybrid") * 3]
    await asyncio.sleep(0)  # every read has fanned out to the pool
    removed = federation.remove_pool("team")
    assert removed is not None
    await removed.aclose()
    results = await asyncio.gather(*reads, return_exceptions=True)
    assert [r for r in results if isinstance(r, BaseException)] == []
    assert all("zebra in private" in {h.content for h in r} for r in results if isinstance(r, list))
    await federation.aclose()


@pytest.mark.skipif(sys.platform == "win32", reason="an open file cannot be deleted on Windows")
async def test_a_pool_file_deleted_while_open_keeps_serving_from_the_open_file(home: Path) -> None:
    """Deleting the pool's files under an open federation raises nothing: SQLite keeps the unlinked inode.

    What happens (POSIX): reads still see the pool, new writes are acknowledged, health stays ok
    and no event is raised, yet it all lives in a file nobody else can open: another agent
    opening the pool now gets a new, empty file, and what this session wrote there is gone at close.
    """
    federation = await build_federation("ana", home=home, pools=["team"], embedder=FakeEmbedder())
    pool_file = home / "pools" / "team" / "memory.db"
    await federation.write([Entry.create("zebra in team", now=0.0, default_agent="ana", scope="shared", pool="team")])
    for suffix in ("", "-wal", "-shm"):
        Path(f"{pool_file}{suffix}").unlink()
    later = Entry.create("zebra later", now=0.0, default_agent="ana", scope="shared", pool="team")
    assert [m.status for m in await federation.write([later])] == ["created"]
    hits = await federation.search("zebra", mode="keyword", filters={"pool": "team"})
    assert {h.content for h in hits} == {"zebra in team", "zebra later"}
    assert (await federation.health_check()).ok and list(federation.events) == []
    bob = await build_federation("bob", home=home, pools=["team"], embedder=FakeEmbedder())
    assert await bob.search("zebra", mode="keyword", filters={"pool": "team"}) == []
    await bob.aclose()
    await federation.aclose()


# -------------------------------------------------------------------- many processes, one pool
WRITER = """
import json, traceback
result = {"ids": [], "errors": [], "events": []}
try:
    from elastic_memory import Memory
    from elastic_memory.testing import FakeEmbedder

    def seen(event):
        result["events"].append([event.tier, event.op, event.reason, event.error])

    with Memory.for_agent(agent, home=home, pools=["team"], embedder=FakeEmbedder(), on_degraded=seen) as mem:
        barrier.wait(60)
        for n in range(count):
            try:
                mid = mem.remember(f"{agent} wrote team note {n}", scope="shared", pool="team")
                result["ids"].append([str(mid), mid.status])
            except Exception:
                result["errors"].append(traceback.format_exc())
except BaseException:
    result["errors"].append(traceback.format_exc())
with open(out, "w", encoding="utf-8") as f:
    json.dump(result, f)
"""
PROCESSES, WRITES = 8, 50


def _run_writers(home: Path, tmp_path: Path) -> list[dict[str, Any]]:
    """Run PROCESSES spawned writers at once (a barrier starts their writes together); their results.

    The tiers' write budgets are a minute: what is tested is that contention for the files loses
    and degrades nothing, never how fast a loaded machine writes (budgets have tests of their own).
    """
    home.mkdir(parents=True, exist_ok=True)
    patient = {"write_timeout_ms": 60_000}
    (home / "resilience.json").write_text(
        json.dumps({"private": patient, "shared": {"team": patient}}), encoding="utf-8"
    )
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(PROCESSES)
    procs = []
    for i in range(PROCESSES):
        scope = {
            "__name__": "__em_writer__",
            "agent": f"agent{i}",
            "home": str(home),
            "count": WRITES,
            "out": str(tmp_path / f"writer{i}.json"),
            "barrier": barrier,
        }
        proc = ctx.Process(target=exec, args=(WRITER, scope))
        proc.start()
        procs.append(proc)
    for proc in procs:
        proc.join(60)
    assert [p.exitcode for p in procs] == [0] * PROCESSES
    return [json.loads((tmp_path / f"writer{i}.json").read_text(encoding="utf-8")) for i in range(PROCESSES)]


def _in_pool(home: Path, ids: list[str]) -> set[str]:
    with Memory.open(home / "pools" / "team" / "memory.db", embedder=None) as pool:
        return {r.id for r in pool.get_many(ids)}


@pytest.mark.slow
def test_many_processes_writing_a_fresh_pool_lose_no_write(home: Path, tmp_path: Path) -> None:
    """8 processes open for_agent on a fresh home at once and write 50 shared memories each.

    Every write is created and present, and no error (no "database is locked") reaches any
    caller. A "degraded" write here means two processes raced on creating the files: check
    the events (a migration or the embedding pin applied twice) and _apply in storage/sqlite/opening.py
    and settle_pin in storage/sqlite/writes.py.
    """
    results = _run_writers(home, tmp_path)
    assert [e for r in results for e in r["errors"]] == []
    assert [e for r in results for e in r["events"]] == []
    acknowledged = [mid for r in results for mid, status in r["ids"] if status == "created"]
    assert len(set(acknowledged)) == PROCESSES * WRITES
    assert _in_pool(home, acknowledged) == set(acknowledged)


@pytest.mark.slow
def test_many_processes_writing_an_existing_pool_have_every_write_acknowledged(home: Path, tmp_path: Path) -> None:
    """With the pool and global files already created, 8 processes x 50 writes are all created and all present.

    A "degraded" write here means contention cost a write: check the events (a timeout means the
    write budget is too small for the lock wait; "locked" means busy_timeout did not apply).
    """
    with Memory.for_agent("setup", home=home, pools=["team"], embedder=FakeEmbedder()) as mem:
        mem.remember("The team pool exists.", scope="shared", pool="team")
        mem.remember("The global tier exists.", scope="global")
    results = _run_writers(home, tmp_path)
    assert [e for r in results for e in r["errors"]] == []
    assert [e for r in results for e in r["events"]] == []
    acknowledged = [mid for r in results for mid, status in r["ids"] if status == "created"]
    assert len(set(acknowledged)) == PROCESSES * WRITES
    assert _in_pool(home, acknowledged) == set(acknowledged)
