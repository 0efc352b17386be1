"""The vector leg of a store: which tier serves it, and searching it without losing rows.

Tiers: ``"ram"`` (an exact float32 matrix, :class:`RamIndex`, loaded lazily from the
vec0 table and kept in step with committed writes) or ``"vec0"`` (sqlite-vec's own scan,
no RAM beyond SQLite's cache). ``"auto"`` picks RAM while the matrix fits the RAM budget.

Both tiers filter during the scan where they can (agent, scope, pool, type, session) and
check every other condition against the row afterwards, fetching more candidates until
``limit`` rows pass or none are left, so a filter never silently returns fewer rows than
exist. The caller holds the store's lock around every call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

import numpy as np
import numpy.typing as npt

from ..filters import Filters
from . import queries as q
from .ram_index import ATTRS, RamIndex
from .rows import from_blob, to_blob

__all__ = ["KEEP", "Query", "VectorLeg", "chunks", "verified"]

F32 = npt.NDArray[np.float32]
Query = Callable[[str, Sequence[Any]], Awaitable[list[Any]]]
_VEC0_MAX_K = 4096
#: Above this many matrix cells a RAM scan runs in a worker thread, off the event loop.
_THREAD_CELLS = 2_000_000
#: A tag filter matching fewer than 1 / _SELECTIVE of the indexed rows masks the RAM scan.
_SELECTIVE = 10


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
    query: Query, candidates: list[tuple[int, float]], filters: Filters, *, now: float
) -> list[tuple[int, float]]:
    """The candidates ``(seq, score)`` that are live and match ``filters``, order kept."""
    where, params = q.live_filter(filters, now=now)
    ok: set[int] = set()
    for chunk in chunks([s for s, _ in candidates]):
        sql, p = q.in_list("m.seq", chunk)
        rows = await query(f"SELECT m.seq FROM memories AS m WHERE {sql} AND {where}", [*p, *params])
        ok.update(int(r[0]) for r in rows)
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
    ) -> None:
        self._query = query
        self._snapshot = snapshot
        self._setting = tier
        self._budget = ram_budget_bytes
        self._clock = clock
        self._fits: bool | None = None
        self.ram: RamIndex | None = None
        self.ram_allowed = True

    def tier(self) -> str:
        """``"ram"`` or ``"vec0"``: what serves (or will serve) searches."""
        if self._setting != "auto":
            return self._setting
        if not self.ram_allowed:
            return "vec0"
        return "ram" if self.ram is not None or self._fits is not False else "vec0"

    def allow_ram(self, allowed: bool) -> None:
        """Let ``"auto"`` use the RAM index or not (the governor's tier); refusing frees it now."""
        self.ram_allowed = allowed
        if not allowed and self._setting == "auto":
            self.invalidate()

    def invalidate(self) -> None:
        """Forget the RAM index (another connection changed the file); reloaded on demand."""
        self.ram = None
        self._fits = None

    async def _ensure_ram(self, dimension: int) -> RamIndex | None:
        if self.ram is not None:
            return self.ram
        if self._setting == "vec0" or (self._setting == "auto" and not self.ram_allowed):
            return None
        async with self._snapshot():  # one consistent read, whatever other processes commit
            rows = await self._query("SELECT count(*) FROM memories WHERE has_vector = 1 AND deleted_at IS NULL", ())
            need = int(rows[0][0]) * dimension * 4
            budget = self._budget if self._budget is not None else default_ram_budget()
            self._fits = self._setting == "ram" or need <= budget
            if not self._fits:
                return None
            rows = await self._query(
                "SELECT seq, agent_id, scope, pool, type, session_id FROM memories "
                "WHERE deleted_at IS NULL AND archived = 0 AND has_vector = 1 ORDER BY seq",
                (),
            )
            seqs = [int(r[0]) for r in rows]
            matrix = await self._matrix_from_chunks(seqs, dimension)
            if matrix is None:
                present, matrix = await self._matrix_from_rows(seqs, dimension)
                rows = [r for r, keep in zip(rows, present, strict=True) if keep]
                seqs = [int(r[0]) for r in rows]
        index = RamIndex(dimension)
        if seqs:
            index.bulk_load(seqs, matrix, {a: [r[1 + i] for r in rows] for i, a in enumerate(ATTRS)})
        self.ram = index
        return index

    async def _matrix_from_rows(self, seqs: Sequence[int], dimension: int) -> tuple[list[bool], F32]:
        """Which of ``seqs`` have a vector, and those vectors in order, read through vec0 (~10 us a row)."""
        found: dict[int, bytes] = {}
        for chunk in chunks(list(seqs), 10_000):
            found.update(await self._query(*q.vec_by_rowids(chunk)))
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
            blocks = {
                int(cid): np.frombuffer(blob, dtype="<f4").reshape(-1, dimension)
                for cid, blob in await self._query("SELECT rowid, vectors FROM memories_vec_vector_chunks00", ())
            }
            table = np.array(
                await self._query("SELECT rowid, chunk_id, chunk_offset FROM memories_vec_rowids ORDER BY rowid", ()),
                dtype=np.int64,
            ).reshape(-1, 3)
            wanted = np.asarray(seqs, dtype=np.int64)
            at = np.searchsorted(table[:, 0], wanted)
            if (at >= len(table)).any() or (table[np.minimum(at, len(table) - 1), 0] != wanted).any():
                return None  # a live memory without a vec0 row: let the public path decide
            places = table[at, 1:]
            matrix = np.empty((len(seqs), dimension), dtype=np.float32)
            for cid in np.unique(places[:, 0]):
                rows = np.flatnonzero(places[:, 0] == cid)
                matrix[rows] = blocks[int(cid)][places[rows, 1]]
            picks = np.unique(np.linspace(0, len(seqs) - 1, num=min(16, len(seqs)), dtype=np.int64))
            sample = dict(await self._query(*q.vec_by_rowids([seqs[i] for i in picks])))
            if any(not np.array_equal(from_blob(sample.get(seqs[i], b"")), matrix[i]) for i in picks):
                return None
        except Exception:  # noqa: BLE001 - any surprise in the internals means: take the slow, public path
            return None
        return matrix

    async def search(
        self, vector: F32, filters: Filters, limit: int, *, dimension: int
    ) -> tuple[list[tuple[int, float]], str]:
        """``(seq, cosine)`` best first among live rows matching ``filters``, and the tier."""
        ram = await self._ensure_ram(dimension)
        if ram is not None:
            return await self._search_ram(ram, vector, filters, limit), "ram"
        return await self._search_vec0(vector, filters, limit), "vec0"

    async def _verified(self, candidates: list[tuple[int, float]], filters: Filters) -> list[tuple[int, float]]:
        return await verified(self._query, candidates, filters, now=self._clock())

    async def _search_ram(self, ram: RamIndex, vector: F32, filters: Filters, limit: int) -> list[tuple[int, float]]:
        columns = (filters.agent_ids, filters.scopes, filters.pools, filters.types, filters.session_ids)
        where = {attr: values for attr, values in zip(ATTRS, columns, strict=True) if values}
        allowed = None
        if filters.tags_any or filters.tags_all:
            # A selective tag filter masks the scan; a broad one is left to the row check,
            # which then passes most candidates anyway.
            sql, params = q.tagged(filters)
            count = int((await self._query(f"SELECT count(*) FROM ({sql})", params))[0][0])
            if count * _SELECTIVE < len(ram):
                rows = await self._query(sql, params)
                allowed = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        fetch = limit * (4 if filters.needs_row_check else 1) + 8
        while True:
            if len(ram) * ram.dimension > _THREAD_CELLS:
                candidates = await asyncio.to_thread(ram.search, vector, fetch, where, allowed)
            else:
                candidates = ram.search(vector, fetch, where, allowed)
            kept = await self._verified(candidates, filters)
            if len(kept) >= limit or len(candidates) < fetch:
                return kept[:limit]
            fetch *= 4

    async def _search_vec0(self, vector: F32, filters: Filters, limit: int) -> list[tuple[int, float]]:
        blob = to_blob(vector)
        fetch = limit + 8
        while fetch <= _VEC0_MAX_K:
            prepared = q.vec_knn(blob, fetch, filters)
            if prepared is None:
                break
            candidates = [(int(r[0]), float(r[1])) for r in await self._query(*prepared)]
            kept = await self._verified(candidates, filters)
            if len(kept) >= limit or len(candidates) < fetch:
                return kept[:limit]
            fetch *= 4
        sql, params = q.vec_scan(blob, filters, now=self._clock(), limit=limit)
        return [(int(r[0]), float(r[1])) for r in await self._query(sql, params)]

    async def scores(self, vector: F32, seqs: Sequence[int]) -> dict[int, float]:
        """Cosine similarity of the given memories (absent: no stored vector)."""
        if self.ram is not None:
            known = [(s, self.ram.vector(s)) for s in seqs]
            return {s: float(v @ vector) for s, v in known if v is not None}
        out: dict[int, float] = {}
        blob = to_blob(vector)
        rows = await self._query(*q.vec_by_rowids(seqs, score=blob))
        out.update((int(r[0]), float(r[1])) for r in rows)
        return out

    async def apply(self, changed: Sequence[tuple[int, dict[str, Any], Any]]) -> None:
        """Bring the RAM index in step with committed rows ``(seq, row, vector | None | KEEP)``."""
        ram = self.ram
        if ram is None:
            return
        for seq, row, vector in changed:
            live = row.get("deleted_at") is None and not row.get("archived") and row.get("has_vector", 1)
            if vector is None or not live:
                ram.remove(seq)
                continue
            vec = vector if isinstance(vector, np.ndarray) else ram.vector(seq)
            if vec is None:
                rows = await self._query("SELECT embedding FROM memories_vec WHERE rowid = ?", (seq,))
                if not rows:
                    ram.remove(seq)
                    continue
                vec = from_blob(rows[0][0])
            ram.upsert(seq, vec, {a: row.get(a) for a in ATTRS})

    def remove(self, seqs: Iterable[int]) -> None:
        """Drop committed deletions from the RAM index."""
        if self.ram is not None:
            for seq in seqs:
                self.ram.remove(seq)
