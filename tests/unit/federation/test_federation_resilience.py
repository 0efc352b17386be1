"""ResilientTier and CircuitBreaker: timeouts, breaker states, quarantine, degraded events (fake stores)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from elastic_memory.errors import CorruptDatabaseError, StorageError, TierWriteError, UsageError
from elastic_memory.federation import (
    BreakerState,
    CircuitBreaker,
    DegradedEvent,
    Entry,
    MemoryStore,
    ResilientTier,
    TierBudget,
    TierHealth,
)
from elastic_memory.types import Hit, MemoryId, MemoryRecord, MemoryType, Scope, Source

FAST = TierBudget(read_timeout_ms=50, semantic_timeout_ms=50, write_timeout_ms=50, write_per_entry_ms=1)


class Clock:
    """A settable monotonic clock."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def make_hit(id: str = "h1") -> Hit:
    return Hit(
        id=id,
        content="c",
        score=1.0,
        type=MemoryType.SEMANTIC,
        metadata={},
        tags=(),
        agent_id="ana",
        scope=Scope.SHARED,
        pool="team",
        session_id=None,
        importance=0.5,
        confidence=1.0,
        pinned=False,
        source=Source.AGENT,
        created_at=0.0,
    )


class FakeStore:
    """A store of the protocol whose delay and failure a test sets; it records every call."""

    name = "fake"

    def __init__(self, *, hits: list[Hit] | None = None) -> None:
        self.hits = hits if hits is not None else [make_hit()]
        self.delay = 0.0
        self.error: BaseException | None = None
        self.calls: list[tuple[str, Any]] = []
        self.health: Any = TierHealth("fake", True, None, {"path": "/x.db"})
        self.health_error: BaseException | None = None
        self.health_delay = 0.0
        self.closed = False

    async def _act(self, op: str, arg: Any) -> None:
        self.calls.append((op, arg))
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.error is not None:
            raise self.error

    async def search(
        self, query: str = "", *, k: int = 10, mode: str = "hybrid", filters: Mapping[str, Any] | None = None
    ) -> list[Hit]:
        await self._act("search", (query, k, mode, filters))
        return list(self.hits)

    async def write(self, entries: Sequence[Entry]) -> list[MemoryId]:
        await self._act("write", list(entries))
        return [MemoryId(e.id) for e in entries]

    async def get(self, ids: Sequence[str]) -> list[MemoryRecord]:
        await self._act("get", list(ids))
        return []

    async def delete(self, ids: Sequence[str], *, hard: bool = False) -> int:
        await self._act("delete", (list(ids), hard))
        return len(ids)

    async def health_check(self) -> TierHealth:
        if self.health_delay:
            await asyncio.sleep(self.health_delay)
        if self.health_error is not None:
            raise self.health_error
        return self.health  # type: ignore[no-any-return]

    async def aclose(self) -> None:
        self.closed = True


def searches(store: FakeStore) -> int:
    return sum(op == "search" for op, _ in store.calls)


def entries(n: int) -> list[Entry]:
    return [Entry.create(f"memory {i}", scope="shared", pool="team", now=0.0, default_agent="ana") for i in range(n)]


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def events() -> list[DegradedEvent]:
    return []


@pytest.fixture
def store() -> FakeStore:
    return FakeStore()


def wrap(
    store: FakeStore,
    clock: Clock,
    events: list[DegradedEvent] | None = None,
    budget: TierBudget = FAST,
    **changes: Any,
) -> ResilientTier:
    if changes:
        budget = TierBudget(**{**budget.__dict__, **changes})
    return ResilientTier(
        store,
        tier="shared:team",
        scope=Scope.SHARED,
        budget=budget,
        on_degraded=None if events is None else events.append,
        clock=clock,
    )


# ------------------------------------------------------------------ CircuitBreaker


def test_fake_store_implements_the_protocol(store: FakeStore) -> None:
    """The fake is a MemoryStore, and so is the wrapper."""
    assert isinstance(store, MemoryStore)
    assert isinstance(ResilientTier(store, tier="private", scope="private"), MemoryStore)


def test_breaker_starts_closed(clock: Clock) -> None:
    """A new breaker is closed and lets calls through."""
    breaker = CircuitBreaker(clock=clock)
    assert breaker.state is BreakerState.CLOSED
    assert breaker.allow()


