"""Conformance fixtures: every test runs for every backend x every driver, on an empty store."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from elastic_memory import LoopConfig
from elastic_memory.storage.vectors import ann as ann_index
from elastic_memory.testing import LOOKALIKE_NAMES, FakeEmbedder

from .drivers import DRIVERS, Capability, MemoryDriver

#: What a backend cannot do yet (every backend has every capability today).
BACKEND_LACKS: dict[str, frozenset[Capability]] = {}


@pytest.fixture(params=[pytest.param(d, marks=[pytest.mark.adapter] if d.adapter else [], id=d.name) for d in DRIVERS])
async def driver(request: pytest.FixtureRequest, location: str, backend: str) -> AsyncIterator[MemoryDriver]:
    """An EMPTY store behind one driver, closed after the test."""
    cls: type[MemoryDriver] = request.param
    options: dict[str, object] = {}
    if backend == "sqlite-ann":
        if not ann_index.available():
            pytest.skip("the ANN tier needs faiss: pip install 'elastic-memory[ann]'")
        options["vector_index"] = "ann"  # forced: built before the first search, whatever the size
    marker = request.node.get_closest_marker("requires")
    if marker is not None:
        missing = [c for c in marker.args if c not in cls.capabilities]
        if missing:
            pytest.skip(f"{cls.name} lacks {[c.value for c in missing]}")
        lacking = [c for c in marker.args if c in BACKEND_LACKS.get(backend, ())]
        if lacking:
            pytest.skip(f"the {backend} backend lacks {[c.value for c in lacking]} (see docs/scaling-out.md)")
    # A forced tier: the governor would otherwise budget from this machine's free RAM.
    d = await cls.open(location, FakeEmbedder(), loop=LoopConfig(tier="standard"), **options)
    try:
        yield d
    finally:
        await d.close()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "requires(*capabilities): skip drivers that lack a capability")


#: Backends the drivers that are a path onto the core (the sync facade's bridge, an adapter) run
#: on. Such a driver maps its calls onto the core and never sees the engine: one SQLite location
#: and PostgreSQL cover it. ``:memory:`` is the file engine at another location, and the ANN
#: backend a core storage tier: the core's async driver and the federation run every backend.
PATH_BACKENDS = frozenset({"sqlite-file", "postgres"})
_EVERY_BACKEND = frozenset({"core-async", "federated"})
#: The look-alike name pairs (``LOOKALIKE_NAMES``) the drivers but the core's async one run.
#: Telling two names apart is the storage's comparison, which the core's async driver checks
#: with every pair on every backend; the other drivers pass names through unchanged, and a few
#: kinds of confusion (a prefix, a case fold, a dotted parent) show one that rewrites or matches names.
SAMPLED_PAIRS = frozenset({"prefix", "case", "dotted-child"})
_EVERY_PAIR = frozenset({"core-async"})


def _kept(item: pytest.Item) -> bool:
    spec = getattr(item, "callspec", None)
    if spec is None:
        return True
    cls = spec.params.get("driver")
    if not isinstance(cls, type):
        return True
    if cls.name not in _EVERY_BACKEND and spec.params.get("backend") not in PATH_BACKENDS:
        return False
    if "a" in spec.params and "b" in spec.params and cls.name not in _EVERY_PAIR:
        name = next((n for n, a, b in LOOKALIKE_NAMES if (a, b) == (spec.params["a"], spec.params["b"])), None)
        return name is None or name in SAMPLED_PAIRS
    return True


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave out the cells that would run the same code again: see :data:`PATH_BACKENDS`, :data:`SAMPLED_PAIRS`."""
    keep, drop = [], []
    for item in items:
        (keep if _kept(item) else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


__all__ = ["Capability"]
