"""One recall, planned and run: the legs, the fusion, the hits, and how it went.

The store does the I/O (:class:`~elastic_memory.storage.SQLiteStore`), ``fusion`` does
the arithmetic; this module decides which legs run, with how many candidates, and records
what happened in :class:`~elastic_memory.Explanation` ``.details``: when semantic search
was asked for with a query vector, ``vectors_pending`` counts the store's live memories it
could not see (no vector yet; the keyword leg still finds them), 0 when it searched them all.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from ..config import RecallConfig
from ..filters import Filters
from ..storage import Store
from ..storage.rows import hit_from_record
from ..storage.sqlite.fts import match_expression
from ..types import Explanation, Fusion, MemoryRecord, RecallMode
from . import fusion, scores

__all__ = ["EmbedQuery", "run"]

F32 = npt.NDArray[np.float32]
#: Embeds one query text; ``None`` when no usable embedder exists.
EmbedQuery = Callable[[str], Awaitable[F32]]
Ranking = list[tuple[int, float]]


def _ms(since: float) -> float:
    return (time.perf_counter() - since) * 1000


async def run(
    store: Store,
    config: RecallConfig,
    *,
    query: str,
    k: int,
    mode: RecallMode,
    filters: Filters,
    touch: bool,
    embed: EmbedQuery | None,
    vector: F32 | None = None,
    backlog: bool = True,
) -> Explanation:
    """Recall ``k`` memories for a validated request; ``vector`` (unit) replaces embedding ``query``.

    ``backlog``: count what the vector leg could not see (``details["vectors_pending"]``), one
    statement more; a caller that keeps only the hits passes ``False``.
    """
    t0 = time.perf_counter()
    match = match_expression(query)
    details: dict[str, Any] = {"match": match}
    if not query.strip() and vector is None:
        rows = await store.browse(filters, k)
        if touch:
            await store.touch([s for s, _ in rows])
        details.update(order="pinned, importance, recency", total_ms=_ms(t0))
        return Explanation(query, mode, mode, [hit_from_record(r, r.importance) for _, r in rows], details)

    effective = mode
    if mode is not RecallMode.KEYWORD and ((embed is None and vector is None) or store.pin is None):
        effective = RecallMode.KEYWORD
        details["degraded"] = "no usable embedder or no vectors stored: keyword only"
    pool = k if effective is not RecallMode.HYBRID else max(config.candidates, k)
    read: dict[int, MemoryRecord] = {}  # rows the vector leg read while checking its candidates
    mark = store.writes

    async def keyword_leg() -> Ranking:
        if effective is RecallMode.SEMANTIC or match is None:
            return []
        t = time.perf_counter()
        ranking = await store.keyword(match, filters, pool, details)
        details["keyword_ms"] = _ms(t)
        return ranking

    async def vector_leg() -> tuple[F32 | None, Ranking]:
        qvec = vector if effective is not RecallMode.KEYWORD else None
        if effective is not RecallMode.KEYWORD and vector is None and embed is not None:
            t = time.perf_counter()
            qvec = await embed(query)
            details["embed_ms"] = _ms(t)
        if qvec is None:
            return None, []
        t = time.perf_counter()
        # Whole rows are worth reading with the candidates only when the candidates are the
        # hits (semantic); hybrid's hits are the fused top ``k`` of both legs, read afterwards.
        # a chat message never has a vector: the vector leg needs no condition for leaving them out
        among = dataclasses.replace(filters, exclude_kinds=()) if filters.exclude_kinds else filters
        whole = effective is RecallMode.SEMANTIC and pool == k
        ranking, how = await store.vector(qvec, among, pool, records=read if whole else None)
        details.update(how)
        details["vector_ms"] = _ms(t)
        return qvec, ranking

    async def unseen() -> int | None:
        # What the vector leg cannot see (or, with no vector stored yet, made it stand down): live
        # memories without a vector, counted from an index of them, not a scan. Not asked of a
        # keyword recall, nor of a store with no embedder (keyword-only by choice).
        wanted = backlog and mode is not RecallMode.KEYWORD and (embed is not None or vector is not None)
        return await store.unembedded() if wanted else None

    # The legs overlap: on a server each has its own connection, and embedding overlaps the keyword search.
    kw, (qvec, vec), pending = await asyncio.gather(keyword_leg(), vector_leg(), unseen())
    details.update(keyword_candidates=len(kw), vector_candidates=len(vec))
    if pending is not None:
        details["vectors_pending"] = pending
    kw_scores, vec_scores = dict(kw), dict(vec)
    if effective is RecallMode.KEYWORD:
        ranked = kw
    elif effective is RecallMode.SEMANTIC:
        ranked = vec
    else:
        t = time.perf_counter()
        ranked = await _fuse(store, config, match, qvec, kw, vec, kw_scores, vec_scores, details)
        details["fusion_ms"] = _ms(t)
    ranked = ranked[:k]
    if read and store.writes != mark:
        read = {}  # a write committed since the vector leg read them (fusion awaits): read again
    records = await store.rows_for([s for s, _ in ranked], filters, known=read)
    kept = [(s, score) for s, score in ranked if s in records]
    scale = details.get("keyword_scale") or None
    relevance = _relevance(effective, config, scale, store.capabilities.keyword_half, kw_scores, vec_scores)
    hits = [
        hit_from_record(records[s], score, kw_scores.get(s), vec_scores.get(s), relevance(s, score))
        for s, score in kept
    ]
    if touch:
        await store.touch([s for s, _ in kept])
    details["total_ms"] = _ms(t0)
    return Explanation(query, mode, effective, hits, details)


def _relevance(
    mode: RecallMode,
    config: RecallConfig,
    scale: float | None,
    half: float,
    kw_scores: dict[int, float],
    vec_scores: dict[int, float],
) -> Callable[[int, float], float]:
    """How a hit's score maps to relevance in [0, 1] (``scale``, ``half``: see :func:`.scores.keyword_relevance`).

    A hybrid hit's relevance is the convex score of its two legs, whatever the fusion: the
    hit's own, never moved by the other candidates (the neighbour boost and the graph nudge
    only rank, through ``score``).
    """
    if mode is RecallMode.SEMANTIC:
        return lambda _, score: scores.cosine_relevance(score)
    if mode is RecallMode.KEYWORD:
        return lambda _, score: scores.keyword_relevance(score, scale=scale, half=half)
    weight = config.effective_vector_weight
    return lambda seq, _: scores.hybrid(
        kw_scores.get(seq), vec_scores.get(seq), vector_weight=weight, scale=scale, half=half
    )


async def _fuse(
    store: Store,
    config: RecallConfig,
    match: str | None,
    qvec: F32 | None,
    kw: Ranking,
    vec: Ranking,
    kw_scores: dict[int, float],
    vec_scores: dict[int, float],
    details: dict[str, Any],
) -> Ranking:
    """Fuse the legs; CONVEX first looks up the cosine of keyword-only candidates (fills ``vec_scores``)."""
    weight = config.effective_vector_weight
    details.update(
        fusion=config.fusion.value,
        vector_weight=weight,
        neighbor_boost=config.neighbor_boost,
        session_boost=config.session_boost,
    )
    boost = config.neighbor_boost > 0 or config.session_boost > 0
    # Session neighbours of every candidate (the fused ranking holds them all) and the cosine of
    # keyword-only candidates are independent reads: they overlap.
    only_kw = [s for s in kw_scores if s not in vec_scores] if config.fusion is Fusion.CONVEX else []
    cosines, neighbors = await asyncio.gather(
        store.vector_scores(qvec, only_kw) if qvec is not None and only_kw else _nothing(),
        store.session_neighbors(list({**kw_scores, **vec_scores})) if boost else _nothing(),
    )
    if config.fusion is Fusion.CONVEX:
        details["cosine_lookups"] = len(only_kw)
        vec_scores.update(cosines)
        scale = details.get("keyword_scale") or None
        ranked = fusion.convex(
            kw_scores, vec_scores, vector_weight=weight, scale=scale, half=store.capabilities.keyword_half
        )
    elif config.fusion is Fusion.WEIGHTED:
        ranked = fusion.weighted(dict(kw), dict(vec), vector_weight=weight)
    else:
        ranked = fusion.rrf([s for s, _ in kw], [s for s, _ in vec], vector_weight=weight, k=config.rrf_k)
    if boost and ranked:
        bounded = config.fusion is Fusion.CONVEX  # its scores stay in [0, 1]
        ranked = fusion.neighbor_boost(ranked, neighbors, beta=config.neighbor_boost, bounded=bounded)
        ranked = fusion.session_boost(ranked, neighbors, beta=config.session_boost, bounded=bounded)
    return ranked


async def _nothing() -> dict[Any, Any]:
    return {}
