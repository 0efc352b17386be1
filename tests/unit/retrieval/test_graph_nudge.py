"""The graph nudge as a recall step: the loop attaches it to its core, whose explain applies it after fusion."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from elastic_memory import LoopConfig, Memory, _runner
from elastic_memory.filters import Filters
from elastic_memory.loop.attach import loop_of
from elastic_memory.retrieval.graph_nudge import GraphBudget, GraphNudge

from ..graph._stores import vet_store


@pytest.fixture
def mem(db_path: Path) -> Iterator[Memory]:
    with Memory.open(db_path, embedder=None, loop=LoopConfig(tier="standard", background=False)) as m:
        yield m


class _BrokenGraph:
    """Every read of the graph fails."""

    def __getattr__(self, name: str) -> Any:
        async def broken(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("graph table gone")

        return broken


def test_the_loop_attaches_its_nudge_to_the_core(mem: Memory) -> None:
    """If this fails, check MemoryLoop.recall_steps and MemoryCore.attach (open_core attaches the loop)."""
    loop = loop_of(mem._core)
    assert mem._core.parts == [loop]
    assert [type(step) for step in mem._core.recall_steps] == [GraphNudge]


def test_a_users_handle_is_nudged_by_its_own_loop(mem: Memory) -> None:
    """If this fails, check UserCore.__init__ (each part's for_owner) and MemoryLoop.for_owner."""
    alice = mem.for_user("alice")
    loop = loop_of(alice._core)
    assert loop is not loop_of(mem._core) and alice._core.parts == [loop]
    (step,) = alice._core.recall_steps
    assert isinstance(step, GraphNudge) and step.agent_id == alice._core.agent_id
    assert step.graph is loop_of(mem._core).store.graph  # one graph store, one count cache


def test_a_failing_nudge_leaves_recall_as_fusion_made_it(mem: Memory) -> None:
    """The graph is a nudge: when it fails, recall stands without it and health() counts the failure.

    If this fails, check GraphNudge.__call__'s except clause.
    """
    biscuit, vet = vet_store(mem)
    nudged = [h.id for h in mem.recall("What did Biscuit chew?", mode="keyword")]
    assert nudged[0] == biscuit and vet in nudged
    step = mem._core.recall_steps[0]
    assert isinstance(step, GraphNudge)
    step.graph = _BrokenGraph()
    plain = mem.explain("What did Biscuit chew?", mode="keyword")
    ids = [h.id for h in plain.hits]
    assert ids[0] == biscuit and vet not in ids
    assert "graph" not in plain.details
    health = mem.health()
    assert health["errors"] == {"graph recall": 1} and "graph table gone" in health["last_error"]


def test_an_empty_budget_reads_no_graph(mem: Memory) -> None:
    """No boost or no rows: the step returns the explanation it was given and reads no graph."""
    vet_store(mem)
    explanation = mem.explain("What did Biscuit chew?", mode="keyword")
    assert explanation.hits
    failures: list[str] = []
    for budget in (GraphBudget(0.0, 1, 100), GraphBudget(0.15, 1, 0)):
        step = GraphNudge(_BrokenGraph(), "default", budget=lambda b=budget: b, failed=lambda w, e: failures.append(w))
        assert _runner.run(step(explanation, Filters.parse(None).for_recall(), 10), "step") is explanation
    assert failures == []
