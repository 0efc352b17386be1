"""The graph nudge as a step of recall: fused hits lifted by the knowledge graph around the query.

The memory loop builds one per owner (it holds the governor's budget and counts failures)
and attaches it to its core, whose ``explain`` applies it after fusion. How the nudge is
computed is :mod:`elastic_memory.graph.recall`; a failure leaves the recall as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..filters import Filters
from ..graph import recall as graph_recall
from ..graph.tables import GraphStore
from ..types import Explanation

__all__ = ["GraphBudget", "GraphNudge"]


@dataclass(frozen=True)
class GraphBudget:
    """What the nudge may do now: ``fraction`` of the top relevance (0: off), ``hops`` relations, ``rows`` rows."""

    fraction: float
    hops: int
    rows: int


class GraphNudge:
    """Recall made graph-aware: a recall step ``(explanation, filters, k) -> explanation``.

    A recall pinned to one agent is nudged by that agent's graph (whoever opened the store),
    one pinned to several others by none: an agent's ranking depends on its own rows and
    graph alone. ``agent_id`` is the owner whose graph nudges an unpinned recall; ``budget``
    is read at every recall; ``failed(what, error)`` reports a failure, which recall survives.
    """

    def __init__(
        self,
        graph: GraphStore,
        agent_id: str,
        *,
        budget: Callable[[], GraphBudget],
        failed: Callable[[str, BaseException], object],
    ) -> None:
        self.graph = graph
        self.agent_id = agent_id
        self.budget = budget
        self.failed = failed

    async def __call__(self, explanation: Explanation, filters: Filters, k: int) -> Explanation:
        """``explanation`` with the graph's nudge (the same explanation when there is none or it fails)."""
        budget = self.budget()
        if budget.fraction <= 0 or budget.rows <= 0 or not explanation.hits:
            return explanation
        owner = filters.agent_ids[0] if len(filters.agent_ids) == 1 else self.agent_id
        if filters.agent_ids and owner not in filters.agent_ids:
            return explanation
        try:
            return await graph_recall.nudge(
                self.graph,
                owner,
                explanation,
                filters=filters,
                k=k,
                hops=budget.hops,
                rows=budget.rows,
                fraction=budget.fraction,
            )
        except Exception as e:  # noqa: BLE001 - the graph is a nudge: recall stands without it
            self.failed("graph recall", e)
            return explanation
