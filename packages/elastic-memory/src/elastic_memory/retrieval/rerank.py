"""The re-ranking step: a model reads the query beside each of recall's best candidates and orders them.

Recall's legs and fusion find the evidence among the top few dozen candidates more often than
they put it first (LoCoMo's dev split: a perfect re-ranking of hybrid's top 50 would lift
recall@10 from 0.75 to 0.87). A :class:`Reranker` scores the top :attr:`~elastic_memory.RecallConfig.rerank_candidates`
against the query; the hits are those candidates in the reranker's order, each hit's ``score``
the reranker's (its ``relevance`` stays recall's own), or, with
:attr:`~elastic_memory.RecallConfig.rerank_weight` below 1, the reranker's score mixed with
recall's own. A reranker that fails, or answers
something other than one finite score in [0, 1] per text, leaves recall's order, says so in
``details["rerank_failed"]`` and warns once (:class:`~elastic_memory.RecallWarning`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import time
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..errors import UsageError
from ..types import Explanation

__all__ = ["Reranker", "check_reranker", "reranked", "reranker_name"]


@runtime_checkable
class Reranker(Protocol):
    """Scores texts against a query: one float in [0, 1] per text, higher for a better answer.

    ``score`` is called on a worker thread, with the query and at most
    :attr:`~elastic_memory.RecallConfig.rerank_candidates` texts; it may take its time (a
    cross-encoder reads every pair). ``model_id`` names the model in ``explain()``.

    >>> class ByLength:
    ...     model_id = "by-length"
    ...     def score(self, query, texts):
    ...         return [min(1.0, len(t) / 100) for t in texts]
    >>> isinstance(ByLength(), Reranker)
    True
    """

    model_id: str

    def score(self, query: str, texts: Sequence[str]) -> Sequence[float]:
        """One score in [0, 1] per text, in the texts' order."""
        ...


def check_reranker(reranker: Any) -> Any:
    """``reranker`` if it can serve as a :class:`Reranker` (``None`` passes: no re-ranking)."""
    if reranker is None:
        return None
    if isinstance(reranker, type):
        msg = f"reranker must be an instance, got the class {reranker.__name__}: pass {reranker.__name__}(...)"
        raise UsageError(msg)
    if not callable(getattr(reranker, "score", None)):
        name = type(reranker).__name__
        msg = f"reranker must have a score(query, texts) method returning one float per text, got {name}"
        raise UsageError(msg)
    return reranker


def reranker_name(reranker: Any) -> str:
    """What ``explain()`` calls ``reranker``: its ``model_id``, else its class's name."""
    name = getattr(reranker, "model_id", None)
    return name if isinstance(name, str) and name else type(reranker).__name__


async def reranked(
    explanation: Explanation, reranker: Any, k: int, weight: float = 1.0
) -> tuple[Explanation, str | None]:
    """The first ``k`` of ``explanation``'s hits in ``reranker``'s order, and why it was not applied (``None``: it was).

    ``weight`` below 1 orders by ``weight * reranker + (1 - weight) * recall``, each side scaled
    to [0, 1] over the candidates (the reranker's scores min-max, recall's scores over the
    best): recall's order counts with its boosts, and a reranker whose scores are packed
    (a bi-encoder's cosines) still moves it. On failure the hits keep recall's order (cut to
    ``k``); the explanation's details say which model ran, on how many candidates and in how long.
    """
    hits = explanation.hits
    details: dict[str, Any] = {"reranker": reranker_name(reranker), "rerank_candidates": len(hits)}
    if not hits:
        return dataclasses.replace(explanation, details={**explanation.details, **details}), None
    start = time.perf_counter()
    problem: str | None = None
    try:
        answer = await asyncio.to_thread(reranker.score, explanation.query, [h.content for h in hits])
        scores = _checked(answer, len(hits))
    except Exception as e:  # noqa: BLE001 - recall stands without the reranker; the caller reports it
        problem = f"reranker {details['reranker']!r} failed: {type(e).__name__}: {e}"
    details["rerank_ms"] = (time.perf_counter() - start) * 1000
    if problem is not None:
        details["rerank_failed"] = problem
        kept = list(hits[:k])
    else:
        mixed = scores if weight >= 1.0 else _mixed(scores, [h.score for h in hits], weight)
        order = sorted(range(len(hits)), key=lambda n: -mixed[n])  # stable: ties keep recall's order
        kept = [dataclasses.replace(hits[n], score=mixed[n]) for n in order[:k]]
    return dataclasses.replace(explanation, hits=kept, details={**explanation.details, **details}), problem


def _mixed(reranker: list[float], recall: list[float], weight: float) -> list[float]:
    """``weight`` x the reranker's scores min-max scaled + (1 - ``weight``) x recall's over its best, per candidate."""
    low, high = min(reranker), max(reranker)
    spread = high - low
    top = max(recall)
    return [
        weight * ((x - low) / spread if spread > 0 else 1.0) + (1.0 - weight) * (max(y, 0.0) / top if top > 0 else 0.0)
        for x, y in zip(reranker, recall, strict=True)
    ]


def _checked(answer: Any, count: int) -> list[float]:
    """The reranker's answer as ``count`` finite floats in [0, 1]; a ``ValueError`` says what is wrong."""
    try:
        items = list(answer)
    except TypeError as e:
        msg = f"score() must return a sequence of floats, got {type(answer).__name__}"
        raise ValueError(msg) from e
    if not all(isinstance(x, int | float | np.integer | np.floating) and not isinstance(x, bool) for x in items):
        msg = "score() must return numbers (int, float or numpy), not text or booleans"
        raise ValueError(msg)
    values = [float(x) for x in items]
    if len(values) != count:
        msg = f"score() returned {len(values)} scores for {count} texts"
        raise ValueError(msg)
    if not all(math.isfinite(x) and 0.0 <= x <= 1.0 for x in values):
        msg = "score() must return finite scores in [0, 1]"
        raise ValueError(msg)
    return values
