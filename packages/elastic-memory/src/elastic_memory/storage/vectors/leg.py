"""The vector leg of a store: which tier serves it, and searching it without losing rows.

Tiers:

- ``"vec0"``: sqlite-vec's own scan, no RAM beyond SQLite's cache (the governor's LITE);
- ``"ram"``: an exact float32 matrix, :class:`RamIndex`, loaded lazily from the vec0 table
  and kept in step with committed writes (STANDARD); with faiss installed and half the
  matrix again within the RAM budget, a float16 shadow of it halves the bytes a broad scan
  reads, with the same answer (not kept beside an ANN index, which serves those scans);
- ``"ann"``: the RAM matrix plus an IVF index (:class:`AnnIndex`, faiss) that proposes an
  oversampled candidate list, re-scored exactly against the matrix (STANDARD and FULL,
  from ``ann_threshold`` vectors on, within the RAM budget).

``"auto"`` picks RAM while the matrix fits the RAM budget, and ANN above the threshold when
faiss is installed and the governor allows it; the ANN index is then built in a worker
thread while the exact matrix serves. A forced ``"ann"`` builds it before its first search.

Every tier filters during the scan where it can (agent, scope, pool, type, session) and
checks every other condition against the row afterwards, fetching more candidates until
``limit`` rows pass or none are left, so a filter never silently returns fewer rows than
exist; ANN falls back to the exact matrix when a filter is too selective for its candidate
list. The vectors live only in the database: indexes are rebuilt from it on open. The
caller holds the store's lock around every call.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

import numpy as np
import numpy.typing as npt

from ...filters import Filters
from ...types import MemoryRecord
from .. import queries as q
from ..rows import from_blob, record_from_row, seq_of, to_blob
from . import ann as ann_index
from .ann import AnnIndex
from .blas import one_thread
from .ram import ATTRS, HALF_FROM, HalfJob, RamIndex, ScanReport

__all__ = ["DEFAULT_ANN_THRESHOLD", "KEEP", "Query", "VectorLeg", "chunks", "verified"]

log = logging.getLogger("elastic_memory")

F32 = npt.NDArray[np.float32]
Query = Callable[[str, Sequence[Any]], Awaitable[list[Any]]]
_VEC0_MAX_K = 4096
#: Above this many matrix cells (about 50k 384-d vectors, ~3 ms) a RAM scan runs in a worker
#: thread, off the event loop; below, the thread hop would cost as much as the scan.
_THREAD_CELLS = 20_000_000
#: A tag filter matching fewer than 1 / _SELECTIVE of the indexed rows masks the RAM scan.
_SELECTIVE = 10
#: ``"auto"`` builds the ANN index from this many vectors on (below, the exact scan is as fast).
DEFAULT_ANN_THRESHOLD = 50_000
#: ANN candidates per row wanted, before exact re-scoring.
_OVERSAMPLE = 4
#: Above this many ANN candidates for one search, the exact scan is the cheaper way.
_ANN_MAX_FETCH = 8192


class _Keep:
    def __repr__(self) -> str:
        return "KEEP"


#: Passed as a row's vector: leave the stored vector as it is.
KEEP: Any = _Keep()


def chunks(values: Sequence[Any], size: int = q.MAX_PARAMS) -> Iterable[Sequence[Any]]:
    """``values`` in slices small enough for one statement's parameters."""
    for i in range(0, len(values), size):
        yield values[i : i + size]


