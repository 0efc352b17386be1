"""Fuzz fixtures: ``setup`` (each of :data:`harness.SETUPS`) and a fuzzed, seeded store for it."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from .harness import SETUPS, Fuzzer, Setup, fuzz_store

#: Examples per fuzzed method and setup in CI (the same ones every run); ``benchmarks/fuzz.py``
#: runs many more, fresh ones (``ELASTIC_MEMORY_FUZZ_EXAMPLES`` sets the count here).
EXAMPLES = int(os.environ.get("ELASTIC_MEMORY_FUZZ_EXAMPLES", "6"))

#: Derandomized: CI replays the same examples every run (main stays green for a reason);
#: ``benchmarks/fuzz.py`` explores with fresh random ones.
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


@pytest.fixture(params=SETUPS, ids=[s.name for s in SETUPS])
def setup(request: pytest.FixtureRequest) -> Setup:
    """One fuzzed setup (a test narrows them with ``parametrize("setup", [...], indirect=True)``)."""
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def fuzzer(setup: Setup, request: pytest.FixtureRequest) -> Iterator[Fuzzer]:
    """A fresh seeded store of ``setup`` (one per test; the examples of a test share it)."""
    url = request.getfixturevalue("postgres_url") if setup.backend == "postgres" else None
    with fuzz_store(setup, url) as fz:
        yield fz
