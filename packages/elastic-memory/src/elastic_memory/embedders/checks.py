"""What comes in to be embedded or stored: the ``embedder=`` option, vectors from an embedder or a caller.

Each is checked and made unit length here, or refused with an :class:`EmbedderError` (the
embedder's fault) or a :class:`UsageError` (the caller's).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import EmbedderError, UsageError
from .base import Embedder, check_embedder, unit_vectors
from .builtin import shared_builtin

__all__ = [
    "EmbedderSpec",
    "checked_matrix",
    "embedder_candidates",
    "given_matrix",
    "given_vector",
    "supplied_vectors",
]

F32 = npt.NDArray[np.float32]
#: What ``embedder=`` takes: ``"auto"`` (the built-in model), ``None`` (keyword-only), one embedder or several.
EmbedderSpec = str | Embedder | Sequence[Embedder] | None


def embedder_candidates(spec: EmbedderSpec) -> list[Embedder]:
    """The embedders an ``embedder=`` option names, in priority order.

    ``"auto"`` is the process's one built-in model (:func:`.shared_builtin`): every store opened
    with it shares one loaded model, so opening a file per request loads nothing.
    """
    if spec is None:
        return []
    if isinstance(spec, str):
        if spec != "auto":
            msg = f"embedder must be 'auto', None, an Embedder or a list of them, got {spec!r}"
            raise UsageError(msg)
        return [shared_builtin()]
    if isinstance(spec, Sequence):
        return [check_embedder(e) for e in spec]
    return [check_embedder(spec)]


def checked_matrix(vectors: Any, count: int, dimension: int, who: str) -> F32:
    """What embedder ``who`` returned: ``count`` finite vectors of ``dimension``, as unit float32 rows."""
    try:
        matrix = np.asarray(vectors, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as e:
        msg = f"embedder {who} returned something that is not a list of float vectors: {e}"
        raise EmbedderError(msg) from e
    if matrix.shape != (count, dimension):
        msg = f"embedder {who} returned shape {matrix.shape}, expected ({count}, {dimension})"
        raise EmbedderError(msg)
    if not np.isfinite(matrix).all():
        msg = f"embedder {who} returned NaN or infinite values"
        raise EmbedderError(msg)
    unit, _ = unit_vectors(matrix)  # a zero row stays zero (no direction): the vector leg leaves it out
    return unit


def given_vector(vector: Any, name: str = "vector") -> F32:
    """recall()'s ``vector=`` (or a supplied write vector) as a unit float32 vector, or a :class:`UsageError`."""
    if isinstance(vector, str | bytes | Mapping) or not isinstance(vector, Sequence | np.ndarray):
        msg = f"{name} must be a list of floats, got {type(vector).__name__}"
        raise UsageError(msg)
    try:
        array = np.asarray(vector, dtype=np.float64)
    except (TypeError, ValueError) as e:
        msg = f"{name} must be a list of floats: {e}"
        raise UsageError(msg) from e
    except OverflowError as e:  # an int past float range, e.g. 10**400
        msg = f"{name} holds a number too large for a float vector: {e}"
        raise UsageError(msg) from e
    if array.ndim != 1 or array.size == 0:
        msg = f"{name} must be one non-empty list of floats, got shape {array.shape}"
        raise UsageError(msg)
    if not np.isfinite(array).all():
        msg = f"{name} holds NaN or infinite values"
        raise UsageError(msg)
    unit, zero = unit_vectors(array[None])
    if zero[0]:
        msg = f"{name} is all zeros: it has no direction"
        raise UsageError(msg)
    first: F32 = unit[0]
    return first


def given_matrix(vectors: Sequence[Any] | npt.NDArray[Any]) -> list[F32 | None] | None:
    """Many supplied vectors checked at once (what :func:`given_vector` checks one by one), or ``None``.

    ``None`` means: not a clean batch of equal-width numeric vectors; the caller then checks
    each vector on its own, which names the first bad one.
    """
    if not len(vectors) or any(
        v is None or isinstance(v, str | bytes | Mapping) or not isinstance(v, Sequence | np.ndarray) for v in vectors
    ):
        return None
    try:
        matrix = np.asarray(vectors, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        return None
    if matrix.ndim != 2 or matrix.shape[1] == 0:
        return None
    if not np.isfinite(matrix).all():
        return None
    unit, zero = unit_vectors(matrix)
    if zero.any():
        return None
    return list(unit)


def supplied_vectors(vectors: Any, count: int) -> list[F32 | None] | None:
    """remember_many()'s ``vectors``: one unit vector (or ``None``: embed it) per item, all of one width."""
    if vectors is None:
        return None
    if isinstance(vectors, str | bytes | Mapping) or not isinstance(vectors, Sequence | np.ndarray):
        msg = f"vectors must be a list with one vector (or None) per item, got {type(vectors).__name__}"
        raise UsageError(msg)
    if len(vectors) != count:
        msg = f"got {len(vectors)} vectors for {count} items; pass one per item (None to embed that item)"
        raise UsageError(msg)
    out = given_matrix(vectors)
    if out is None:  # ragged, None entries or odd types: one by one, for the exact message
        out = [None if v is None else given_vector(v, f"vectors[{n}]") for n, v in enumerate(vectors)]
    widths = sorted({vector.shape[0] for vector in out if vector is not None})
    if len(widths) > 1:
        msg = f"vectors have different widths {widths}; one store holds vectors of one width"
        raise UsageError(msg)
    return out