def test_breaker_opens_after_threshold_consecutive_failures(clock: Clock) -> None:
    """N-1 failures keep it closed; the Nth opens it."""
    breaker = CircuitBreaker(fail_threshold=3, clock=clock)
    breaker.failure()
    breaker.failure()
    assert breaker.state is BreakerState.CLOSED
    breaker.failure()
    assert breaker.state is BreakerState.OPEN
    assert not breaker.allow()


def test_breaker_success_resets_the_failure_count(clock: Clock) -> None:
    """Only consecutive failures count."""
    breaker = CircuitBreaker(fail_threshold=2, clock=clock)
    breaker.failure()
    breaker.success()
    breaker.failure()
    assert breaker.state is BreakerState.CLOSED


def test_open_breaker_refuses_until_reset_time(clock: Clock) -> None:
    """Before reset_after seconds nothing passes."""
    breaker = CircuitBreaker(fail_threshold=1, reset_after=30, clock=clock)
    breaker.failure()
    clock.now += 29.9
    assert not breaker.allow()
    assert breaker.state is BreakerState.OPEN


def test_breaker_lets_exactly_one_probe_after_reset_time(clock: Clock) -> None:
    """After reset_after one call passes (half-open); a second is refused while it runs."""
    breaker = CircuitBreaker(fail_threshold=1, reset_after=30, clock=clock)
    breaker.failure()
    clock.now += 30
    assert breaker.allow()
    assert breaker.state is BreakerState.HALF_OPEN
    assert not breaker.allow()


def test_successful_probe_closes_the_breaker(clock: Clock) -> None:
    """A probe that succeeds closes the breaker and clears the count."""
    breaker = CircuitBreaker(fail_threshold=1, reset_after=30, clock=clock)
    breaker.failure()
    clock.now += 30
    breaker.allow()
    breaker.success()
    assert (breaker.state, breaker.failures) == (BreakerState.CLOSED, 0)
    assert breaker.allow()


def test_failed_probe_reopens_at_once_and_restarts_the_timer(clock: Clock) -> None:
    """A failed probe reopens, and the next probe waits a full reset_after again."""
    breaker = CircuitBreaker(fail_threshold=5, reset_after=30, clock=clock)
    for _ in range(5):
        breaker.failure()
    clock.now += 30
    assert breaker.allow()
    breaker.failure()
    assert breaker.state is BreakerState.OPEN
    clock.now += 29
    assert not breaker.allow()
    clock.now += 1
    assert breaker.allow()


def test_forced_open_breaker_never_probes_again(clock: Clock) -> None:
    """force_open quarantines: no probe however long, and a late success does not close it."""
    breaker = CircuitBreaker(reset_after=1, clock=clock)
    breaker.force_open()
    clock.now += 1e9
    assert not breaker.allow()
    breaker.success()
    assert breaker.state is BreakerState.OPEN
    assert breaker.quarantined


def test_release_frees_the_half_open_probe(clock: Clock) -> None:
    """A probe released without a verdict lets the next call probe at once."""
    breaker = CircuitBreaker(fail_threshold=1, reset_after=30, clock=clock)
    breaker.failure()
    clock.now += 30
    assert breaker.allow()
    breaker.release()
    assert breaker.state is BreakerState.OPEN
    assert breaker.allow()


def test_release_of_a_closed_breaker_does_nothing(clock: Clock) -> None:
    """release() only concerns a half-open breaker."""
    breaker = CircuitBreaker(clock=clock)
    breaker.release()
    assert breaker.state is BreakerState.CLOSED


@pytest.mark.parametrize(("field", "value"), [("fail_threshold", 0), ("fail_threshold", True), ("reset_after", -1)])
def test_breaker_settings_are_validated(field: str, value: Any) -> None:
    """A zero threshold, a bool or a negative reset time is a usage error naming the setting."""
    with pytest.raises(UsageError, match=field):
        CircuitBreaker(**{field: value})


# ------------------------------------------------------------------ TierBudget


@pytest.mark.parametrize("field", ["read_timeout_ms", "semantic_timeout_ms", "write_timeout_ms", "write_per_entry_ms"])
@pytest.mark.parametrize("value", [0, -5, float("inf"), True, "100"])
def test_budget_timeouts_must_be_positive_numbers(field: str, value: Any) -> None:
    """Zero, negative, infinite, bool or text timeouts are refused, naming the field."""
    with pytest.raises(UsageError, match=f"TierBudget.{field}"):
        TierBudget(**{field: value})


