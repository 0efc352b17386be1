"""Load shedding for the bounded background queue (pure; the caller holds the queue's lock)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from ..errors import UsageError

__all__ = ["ALPHA", "DEFAULT_PRIORS", "UNKNOWN_PRIOR", "Admission"]

#: Weight of the newest service time in the moving average.
ALPHA = 0.2
#: Starting estimates (seconds) per job kind, before any job of that kind has run. An LLM job is
#: one call of at most 96 generated tokens on a small local model (a few seconds); embedding
#: one chunk is milliseconds; consolidation is SQL plus, in FULL, a few short LLM questions.
DEFAULT_PRIORS: Mapping[str, float] = MappingProxyType(
    {"extract": 3.0, "rolling_summary": 3.0, "session_summary": 3.0, "embed": 0.2, "consolidate": 5.0}
)
#: Starting estimate (seconds) of a kind missing from the priors.
UNKNOWN_PRIOR = 1.0


def _check_kind(kind: object) -> str:
    if not isinstance(kind, str) or not kind:
        msg = f"kind must be a non-empty job kind string such as 'extract', got {kind!r}"
        raise UsageError(msg)
    return kind


def _check_seconds(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        msg = f"{name} must be a finite non-negative number of seconds, got {value!r}"
        raise UsageError(msg)
    return float(value)


class Admission:
    """Decides whether a background job may join the queue, from moving averages of service times.

    >>> gate = Admission()
    >>> gate.admit("extract", queue=["extract"] * 3, critical=False, headroom_seconds=10.0, queue_max=8)
    False
    >>> gate.admit("session_summary", queue=["extract"] * 3, critical=True, headroom_seconds=10.0, queue_max=8)
    True
    >>> dict(gate.shed)
    {'extract': 1}
    """

    def __init__(self, *, priors: Mapping[str, float] | None = None, alpha: float = ALPHA) -> None:
        if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 < alpha <= 1:
            msg = f"alpha must be a number in (0, 1], got {alpha!r}"
            raise UsageError(msg)
        self._alpha = float(alpha)
        start = DEFAULT_PRIORS if priors is None else priors
        self._estimates = {_check_kind(k): _check_seconds(f"priors[{k!r}]", v) for k, v in start.items()}
        self._shed: dict[str, int] = {}

    @property
    def shed(self) -> Mapping[str, int]:
        """How many jobs of each kind were refused (read-only view)."""
        return MappingProxyType(self._shed)

    def estimate(self, kind: str) -> float:
        """The expected service time of one ``kind`` job, in seconds."""
        return self._estimates.get(_check_kind(kind), UNKNOWN_PRIOR)

    def record(self, kind: str, seconds: float) -> None:
        """Fold one measured service time into the moving average of ``kind``."""
        seconds = _check_seconds("seconds", seconds)
        self._estimates[kind] = (1 - self._alpha) * self.estimate(kind) + self._alpha * seconds

    def admit(
        self,
        kind: str,
        *,
        queue: Sequence[str],
        critical: bool,
        headroom_seconds: float,
        queue_max: int,
        depth_seconds: float | None = None,
    ) -> bool:
        """True when a ``kind`` job may be queued behind ``queue`` (the kinds already waiting).

        Critical jobs are always admitted, even beyond ``queue_max``. Others are shed when the
        queue holds ``queue_max`` jobs or when the queued work plus this job is estimated to take
        more than ``headroom_seconds``. The queued work is ``depth_seconds`` when given (for
        example including the job now running), else the sum of the estimates of ``queue``. A
        job is never shed for time when nothing waits ahead of it, so a slow kind still runs
        and its estimate can recover.
        """
        kind = _check_kind(kind)
        if not isinstance(critical, bool):
            msg = f"critical must be True or False, got {critical!r}"
            raise UsageError(msg)
        headroom = _check_seconds("headroom_seconds", headroom_seconds)
        if isinstance(queue_max, bool) or not isinstance(queue_max, int) or queue_max < 0:
            msg = f"queue_max must be a non-negative int, got {queue_max!r}"
            raise UsageError(msg)
        if isinstance(queue, str):
            msg = "queue must be a sequence of job kinds (e.g. a list), not one string"
            raise UsageError(msg)
        if critical:
            return True
        if depth_seconds is None:
            depth = sum(self.estimate(k) for k in queue)
        else:
            depth = _check_seconds("depth_seconds", depth_seconds)
        too_deep = len(queue) >= queue_max
        too_slow = depth > 0 and depth + self.estimate(kind) > headroom
        if too_deep or too_slow:
            self._shed[kind] = self._shed.get(kind, 0) + 1
            return False
        return True
