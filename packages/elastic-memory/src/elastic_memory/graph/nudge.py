"""Graph-aware recall: a small additive nudge from entities the query names (pure).

The nudge of a memory is ``ceiling x max over its matched entities of
(confidence x specificity / (1 + hops))``, where ``ceiling`` is a fraction of the query's
own top relevance. So a graph match can break near-ties and lift an associated memory
that shares no word with the query into view, but it can never outrank a strong match,
and a query with no keyword or vector relevance at all (top relevance 0) gets nothing.

>>> m = GraphMatch(entity_id=1, name="Biscuit", confidence=0.9, mentions=3, words=1, hops=0, path=("Biscuit",))
>>> round(nudge_scores({"a": [m]}, top=1.0, fraction=0.2)["a"], 3)
0.111
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["GraphMatch", "nudge_scores", "specificity"]


@dataclass(frozen=True)
class GraphMatch:
    """How a memory is reached from the query: through ``name``, ``hops`` relations away.

    ``words`` is the length in words of the query phrase that named the seed entity;
    ``mentions`` how many memories mention the entity (common entities say less);
    ``path`` the names along the way, seed first; ``relation`` the one followed last (``""`` at the seed).
    """

    entity_id: int
    name: str
    confidence: float
    mentions: int
    words: int
    hops: int
    path: tuple[str, ...]
    relation: str = ""


def specificity(mentions: int, words: int) -> float:
    """In (0, 1]: rare entities and longer names are more specific.

    ``1 / (1 + ln(1 + mentions) / 4)`` for rarity times ``0.75 + 0.25 x min(words, 3) / 3``
    for the name's length.
    """
    rarity = 1.0 / (1.0 + math.log1p(max(0, mentions)) / 4.0)
    length = 0.75 + 0.25 * min(max(1, words), 3) / 3.0
    return rarity * length


def nudge_scores(matches: Mapping[str, Sequence[GraphMatch]], *, top: float, fraction: float) -> dict[str, float]:
    """The additive nudge per memory id; empty when ``top`` or ``fraction`` is 0."""
    if top <= 0 or fraction <= 0:
        return {}
    ceiling = top * fraction
    out: dict[str, float] = {}
    for memory_id, found in matches.items():
        best = max(
            (min(1.0, max(0.0, m.confidence)) * specificity(m.mentions, m.words) / (1 + m.hops) for m in found),
            default=0.0,
        )
        if best > 0:
            out[memory_id] = ceiling * best
    return out