@pytest.mark.parametrize(("field", "value"), [("fail_threshold", 0), ("fail_threshold", 2.5), ("reset_after_s", -1)])
def test_budget_breaker_settings_name_the_budget_field(field: str, value: Any) -> None:
    """A bad breaker setting in a budget is refused with the budget's own field name."""
    with pytest.raises(UsageError, match=f"TierBudget.{field}"):
        TierBudget(**{field: value})


# ------------------------------------------------------------------ reads


async def test_read_passes_through(store: FakeStore, clock: Clock, events: list[DegradedEvent]) -> None:
    """A healthy read returns the store's hits and passes every argument on."""
    tier = wrap(store, clock, events)
    hits = await tier.search("pg", k=3, mode="keyword", filters={"agent_id": "ana"})
    assert hits == store.hits
    assert store.calls == [("search", ("pg", 3, "keyword", {"agent_id": "ana"}))]
    assert events == []


async def test_keyword_read_uses_the_read_timeout(store: FakeStore, clock: Clock, events: list[DegradedEvent]) -> None:
    """A keyword read gets read_timeout_ms, even when the semantic budget is generous."""
    tier = wrap(store, clock, events, read_timeout_ms=10, semantic_timeout_ms=5_000)
    store.delay = 0.2
    assert await tier.search("pg", mode="keyword") == []
    assert [e.reason for e in events] == ["timeout"]


async def test_semantic_read_uses_the_semantic_timeout(
    store: FakeStore, clock: Clock, events: list[DegradedEvent]
) -> None:
    """Hybrid and semantic reads with text get semantic_timeout_ms."""
    tier = wrap(store, clock, events, read_timeout_ms=10, semantic_timeout_ms=5_000)
    store.delay = 0.05
    assert await tier.search("pg", mode="hybrid") == store.hits
    assert await tier.search("pg", mode="semantic") == store.hits
    assert events == []


async def test_listing_read_uses_the_read_timeout(store: FakeStore, clock: Clock, events: list[DegradedEvent]) -> None:
    """A read without query text embeds nothing, so it gets read_timeout_ms even in hybrid mode."""
    tier = wrap(store, clock, events, read_timeout_ms=10, semantic_timeout_ms=5_000)
    store.delay = 0.2
    assert await tier.search("  ", mode="hybrid") == []
    assert [e.reason for e in events] == ["timeout"]


async def test_read_leaves_mode_validation_to_the_store(store: FakeStore, clock: Clock) -> None:
    """The wrapper does not parse the mode itself: the store's own UsageError (or answer) stands."""
    tier = wrap(store, clock)
    assert await tier.search("pg", mode="fuzzy") == store.hits
    store.error = UsageError("mode must be one of ...")
    with pytest.raises(UsageError, match="mode must be"):
        await tier.search("pg", mode="fuzzy")


async def test_read_timeout_degrades_to_empty(store: FakeStore, clock: Clock, events: list[DegradedEvent]) -> None:
    """A timed-out read returns [] after a degraded event describing it."""
    tier = wrap(store, clock, events)
    store.delay = 1.0
    assert await tier.search("pg") == []
    [event] = events
    assert (event.tier, event.scope, event.op, event.reason) == ("shared:team", Scope.SHARED, "read", "timeout")
    assert tier.degraded_reads == 1


async def test_read_backend_error_degrades_to_empty(
    store: FakeStore, clock: Clock, events: list[DegradedEvent]
) -> None:
    """A backend error on read returns [] and the event carries the error's message."""
    tier = wrap(store, clock, events)
    store.error = StorageError("disk I/O error")
    assert await tier.search("pg") == []
    [event] = events
    assert event.reason == "backend_error"
    assert event.error == "StorageError: disk I/O error"
    assert tier.last_error == "StorageError: disk I/O error"


async def test_get_is_total_too(store: FakeStore, clock: Clock, events: list[DegradedEvent]) -> None:
    """get() degrades to [] with a read event like search()."""
    tier = wrap(store, clock, events)
    store.error = OSError("gone")
    assert await tier.get(["a"]) == []
    assert [(e.op, e.reason) for e in events] == [("read", "backend_error")]


async def test_failing_observer_does_not_break_a_read(store: FakeStore, clock: Clock) -> None:
    """An on_degraded callback that raises is logged, and the read still returns []."""

    def observer(event: DegradedEvent) -> None:
        raise RuntimeError("observer bug")

    tier = ResilientTier(store, tier="global", scope="global", budget=FAST, on_degraded=observer, clock=clock)
    store.error = StorageError("boom")
    assert await tier.search("pg") == []


