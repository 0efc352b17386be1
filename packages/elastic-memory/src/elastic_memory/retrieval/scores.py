"""The score contract: every recall score mapped onto one relevance scale, [0, 1] (pure).

A recall's ``score`` is in the scale of the mode that ran (cosine similarity, BM25, or the
hybrid score); ``relevance`` puts every mode on [0, 1] for thresholds. Nothing here looks
at the other hits of a recall (absolute, not min-max per query), so an unrelated query
never scores 1 and a store of one memory is not a perfect match for everything.

- keyword: ``min(1, bm25 / scale)``, ``scale`` being the query's BM25 of a row of average
  length holding each query word once (``storage.bm25.scale``); a backend without such a
  scale (PostgreSQL's ``ts_rank``) saturates instead: ``score / (score + half)``;
- cosine: ``(cosine - COSINE_FLOOR) / (1 - COSINE_FLOOR)`` clipped to [0, 1]: unrelated
  texts sit at cosines of about 0 to 0.3 under sentence models;
- hybrid: ``(1 - w) * keyword + w * cosine`` relevance; a leg that did not score it: 0.

>>> cosine_relevance(-0.3), round(cosine_relevance(0.65), 3)
(0.0, 0.5)
>>> keyword_relevance(3.0, scale=6.0), keyword_relevance(9.0, scale=6.0), keyword_relevance(BM25_HALF)
(0.5, 1.0, 0.5)
>>> round(hybrid(3.0, 0.65, vector_weight=0.5, scale=6.0), 3)
0.5
"""

from __future__ import annotations

from ..storage.sqlite.bm25 import RELEVANCE_HALF as BM25_HALF

__all__ = ["BM25_HALF", "COSINE_FLOOR", "clipped", "cosine_relevance", "hybrid", "keyword_relevance"]

#: Cosines at or below this are relevance 0.
COSINE_FLOOR = 0.3


def cosine_relevance(cosine: float) -> float:
    """A cosine similarity as relevance in [0, 1]: 0 up to :data:`COSINE_FLOOR`, then linear to 1."""
    return clipped((cosine - COSINE_FLOOR) / (1.0 - COSINE_FLOOR))


def keyword_relevance(score: float, *, scale: float | None = None, half: float = BM25_HALF) -> float:
    """A keyword score as relevance in [0, 1]: against the query's ``scale`` when known, else 0.5 at ``half``."""
    if score <= 0:
        return 0.0
    if scale:
        return min(1.0, score / scale)
    return score / (score + half)


def hybrid(
    keyword: float | None,
    cosine: float | None,
    *,
    vector_weight: float,
    scale: float | None = None,
    half: float = BM25_HALF,
) -> float:
    """``(1 - w) * keyword relevance + w * cosine relevance``; a leg that did not score the memory gives 0."""
    kw = keyword_relevance(keyword, scale=scale, half=half) if keyword is not None else 0.0
    vec = cosine_relevance(cosine) if cosine is not None else 0.0
    return (1.0 - vector_weight) * kw + vector_weight * vec


def clipped(score: float) -> float:
    """A score kept in [0, 1]."""
    return min(1.0, max(0.0, score))
