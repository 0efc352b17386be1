"""The governor's one impure part: the RAM probe and the :class:`Governor` that re-checks it."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import UsageError
from .policy import MemoryProfile, Tier, choose_tier, profile_for

__all__ = ["FALLBACK_RAM_BYTES", "HYSTERESIS", "Governor", "RamProbe", "available_ram_bytes"]

#: Free RAM assumed when it cannot be read: 512 MiB, which the tier table places in LITE.
FALLBACK_RAM_BYTES = 512 << 20
#: A tier is raised only once free RAM exceeds its threshold by this factor (10 %).
HYSTERESIS = 1.1


@dataclass(frozen=True, kw_only=True)
class RamProbe:
    """One reading of free RAM; ``ok`` is False when it is :data:`FALLBACK_RAM_BYTES` instead."""

    bytes: int
    """Available RAM in bytes (psutil's ``available``: free without swapping)."""
    ok: bool
    """True when read from the system, False when the fallback was used."""


def available_ram_bytes() -> RamProbe:
    """Free RAM now, via psutil; never raises.

    >>> probe = available_ram_bytes()
    >>> probe.bytes > 0
    True
    """
    try:
        import psutil  # noqa: PLC0415 - imported on first probe only

        value = int(psutil.virtual_memory().available)
    except Exception:  # noqa: BLE001 - any failure to read means "assume a small machine"
        return RamProbe(bytes=FALLBACK_RAM_BYTES, ok=False)
    if value < 0:
        return RamProbe(bytes=FALLBACK_RAM_BYTES, ok=False)
    return RamProbe(bytes=value, ok=True)


def _read(probe: Callable[[], int] | None) -> RamProbe:
    if probe is None:
        return available_ram_bytes()
    try:
        value = probe()
    except Exception:  # noqa: BLE001 - a failing host probe must not break a turn
        return RamProbe(bytes=FALLBACK_RAM_BYTES, ok=False)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return RamProbe(bytes=FALLBACK_RAM_BYTES, ok=False)
    return RamProbe(bytes=value, ok=True)


def _is_seconds(value: object) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value) and value >= 0


class Governor:
    """Keeps the current :class:`MemoryProfile` and re-checks free RAM at most every ``min_interval`` s.

    Tiers move down at once when RAM falls below a threshold and up only when free RAM
    exceeds the higher threshold by 10 %, so a machine at a boundary does not flap. A failed
    probe keeps the current profile (``last_probe_ok`` turns False); at construction it
    assumes :data:`FALLBACK_RAM_BYTES`. A ``tier`` passed by the host pins the tier: ``tick``
    then never probes or changes it.

    >>> gov = Governor(context_tokens=8_192, has_llm=True, probe=lambda: 8 << 30)
    >>> gov.tick().tier.value
    'full'
    >>> Governor(context_tokens=8_192, has_llm=True, tier="lite").profile.tier.value
    'lite'
    """

    def __init__(
        self,
        *,
        context_tokens: int,
        has_llm: bool,
        tier: Tier | str | None = None,
        budget_tokens: int | None = None,
        probe: Callable[[], int] | None = None,
        min_interval: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not _is_seconds(min_interval):
            msg = f"min_interval must be a non-negative number of seconds, got {min_interval!r}"
            raise UsageError(msg)
        if probe is not None and not callable(probe):
            msg = f"probe must be a callable returning free RAM in bytes, or None for psutil, got {probe!r}"
            raise UsageError(msg)
        self._context = context_tokens
        self._has_llm = has_llm
        self._budget = budget_tokens
        self._probe = probe
        self._interval = float(min_interval)
        self._clock = clock
        self._pinned = tier is not None
        self._changes = 0
        self._ok = True
        if tier is not None:
            chosen = choose_tier(available_ram_bytes=0, context_tokens=context_tokens, has_llm=has_llm, forced=tier)
        else:
            reading = _read(probe)
            self._ok = reading.ok
            chosen = self._choose(reading.bytes)
        self._profile = profile_for(chosen, context_tokens=context_tokens, has_llm=has_llm, budget_tokens=budget_tokens)
        self._last = clock()

    @property
    def profile(self) -> MemoryProfile:
        """The current profile."""
        return self._profile

    @property
    def pinned(self) -> bool:
        """True when the host forced the tier."""
        return self._pinned

    @property
    def changes(self) -> int:
        """How many times ``tick`` changed the tier."""
        return self._changes

    @property
    def last_probe_ok(self) -> bool:
        """False when the latest probe failed (the profile was kept, or the fallback used at start)."""
        return self._ok

    def tick(self) -> MemoryProfile:
        """The current profile, re-probing RAM first if ``min_interval`` seconds have passed."""
        if self._pinned:
            return self._profile
        now = self._clock()
        if now - self._last < self._interval:
            return self._profile
        self._last = now
        reading = _read(self._probe)
        self._ok = reading.ok
        if not reading.ok:
            return self._profile
        current = self._profile.tier
        target = self._choose(reading.bytes)
        if target > current:
            target = max(current, self._choose(int(reading.bytes / HYSTERESIS)))
        if target != current:
            self._profile = profile_for(
                target, context_tokens=self._context, has_llm=self._has_llm, budget_tokens=self._budget
            )
            self._changes += 1
        return self._profile

    def _choose(self, ram: int) -> Tier:
        return choose_tier(available_ram_bytes=ram, context_tokens=self._context, has_llm=self._has_llm)