async def test_read_without_observer_still_degrades(store: FakeStore, clock: Clock) -> None:
    """No on_degraded: the read is still total."""
    tier = wrap(store, clock)
    store.error = StorageError("boom")
    assert await tier.search("pg") == []


async def test_read_failures_open_the_breaker(store: FakeStore, clock: Clock, events: list[DegradedEvent]) -> None:
    """After fail_threshold failed reads the store is no longer called: breaker_open events instead."""
    tier = wrap(store, clock, events, fail_threshold=2)
    store.error = StorageError("boom")
    await tier.search("a")
    await tier.search("b")
    assert tier.breaker.state is BreakerState.OPEN
    assert await tier.search("c") == []
    assert searches(store) == 2
    assert [e.reason for e in events] == ["backend_error", "backend_error", "breaker_open"]
    assert events[-1].error is None


async def test_successful_probe_read_closes_the_breaker(
    store: FakeStore, clock: Clock, events: list[DegradedEvent]
) -> None:
    """After reset_after_s one probe read goes through; its success closes the breaker."""
    tier = wrap(store, clock, events, fail_threshold=1, reset_after_s=30)
    store.error = StorageError("boom")
    await tier.search("a")
    store.error = None
    clock.now += 30
    assert await tier.search("b") == store.hits
    assert tier.breaker.state is BreakerState.CLOSED


async def test_failed_probe_read_reopens_the_breaker(
    store: FakeStore, clock: Clock, events: list[DegradedEvent]
) -> None:
    """A failed probe reopens at once: the next read does not reach the store."""
    tier = wrap(store, clock, events, fail_threshold=3, reset_after_s=30)
    store.error = StorageError("boom")
    for q in "abc":
        await tier.search(q)
    clock.now += 30
    await tier.search("probe")
    assert tier.breaker.state is BreakerState.OPEN
    await tier.search("after")
    assert searches(store) == 4


async def test_only_one_concurrent_probe_passes(store: FakeStore, clock: Clock, events: list[DegradedEvent]) -> None:
    """While the half-open probe runs, concurrent reads are refused without reaching the store."""
    tier = wrap(store, clock, events, fail_threshold=1, reset_after_s=30)
    store.error = StorageError("boom")
    await tier.search("a")
    store.error, store.delay = None, 0.02
    clock.now += 30
    probe, other = await asyncio.gather(tier.search("probe"), tier.search("other"))
    assert probe == store.hits
    assert other == []
    assert events[-1].reason == "breaker_open"
    assert searches(store) == 2


async def test_corruption_quarantines_the_tier(store: FakeStore, clock: Clock, events: list[DegradedEvent]) -> None:
    """CorruptDatabaseError opens the breaker for the session: no probe ever reaches the store."""
    tier = wrap(store, clock, events, fail_threshold=5, reset_after_s=1)
    store.error = CorruptDatabaseError("file is not a database")
    assert await tier.search("a") == []
    assert events[0].reason == "corruption"
    assert tier.breaker.quarantined
    store.error = None
    clock.now += 1e6
    assert await tier.search("b") == []
    assert searches(store) == 1
    assert events[-1].reason == "breaker_open"


async def test_usage_error_on_read_propagates_and_does_not_count(
    store: FakeStore, clock: Clock, events: list[DegradedEvent]
) -> None:
    """A UsageError is the caller's mistake: raised unchanged, no event, breaker untouched."""
    tier = wrap(store, clock, events, fail_threshold=1)
    error = UsageError("bad filter")
    store.error = error
    with pytest.raises(UsageError) as info:
        await tier.search("a")
    assert info.value is error
    assert (tier.breaker.state, tier.breaker.failures) == (BreakerState.CLOSED, 0)
    assert events == []


async def test_usage_error_during_probe_does_not_wedge_the_breaker(store: FakeStore, clock: Clock) -> None:
    """A probe ending in a UsageError frees the probe: a later call can probe and close the breaker."""
    tier = wrap(store, clock, fail_threshold=1, reset_after_s=30)
    store.error = StorageError("boom")
    await tier.search("a")
    clock.now += 30
    store.error = UsageError("bad filter")
    with pytest.raises(UsageError):
        await tier.search("probe")
    store.error = None
    assert await tier.search("next") == store.hits
    assert tier.breaker.state is BreakerState.CLOSED


