"""A float16 shadow of the exact RAM matrix: half the bytes to scan, the same top-k.

An exact scan of a large matrix is bound by memory bandwidth (1M x 384 float32 is 1.5 GB
read per query). The shadow holds the same rows rounded to float16, in the same positions,
inside a faiss ``IndexScalarQuantizer(QT_fp16)`` whose code buffer this class writes
directly; faiss scans it with SIMD decoding in about 40% of numpy's float32 time.

Rounding moves a score by at most :meth:`HalfScan.margin` (float16's unit roundoff, 2^-11
of a unit vector's norm, plus both sums' float32 rounding). So the rows the shadow ranks
below a candidate list cannot beat that list's exact k-th score once it leads the list's
lowest shadow score by the margin: the caller re-scores the candidates against the float32
matrix and, when that does not hold, takes every row the margin leaves in contention
(:meth:`HalfScan.above`), which makes the answer the exact top-k, not an approximation of it
(see :meth:`~elastic_memory.storage.vectors.ram.RamIndex.search`).

faiss is the optional ``ann`` extra; without it the float32 scan serves alone. The buffer
belongs to faiss: nothing may call the index's ``add``, ``reset`` or ``remove_ids``, which
would reallocate it under the view.

>>> import numpy as np
>>> if ann_available():
...     half = HalfScan(2)
...     half.resize(2)
...     half.put(slice(0, 2), np.array([[1, 0], [0, 1]], "f4"))
...     positions, scores = half.top(np.array([0, 1], "f4"), 1)
...     int(positions[0])
... else:
...     1
1
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from .ann import available as ann_available
from .ann import faiss_module, one_omp_thread

__all__ = ["HalfScan", "ann_available"]

F32 = npt.NDArray[np.float32]
#: float16's unit roundoff: round-to-nearest moves a normal value by at most this fraction.
_UNIT_ROUNDOFF = 2.0**-11
#: The largest absolute error of rounding a value below float16's normal range (half its spacing).
_SUBNORMAL_ERROR = 2.0**-25
#: float32's unit roundoff, for the rounding of the two dot products themselves.
_F32_ROUNDOFF = 2.0**-24
#: The longest row the index holds: rows are unit vectors within 0.1% (checked at load and write).
_MAX_ROW_NORM = 1.001
#: Slack on the bound: covers the 1 / (1 - d u) factor of the float32 sums for d up to ~1e5.
_SLACK = 1.01
#: An absolute allowance for the rounding of the margin's own arithmetic.
_FLOOR = 1e-7


class HalfScan:
    """float16 copies of a matrix's rows by position, scanned by faiss."""

    def __init__(self, dimension: int, capacity: int = 1024) -> None:
        self.dimension = dimension
        self._index: Any = None
        self._rows: npt.NDArray[np.float16] = np.zeros((0, dimension), dtype=np.float16)
        self.reserve(max(capacity, 1))

    def __len__(self) -> int:
        return 0 if self._index is None else int(self._index.ntotal)

    @property
    def capacity(self) -> int:
        """Rows reserved."""
        return len(self._rows)

    @property
    def nbytes(self) -> int:
        """Bytes of the float16 buffer (capacity, not only the rows in use)."""
        return int(self._rows.nbytes)

    def reserve(self, capacity: int) -> None:
        """Make room for ``capacity`` rows, keeping every row written so far.

        The rows move to a new index: a search still running in another thread (its caller
        cancelled) holds the old one, and with it the buffer it reads.
        """
        if capacity <= len(self._rows):
            return
        faiss = faiss_module()
        index = faiss.IndexScalarQuantizer(self.dimension, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT)
        size = capacity * self.dimension * 2
        index.codes.resize(size)
        raw = faiss.rev_swig_ptr(index.codes.data(), size)  # a view of the new index's own buffer
        rows = np.asarray(raw).view(np.float16).reshape(capacity, self.dimension)
        rows[: len(self._rows)] = self._rows
        index.ntotal = len(self)
        self._index, self._rows = index, rows

    def resize(self, n: int) -> None:
        """Scan the first ``n`` rows from now on (``n`` within the reserved capacity)."""
        if not 0 <= n <= len(self._rows):
            msg = f"{n} rows do not fit the {len(self._rows)} reserved"
            raise ValueError(msg)
        self._index.ntotal = n

    def put(self, where: int | slice, vectors: F32) -> None:
        """Write the float16 rounding of ``vectors`` at position(s) ``where``."""
        self._rows[where] = vectors

    def margin(self, query: F32) -> float:
        """The most a row's shadow score can differ from its float32 score for ``query``.

        ``|x.q - h.q| <= |x - h| |q|`` with ``|x - h| <= u |x| + e sqrt(d)`` (``u``: the
        unit roundoff, ``e``: the subnormal error), plus ``d`` float32 roundoffs on each of
        the two sums (``|x| |q|`` bounds the sum of the products' magnitudes).
        """
        norm = float(np.linalg.norm(query))
        d = self.dimension
        rounding = _UNIT_ROUNDOFF * _MAX_ROW_NORM + _SUBNORMAL_ERROR * math.sqrt(d)
        sums = 2 * d * _F32_ROUNDOFF * _MAX_ROW_NORM * (1 + _UNIT_ROUNDOFF)
        return _SLACK * norm * (rounding + sums) + _FLOOR

    def top(self, query: F32, count: int) -> tuple[npt.NDArray[np.int64], F32]:
        """The ``count`` best positions by shadow score and those scores, best first."""
        n = len(self)
        if count <= 0 or n == 0:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
        with one_omp_thread():
            scores, ids = self._index.search(_row(query), min(count, n))
        found: npt.NDArray[np.int64] = ids[0]
        keep = found >= 0
        return found[keep], scores[0][keep]

    def above(self, query: F32, threshold: float) -> tuple[npt.NDArray[np.int64], F32]:
        """Every position whose shadow score exceeds ``threshold``, and those scores (unordered)."""
        if len(self) == 0:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
        with one_omp_thread():
            _, scores, ids = self._index.range_search(_row(query), threshold)
        return ids.astype(np.int64), scores.astype(np.float32)


def _row(query: F32) -> F32:
    out: F32 = np.ascontiguousarray(query, dtype=np.float32).reshape(1, -1)
    return out
