"""ResilientTier: a timeout, a circuit breaker and degraded events around one tier's store.

Reads are total: a timeout, an open breaker, corruption or a backend error give ``[]``
after a :class:`DegradedEvent`. Writes raise :class:`~elastic_memory.TierWriteError`
(carrying the tier, scope and reason) and let the federation decide what that costs.

>>> now = [0.0]
>>> breaker = CircuitBreaker(fail_threshold=2, reset_after=30.0, clock=lambda: now[0])
>>> breaker.failure(); breaker.failure(); breaker.state.value, breaker.allow()
('open', False)
>>> now[0] = 31.0; breaker.allow(), breaker.state.value, breaker.allow()
(True, 'half_open', False)
>>> breaker.success(); breaker.state.value
'closed'
"""

from __future__ import annotations

import asyncio
import enum
import logging
import math
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..errors import CorruptDatabaseError, TierWriteError, UsageError
from ..types import Hit, MemoryId, MemoryRecord, RecallMode, Scope
from .protocol import Entry, MemoryStore, TierHealth

__all__ = ["BreakerState", "CircuitBreaker", "DegradedEvent", "ResilientTier", "TierBudget"]

log = logging.getLogger("elastic_memory.federation")
T = TypeVar("T")
#: Why a tier call failed (:attr:`DegradedEvent.reason`, :attr:`TierWriteError.reason`).
TIMEOUT, BREAKER_OPEN, BACKEND_ERROR, CORRUPTION = "timeout", "breaker_open", "backend_error", "corruption"


class BreakerState(str, enum.Enum):
    """A circuit breaker's state."""

    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


