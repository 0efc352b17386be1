"""Load shedding of the bounded background queue (pure)."""

from __future__ import annotations

import pytest

from elastic_memory.errors import UsageError
from elastic_memory.governor import Admission
from elastic_memory.governor.shedding import DEFAULT_PRIORS, UNKNOWN_PRIOR


def admit(gate: Admission, kind: str, queue: list[str], **kwargs: object) -> bool:
    options: dict[str, object] = {"critical": False, "headroom_seconds": 20.0, "queue_max": 8, **kwargs}
    return gate.admit(kind, queue=queue, **options)  # type: ignore[arg-type]


def test_estimate_starts_at_the_prior() -> None:
    assert Admission().estimate("extract") == DEFAULT_PRIORS["extract"]


def test_unknown_kind_starts_at_the_unknown_prior() -> None:
    assert Admission().estimate("reindex") == UNKNOWN_PRIOR


def test_custom_priors_replace_the_defaults() -> None:
    assert Admission(priors={"extract": 0.5}).estimate("extract") == 0.5


def test_record_updates_the_moving_average() -> None:
    gate = Admission(priors={"extract": 10.0})
    gate.record("extract", 0.0)
    assert gate.estimate("extract") == pytest.approx(8.0)
    gate.record("extract", 8.0)
    assert gate.estimate("extract") == pytest.approx(8.0)


def test_admits_when_there_is_room() -> None:
    assert admit(Admission(), "extract", ["embed", "extract"])


def test_sheds_when_the_queue_is_full() -> None:
    assert not admit(Admission(), "embed", ["embed"] * 8, queue_max=8)


def test_sheds_when_depth_times_estimate_exceeds_headroom() -> None:
    gate = Admission(priors={"extract": 4.0})
    assert admit(gate, "extract", ["extract"] * 3, headroom_seconds=16.0)
    assert not admit(gate, "extract", ["extract"] * 4, headroom_seconds=16.0)


def test_faster_service_times_let_more_jobs_in() -> None:
    gate = Admission(priors={"extract": 4.0})
    assert not admit(gate, "extract", ["extract"] * 4, headroom_seconds=16.0)
    for _ in range(10):
        gate.record("extract", 1.0)
    assert admit(gate, "extract", ["extract"] * 4, headroom_seconds=16.0)


def test_depth_seconds_overrides_the_queue_sum() -> None:
    gate = Admission(priors={"extract": 1.0})
    assert not admit(gate, "extract", [], depth_seconds=19.5, headroom_seconds=20.0)


def test_critical_jobs_are_always_admitted() -> None:
    gate = Admission()
    assert admit(gate, "session_summary", ["extract"] * 100, critical=True, queue_max=2, headroom_seconds=0.0)
    assert dict(gate.shed) == {}


def test_a_job_alone_is_never_shed_for_time() -> None:
    gate = Admission(priors={"consolidate": 50.0})
    assert admit(gate, "consolidate", [], headroom_seconds=5.0)


def test_queue_max_zero_sheds_every_non_critical_job() -> None:
    assert not admit(Admission(), "embed", [], queue_max=0)


def test_shed_counts_per_kind() -> None:
    gate = Admission()
    admit(gate, "embed", ["embed"] * 8, queue_max=8)
    admit(gate, "embed", ["embed"] * 8, queue_max=8)
    admit(gate, "extract", ["embed"] * 8, queue_max=8)
    assert dict(gate.shed) == {"embed": 2, "extract": 1}


def test_shed_view_is_read_only() -> None:
    with pytest.raises(TypeError):
        Admission().shed["embed"] = 1  # type: ignore[index]


@pytest.mark.parametrize("seconds", [-1.0, float("inf"), float("nan"), "1"])
def test_bad_service_time_is_refused(seconds: object) -> None:
    with pytest.raises(UsageError, match="seconds must be a finite non-negative number"):
        Admission().record("extract", seconds)  # type: ignore[arg-type]


def test_empty_kind_is_refused() -> None:
    with pytest.raises(UsageError, match="kind must be a non-empty job kind"):
        Admission().estimate("")


def test_queue_given_as_a_string_is_refused() -> None:
    with pytest.raises(UsageError, match="queue must be a sequence of job kinds"):
        Admission().admit("embed", queue="embed", critical=False, headroom_seconds=1.0, queue_max=4)


def test_bad_queue_max_is_refused() -> None:
    with pytest.raises(UsageError, match="queue_max must be a non-negative int"):
        Admission().admit("embed", queue=[], critical=False, headroom_seconds=1.0, queue_max=-1)


def test_bad_alpha_is_refused() -> None:
    with pytest.raises(UsageError, match=r"alpha must be a number in \(0, 1\]"):
        Admission(alpha=0)
