"""Graph.path: the shortest chain of relations between two entities."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from elastic_memory import Memory, UsageError


@pytest.fixture
def mem() -> Iterator[Memory]:
    with Memory.open(":memory:", embedder=None) as m:
        m.record_turn("I work at Acme Robotics. My sister Ana lives in Lisbon.", "Nice!")
        m.drain()
        yield m


def test_path_names_each_entity_from_source_to_target(mem: Memory) -> None:
    found = mem.graph.path("user", "Lisbon")
    assert found is not None
    assert (found.hops, found.path) == (2, ("user", "Acme Robotics", "Lisbon"))


def test_path_beyond_max_hops_is_none(mem: Memory) -> None:
    assert mem.graph.path("user", "Lisbon", max_hops=1) is None


def test_path_to_unknown_entity_is_none(mem: Memory) -> None:
    assert mem.graph.path("user", "Atlantis") is None


def test_path_to_itself_has_no_hops(mem: Memory) -> None:
    found = mem.graph.path("Ana", "ana")
    assert found is not None
    assert (found.hops, found.path) == (0, ("Ana",))


def test_max_hops_out_of_range_is_usage_error(mem: Memory) -> None:
    with pytest.raises(UsageError, match="max_hops"):
        mem.graph.path("user", "Lisbon", max_hops=0)
