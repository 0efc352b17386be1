"""Configuration: frozen keyword-only dataclasses, validated on construction."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import UsageError
from .retrieval.rerank import check_reranker
from .types import Fusion

__all__ = ["RecallConfig"]

_DEFAULT_WEIGHTS = {Fusion.CONVEX: 0.5, Fusion.WEIGHTED: 0.7, Fusion.RRF: 0.5}


@dataclass(frozen=True, kw_only=True)
class RecallConfig:
    """How hybrid recall fuses its legs. Defaults were chosen on LoCoMo (see ``benchmarks/``).

    >>> RecallConfig().effective_vector_weight
    0.5
    >>> RecallConfig(fusion="weighted").effective_vector_weight
    0.7
    """

    fusion: Fusion = Fusion.CONVEX
    """The fusion function; see :class:`~elastic_memory.Fusion`."""
    vector_weight: float | None = None
    """Weight of the vector leg in [0, 1]; ``None`` = the fusion's default (0.5, 0.7, 0.5)."""
    rrf_k: int = 60
    """The ``k`` of reciprocal rank fusion."""
    candidates: int = 50
    """How many candidates each leg contributes before fusion (at least ``k``)."""
    neighbor_boost: float = 0.45
    """Share of the better session neighbour's fused score added to a hit (0 turns it off)."""
    touch: bool = True
    """Record an access (count, time, retention) on every recalled memory."""
    graph_boost: float = 0.15
    """Ceiling of the knowledge graph's nudge, as a share of the query's top score (0 turns it off)."""
    session_boost: float = 0.5
    """Lift of a hit from the session holding most of the best candidates (0 turns it off); chosen by
    cross-validation on LoCoMo (``benchmarks/locomo_cv.py``)."""
    reranker: Any = None
    """A :class:`~elastic_memory.Reranker` that orders recall's best candidates (``None``: recall's own order)."""
    rerank_candidates: int = 20
    """How many of recall's best candidates the reranker reads (at least ``k``), in [1, 200]."""
    rerank_weight: float = 1.0
    """The reranker's share of the final order in [0, 1]: 1 orders by its score alone; below, by
    ``w * its score + (1 - w) * recall's score``, each scaled to [0, 1] over the candidates (a
    bi-encoder re-scorer needs recall's words and boosts)."""

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "fusion", Fusion(self.fusion))
        except ValueError as e:
            msg = f"fusion must be one of {[f.value for f in Fusion]}, got {self.fusion!r}"
            raise UsageError(msg) from e
        w = self.vector_weight
        if w is not None and (isinstance(w, bool) or not isinstance(w, int | float) or not 0 <= w <= 1):
            msg = f"vector_weight must be a number in [0, 1] or None, got {w!r}"
            raise UsageError(msg)
        if isinstance(self.rrf_k, bool) or not isinstance(self.rrf_k, int) or self.rrf_k < 1:
            msg = f"rrf_k must be a positive integer, got {self.rrf_k!r}"
            raise UsageError(msg)
        if (
            isinstance(self.candidates, bool)
            or not isinstance(self.candidates, int)
            or not 1 <= self.candidates <= 1000
        ):
            msg = f"candidates must be an integer in [1, 1000], got {self.candidates!r}"
            raise UsageError(msg)
        check_reranker(self.reranker)
        n = self.rerank_candidates
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 200:
            msg = f"rerank_candidates must be an integer in [1, 200], got {n!r}"
            raise UsageError(msg)
        for name in ("neighbor_boost", "graph_boost", "session_boost", "rerank_weight"):
            b = getattr(self, name)
            if isinstance(b, bool) or not isinstance(b, int | float) or not 0 <= b <= 1:
                msg = f"{name} must be a number in [0, 1], got {b!r}"
                raise UsageError(msg)

    @property
    def effective_vector_weight(self) -> float:
        """The vector weight in use."""
        return float(self.vector_weight) if self.vector_weight is not None else _DEFAULT_WEIGHTS[self.fusion]
