"""The embedder port: what a host implements to plug in its own model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from ..errors import UsageError

__all__ = ["Embedder", "check_embedder", "unit_vectors"]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors.

    ``model_id`` is pinned in the database on the first write; ``family`` names models
    whose vectors are interchangeable (a pinned database accepts its own model or one of
    the same family).

    Optional methods: ``embed_query(text)`` (a query's vector, when queries embed
    differently), ``for_background()`` (an instance for the background worker) and
    ``load()`` (load a lazily loaded model now: idempotent, thread-safe, ``embed`` waiting
    for a load in progress; a store opened with the background worker calls it on a thread
    of its own, see :mod:`elastic_memory.embedders.preload`).

    >>> from elastic_memory.testing import FakeEmbedder
    >>> isinstance(FakeEmbedder(), Embedder)
    True
    """

    model_id: str
    dimension: int
    family: str

    def embed(self, texts: Sequence[str]) -> Sequence[Sequence[float]] | npt.NDArray[Any]:
        """One vector of ``dimension`` floats per text, in order."""
        ...


def check_embedder(obj: object) -> Embedder:
    """Validate that ``obj`` has the embedder attributes, or raise :class:`UsageError`."""
    missing = [a for a in ("model_id", "dimension", "family", "embed") if not hasattr(obj, a)]
    if missing:
        msg = f"{type(obj).__name__} is not an Embedder: it lacks {missing} (see elastic_memory.Embedder)"
        raise UsageError(msg)
    dim = obj.dimension  # type: ignore[attr-defined]
    if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
        msg = f"{type(obj).__name__}.dimension must be a positive int, got {dim!r}"
        raise UsageError(msg)
    for attr in ("model_id", "family"):
        value = getattr(obj, attr)
        if not isinstance(value, str) or not value:
            msg = f"{type(obj).__name__}.{attr} must be a non-empty string, got {value!r}"
            raise UsageError(msg)
    if not callable(obj.embed):  # type: ignore[attr-defined]
        msg = f"{type(obj).__name__}.embed must be callable"
        raise UsageError(msg)
    return obj  # type: ignore[return-value]


def unit_vectors(matrix: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
    """Each row of a finite float64 matrix as the float32 unit vector a store keeps, and which rows are all zeros.

    This is the rule every write and query vector goes through, so a caller can tell exactly
    what the store will hold for a vector it supplies. Every row is divided by its largest
    magnitude before its length is taken, so no square overflows (``1e300``) or vanishes
    (``1e-300``); zero rows stay zero (they have no direction).

    >>> unit, zero = unit_vectors(np.array([[3.0, 4.0], [0.0, 0.0]]))
    >>> unit.tolist(), zero.tolist()
    ([[0.6000000238418579, 0.800000011920929], [0.0, 0.0]], [False, True])
    """
    with np.errstate(all="ignore"):
        peak = np.abs(matrix).max(axis=1, initial=0.0)
        zero = peak == 0.0
        scaled = matrix / np.where(zero, 1.0, peak)[:, None]
        norms = np.sqrt(np.einsum("ij,ij->i", scaled, scaled))
        unit: npt.NDArray[np.float32] = (scaled / np.where(zero, 1.0, norms)[:, None]).astype(np.float32)
    return unit, zero