async def test_cancelled_probe_does_not_wedge_the_breaker(store: FakeStore, clock: Clock) -> None:
    """A probe cancelled by its caller frees the probe for the next call."""
    tier = wrap(store, clock, fail_threshold=1, reset_after_s=30)
    store.error = StorageError("boom")
    await tier.search("a")
    clock.now += 30
    store.error, store.delay = None, 10.0
    task = asyncio.ensure_future(tier.search("probe"))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    store.delay = 0.0
    assert await tier.search("next") == store.hits
    assert tier.breaker.state is BreakerState.CLOSED


# ------------------------------------------------------------------ writes


async def test_write_passes_through(store: FakeStore, clock: Clock, events: list[DegradedEvent]) -> None:
    """A healthy write returns the store's ids."""
    tier = wrap(store, clock, events)
    batch = entries(2)
    assert await tier.write(batch) == [e.id for e in batch]


async def test_write_timeout_raises_tier_write_error(store: FakeStore, clock: Clock) -> None:
    """A timed-out write raises TierWriteError(reason='timeout') with the timeout as cause."""
    tier = wrap(store, clock)
    store.delay = 1.0
    with pytest.raises(TierWriteError) as info:
        await tier.write(entries(1))
    err = info.value
    assert (err.tier, err.scope, err.reason) == ("shared:team", "shared", "timeout")
    assert isinstance(err.__cause__, asyncio.TimeoutError)  # the builtin TimeoutError from 3.11


async def test_write_backend_error_is_the_cause(store: FakeStore, clock: Clock) -> None:
    """A backend error raises TierWriteError(reason='backend_error') with that very error as cause."""
    tier = wrap(store, clock)
    error = StorageError("database is locked")
    store.error = error
    with pytest.raises(TierWriteError, match="database is locked") as info:
        await tier.write(entries(1))
    assert info.value.reason == "backend_error"
    assert info.value.__cause__ is error


async def test_write_corruption_reason(store: FakeStore, clock: Clock) -> None:
    """A corrupt store raises reason='corruption' and quarantines the tier."""
    tier = wrap(store, clock)
    error = CorruptDatabaseError("file is not a database")
    store.error = error
    with pytest.raises(TierWriteError) as info:
        await tier.write(entries(1))
    assert (info.value.reason, info.value.__cause__) == ("corruption", error)
    assert tier.breaker.quarantined


async def test_write_to_open_breaker_is_refused_without_calling_the_store(store: FakeStore, clock: Clock) -> None:
    """With the breaker open a write raises reason='breaker_open' and never reaches the store."""
    tier = wrap(store, clock, fail_threshold=1)
    store.error = StorageError("boom")
    with pytest.raises(TierWriteError):
        await tier.write(entries(1))
    store.calls.clear()
    with pytest.raises(TierWriteError) as info:
        await tier.write(entries(1))
    assert info.value.reason == "breaker_open"
    assert info.value.__cause__ is None
    assert store.calls == []


async def test_write_failures_do_not_emit_degraded_events(
    store: FakeStore, clock: Clock, events: list[DegradedEvent]
) -> None:
    """Write failures are the federation's to report: on_degraded is for reads."""
    tier = wrap(store, clock, events)
    store.error = StorageError("boom")
    with pytest.raises(TierWriteError):
        await tier.write(entries(1))
    assert events == []
    assert tier.last_error is not None


async def test_write_failures_trip_the_breaker_for_reads(
    store: FakeStore, clock: Clock, events: list[DegradedEvent]
) -> None:
    """One breaker guards reads and writes alike."""
    tier = wrap(store, clock, events, fail_threshold=2)
    store.error = StorageError("boom")
    for _ in range(2):
        with pytest.raises(TierWriteError):
            await tier.write(entries(1))
    store.error = None
    assert await tier.search("pg") == []
    assert [e.reason for e in events] == ["breaker_open"]


async def test_usage_error_on_write_propagates_unchanged(store: FakeStore, clock: Clock) -> None:
    """A read-only store's UsageError is raised as is, not wrapped, and not counted."""
    tier = wrap(store, clock, fail_threshold=1)
    error = UsageError("this store is read-only")
    store.error = error
    with pytest.raises(UsageError) as info:
        await tier.write(entries(1))
    assert info.value is error
    assert tier.breaker.state is BreakerState.CLOSED


