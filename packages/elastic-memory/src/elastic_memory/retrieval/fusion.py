"""Hybrid fusion of a keyword leg and a vector leg (pure functions, no I/O).

Scores are higher-is-better on both legs (BM25, cosine similarity). ``convex`` (the
default) gives absolute scores in [0, 1] (the score contract, :mod:`.scores`); ``weighted``
and ``rrf`` give scores comparable within one recall only.

>>> kw = {1: 3.0, 2: 1.0}
>>> vec = {2: 0.9, 3: 0.5}
>>> [s for s, _ in weighted(kw, vec, vector_weight=0.5)]
[1, 2, 3]
>>> [(s, round(x, 3)) for s, x in convex(kw, {1: 0.2, **vec}, vector_weight=0.5, scale=3.0)]
[(2, 0.595), (1, 0.5), (3, 0.143)]
>>> [s for s, _ in rrf([1, 2], [2, 3], vector_weight=0.5, k=60)]
[2, 1, 3]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import itemgetter

from . import scores
from .scores import BM25_HALF

__all__ = ["SESSION_TOP", "convex", "minmax", "neighbor_boost", "rrf", "session_boost", "weighted"]

_MISSING = float("-inf")
#: How many of the best candidates say which sessions the query is about (:func:`session_boost`).
SESSION_TOP = 10
#: A memory's place: the live memories just before and after it in its session, and the session's key
#: (agent and session id: two agents' sessions of one name are two sessions).
Place = tuple[int | None, int | None, str]


def minmax(scores: Mapping[int, float]) -> dict[int, float]:
    """Scale to [0, 1] within ``scores``; all-equal scores map to 1 (0 if empty)."""
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    span = hi - lo
    if span <= 1e-12:
        return dict.fromkeys(scores, 1.0)
    return {key: (value - lo) / span for key, value in scores.items()}


def _ranked(fused: Mapping[int, float], *tiebreaks: Mapping[int, float]) -> list[tuple[int, float]]:
    """Best fused score first; ties go to the higher score of each tiebreak in turn (missing: last), then the lower seq.

    Stable sorts from the last criterion to the first: C-level keys, no tuple per candidate,
    and the tiebreaks only when two fused scores are equal.
    """
    order = sorted(fused)
    if len(set(fused.values())) < len(fused):
        for tiebreak in reversed(tiebreaks):
            key = {seq: tiebreak.get(seq, _MISSING) for seq in order}
            order.sort(key=key.__getitem__, reverse=True)  # reverse keeps a stable sort stable
    order.sort(key=fused.__getitem__, reverse=True)
    return [(seq, fused[seq]) for seq in order]


def weighted(
    keyword: Mapping[int, float], vector: Mapping[int, float], *, vector_weight: float
) -> list[tuple[int, float]]:
    """Min-max within each leg's own list; a leg that missed a memory gives it 0 (seed 000)."""
    kn, vn = minmax(keyword), minmax(vector)
    fused = {
        seq: (1 - vector_weight) * kn.get(seq, 0.0) + vector_weight * vn.get(seq, 0.0)
        for seq in dict.fromkeys([*keyword, *vector])
    }
    return _ranked(fused, keyword, vector)


def convex(
    keyword: Mapping[int, float],
    vector: Mapping[int, float],
    *,
    vector_weight: float,
    scale: float | None = None,
    half: float = BM25_HALF,
) -> list[tuple[int, float]]:
    """Convex combination of absolute relevances over the union of both legs' candidates.

    ``vector`` should hold every candidate's cosine (the caller looks up the keyword-only
    ones); a candidate missing from ``keyword`` has keyword relevance 0. Each score is
    :func:`.scores.hybrid` (``scale``: the query's BM25 of relevance 1): in [0, 1] and
    independent of the other candidates.
    """
    fused = {
        s: scores.hybrid(keyword.get(s), vector.get(s), vector_weight=vector_weight, scale=scale, half=half)
        for s in dict.fromkeys([*keyword, *vector])
    }
    return _ranked(fused, keyword, vector)


def rrf(keyword: Sequence[int], vector: Sequence[int], *, vector_weight: float, k: int) -> list[tuple[int, float]]:
    """Weighted reciprocal rank fusion: ``sum w / (k + rank)`` with ranks from 1 (seed 002)."""
    fused: dict[int, float] = {}
    for weight, ranking in ((1 - vector_weight, keyword), (vector_weight, vector)):
        for rank, seq in enumerate(ranking, start=1):
            fused[seq] = fused.get(seq, 0.0) + weight / (k + rank)
    kw_rank = {s: -float(r) for r, s in enumerate(keyword)}
    return _ranked(fused, kw_rank)


def neighbor_boost(
    ranked: Sequence[tuple[int, float]],
    neighbors: Mapping[int, Place],
    *,
    beta: float,
    bounded: bool = False,
) -> list[tuple[int, float]]:
    """Add ``beta`` x the better fused score of a memory's session neighbours.

    ``neighbors[seq]`` is the memory just before and just after ``seq`` in the same
    session; a neighbour that is not itself a candidate counts 0. In dialogue memory the
    answer often sits in the turn next to the one that matches the question. ``bounded``
    divides by ``1 + beta``, so scores in [0, 1] stay there (the same order).
    """
    if beta <= 0 or not neighbors:
        return list(ranked)
    base: dict[int | None, float] = dict(ranked)
    scale = 1.0 + beta if bounded else 1.0
    boosted = {}
    for seq, score in ranked:
        prev, nxt, _ = neighbors.get(seq, (None, None, ""))
        boosted[seq] = (score + beta * max(base.get(prev, 0.0), base.get(nxt, 0.0))) / scale  # None is never a key: 0
    # Stable: equal scores keep their fused order.
    return sorted(boosted.items(), key=itemgetter(1), reverse=True)


def session_boost(
    ranked: Sequence[tuple[int, float]],
    places: Mapping[int, Place],
    *,
    beta: float,
    top: int = SESSION_TOP,
    bounded: bool = False,
) -> list[tuple[int, float]]:
    """Scale each score by ``1 + beta x`` its session's share of the best ``top`` candidates.

    A session's mass is the sum of the scores of its memories among the best ``top``; the
    heaviest session gets the full ``beta``, a session with none of them nothing. Evidence
    in dialogue memory clusters in the sessions that talk about the question, so a weaker
    match there beats a lone match elsewhere. ``bounded`` divides by ``1 + beta``.

    >>> ranked = [(1, 0.9), (2, 0.5), (3, 0.45)]
    >>> places = {1: (None, None, "a"), 2: (None, None, "b"), 3: (None, None, "a")}
    >>> [s for s, _ in session_boost(ranked, places, beta=0.5, top=2)]
    [1, 3, 2]
    """
    if beta <= 0 or not places:
        return list(ranked)
    mass: dict[str, float] = {}
    for seq, score in ranked[:top]:
        if seq in places and score > 0:
            session = places[seq][2]
            mass[session] = mass.get(session, 0.0) + score
    heaviest = max(mass.values(), default=0.0)
    if heaviest <= 0:
        return list(ranked)
    scale = 1.0 + beta if bounded else 1.0
    boosted = {}
    for seq, score in ranked:
        share = mass.get(places[seq][2], 0.0) / heaviest if seq in places else 0.0
        boosted[seq] = score * (1.0 + beta * share) / scale
    return sorted(boosted.items(), key=itemgetter(1), reverse=True)