def default_ram_budget() -> int:
    """A quarter of the RAM available now, at most 4 GiB."""
    try:
        import psutil  # noqa: PLC0415 - only needed once per index load

        available = int(psutil.virtual_memory().available)
    except Exception:  # noqa: BLE001 - no psutil reading: assume a small machine
        available = 2 << 30
    return min(available // 4, 4 << 30)


async def verified(
    query: Query,
    candidates: list[tuple[int, float]],
    filters: Filters,
    *,
    now: float,
    records: dict[int, MemoryRecord] | None = None,
) -> list[tuple[int, float]]:
    """The candidates ``(seq, score)`` that are live and match ``filters``, order kept.

    With ``records``, the same query reads whole rows and files them there by seq, so the
    caller need not read the hits again.
    """
    ok: set[int] = set()
    for chunk in chunks([s for s, _ in candidates]):
        if records is None:
            where, params = q.live_filter(filters, now=now)
            sql, p = q.in_list("m.seq", chunk)
            rows = await query(f"SELECT m.seq FROM memories AS m WHERE {sql} AND {where}", [*p, *params])
            ok.update(int(r[0]) for r in rows)
        else:
            for row in await query(*q.select_rows(by="seq", values=chunk, filters=filters, now=now)):
                record = record_from_row(row)
                records[seq_of(row)] = record
                ok.add(seq_of(row))
    return [c for c in candidates if c[0] in ok]


class VectorLeg:
    """Vector search over one store's ``memories_vec`` table."""

    def __init__(
        self,
        query: Query,
        snapshot: Callable[[], AbstractAsyncContextManager[None]],
        *,
        tier: str,
        ram_budget_bytes: int | None,
        clock: Callable[[], float],
        ann_threshold: int = DEFAULT_ANN_THRESHOLD,
    ) -> None:
        self._query = query
        self._snapshot = snapshot
        self._setting = tier
        self._budget = ram_budget_bytes
        self._clock = clock
        self._fits: bool | None = None
        self.ann_threshold = ann_threshold
        self.ram: RamIndex | None = None
        self.ram_allowed = True
        self.ann: AnnIndex | None = None
        self.ann_allowed = True
        self.ann_error: str | None = None
        # Every drop of the ANN index starts a new epoch: a build started in an older one
        # discards its result. One build runs at a time, whatever its epoch.
        self._epoch = 0
        self._build: asyncio.Task[None] | None = None
        self._half_build: asyncio.Task[None] | None = None
        self._build_epoch = -1
        self._ann_dirty: set[int] = set()  # seqs changed since the current build's snapshot
        self._ann_failed_epoch: int | None = None
        self._ann_fits: bool | None = None  # the RAM budget's answer, asked once per index load
        self._closed = False
        #: Rows left out of the last index load because their stored vector is unusable.
        self.skipped = 0
        self._records: dict[int, MemoryRecord] | None = None  # filled by the search running now

    def tier(self) -> str:
        """``"ann"``, ``"ram"`` or ``"vec0"``: what serves (or will serve) searches."""
        if self._setting == "ann" and self.ann is None and self.ann_error is not None:
            return "ram"  # the build failed: the exact matrix serves
        if self._setting != "auto":
            return self._setting
        if not self.ram_allowed:
            return "vec0"
        if self.ann is not None:
            return "ann"
        return "ram" if self.ram is not None or self._fits is not False else "vec0"

    def allow_ram(self, allowed: bool, *, ann: bool = True) -> None:
        """Let ``"auto"`` use the RAM index (and the ANN index) or not: the governor's tier; refusing frees them now."""
        self.ram_allowed = allowed
        self.ann_allowed = ann
        if self._setting == "auto":
            if not allowed:
                self.invalidate()
            elif not ann:
                self._drop_ann()  # a build running now is discarded too
                self._restore_half()

    def invalidate(self) -> None:
        """Forget the RAM and ANN indexes (another connection changed the file); reloaded on demand."""
        self.ram = None
        self._fits = None
        self._ann_fits = None
        self._drop_ann()

    def _drop_ann(self) -> None:
        self.ann = None
        self._epoch += 1  # a build still running finds its epoch gone and discards its work
        self._ann_dirty = set()

    def _half_fits(self, count: int, dimension: int) -> bool:
        """Whether the matrix and its float16 shadow (half the matrix again) fit the RAM budget."""
        budget = self._budget if self._budget is not None else default_ram_budget()
        return count * dimension * 4 * 3 // 2 <= budget

    def _restore_half(self) -> None:
        """No ANN index will serve the loaded matrix: let it have its float16 shadow (built on the next search)."""
        ram = self.ram
        if ram is not None and self._half_fits(len(ram), ram.dimension):
            ram.allow_half(HALF_FROM)

    async def close(self) -> None:
        """Refuse new builds, let a running one finish (its thread cannot be interrupted), drop the indexes."""
        self._closed = True
        builds = [b for b in (self._build, self._half_build) if b is not None]
        self.invalidate()
        if builds:
            await asyncio.gather(*builds, return_exceptions=True)

    @property
    def building(self) -> bool:
        """True while an ANN index is being built in a worker thread."""
        return self._build is not None

    async def ensure(self, dimension: int) -> None:
        """Load the RAM index and start (forced tier: finish) the ANN build when this tier wants them."""
        ram = await self._ensure_ram(dimension)
        if ram is not None:
            await self._ensure_ann(ram)
            self._start_half(ram)  # when no ANN index came or stayed (a no-op otherwise)

    async def wait_for_ann(self) -> None:
        """Wait until the running ANN build has finished (or failed: see :attr:`ann_error`)."""
        while self._build is not None:
            await asyncio.shield(self._build)

    @property
    def busy(self) -> bool:
        """True while an index (ANN, or the float16 shadow) is being built in a worker thread."""
        return self._build is not None or self._half_build is not None

    async def wait_for_builds(self) -> None:
        """Wait until the running builds have finished (or failed)."""
        await self.wait_for_ann()
        while self._half_build is not None:
            await asyncio.shield(self._half_build)

    def _wants_ann(self, ram: RamIndex) -> bool:
        if self._setting == "ann":
            return True
        # Hysteresis: an index, once built, stays until the store falls to half the threshold.
        floor = self.ann_threshold if self.ann is None else self.ann_threshold // 2
        if self._setting != "auto" or not self.ann_allowed or len(ram) < floor:
            return False
        if not ann_index.available():
            return False
        if self._ann_fits is None:  # asked once per load: a build must not talk itself out of RAM
            budget = self._budget if self._budget is not None else default_ram_budget()
            # matrix row + index entry (a float16 shadow is dropped when the index arrives)
            per_vector = ram.dimension * 4 + ann_index.bytes_per_vector(ram.dimension)
            self._ann_fits = len(ram) * per_vector <= budget
        return self._ann_fits

    def _start_build(self, ram: RamIndex) -> None:
        self._ann_dirty = set()
        self._build_epoch = self._epoch
        self._build = asyncio.ensure_future(self._build_ann(ram, self._epoch))

    async def _ensure_ann(self, ram: RamIndex) -> AnnIndex | None:
        """The ANN index when this tier wants one: started in the background (auto) or built now (forced)."""
        if self._closed:
            return None
        if not self._wants_ann(ram):
            if self.ann is not None:
                self._drop_ann()  # the store shrank below half the threshold, or the setting changed
                self._restore_half()
            return None
        # Rebuilt (in the background, the old index serving meanwhile) each time the store
        # doubles: the cells and the codes' ranges were fitted to the rows it was built from.
        stale = self.ann is not None and len(ram) >= 2 * max(self.ann.built_for, 1)
        wanted = (self.ann is None or stale) and self._ann_failed_epoch != self._epoch
        if wanted and self._build is None:
            self._start_build(ram)
        if self.ann is None and self._setting == "ann":
            while self._build is not None and not self._closed:  # a stale build first, then this epoch's
                await self.wait_for_ann()
                if self.ann is None and self._ann_failed_epoch != self._epoch and self.ram is ram:
                    self._start_build(ram)
                else:
                    break
        return self.ann

    async def _build_ann(self, ram: RamIndex, epoch: int) -> None:
        """Build from a snapshot of the matrix in a worker thread, then replay what changed meanwhile."""
        try:
            seqs, matrix = ram.snapshot()
            built = await asyncio.to_thread(AnnIndex.build, seqs, matrix)
            del matrix
            if self.ram is not ram or self._epoch != epoch or self._closed:
                return  # the index was dropped while building: this result is stale
            dirty = np.fromiter(self._ann_dirty, dtype=np.int64, count=len(self._ann_dirty))
            built.remove(dirty)
            self._ann_add(built, ram, dirty)
            self.ann, self.ann_error = built, None
            ram.drop_half()  # ANN serves the broad searches the shadow was for: its RAM goes back
        except Exception as e:  # noqa: BLE001 - a failed build leaves the exact matrix serving
            if self._epoch == epoch:
                self.ann_error = f"{type(e).__name__}: {e}"
                self._ann_failed_epoch = epoch  # not retried until the index reloads
                log.warning("elastic-memory: the ANN index could not be built (%s); exact search serves", e)
                if self.ann is None and self.ram is ram:
                    self._restore_half()
        finally:
            self._build = None
            if self._epoch == epoch:
                self._ann_dirty = set()

    @staticmethod
    def _ann_add(ann: AnnIndex, ram: RamIndex, seqs: npt.NDArray[np.int64]) -> None:
        """Add the ``seqs`` that the RAM index holds (their vectors from it)."""
        present = [(int(s), v) for s in seqs if (v := ram.vector(int(s))) is not None]
        if present:
            ann.add(np.array([s for s, _ in present], dtype=np.int64), np.stack([v for _, v in present]))

    async def _ensure_ram(self, dimension: int) -> RamIndex | None:
        if self.ram is not None:
            return self.ram
        if self._setting == "vec0" or (self._setting == "auto" and not self.ram_allowed):
            return None
        async with self._snapshot():  # one consistent read, whatever other processes commit
            rows = await self._query(
                "SELECT count(*) FROM memories WHERE has_vector = 1 AND deleted_at IS NULL AND archived = 0", ()
            )
            count = int(rows[0][0])
            need = count * dimension * 4
            budget = self._budget if self._budget is not None else default_ram_budget()
            self._fits = self._setting in ("ram", "ann") or need <= budget
            if not self._fits:
                return None
            # The float16 shadow costs half the matrix again, within the budget whatever the
            # tier; where an ANN index will serve, the RAM goes to it instead.
            ann_expected = self._setting == "ann" or (
                self._setting == "auto"
                and self.ann_allowed
                and count >= self.ann_threshold
                and count * (dimension * 4 + ann_index.bytes_per_vector(dimension)) <= budget
                and ann_index.available()
            )
            half_from = HALF_FROM if self._half_fits(count, dimension) and not ann_expected else None
            rows = await self._query(
                "SELECT seq, agent_id, scope, pool, type, session_id FROM memories "
                "WHERE deleted_at IS NULL AND archived = 0 AND has_vector = 1",  # rowid order
                (),
            )
            seqs = [int(r[0]) for r in rows]
            matrix = await self._matrix_from_chunks(seqs, dimension)
            if matrix is None:
                present, matrix = await self._matrix_from_rows(seqs, dimension)
                rows = [r for r, keep in zip(rows, present, strict=True) if keep]
        usable = _usable(matrix)
        self.skipped = int(len(usable) - usable.sum())
        if self.skipped:
            log.warning(
                "elastic-memory: %d stored vectors are damaged or zero (not finite unit vectors) and were left out "
                "of the index; "
                "re-embed those memories (update them with a new vector)",
                self.skipped,
            )
            rows = [r for r, ok in zip(rows, usable, strict=True) if ok]
            matrix = matrix[usable]
        index = RamIndex(dimension, half_from=half_from)
        if rows:
            attrs = {a: [r[1 + i] for r in rows] for i, a in enumerate(ATTRS)}
            index.bulk_load([int(r[0]) for r in rows], matrix, attrs)
        self.ram = index
        self._start_half(index)  # in a worker thread (faiss imported there too), the float32 scan serving meanwhile
        return index

    def _start_half(self, ram: RamIndex) -> None:
        if self._closed or self._half_build is not None or self.ann is not None:
            return
        if self._build is not None and self._build_epoch == self._epoch:
            return  # an ANN index is on its way: its RAM, not the shadow's (it drops the shadow on arrival)
        job = ram.half_builder()
        if job is not None:
            self._half_build = asyncio.ensure_future(self._build_half(ram, job))

    async def _build_half(self, ram: RamIndex, job: HalfJob) -> None:
        try:
            half = await asyncio.to_thread(job.build)
            while half.capacity < ram.capacity:  # the matrix grew meanwhile: make room here, not on the loop
                await asyncio.to_thread(half.reserve, ram.capacity)
            if self.ram is ram and not self._closed:
                ram.attach_half(half, job.token)
        except Exception as e:  # noqa: BLE001 - the float32 scan serves without it
            ram.cancel_half()
            log.warning("elastic-memory: the float16 copy of the vector matrix could not be built (%s)", e)
        except BaseException:
            ram.cancel_half()
            raise
        finally:
            self._half_build = None
        if self.ram is not None and self.ram is not ram:
            self._start_half(self.ram)  # the index was reloaded meanwhile: its own shadow now

    async def _matrix_from_rows(self, seqs: Sequence[int], dimension: int) -> tuple[list[bool], F32]:
        """Which of ``seqs`` have a well-sized vector, and those vectors in order, read through vec0 (~10 us a row)."""
        found: dict[int, bytes] = {}
        width = 4 * dimension
        for chunk in chunks(list(seqs), 10_000):
            found.update((s, b) for s, b in await self._query(*q.vec_by_rowids(chunk)) if len(b) == width)
        present = [s in found for s in seqs]
        blob = b"".join(found[s] for s in seqs if s in found)
        return present, np.frombuffer(blob, dtype="<f4").reshape(-1, dimension).astype(np.float32)

    async def _matrix_from_chunks(self, seqs: Sequence[int], dimension: int) -> F32 | None:
        """The same matrix read from sqlite-vec 0.1's chunk tables, about 4x faster on open.

        This reads storage internals of sqlite-vec, so it is checked: it runs only on tables
        created by a 0.1.x release, every row must be found, and a sample of rows must equal
        what vec0 itself returns. Any doubt returns ``None`` and the caller reads row by row.
        """
        try:
            info = dict(await self._query("SELECT key, value FROM memories_vec_info", ()))
            if not str(info.get("CREATE_VERSION", "")).startswith("v0.1.") or not seqs:
                return None
            table = np.array(
                await self._query("SELECT rowid, chunk_id, chunk_offset FROM memories_vec_rowids ORDER BY rowid", ()),
                dtype=np.int64,
            ).reshape(-1, 3)
            wanted = np.asarray(seqs, dtype=np.int64)
            at = np.searchsorted(table[:, 0], wanted)
            if (at >= len(table)).any() or (table[np.minimum(at, len(table) - 1), 0] != wanted).any():
                return None  # a live memory without a vec0 row: let the public path decide
            places = table[at, 1:]
            del table
            # One chunk (1,024 vectors) at a time straight into the matrix: the load never
            # holds more than the matrix and one chunk.
            by_chunk = np.argsort(places[:, 0], kind="stable")
            chunk_ids, firsts = np.unique(places[by_chunk, 0], return_index=True)
            bounds = [*firsts.tolist(), len(by_chunk)]
            matrix = np.empty((len(seqs), dimension), dtype=np.float32)
            for n, cid in enumerate(chunk_ids.tolist()):
                rows = await self._query("SELECT vectors FROM memories_vec_vector_chunks00 WHERE rowid = ?", (cid,))
                if not rows:
                    return None  # a rowid points at a chunk that is not there
                block = np.frombuffer(rows[0][0], dtype="<f4").reshape(-1, dimension)
                members = by_chunk[bounds[n] : bounds[n + 1]]
                matrix[members] = block[places[members, 1]]
            picks = np.unique(np.linspace(0, len(seqs) - 1, num=min(16, len(seqs)), dtype=np.int64))
            sample = dict(await self._query(*q.vec_by_rowids([seqs[i] for i in picks])))
            if any(not np.array_equal(from_blob(sample.get(seqs[i], b"")), matrix[i]) for i in picks):
                return None
        except Exception:  # noqa: BLE001 - any surprise in the internals means: take the slow, public path
            return None
        return matrix

    async def search(
        self,
        vector: F32,
        filters: Filters,
        limit: int,
        *,
        dimension: int,
        records: dict[int, MemoryRecord] | None = None,
    ) -> tuple[list[tuple[int, float]], dict[str, Any]]:
        """``(seq, cosine)`` best first among live rows matching ``filters``, and how it was served.

        The second value holds ``vector_index`` (the tier that answered) and, for ANN,
        ``ann_candidates`` or ``ann_fallback`` (why the exact matrix answered instead).
        ``records``, when given, receives the rows read while checking the candidates.
        """
        self._records = records
        try:
            return await self._search(vector, filters, limit, dimension)
        finally:
            self._records = None

    async def _search(
        self, vector: F32, filters: Filters, limit: int, dimension: int
    ) -> tuple[list[tuple[int, float]], dict[str, Any]]:
        ram = await self._ensure_ram(dimension)
        if ram is None:
            return await self._search_vec0(vector, filters, limit), {"vector_index": "vec0"}
        where, allowed = await self._prefilter(ram, filters)
        ann = await self._ensure_ann(ram) if self._setting == "ann" else self.ann
        if ann is not None:
            found, how = await self._search_ann(ram, ann, vector, filters, limit, where, allowed)
        else:
            report = ScanReport()
            found = await self._search_ram(ram, vector, filters, limit, where, allowed, report=report)
            how = {"vector_index": "ram", **_scan_detail(report)}
            if self._setting == "ann" and self.ann_error is not None:
                how["ann_fallback"] = f"the ANN index could not be built: {self.ann_error}"
        if self._setting == "auto":
            await self._ensure_ann(ram)  # after this answer: a build does not slow the query that starts it
        if ann is None:
            self._start_half(ram)  # a shadow wanted again since an ANN index went away (a no-op otherwise)
        return found, how

    async def _verified(self, candidates: list[tuple[int, float]], filters: Filters) -> list[tuple[int, float]]:
        return await verified(self._query, candidates, filters, now=self._clock(), records=self._records)

    async def _prefilter(
        self, ram: RamIndex, filters: Filters
    ) -> tuple[dict[str, Sequence[str | None]], npt.NDArray[np.int64] | None]:
        """The filters a RAM scan applies itself: indexed attributes, and a selective tag filter's seqs."""
        columns = (filters.agent_ids, filters.scopes, filters.pools, filters.types, filters.session_ids)
        where: dict[str, Sequence[str | None]] = {
            attr: values for attr, values in zip(ATTRS, columns, strict=True) if values
        }
        allowed = None
        if filters.tags_any or filters.tags_all:
            # A selective tag filter masks the scan; a broad one is left to the row check,
            # which then passes most candidates anyway.
            sql, params = q.tagged(filters)
            count = int((await self._query(f"SELECT count(*) FROM ({sql})", params))[0][0])
            if count * _SELECTIVE < len(ram):
                rows = await self._query(sql, params)
                allowed = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        return where, allowed

    async def _search_ram(
        self,
        ram: RamIndex,
        vector: F32,
        filters: Filters,
        limit: int,
        where: Mapping[str, Sequence[str | None]],
        allowed: npt.NDArray[np.int64] | None,
        mask: npt.NDArray[np.bool_] | None = None,
        *,
        report: ScanReport | None = None,
    ) -> list[tuple[int, float]]:
        if mask is None and (where or allowed is not None):
            mask = ram.mask(where, allowed)
        # The matrix holds live rows only: without row conditions a candidate fails its check
        # only when it expired or changed a moment ago, so the first pass fetches just ``limit``.
        fetch = limit * 4 + 8 if filters.needs_row_check else limit
        while True:
            if len(ram) * ram.dimension > _THREAD_CELLS:
                candidates = await asyncio.to_thread(ram.search, vector, fetch, mask=mask, report=report)
            else:
                with one_thread():
                    candidates = ram.search(vector, fetch, mask=mask, report=report)
            kept = await self._verified(candidates, filters)
            if len(kept) >= limit or len(candidates) < fetch:
                return kept[:limit]
            fetch *= 4

    async def _search_ann(
        self,
        ram: RamIndex,
        ann: AnnIndex,
        vector: F32,
        filters: Filters,
        limit: int,
        where: Mapping[str, Sequence[str | None]],
        allowed: npt.NDArray[np.int64] | None,
    ) -> tuple[list[tuple[int, float]], dict[str, Any]]:
        """ANN candidates, oversampled by the filter's selectivity, re-scored exactly; else the exact scan."""
        mask = ram.mask(where, allowed) if where or allowed is not None else None
        matching = len(ram) if mask is None else int(mask.sum())
        how: dict[str, Any] = {"vector_index": "ann", "ann_nprobe": ann.nprobe}
        if matching == 0:
            return [], how
        want = limit * 4 + 8 if filters.needs_row_check else limit
        spread = len(ram) / matching  # candidates needed per passing row
        while True:
            fetch = math.ceil(_OVERSAMPLE * want * spread)
            if fetch > _ANN_MAX_FETCH or fetch >= len(ram):
                why = f"{want} rows need {fetch} ANN candidates of {len(ram)} vectors"
                if matching < len(ram):
                    why += f" (a filter matches {matching} of {len(ram)})"
                how = {"vector_index": "ram", "ann_fallback": why + ": the exact scan is cheaper"}
                break
            candidates = ann.candidates(vector, fetch)
            with one_thread():
                rescored = ram.rescore(vector, candidates, mask)[:want]
            kept = await self._verified(rescored, filters)
            if len(kept) >= limit:
                how["ann_candidates"] = len(candidates)
                return kept[:limit], how
            if len(candidates) < fetch:
                how = {"vector_index": "ram", "ann_fallback": f"the ANN cells held fewer than {limit} matching rows"}
                break
            want *= 4
        report = ScanReport()
        found = await self._search_ram(ram, vector, filters, limit, where, allowed, mask, report=report)
        return found, {**how, **_scan_detail(report)}

    async def _search_vec0(self, vector: F32, filters: Filters, limit: int) -> list[tuple[int, float]]:
        blob = to_blob(vector)
        fetch = limit + 8
        while fetch <= _VEC0_MAX_K:
            prepared = q.vec_knn(blob, fetch, filters)
            if prepared is None:
                break
            rows = await self._query(*prepared)
            candidates = [(int(r[0]), float(r[1])) for r in rows if r[1] is not None]  # NULL: a zero vector
            kept = await self._verified(candidates, filters)
            if len(kept) >= limit or len(rows) < fetch:
                return kept[:limit]
            fetch *= 4
        sql, params = q.vec_scan(blob, filters, now=self._clock(), limit=limit)
        return [(int(r[0]), float(r[1])) for r in await self._query(sql, params) if r[1] is not None]  # rows read later

    async def vectors(self, seqs: Sequence[int]) -> dict[int, F32]:
        """The stored vectors of ``seqs`` that have one: from the RAM index when it holds them, else from vec0."""
        out: dict[int, F32] = {}
        ram = self.ram
        if ram is not None:
            for seq in seqs:
                found = ram.vector(seq)
                if found is not None:
                    out[seq] = found
        missing = [s for s in seqs if s not in out]  # hidden rows are not in the index
        if missing:
            out.update((int(r[0]), from_blob(r[1])) for r in await self._query(*q.vec_by_rowids(missing)))
        return out

    async def scores(self, vector: F32, seqs: Sequence[int]) -> dict[int, float]:
        """Cosine similarity of the given memories (absent: no stored vector)."""
        if self.ram is not None:
            return self.ram.scores(vector, seqs)
        out: dict[int, float] = {}
        blob = to_blob(vector)
        rows = await self._query(*q.vec_by_rowids(seqs, score=blob))
        out.update((int(r[0]), float(r[1])) for r in rows if r[1] is not None)  # NULL: a zero vector, no direction
        return out

    async def apply(self, changed: Sequence[tuple[int, dict[str, Any], Any]]) -> None:
        """Bring the RAM and ANN indexes in step with committed rows ``(seq, row, vector | None | KEEP)``."""
        ram = self.ram
        if ram is None:
            return
        final: dict[int, tuple[F32, dict[str, Any]] | None] = {}  # per seq, its last row wins
        for seq, row, vector in changed:
            live = row.get("deleted_at") is None and not row.get("archived") and row.get("has_vector", 1)
            final.pop(seq, None)
            if vector is None or not live:
                final[seq] = None
                continue
            vec = vector if isinstance(vector, np.ndarray) else ram.vector(seq)
            if vec is not None and vec is vector and not _usable(vec[None])[0]:
                final[seq] = None  # a zero vector has no direction: left out, as it is at load
                continue
            if vec is None:
                rows = await self._query("SELECT embedding FROM memories_vec WHERE rowid = ?", (seq,))
                vec = from_blob(rows[0][0]) if rows else None
                if vec is None or not _usable(vec[None])[0]:
                    final[seq] = None
                    continue
            final[seq] = (vec, {a: row.get(a) for a in ATTRS})
        upserts = [(seq, entry) for seq, entry in final.items() if entry is not None]
        for seq in [seq for seq, entry in final.items() if entry is None]:
            ram.remove(seq)
        if upserts:
            ram.upsert_many(
                [seq for seq, _ in upserts],
                np.stack([vec for _, (vec, _) in upserts]),
                [attrs for _, (_, attrs) in upserts],
            )
        self._ann_changed([seq for seq, _, _ in changed])
        self._start_half(ram)  # when the writes took the index past HALF_FROM

    def remove(self, seqs: Iterable[int]) -> None:
        """Drop committed deletions from the RAM and ANN indexes."""
        if self.ram is not None:
            gone = list(seqs)
            for seq in gone:
                self.ram.remove(seq)
            self._ann_changed(gone)

    def _ann_changed(self, seqs: Sequence[int]) -> None:
        """Re-file ``seqs`` in the ANN index from the RAM index (removed there: removed here too).

        A failure here drops the ANN index (the exact matrix serves, and it is rebuilt) rather
        than failing a write that has already committed.
        """
        if self._build is not None and self._build_epoch == self._epoch:
            self._ann_dirty.update(seqs)
        if self.ann is not None and self.ram is not None and seqs:
            ids = np.asarray(seqs, dtype=np.int64)
            try:
                self.ann.remove(ids)
                self._ann_add(self.ann, self.ram, ids)
            except Exception as e:  # noqa: BLE001 - see above
                log.warning("elastic-memory: the ANN index fell out of step (%r); rebuilding it", e)
                self._drop_ann()


def _scan_detail(report: ScanReport) -> dict[str, Any]:
    """How the exact scan read the matrix, for ``explain()``: ``ram_scan`` and, for float16, its candidates."""
    if report.scan == "float16":
        return {"ram_scan": "float16", "ram_candidates": report.candidates}
    return {"ram_scan": "float32"}


def _usable(matrix: F32) -> npt.NDArray[np.bool_]:
    """Rows that are finite unit vectors (what every write stores); anything else is a damaged BLOB.

    One pass: a NaN or infinity makes the squared norm non-finite too.
    """
    if matrix.size == 0:
        return np.ones(len(matrix), dtype=bool)
    with np.errstate(all="ignore"):
        squared = np.einsum("ij,ij->i", matrix, matrix)
        usable: npt.NDArray[np.bool_] = np.isfinite(squared) & (np.abs(squared - 1.0) < 2e-3)
    return usable