async def test_write_budget_grows_with_the_batch(store: FakeStore, clock: Clock) -> None:
    """write_timeout_ms + write_per_entry_ms per entry: a big batch may take longer than an empty one."""
    tier = wrap(store, clock, write_timeout_ms=10, write_per_entry_ms=100)
    store.delay = 0.1
    assert len(await tier.write(entries(3))) == 3
    with pytest.raises(TierWriteError) as info:
        await tier.delete([])
    assert info.value.reason == "timeout"


async def test_delete_passes_hard_through(store: FakeStore, clock: Clock) -> None:
    """delete() forwards the ids and the hard flag."""
    tier = wrap(store, clock)
    assert await tier.delete(["a", "b"], hard=True) == 2
    assert store.calls == [("delete", (["a", "b"], True))]


async def test_call_write_runs_under_the_write_budget(store: FakeStore, clock: Clock) -> None:
    """call_write wraps any mutation: a slow one times out as a TierWriteError naming the operation."""
    tier = wrap(store, clock)

    async def slow() -> int:
        await asyncio.sleep(1.0)
        return 1

    async def quick() -> int:
        return 7

    assert await tier.call_write(quick, "update") == 7
    with pytest.raises(TierWriteError, match="failed to update") as info:
        await tier.call_write(slow, "update")
    assert info.value.reason == "timeout"


# ------------------------------------------------------------------ health


async def test_health_merges_store_and_breaker(store: FakeStore, clock: Clock) -> None:
    """A healthy store with a closed breaker is ok; detail holds both the store's and the breaker's facts."""
    health = await wrap(store, clock).health_check()
    assert health.ok
    assert health.name == "shared:team"
    assert health.detail["path"] == "/x.db"
    assert health.detail["breaker"] == "closed"
    assert health.detail["quarantined"] is False


async def test_health_reports_an_open_breaker(store: FakeStore, clock: Clock) -> None:
    """An open breaker makes the tier unhealthy, with the last error in the reason."""
    tier = wrap(store, clock, fail_threshold=1)
    store.error = StorageError("boom")
    await tier.search("pg")
    health = await tier.health_check()
    assert not health.ok
    assert health.detail["breaker"] == "open"
    assert "breaker open" in (health.reason or "")
    assert "boom" in (health.reason or "")


async def test_health_reports_quarantine(store: FakeStore, clock: Clock) -> None:
    """A quarantined tier is unhealthy and says the store is corrupt."""
    tier = wrap(store, clock)
    store.error = CorruptDatabaseError("not a database")
    await tier.search("pg")
    health = await tier.health_check()
    assert not health.ok
    assert health.detail["quarantined"] is True
    assert "corrupt" in (health.reason or "")


async def test_health_keeps_the_stores_own_reason(store: FakeStore, clock: Clock) -> None:
    """An unhealthy store's reason is passed through."""
    store.health = TierHealth("fake", False, "read-only mount")
    health = await wrap(store, clock).health_check()
    assert (health.ok, health.reason) == (False, "read-only mount")


async def test_health_never_raises_when_the_store_raises(store: FakeStore, clock: Clock) -> None:
    """A raising health_check becomes an unhealthy answer that still carries the breaker state."""
    store.health_error = RuntimeError("boom")
    health = await wrap(store, clock).health_check()
    assert not health.ok
    assert "RuntimeError: boom" in (health.reason or "")
    assert health.detail["breaker"] == "closed"


async def test_health_never_hangs(store: FakeStore, clock: Clock) -> None:
    """A hanging health_check is cut off at the read timeout."""
    store.health_delay = 10.0
    health = await asyncio.wait_for(wrap(store, clock, read_timeout_ms=10).health_check(), 2.0)
    assert not health.ok


async def test_health_never_raises_on_a_malformed_answer(store: FakeStore, clock: Clock) -> None:
    """A store that answers health_check with something that is not a TierHealth is reported unhealthy."""
    store.health = None
    health = await wrap(store, clock).health_check()
    assert not health.ok
    assert health.detail["breaker"] == "closed"


async def test_aclose_closes_the_inner_store(store: FakeStore, clock: Clock) -> None:
    """aclose() is forwarded."""
    await wrap(store, clock).aclose()
    assert store.closed


def test_repr_shows_tier_and_breaker(store: FakeStore, clock: Clock) -> None:
    """The repr names the tier and its breaker state."""
    assert repr(wrap(store, clock)) == "ResilientTier('shared:team', breaker=closed)"
