"""The RAM probe and the Governor's re-checks (scripted probe, fake clock)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest

from elastic_memory.errors import UsageError
from elastic_memory.governor import Governor, RamProbe, Tier, available_ram_bytes
from elastic_memory.governor.probe import FALLBACK_RAM_BYTES

GIB = 1 << 30


class Clock:
    """A clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def scripted(values: Iterable[int | Exception]) -> tuple[Callable[[], int], list[int]]:
    """A probe returning (or raising) ``values`` in order, and a list counting its calls."""
    it = iter(values)
    calls: list[int] = []

    def probe() -> int:
        calls.append(1)
        value = next(it)
        if isinstance(value, Exception):
            raise value
        return value

    return probe, calls


def governor(values: Iterable[int | Exception], clock: Clock, **kwargs: object) -> tuple[Governor, list[int]]:
    probe, calls = scripted(values)
    gov = Governor(context_tokens=8_192, has_llm=True, probe=probe, clock=clock, **kwargs)  # type: ignore[arg-type]
    return gov, calls


def test_available_ram_reads_psutil() -> None:
    reading = available_ram_bytes()
    assert reading.ok
    assert reading.bytes > 0


def test_available_ram_falls_back_when_psutil_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    import psutil

    def broken() -> object:
        raise OSError("no /proc")

    monkeypatch.setattr(psutil, "virtual_memory", broken)
    assert available_ram_bytes() == RamProbe(bytes=FALLBACK_RAM_BYTES, ok=False)


def test_start_tier_comes_from_the_first_probe() -> None:
    gov, _ = governor([8 * GIB], Clock())
    assert gov.profile.tier is Tier.FULL


def test_no_reprobe_within_min_interval() -> None:
    clock = Clock()
    gov, calls = governor([8 * GIB, 8 * GIB], clock, min_interval=1.0)
    clock.now = 0.5
    gov.tick()
    assert len(calls) == 1
    clock.now = 1.0
    gov.tick()
    assert len(calls) == 2


def test_moves_down_immediately() -> None:
    clock = Clock()
    gov, _ = governor([8 * GIB, 2 * GIB], clock)
    clock.now = 1.0
    assert gov.tick().tier is Tier.STANDARD
    assert gov.changes == 1


def test_moves_up_only_past_the_hysteresis_margin() -> None:
    clock = Clock()
    gov, _ = governor([2 * GIB, 4 * GIB, int(4.3 * GIB), int(4.5 * GIB)], clock)
    clock.now = 1.0
    assert gov.tick().tier is Tier.STANDARD  # at the FULL threshold: not yet
    clock.now = 2.0
    assert gov.tick().tier is Tier.STANDARD  # 7.5 % above: not yet
    clock.now = 3.0
    assert gov.tick().tier is Tier.FULL  # 12.5 % above
    assert gov.changes == 1


def test_hysteresis_can_raise_by_one_tier_of_two() -> None:
    clock = Clock()
    gov, _ = governor([512 << 20, int(4.2 * GIB)], clock)
    assert gov.profile.tier is Tier.LITE
    clock.now = 1.0
    assert gov.tick().tier is Tier.STANDARD  # clears STANDARD by far, FULL by less than 10 %


def test_raising_probe_keeps_the_profile() -> None:
    clock = Clock()
    gov, _ = governor([8 * GIB, RuntimeError("probe broke")], clock)
    before = gov.profile
    clock.now = 1.0
    assert gov.tick() is before
    assert not gov.last_probe_ok
    assert gov.changes == 0


def test_garbage_probe_value_counts_as_a_failed_probe() -> None:
    clock = Clock()
    gov, _ = governor([8 * GIB, -1], clock)
    clock.now = 1.0
    assert gov.tick().tier is Tier.FULL
    assert not gov.last_probe_ok


def test_probe_recovers_after_a_failure() -> None:
    clock = Clock()
    gov, _ = governor([8 * GIB, RuntimeError("x"), 8 * GIB], clock)
    clock.now = 1.0
    gov.tick()
    clock.now = 2.0
    gov.tick()
    assert gov.last_probe_ok


def test_failed_first_probe_starts_at_the_fallback_tier() -> None:
    gov, _ = governor([RuntimeError("no probe")], Clock())
    assert gov.profile.tier is Tier.LITE
    assert not gov.last_probe_ok


def test_forced_tier_is_pinned() -> None:
    clock = Clock()
    gov, calls = governor([8 * GIB], clock, tier="lite")
    clock.now = 100.0
    assert gov.tick().tier is Tier.LITE
    assert calls == []
    assert gov.pinned
    assert gov.changes == 0


def test_host_budget_survives_tier_changes() -> None:
    clock = Clock()
    gov, _ = governor([8 * GIB, 2 * GIB], clock, budget_tokens=1_234)
    clock.now = 1.0
    assert gov.tick().budget_tokens == 1_234


def test_tiny_context_stays_off() -> None:
    gov = Governor(context_tokens=512, has_llm=True, probe=lambda: 64 * GIB)
    assert gov.tick().tier is Tier.OFF


@pytest.mark.parametrize("interval", [-1, float("nan"), "1", True])
def test_bad_min_interval_is_refused(interval: object) -> None:
    with pytest.raises(UsageError, match="min_interval must be a non-negative number of seconds"):
        Governor(context_tokens=8_192, has_llm=True, probe=lambda: GIB, min_interval=interval)  # type: ignore[arg-type]


def test_bad_forced_tier_is_refused() -> None:
    with pytest.raises(UsageError, match="forced must be one of"):
        Governor(context_tokens=8_192, has_llm=True, tier="turbo")


def test_bad_context_is_refused_at_construction() -> None:
    with pytest.raises(UsageError, match="context_tokens"):
        Governor(context_tokens=0, has_llm=True, probe=lambda: GIB)
