"""The exact in-RAM vector index: a float32 matrix scanned with one matrix-vector product.

At 100k x 384 a numpy scan is 5-9x faster than a vec0 scan (``perf.md`` §2.1). The index
holds the live (not deleted, not archived) memories that have a vector, keyed by ``seq``,
plus small integer codes of the attributes recall filters on most (agent, scope, pool, type,
session), so those filters apply during the scan instead of after it. The store keeps it in
step with every committed write and rebuilds it when another connection changed the file.

From ``half_from`` rows on (faiss installed) it also keeps a float16 shadow of the matrix,
:class:`~elastic_memory.storage.vectors.half.HalfScan`, made by a job the store runs in a
worker thread (:meth:`RamIndex.half_builder`): an unfiltered or broadly filtered search
takes a candidate list from the shadow and re-scores it against the float32 rows; when the
rounding bound cannot prove from it that no row outside can enter the top k, a second pass
takes every row the bound leaves in contention. The answer is the float32 scan's, read from
half the bytes.

>>> import numpy as np
>>> idx = RamIndex(2)
>>> idx.upsert(1, np.array([1, 0], "f4"), {"agent_id": "a"})
>>> idx.upsert(2, np.array([0, 1], "f4"), {"agent_id": "b"})
>>> idx.search(np.array([1, 0], "f4"), 5, {"agent_id": ("b",)})
[(2, 0.0)]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from .half import HalfScan, ann_available

__all__ = ["ATTRS", "HALF_FROM", "RamIndex", "ScanReport"]

#: The attributes an index entry carries for filtering during the scan.
ATTRS = ("agent_id", "scope", "pool", "type", "session_id")
F32 = npt.NDArray[np.float32]
#: From this many rows on the float16 shadow scans faster than numpy's float32 product.
HALF_FROM = 8192
#: Shadow candidates per result wanted (at least 16 wanted), before the bound is checked.
_HALF_OVERSAMPLE = 4
#: Past this share of the rows a candidate list is no cheaper than the float32 scan; a
#: filter keeping at least this share is broad enough for the shadow.
_HALF_MAX_SHARE = 0.25


@dataclass
class ScanReport:
    """How one :meth:`RamIndex.search` read the matrix (filled by that call alone, whatever runs beside it)."""

    #: ``"float32"``, or ``"float16"``: shadow candidates re-scored in float32.
    scan: Literal["float32", "float16"] = "float32"
    #: How many shadow candidates were re-scored (0 for a float32 scan).
    candidates: int = 0


class HalfJob(NamedTuple):
    """A float16 shadow to build in a worker thread (``build``), then attach with ``token``."""

    token: int
    build: Callable[[], HalfScan]


class RamIndex:
    """Exact cosine search over L2-normalised float32 vectors."""

    def __init__(self, dimension: int, capacity: int = 1024, *, half_from: int | None = None) -> None:
        """``half_from``: keep a float16 shadow from this many rows on (``None``: never; needs faiss)."""
        self.dimension = dimension
        self._half_from = half_from
        self._half: HalfScan | None = None
        self._half_dirty: set[int] | None = None  # positions written while a shadow is built elsewhere
        self._half_job = False  # a half_builder job is out
        self._half_token = 0  # moves on whenever an outstanding job's result would be stale
        self._n = 0
        self._mat: F32 = np.zeros((capacity, dimension), dtype=np.float32)
        self._seqs = np.zeros(capacity, dtype=np.int64)
        self._codes = {a: np.zeros(capacity, dtype=np.int32) for a in ATTRS}
        self._vocab: dict[str, dict[str | None, int]] = {a: {} for a in ATTRS}
        self._pos: dict[int, int] = {}

    def __len__(self) -> int:
        return self._n

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays (the matrix dominates) and the float16 shadow."""
        half = self._half.nbytes if self._half is not None else 0
        return int(self._mat.nbytes + self._seqs.nbytes + sum(c.nbytes for c in self._codes.values()) + half)

    @property
    def half(self) -> bool:
        """True while the float16 shadow serves broad searches."""
        return self._half is not None

    def _half_wanted(self) -> bool:
        return self._half is None and self._half_from is not None and self._n >= self._half_from

    def _update_half(self) -> None:
        """Scan exactly the rows in use (the shadow itself is made by a :meth:`half_builder` job)."""
        if self._half is not None:
            self._half.resize(self._n)

    def drop_half(self) -> None:
        """Free the float16 shadow (an ANN index serves this store's broad searches now) until :meth:`allow_half`."""
        self._half, self._half_dirty, self._half_job, self._half_from = None, None, False, None
        self._half_token += 1

    def allow_half(self, half_from: int) -> None:
        """Want the float16 shadow again from ``half_from`` rows on (the ANN index that took its place is gone)."""
        if self._half is None and not self._half_job:
            self._half_from = half_from

    @property
    def capacity(self) -> int:
        """Rows the matrix has room for before it grows."""
        return len(self._mat)

    def _touched(self, pos: int) -> None:
        if self._half is not None:
            self._half.put(pos, self._mat[pos])
        elif self._half_dirty is not None:
            self._half_dirty.add(pos)

    def half_builder(self) -> HalfJob | None:
        """A job that builds the shadow from the rows as they are now, to run in a worker thread; ``None`` if not due.

        Until :meth:`attach_half` takes its result (or :meth:`cancel_half`), writes note the
        positions they change, and the float32 scan serves.
        """
        if self._half_job or not self._half_wanted() or not ann_available():
            return None
        self._half_job = True
        self._half_token += 1
        self._half_dirty = set()
        matrix, n, dimension = self._mat, self._n, self.dimension

        def build() -> HalfScan:
            half = HalfScan(dimension, capacity=n)
            half.put(slice(0, n), matrix[:n])
            half.resize(n)
            return half

        return HalfJob(self._half_token, build)

    def attach_half(self, half: HalfScan, token: int) -> None:
        """Take the shadow of the job ``token``, after re-writing the rows changed meanwhile.

        A job given up or overtaken meanwhile (:meth:`drop_half`, :meth:`cancel_half`, a new
        :meth:`bulk_load`) has its result thrown away. Reserve the matrix's capacity on the
        shadow beforehand (off the event loop) to keep the copy out of this call.
        """
        if not self._half_job or token != self._half_token:
            return
        dirty, self._half_dirty, self._half_job = self._half_dirty or set(), None, False
        half.reserve(len(self._mat))
        for pos in dirty:
            if pos < self._n:
                half.put(pos, self._mat[pos])
        half.resize(self._n)
        self._half = half  # complete before a search in another thread can see it

    def cancel_half(self) -> None:
        """Give up the shadow :meth:`half_builder` started (its build failed): the float32 scan serves."""
        self._half_dirty, self._half_job, self._half_from = None, False, None
        self._half_token += 1

    def __contains__(self, seq: object) -> bool:
        return seq in self._pos

    def _code(self, attr: str, value: str | None) -> int:
        vocab = self._vocab[attr]
        code = vocab.get(value)
        if code is None:
            code = vocab[value] = len(vocab)
        return code

    def _grow(self, need: int) -> None:
        cap = len(self._seqs)
        if need <= cap:
            return
        new = max(need, cap * 2)
        mat = np.zeros((new, self.dimension), dtype=np.float32)
        mat[: self._n] = self._mat[: self._n]
        self._mat = mat
        self._seqs = np.resize(self._seqs, new)
        self._codes = {a: np.resize(c, new) for a, c in self._codes.items()}
        if self._half is not None:
            self._half.reserve(new)

    def upsert(self, seq: int, vector: F32, attrs: Mapping[str, str | None]) -> None:
        """Add or replace the entry ``seq``."""
        pos = self._pos.get(seq)
        if pos is None:
            self._grow(self._n + 1)
            pos = self._n
            self._n += 1
            self._pos[seq] = pos
            self._seqs[pos] = seq
        self._mat[pos] = vector
        for attr in ATTRS:
            self._codes[attr][pos] = self._code(attr, attrs.get(attr))
        self._touched(pos)
        self._update_half()

    def upsert_many(self, seqs: Sequence[int], matrix: F32, attrs: Sequence[Mapping[str, str | None]]) -> None:
        """:meth:`upsert` of each ``seqs[i]`` with ``matrix[i]`` and ``attrs[i]``, in order, new rows in one copy."""
        if len(seqs) != len(matrix) or len(seqs) != len(attrs):
            msg = f"upsert_many needs one vector and one attrs per seq, got {len(seqs)}, {len(matrix)}, {len(attrs)}"
            raise ValueError(msg)
        last = {int(seq): i for i, seq in enumerate(seqs)}  # a seq given twice: its last row wins, as in turn
        old = [(seq, i) for seq, i in last.items() if seq in self._pos]
        new = [(seq, i) for seq, i in last.items() if seq not in self._pos]
        for seq, i in old:
            self.upsert(seq, matrix[i], attrs[i])
        if not new:
            return
        start, rows = self._n, [i for _, i in new]
        self._grow(start + len(new))
        end = start + len(new)
        self._mat[start:end] = matrix[rows]
        self._seqs[start:end] = [seq for seq, _ in new]
        for attr in ATTRS:
            self._codes[attr][start:end] = [self._code(attr, attrs[i].get(attr)) for i in rows]
        self._pos.update((seq, start + k) for k, (seq, _) in enumerate(new))
        self._n = end
        if self._half is not None:
            self._half.put(slice(start, end), self._mat[start:end])
        elif self._half_dirty is not None:
            self._half_dirty.update(range(start, end))
        self._update_half()

    def bulk_load(self, seqs: Sequence[int], matrix: F32, attrs: Mapping[str, Sequence[str | None]]) -> None:
        """Replace the whole index at once (used on open and after a foreign write); ``matrix`` is taken, not copied.

        The float16 shadow goes with the old rows; a :meth:`half_builder` job makes the new one.
        """
        n = len(seqs)
        self._vocab = {a: {} for a in ATTRS}
        if n and matrix.dtype == np.float32 and matrix.flags["C_CONTIGUOUS"] and matrix.shape == (n, self.dimension):
            self._mat = matrix  # grown (copied) by the first write that needs room
        else:
            self._mat = np.zeros((max(n, 1024), self.dimension), dtype=np.float32)
            self._mat[:n] = matrix
        capacity = len(self._mat)
        self._seqs = np.zeros(capacity, dtype=np.int64)
        self._codes = {a: np.zeros(capacity, dtype=np.int32) for a in ATTRS}
        seq_list = [int(s) for s in seqs]
        if n:
            self._seqs[:n] = seq_list
            for attr in ATTRS:
                values = attrs.get(attr, [None] * n)
                vocab = self._vocab[attr]
                for value in dict.fromkeys(values):
                    vocab.setdefault(value, len(vocab))
                if len(vocab) > 1:
                    self._codes[attr][:n] = np.array(list(map(vocab.__getitem__, values)), dtype=np.int32)
        self._n = n
        self._pos = dict(zip(seq_list, range(n), strict=True))
        self._half, self._half_job, self._half_dirty = None, False, None
        self._half_token += 1

    def remove(self, seq: int) -> None:
        """Drop the entry ``seq`` if present (swap with the last entry)."""
        pos = self._pos.pop(seq, None)
        if pos is None:
            return
        last = self._n - 1
        if pos != last:
            moved = int(self._seqs[last])
            self._mat[pos] = self._mat[last]
            self._seqs[pos] = moved
            for codes in self._codes.values():
                codes[pos] = codes[last]
            self._pos[moved] = pos
            self._touched(pos)
        self._n = last
        self._update_half()

    def vector(self, seq: int) -> F32 | None:
        """A copy of the stored vector of ``seq``, or ``None``."""
        pos = self._pos.get(seq)
        return None if pos is None else self._mat[pos].copy()

    def mask(
        self, where: Mapping[str, Sequence[str | None]] | None, allowed: npt.NDArray[np.int64] | None = None
    ) -> npt.NDArray[np.bool_] | None:
        """Which entries match ``where`` and ``allowed`` (``None``: all of them, no mask needed)."""
        n = self._n
        mask: npt.NDArray[np.bool_] | None = None if allowed is None else np.isin(self._seqs[:n], allowed)
        for attr, values in (where or {}).items():
            vocab = self._vocab[attr]
            codes = [vocab[v] for v in values if v in vocab]
            if len(codes) == len(vocab):
                continue  # every value present is allowed: this condition excludes nothing
            hit = np.isin(self._codes[attr][:n], np.asarray(codes, dtype=np.int32))
            mask = hit if mask is None else mask & hit
        return mask

    def search(
        self,
        query: F32,
        k: int,
        where: Mapping[str, Sequence[str | None]] | None = None,
        allowed: npt.NDArray[np.int64] | None = None,
        *,
        mask: npt.NDArray[np.bool_] | None = None,
        report: ScanReport | None = None,
    ) -> list[tuple[int, float]]:
        """The ``k`` best ``(seq, cosine)`` pairs, best first, among entries matching ``where``.

        ``where`` maps an attribute of :data:`ATTRS` to the values allowed for it;
        ``allowed``, when given, lists the only seqs that may be returned; ``mask``, when
        given, is :meth:`mask`'s answer for them, computed once by the caller. ``report``,
        when given, says how this call scanned.
        """
        n = self._n
        if report is not None:
            report.scan, report.candidates = "float32", 0
        if n == 0 or k <= 0:
            return []
        if mask is None and (where or allowed is not None):
            mask = self.mask(where, allowed)
        matching = n if mask is None else int(np.count_nonzero(mask))
        half = self._half  # read once: the event loop may drop it while this runs in a worker thread
        if half is not None and matching >= n * _HALF_MAX_SHARE:
            found = self._search_half(half, query, k, mask, matching)
            if found is not None:
                if report is not None:
                    report.scan, report.candidates = "float16", found[1]
                return found[0]
        if mask is None:
            scores = self._mat[:n] @ query
            return [(int(self._seqs[i]), float(scores[i])) for i in self._top(scores, k)]
        candidates = np.flatnonzero(mask)
        if len(candidates) == 0:
            return []
        # A selective filter scores only the rows that pass it; a broad one scans and picks.
        sub = self._mat[candidates] @ query if len(candidates) * 4 < n else (self._mat[:n] @ query)[candidates]
        top = self._top(sub, k)
        return [(int(self._seqs[candidates[i]]), float(sub[i])) for i in top]

    def _search_half(
        self, half: HalfScan, query: F32, k: int, mask: npt.NDArray[np.bool_] | None, matching: int
    ) -> tuple[list[tuple[int, float]], int] | None:
        """The exact top ``k`` and how many shadow candidates gave it; ``None`` when the float32 scan is cheaper.

        A row's float32 score lies within the margin of its shadow score. So every row outside
        a candidate list scores at most the list's lowest shadow score plus the margin: once
        the list's k-th exact score reaches that, nothing outside can beat it (ties aside).
        Otherwise that k-th score, less the margin, is a shadow score every row of the true
        top k exceeds, and one range pass collects them all.
        """
        n = self._n
        margin = half.margin(query)
        fetch = math.ceil(_HALF_OVERSAMPLE * max(k, 16) * n / matching)
        if not math.isfinite(margin) or fetch > n * _HALF_MAX_SHARE:
            return None
        positions, approx = half.top(query, fetch)
        candidates = positions if mask is None else positions[mask[positions]]
        exact = self._mat[candidates] @ query
        top = self._top(exact, k)
        if len(top) < k:
            return None  # the filter left too few candidates to bound anything
        kth = float(exact[top[-1]])
        if kth < float(approx[-1]) + margin:
            positions, _ = half.above(query, kth - margin)
            if len(positions) > n * _HALF_MAX_SHARE:
                return None  # near-duplicates by the thousand: the float32 scan is cheaper
            candidates = positions if mask is None else positions[mask[positions]]
            exact = self._mat[candidates] @ query
            top = self._top(exact, k)
            if len(top) < k:
                return None
        return [(int(self._seqs[candidates[i]]), float(exact[i])) for i in top], len(positions)

    def scores(self, query: F32, seqs: Sequence[int]) -> dict[int, float]:
        """Cosine of each of ``seqs`` the index holds (the others are left out), in one product."""
        present = [seq for seq in seqs if seq in self._pos]
        if not present:
            return {}
        found = self._mat[[self._pos[seq] for seq in present]] @ query
        return dict(zip(present, found.tolist(), strict=True))

    def rescore(
        self, query: F32, seqs: npt.NDArray[np.int64], mask: npt.NDArray[np.bool_] | None = None
    ) -> list[tuple[int, float]]:
        """Exact ``(seq, cosine)`` of the present ``seqs`` that pass ``mask``, best first."""
        pos = np.fromiter((self._pos.get(int(s), -1) for s in seqs), dtype=np.int64, count=len(seqs))
        pos = pos[pos >= 0]
        if mask is not None:
            pos = pos[mask[pos]]
        if len(pos) == 0:
            return []
        scores = self._mat[pos] @ query
        order = np.argsort(-scores, kind="stable")
        return [(int(self._seqs[pos[i]]), float(scores[i])) for i in order]

    def snapshot(self) -> tuple[npt.NDArray[np.int64], F32]:
        """Copies of the seqs and the matrix as they are now (to build another index from)."""
        return self._seqs[: self._n].copy(), self._mat[: self._n].copy()

    @staticmethod
    def _top(scores: F32, k: int) -> npt.NDArray[np.intp]:
        if k >= len(scores):
            return np.argsort(-scores, kind="stable")
        part = np.argpartition(-scores, k - 1)[:k]
        return part[np.argsort(-scores[part], kind="stable")]
