"""The approximate vector index: faiss IVF over 8-bit scalar-quantised codes, keyed by ``seq``.

It only proposes candidates: the caller re-scores them exactly against the float32 RAM
matrix (:class:`~elastic_memory.storage.vectors.ram.RamIndex`), so quantisation never
changes a score and an oversampled candidate list keeps recall@10 near exact. On the
benchmark workload (``benchmarks/peers``) IVF-SQ8 with ``nlist ~ sqrt(n)`` reached
recall@10 0.998-1.000 at 100k and 1M in 0.2-0.9 ms, where faiss HNSW topped out at
0.96-0.97 and took longer to build; IVF also removes ids in place, which HNSW cannot.

faiss is an optional extra (``pip install "elastic-memory[ann]"``): :func:`available`
says whether it imports, and nothing here is imported before it is needed.

>>> import numpy as np
>>> if available():
...     rng = np.random.default_rng(0)
...     m = rng.standard_normal((500, 8)).astype("f4")
...     m /= np.linalg.norm(m, axis=1, keepdims=True)
...     idx = AnnIndex.build(np.arange(500), m)
...     bool(idx.candidates(m[7], 10)[0] == 7)
... else:
...     True
True
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["AnnIndex", "available", "bytes_per_vector", "faiss_module", "nlist_for", "one_omp_thread"]

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]
#: Training points per inverted list (faiss warns below 39).
_TRAIN_PER_LIST = 40
#: Below this many rows the 8-bit codes use the fixed range of a unit vector's coordinates,
#: [-1, 1]: a range trained on a handful of rows would squash later vectors to one code.
_MIN_TRAIN_ROWS = 1000
_MIN_NPROBE = 8


@functools.cache
def faiss_module() -> Any:
    """The faiss module, imported on first use (that takes a fraction of a second: first call it off the event loop)."""
    import faiss  # noqa: PLC0415 - optional extra, imported on first use

    return faiss


@contextlib.contextmanager
def one_omp_thread() -> Iterator[None]:
    """One OpenMP thread for one query (faiss parallelises over queries, not rows), restored after.

    The setting belongs to the calling thread, and worker threads are pooled: a build on the
    same worker later must get every core back.
    """
    faiss = faiss_module()
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


@functools.cache
def available() -> bool:
    """True when faiss (the ``ann`` extra) is installed; it is imported by the first build, off the event loop."""
    try:
        return importlib.util.find_spec("faiss") is not None
    except (ImportError, ValueError):  # a broken install, or a module blocked in sys.modules
        return False


def bytes_per_vector(dimension: int) -> int:
    """RAM one indexed vector takes: its 8-bit code (a byte a dimension), its id and its direct-map entry."""
    return dimension + 8 + 16


def nlist_for(count: int) -> int:
    """Inverted lists for ``count`` vectors: about ``sqrt(count)``, with enough points to train each.

    >>> nlist_for(100_000), nlist_for(1_000_000), nlist_for(500), nlist_for(0)
    (316, 1000, 12, 1)
    """
    return max(1, min(round(math.sqrt(max(count, 1))), count // _TRAIN_PER_LIST))


class AnnIndex:
    """IVF-SQ8 candidates by inner product (cosine on unit vectors)."""

    def __init__(self, index: Any, dimension: int, built_for: int = 0) -> None:
        self._index = index
        self.dimension = dimension
        #: Rows the index was built from: once the store doubles past it, it is rebuilt.
        self.built_for = built_for

    @classmethod
    def build(cls, seqs: Sequence[int] | I64, matrix: F32, *, seed: int = 0) -> AnnIndex:
        """Train on a sample of ``matrix`` and add every row under its seq (CPU-bound: run it in a thread)."""
        faiss = faiss_module()
        n, dimension = matrix.shape
        nlist = nlist_for(n)
        quantizer = faiss.IndexFlatIP(dimension)
        index = faiss.IndexIVFScalarQuantizer(
            quantizer, dimension, nlist, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
        )
        index.by_residual = False  # codes of the vectors themselves: their coordinates lie in [-1, 1]
        index.cp.seed = seed
        index.cp.min_points_per_centroid = 1  # small stores train on what they have, silently
        data = np.ascontiguousarray(matrix, dtype=np.float32)
        if n > nlist * _TRAIN_PER_LIST:
            pick = np.random.default_rng(seed).choice(n, nlist * _TRAIN_PER_LIST, replace=False)
            sample = data[np.sort(pick)]
        else:
            sample = data
        if len(sample):
            index.train(sample)
        else:  # an empty store: train on one placeholder direction so writes can be added later
            index.train(np.eye(1, dimension, dtype=np.float32))
        if n < _MIN_TRAIN_ROWS:
            fixed = np.concatenate([np.full(dimension, -1.0), np.full(dimension, 2.0)]).astype(np.float32)
            faiss.copy_array_to_vector(fixed, index.sq.trained)  # per dimension: min -1, width 2
        index.set_direct_map_type(faiss.DirectMap.Hashtable)  # O(1) removal by id
        index.nprobe = min(nlist, max(_MIN_NPROBE, nlist // 50))
        out = cls(index, dimension, built_for=n)
        if n:
            out.add(np.asarray(seqs, dtype=np.int64), data)
        return out

    def __len__(self) -> int:
        return int(self._index.ntotal)

    @property
    def nlist(self) -> int:
        """Inverted lists (IVF cells)."""
        return int(self._index.nlist)

    @property
    def nprobe(self) -> int:
        """Cells visited per search."""
        return int(self._index.nprobe)

    @property
    def nbytes(self) -> int:
        """Approximate RAM held: codes, ids and direct map per vector, plus the centroids."""
        return int(len(self) * bytes_per_vector(self.dimension) + self.nlist * self.dimension * 4)

    def add(self, seqs: I64, vectors: F32) -> None:
        """Add rows under ``seqs`` (which must not be present)."""
        if len(seqs):
            self._index.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32), np.asarray(seqs, dtype=np.int64))

    def remove(self, seqs: Sequence[int] | I64) -> int:
        """Drop ``seqs`` that are present; returns how many were removed."""
        if not len(seqs):
            return 0
        faiss = faiss_module()
        ids = np.ascontiguousarray(seqs, dtype=np.int64)
        return int(self._index.remove_ids(faiss.IDSelectorArray(len(ids), faiss.swig_ptr(ids))))

    def candidates(self, query: F32, count: int) -> I64:
        """Up to ``count`` seqs near ``query``, roughly best first (re-score them exactly)."""
        if count <= 0 or len(self) == 0:
            return np.empty(0, dtype=np.int64)
        with one_omp_thread():  # one query: threads cost more than they give (perf.md 2.1)
            _, ids = self._index.search(np.ascontiguousarray(query, dtype=np.float32).reshape(1, -1), count)
        found: I64 = ids[0]
        return found[found >= 0]
