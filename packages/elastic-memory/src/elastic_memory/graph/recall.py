"""Graph-aware recall: entities the query names, their neighbourhood, and the nudge it gives.

Query-time entity detection is an index lookup of the query's word n-grams among entity
names and aliases (no NER model). A ``WITH RECURSIVE`` walk goes ``graph_hops`` relations
out from those seeds (bounded by the governor's row cap); every memory that mentions a
reached entity gets a small additive nudge (see :mod:`elastic_memory.graph.nudge`).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any

from ..filters import Filters
from ..storage.rows import hit_from_record
from ..types import Entity, Explanation, Hit
from .names import ngrams
from .nudge import GraphMatch, nudge_scores
from .tables import GraphStore, Step

__all__ = ["GraphContext", "find", "nudge"]


@dataclass
class GraphContext:
    """What the graph knows around a query: seeds, reached entities, and memories mentioning them."""

    seeds: dict[int, Entity] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    entities: dict[int, Entity] = field(default_factory=dict)
    matches: dict[str, list[GraphMatch]] = field(default_factory=dict)

    def path(self, step: Step) -> tuple[str, ...]:
        """The entity names from the seed to ``step``."""
        names = [self.entities[i].name for i in step.path if i in self.entities]
        reached = self.entities.get(step.entity_id)
        return (*names, reached.name) if reached else tuple(names)


async def find(graph: GraphStore, agent_id: str, query: str, *, hops: int, rows: int) -> GraphContext:
    """Detect the entities ``query`` names and walk ``hops`` relations from them."""
    context = GraphContext()
    if rows <= 0 or not query.strip():
        return context
    words: dict[int, int] = {}
    for entity, key in await graph.detect(agent_id, ngrams(query)):
        if entity.mention_count > COMMON_MENTIONS:
            continue  # named in so many memories that it tells none of them apart (like a stop word)
        context.seeds[entity.id] = entity
        words[entity.id] = max(words.get(entity.id, 0), len(key.split()))
    if not context.seeds:
        return context
    if hops > 0:
        context.steps = await graph.traverse(list(context.seeds), hops=hops, limit=rows)
    else:
        context.steps = [Step(i, 0, (), "") for i in context.seeds]
    context.entities = await graph.entities_by_id([s.entity_id for s in context.steps])
    mentioned = await graph.mentions([s.entity_id for s in context.steps], limit=rows * 10)
    for step in context.steps:
        reached = context.entities.get(step.entity_id)
        if reached is None:
            continue
        seed = step.path[0] if step.path else step.entity_id
        match = GraphMatch(
            entity_id=reached.id,
            name=reached.name,
            confidence=reached.confidence,
            mentions=reached.mention_count,
            words=words.get(seed, 1),
            hops=step.hops,
            path=context.path(step),
            relation=step.relation,
        )
        for memory_id in mentioned.get(step.entity_id, []):
            context.matches.setdefault(memory_id, []).append(match)
    return context


#: An entity mentioned by more memories than this is no seed: it would nudge them all alike.
COMMON_MENTIONS = 50
#: The relation a path names when it follows a memory edge (a note's ``[[link]]``) from a hit.
LINKED = "linked"
#: Top hits whose memory edges (wikilinks, consolidation links) are followed one hop.
LINKED_FROM = 5


async def _link_hops(graph: GraphStore, hits: list[Hit], context: GraphContext, *, rows: int) -> None:
    """Memories one memory edge away from the best hits (a note's ``[[links]]``) join the matches."""
    linked = await graph.neighbors_many([h.id for h in hits[:LINKED_FROM]], limit=rows)  # one query
    for hit in hits[:LINKED_FROM]:
        for neighbour in linked[hit.id][:rows]:
            if neighbour != hit.id:
                match = GraphMatch(
                    entity_id=0,
                    name=hit.id,
                    confidence=1.0,
                    mentions=0,
                    words=1,
                    hops=1,
                    path=(hit.id, neighbour),
                    relation=LINKED,
                )
                context.matches.setdefault(neighbour, []).append(match)


def _path_row(memory_id: str, match: GraphMatch, nudge: float) -> dict[str, Any]:
    """How ``memory_id`` was reached, for explain(): the names on the way, the last relation, the nudge."""
    return {
        "memory_id": memory_id,
        "via": " > ".join(match.path),
        "path": list(match.path),
        "relation": match.relation,
        "hops": match.hops,
        "nudge": nudge,
    }


async def nudge(
    graph: GraphStore,
    agent_id: str,
    explanation: Explanation,
    *,
    filters: Filters,
    k: int,
    hops: int,
    rows: int,
    fraction: float,
) -> Explanation:
    """``explanation`` with graph nudges added to its hits (and associated memories surfaced).

    A query whose hits all scored 0 (or that had no hit) is returned unchanged: the graph
    never manufactures relevance.
    """
    started = time.perf_counter()
    top = max((h.score for h in explanation.hits), default=0.0)
    if top <= 0 or fraction <= 0 or not explanation.query.strip():
        return explanation
    context = await find(graph, agent_id, explanation.query, hops=hops, rows=rows)
    if hops > 0:
        await _link_hops(graph, explanation.hits, context, rows=rows)
    scores = nudge_scores(context.matches, top=top, fraction=fraction)
    if not scores:
        seen = {
            "seeds": [e.name for e in context.seeds.values()],
            "reached": len(context.steps),
            "nudged": 0,
            "surfaced": 0,
            "paths": [],
            "ms": (time.perf_counter() - started) * 1000.0,
        }
        return dataclasses.replace(explanation, details={**explanation.details, "graph": seen})
    details: dict[str, Any] = {
        "seeds": [e.name for e in context.seeds.values()],
        "reached": len(context.steps),
        "nudged": 0,
        "surfaced": 0,
        "paths": [],
    }
    hits = {h.id: h for h in explanation.hits}
    changed = {
        mid: dataclasses.replace(hits[mid], score=hits[mid].score + s) for mid, s in scores.items() if mid in hits
    }
    details["nudged"] = len(changed)
    hits.update(changed)
    # Only the strongest associations can enter the top k: fetch no more than k of them.
    extra = sorted((mid for mid in scores if mid not in hits), key=lambda mid: -scores[mid])[:k]
    if extra:
        for record in await graph.store.records_matching(extra, filters):
            hits[record.id] = hit_from_record(record, scores[record.id])
            details["surfaced"] += 1
    ranked: list[Hit] = sorted(hits.values(), key=lambda h: -h.score)[:k]  # stable: ties keep recall's order
    shown = {h.id for h in ranked}
    details["paths"] = [
        _path_row(mid, min(context.matches[mid], key=lambda m: m.hops), s)
        for mid, s in sorted(scores.items(), key=lambda kv: -kv[1])
        if mid in shown
    ][:20]
    details["ms"] = (time.perf_counter() - started) * 1000.0
    merged = {**explanation.details, "graph": details}
    if isinstance(merged.get("total_ms"), int | float):
        merged["total_ms"] = merged["total_ms"] + details["ms"]
    return dataclasses.replace(explanation, hits=ranked, details=merged)