class CircuitBreaker:
    """Opens after ``fail_threshold`` consecutive failures; after ``reset_after`` seconds one probe may pass.

    ``clock`` must be monotonic seconds. :meth:`force_open` quarantines for the session:
    no probe is ever let through again.
    """

    def __init__(
        self, *, fail_threshold: int = 3, reset_after: float = 30.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if isinstance(fail_threshold, bool) or not isinstance(fail_threshold, int) or fail_threshold < 1:
            msg = f"fail_threshold must be a positive integer, got {fail_threshold!r}"
            raise UsageError(msg)
        if isinstance(reset_after, bool) or not isinstance(reset_after, int | float) or not 0 <= reset_after < math.inf:
            msg = f"reset_after must be a non-negative number of seconds, got {reset_after!r}"
            raise UsageError(msg)
        self.fail_threshold = fail_threshold
        self.reset_after = float(reset_after)
        self._clock = clock
        self.state = BreakerState.CLOSED
        self.failures = 0
        self.quarantined = False
        self._opened_at = 0.0

    def allow(self) -> bool:
        """Whether a call may go through now (an OPEN breaker past its reset time lets one probe by)."""
        if self.state is BreakerState.CLOSED:
            return True
        if (
            self.state is BreakerState.OPEN
            and not self.quarantined
            and self._clock() - self._opened_at >= self.reset_after
        ):
            self.state = BreakerState.HALF_OPEN
            return True
        return False

    def success(self) -> None:
        """A call succeeded: close (unless quarantined)."""
        if not self.quarantined:
            self.state, self.failures = BreakerState.CLOSED, 0

    def failure(self) -> None:
        """A call failed: count it; open at the threshold, or at once when the probe failed."""
        self.failures += 1
        if self.state is BreakerState.HALF_OPEN or self.failures >= self.fail_threshold:
            self.state, self._opened_at = BreakerState.OPEN, self._clock()

    def release(self) -> None:
        """The half-open probe ended without a verdict (a caller error, a cancellation): let another probe by.

        The breaker goes back to OPEN keeping its opening time, so the next call probes at once.
        """
        if self.state is BreakerState.HALF_OPEN:
            self.state = BreakerState.OPEN

    def force_open(self) -> None:
        """Open for the rest of the session (corruption: retrying is pointless)."""
        self.quarantined = True
        self.state, self._opened_at = BreakerState.OPEN, self._clock()


def _ms(owner: str, name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
        msg = f"{owner}.{name} must be a positive number of milliseconds, got {value!r}"
        raise UsageError(msg)
    return float(value)


@dataclass(frozen=True, kw_only=True)
class TierBudget:
    """Timeouts (milliseconds) and breaker settings of one tier.

    ``semantic_timeout_ms`` applies to reads that embed the query (semantic and hybrid);
    a write may take ``write_timeout_ms`` plus ``write_per_entry_ms`` per entry (embedding
    a batch takes time).
    """

    read_timeout_ms: float = 1_000
    semantic_timeout_ms: float = 3_000
    write_timeout_ms: float = 2_000
    write_per_entry_ms: float = 50
    fail_threshold: int = 3
    reset_after_s: float = 30.0

    def __post_init__(self) -> None:
        for name in ("read_timeout_ms", "semantic_timeout_ms", "write_timeout_ms", "write_per_entry_ms"):
            _ms("TierBudget", name, getattr(self, name))
        threshold, reset = self.fail_threshold, self.reset_after_s
        if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 1:
            msg = f"TierBudget.fail_threshold must be a positive integer, got {threshold!r}"
            raise UsageError(msg)
        if isinstance(reset, bool) or not isinstance(reset, int | float) or not 0 <= reset < math.inf:
            msg = f"TierBudget.reset_after_s must be a non-negative number of seconds, got {reset!r}"
            raise UsageError(msg)


@dataclass(frozen=True)
class DegradedEvent:
    """A tier served less than asked: ``op`` is ``"read"``, ``"write"`` or ``"promote"``.

    ``reason`` is ``"timeout"``, ``"breaker_open"``, ``"backend_error"`` or ``"corruption"``
    (or, for a promotion, ``"access_denied"``: the global tier holds the id by another author);
    ``error`` the backend's message, if any.
    """

    tier: str
    scope: Scope
    op: str
    reason: str
    error: str | None = None
    at: float = field(default_factory=time.time)


class _Failed(Exception):
    def __init__(self, reason: str, error: BaseException | None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.error = error


class ResilientTier:
    """One tier's store behind a timeout and a circuit breaker; the same store protocol.

    ``on_degraded`` is called (never raising into the caller) for each degraded read; the
    federation reports write failures itself, since only it knows what they cost.
    """

    def __init__(
        self,
        store: MemoryStore,
        *,
        tier: str,
        scope: Scope,
        budget: TierBudget | None = None,
        on_degraded: Callable[[DegradedEvent], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.inner = store
        self.name = tier
        self.scope = Scope(scope)
        self.budget = budget or TierBudget()
        self.breaker = CircuitBreaker(
            fail_threshold=self.budget.fail_threshold, reset_after=self.budget.reset_after_s, clock=clock
        )
        self._on_degraded = on_degraded
        self.last_error: str | None = None
        self.degraded_reads = 0

    def __repr__(self) -> str:
        return f"ResilientTier({self.name!r}, breaker={self.breaker.state.value})"

    async def _call(self, make: Callable[[], Awaitable[T]], timeout_ms: float) -> T:
        if not self.breaker.allow():
            raise _Failed(BREAKER_OPEN, None)
        probe = self.breaker.state is BreakerState.HALF_OPEN
        try:
            result = await asyncio.wait_for(make(), timeout_ms / 1000)
        except asyncio.TimeoutError as e:
            self.breaker.failure()
            raise _Failed(TIMEOUT, e) from e
        except CorruptDatabaseError as e:
            self.breaker.force_open()
            raise _Failed(CORRUPTION, e) from e
        except UsageError:
            if probe:
                self.breaker.release()
            raise  # the caller's mistake: not the tier's failure
        except Exception as e:
            self.breaker.failure()
            raise _Failed(BACKEND_ERROR, e) from e
        except BaseException:
            if probe:
                self.breaker.release()  # cancelled: no verdict on the tier
            raise
        self.breaker.success()
        return result

    def _degraded(self, op: str, failed: _Failed) -> None:
        detail = None if failed.error is None else f"{type(failed.error).__name__}: {failed.error}"
        if failed.reason != BREAKER_OPEN or self.last_error is None:  # keep the error that opened it
            self.last_error = detail or failed.reason
        event = DegradedEvent(self.name, self.scope, op, failed.reason, detail)
        log.warning("memory tier %s degraded (%s %s): %s", self.name, op, failed.reason, detail or "")
        if self._on_degraded is not None:
            try:
                self._on_degraded(event)
            except Exception:
                log.exception("on_degraded observer failed")

    # ------------------------------------------------------------------ reads
    async def search(
        self, query: str = "", *, k: int = 10, mode: str = "hybrid", filters: Mapping[str, Any] | None = None
    ) -> list[Hit]:
        """The tier's hits within budget; ``[]`` (and a degraded event) on any failure."""
        # no enum conversion here: a bad mode is the store's to refuse (with its UsageError)
        semantic = (
            getattr(mode, "value", mode) != RecallMode.KEYWORD.value and isinstance(query, str) and bool(query.strip())
        )
        timeout = self.budget.semantic_timeout_ms if semantic else self.budget.read_timeout_ms
        try:
            return await self._call(lambda: self.inner.search(query, k=k, mode=mode, filters=filters), timeout)
        except _Failed as failed:
            self.degraded_reads += 1
            self._degraded("read", failed)
            return []

    async def get(self, ids: Sequence[str]) -> list[MemoryRecord]:
        """The records among ``ids``; ``[]`` (and a degraded event) on any failure."""
        try:
            return await self._call(lambda: self.inner.get(ids), self.budget.read_timeout_ms)
        except _Failed as failed:
            self.degraded_reads += 1
            self._degraded("read", failed)
            return []

    # ----------------------------------------------------------------- writes
    async def _write_call(self, make: Callable[[], Awaitable[T]], timeout_ms: float, what: str) -> T:
        try:
            return await self._call(make, timeout_ms)
        except _Failed as failed:
            detail = "" if failed.error is None else f": {type(failed.error).__name__}: {failed.error}"
            if failed.reason != BREAKER_OPEN or self.last_error is None:
                self.last_error = f"{failed.reason}{detail}"
            msg = f"the {self.name} tier failed to {what} ({failed.reason}{detail})"
            raise TierWriteError(msg, tier=self.name, scope=self.scope.value, reason=failed.reason) from failed.error

    async def write(self, entries: Sequence[Entry]) -> list[MemoryId]:
        """Write within budget.

        Raises:
            TierWriteError: Timeout, open breaker, corruption or a backend error.
        """
        timeout = self.budget.write_timeout_ms + self.budget.write_per_entry_ms * len(entries)
        return await self._write_call(lambda: self.inner.write(entries), timeout, "write")

    async def delete(self, ids: Sequence[str], *, hard: bool = False) -> int:
        """Delete within budget.

        Raises:
            TierWriteError: Timeout, open breaker, corruption or a backend error.
        """
        timeout = self.budget.write_timeout_ms + self.budget.write_per_entry_ms * len(ids)
        return await self._write_call(lambda: self.inner.delete(ids, hard=hard), timeout, "delete")

    async def call_write(self, make: Callable[[], Awaitable[T]], what: str, size: int = 1) -> T:
        """Run another mutation of the inner store (update, restore) under the write budget."""
        timeout = self.budget.write_timeout_ms + self.budget.write_per_entry_ms * size
        return await self._write_call(make, timeout, what)

    # ------------------------------------------------------------- lifecycle
    async def health_check(self) -> TierHealth:
        """The store's health plus the breaker's state; never raises."""
        detail: dict[str, Any] = {
            "breaker": self.breaker.state.value,
            "quarantined": self.breaker.quarantined,
            "consecutive_failures": self.breaker.failures,
            "degraded_reads": self.degraded_reads,
            "last_error": self.last_error,
        }
        try:
            inner = await asyncio.wait_for(self.inner.health_check(), self.budget.read_timeout_ms / 1000)
            if not isinstance(inner, TierHealth):
                msg = f"the store answered {type(inner).__name__}, not a TierHealth"
                raise TypeError(msg)
            inner_detail = dict(inner.detail)
        except Exception as e:  # noqa: BLE001 - health never raises
            return TierHealth(self.name, False, f"health check failed: {type(e).__name__}: {e}", detail)
        ok = inner.ok and not self.breaker.quarantined and self.breaker.state is not BreakerState.OPEN
        reason = inner.reason
        if inner.ok and not ok:
            reason = (
                "quarantined for this session (the store is corrupt)"
                if self.breaker.quarantined
                else (f"circuit breaker open after {self.breaker.failures} failures: {self.last_error}")
            )
        return TierHealth(self.name, ok, reason, {**inner_detail, **detail})

    async def aclose(self) -> None:
        """Close the wrapped store."""
        await self.inner.aclose()
