"""Conformance fixtures: every test runs for every backend x every driver, on an empty store."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from elastic_memory import LoopConfig
from elastic_memory.storage.vectors import ann as ann_index
from elastic_memory.testing import FakeEmbedder

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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The ANN backend is a core storage tier: adapters run on the file and memory backends only."""
    keep, drop = [], []
    for item in items:
        spec = getattr(item, "callspec", None)
        params = spec.params if spec is not None else {}
        cls = params.get("driver")
        adapter = isinstance(cls, type) and getattr(cls, "adapter", False)
        (drop if adapter and params.get("backend") == "sqlite-ann" else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


__all__ = ["Capability"]
