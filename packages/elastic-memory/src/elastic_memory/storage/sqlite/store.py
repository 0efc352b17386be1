"""The SQLite store: one ``.db`` file, aiosqlite, FTS5 and sqlite-vec in one transaction.

Every operation runs under one :class:`asyncio.Lock`, so the single connection never
interleaves two transactions. Writes are ``BEGIN IMMEDIATE`` ... ``COMMIT``; any failure
rolls back, so a failed write leaves nothing half-written. The in-RAM vector index is
changed only after a commit succeeded.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

import aiosqlite
import numpy as np
import numpy.typing as npt

from ...errors import CorruptDatabaseError, StorageError, UsageError
from ...filters import Filters
from ...types import CheckReport, MemoryId, MemoryRecord, PrunePolicy, PruneReport
from .. import queries as q
from ..backend import Capabilities, EmbeddingPin, Snapshot, Transaction
from ..record_reads import Dialect, RecordReads
from ..rows import from_blob, record_from_row, seq_of, session_key
from ..vectors.leg import DEFAULT_ANN_THRESHOLD, KEEP, VectorLeg, chunks
from ..write_plan import WriteMode
from . import bm25, integrity, opening, readonly
from .driver import Driver, driver
from .frequent_terms import FrequentTerms
from .keyword_partitions import KeywordPartitions
from .keyword_search import KeywordSearch
from .snapshot import SQLiteSnapshot
from .stats import file_stats
from .writes import (
    SQLiteTransaction,
    apply_prune,
    check_vector_against,
    delete_seqs,
    purgeable,
    read_pin,
    seqs_of_ids,
    settle_pin,
    write_batch,
)

__all__ = ["KEEP", "EmbeddingPin", "SQLiteStore", "VectorTier", "WriteMode"]

log = logging.getLogger("elastic_memory")

F32 = npt.NDArray[np.float32]
VectorTier = Literal["auto", "ram", "vec0", "ann"]

_RETENTION_GROWTH = 1.1
_RETENTION_CAP = 5.0
_GENERATION = "SELECT value FROM store_state WHERE key = 'generation'"
#: Page cache per connection, in KiB (pages are allocated only as they are used).
_CACHE_KIB = 32 * 1024


class SQLiteStore(RecordReads):
    """Async storage over one SQLite file. Create with :meth:`open`."""

    dialect: ClassVar[Dialect] = q

    def __init__(
        self,
        conn: aiosqlite.Connection,
        drv: Driver,
        path: str,
        *,
        clock: Callable[[], float],
        vector_tier: VectorTier,
        ram_budget_bytes: int | None,
        ann_threshold: int = DEFAULT_ANN_THRESHOLD,
    ) -> None:
        self._conn = conn
        self._driver = drv
        self.path = path
        self.clock = clock
        self._lock = asyncio.Lock()
        self._vectors = VectorLeg(
            self._all,
            self._snapshot,
            tier=vector_tier,
            ram_budget_bytes=ram_budget_bytes,
            clock=clock,
            ann_threshold=ann_threshold,
        )
        self._keywords = KeywordPartitions(conn)
        self._frequent = FrequentTerms(self._all, self._reader(), table=q.GLOBAL_FTS)
        self._keyword = KeywordSearch(
            conn, drv, self._all, self._snapshot, partitions=self._keywords, frequent=self._frequent
        )
        self._data_version = 0
        self._generation: int | None = None
        self.pin: EmbeddingPin | None = None
        self.closed = False
        #: Transactions this connection committed: rows read before it moved may be stale.
        self.writes = 0
        #: Why the file is open read-only (a read-only file or folder), or ``None``: writes refuse.
        self.read_only: str | None = None
        #: The first corruption a read or write met, or ``None``: writes then refuse (repair the file).
        self.damaged: str | None = None
        #: True when the last process to have this file open ended without closing it (see :mod:`.integrity`).
        self.unclean_shutdown = False
        #: What the check after an unclean shutdown found (``None``: none ran, or it still runs).
        self.open_check: CheckReport | None = None
        self._marker: str | None = None
        self._open_check: asyncio.Future[None] | None = None
        self._check_stop = threading.Event()
        self._touch_warned = False

    def _reader(self) -> Callable[[], Any] | None:
        """Opens a read-only second connection to this file (for builds in a thread); ``None`` for no file."""
        if not self.path or self.path == ":memory:" or self.path.startswith("file:") or not os.path.exists(self.path):
            return None
        uri = Path(self.path).absolute().as_uri() + "?mode=ro"
        return lambda: self._driver.connect(uri, timeout=5.0, uri=True)

    # ----------------------------------------------------------------- lifecycle
    @classmethod
    async def open(
        cls,
        path: str,
        *,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.time,
        vector_tier: VectorTier = "auto",
        ram_budget_bytes: int | None = None,
        ann_threshold: int = DEFAULT_ANN_THRESHOLD,
    ) -> SQLiteStore:
        """Open (creating if needed) and migrate the database at ``path``."""
        drv = driver()
        read_only = readonly.reason(path)
        try:
            if read_only is None:
                conn = await aiosqlite.Connection(lambda: drv.connect(path, timeout=timeout), iter_chunk_size=256)
            else:
                conn = await readonly.connect(drv, path, timeout=timeout)
        except drv.module.Error as e:
            raise _storage_error(e, path, f"open {path!r}", at_open=True) from e
        store = cls(
            conn,
            drv,
            path,
            clock=clock,
            vector_tier=vector_tier,
            ram_budget_bytes=ram_budget_bytes,
            ann_threshold=ann_threshold,
        )
        store.read_only = read_only
        try:
            await store._prepare(timeout)
        except BaseException:
            await conn.close()
            raise
        return store

    async def _prepare(self, timeout: float) -> None:
        with self._errors(f"open {self.path!r}", at_open=True):
            await self._conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
            if self.read_only is None:
                await self._conn.execute("PRAGMA journal_mode = WAL")
            await self._conn.execute("PRAGMA synchronous = NORMAL")
            # A batch write touches the rows, their indexes, FTS5 and a 1.5 MB vec0 chunk: with
            # SQLite's default 2 MB cache the chunk is re-read for every vector (5x slower).
            await self._conn.execute(f"PRAGMA cache_size = {-_CACHE_KIB}")
            await opening.check_fts5(self._conn, self._driver)
            await opening.migrate(
                self._conn,
                self._keywords,
                path=self.path,
                read_only=self.read_only,
                transaction=lambda: self._transaction(bump=False),
                errors=self._errors,
            )
            await self._load_pin()
            self._data_version = await self._scalar("PRAGMA data_version")
            self._generation = await self._scalar(_GENERATION)
        await self._mark_open()

    async def _mark_open(self) -> None:
        """Note this open in the file; after another process's unclean shutdown, check the file.

        See :mod:`.integrity`. Best effort: a file whose write lock stays taken past the busy
        timeout opens without its row (a crash of this process then goes unnoticed).
        """
        if self.read_only is not None or self._reader() is None:
            return
        key = integrity.marker()
        try:
            with self._errors(f"note the open of {self.path!r}"):
                async with self._transaction(bump=False):
                    gone = await integrity.note_open(self._conn, key)
        except CorruptDatabaseError:
            raise
        except StorageError as e:
            log.warning("elastic-memory: %s opened without noting it (%s); a crash will not be noticed", self.path, e)
            return
        self._marker = key
        if not gone:
            return
        self.unclean_shutdown = True
        size = sum(os.path.getsize(p) for p in (self.path, self.path + "-wal") if os.path.exists(p))
        log.warning(
            "elastic-memory: %s was left open by a process that ended without closing it; checking it%s",
            self.path,
            " in the background" if size > integrity.BACKGROUND_BYTES else "",
        )
        if size > integrity.BACKGROUND_BYTES:
            self._open_check = asyncio.ensure_future(self._check_after_crash())
        else:
            await self._check_after_crash()

    async def _check_after_crash(self) -> None:
        try:
            report = await self._run_check(full=False, seconds=integrity.OPEN_CHECK_SECONDS, stop=self._check_stop)
        except Exception as e:  # noqa: BLE001 - a check that could not run is reported, the store still serves
            log.warning("elastic-memory: the check of %s after an unclean shutdown failed: %s", self.path, e)
            return
        if not report.complete and self._check_stop.is_set():
            return  # stopped by close: this open's row stays, so the next open checks again
        self.open_check = report
        if not report.complete:
            log.warning(
                "elastic-memory: the check of %s stopped after %.0f s without finding damage; "
                "run `elastic-memory check --db %s` to finish it",
                self.path,
                report.seconds,
                self.path,
            )

    async def integrity_check(self, *, full: bool = False) -> CheckReport:
        """``PRAGMA quick_check`` (``full``: ``integrity_check``) of the file; damage found makes writes refuse.

        The check reads through its own connection in a worker thread, so this store's reads
        and writes go on meanwhile (an in-memory or read-only store is checked on its own connection).
        """
        self._check_open()
        return await self._run_check(full=full, seconds=None, stop=self._check_stop)

    async def _run_check(self, *, full: bool, seconds: float | None, stop: threading.Event) -> CheckReport:
        reader = self._reader()
        if reader is None or self.read_only is not None:
            async with self._lock:
                started = time.monotonic()
                try:
                    rows = await self._all(f"PRAGMA {'integrity_check' if full else 'quick_check'}")
                except self._driver.module.Error as e:
                    if not isinstance(_storage_error(e, self.path, "check", at_open=False), CorruptDatabaseError):
                        raise
                    rows = [(str(e),)]
                problems = integrity.problems_of(rows)
                report = CheckReport(not problems, problems, time.monotonic() - started, full)
        else:
            drv = self._driver

            def run() -> CheckReport:
                conn = reader()
                try:
                    return integrity.check_connection(conn, drv, full=full, seconds=seconds, stop=stop)
                finally:
                    conn.close()

            report = await asyncio.to_thread(run)
        if not report.ok:
            note = integrity.damage_note(report)
            log.warning("elastic-memory: %s is damaged: %s", self.path, note)
            if self.damaged is None:
                self.damaged = note
        return report

    async def _load_pin(self) -> None:
        self.pin = await read_pin(self._conn)

    async def close(self) -> None:
        """Checkpoint the WAL and close the connection (idempotent)."""
        if self.closed:
            return
        self.closed = True
        self._check_stop.set()  # a check in flight stops at its next look
        if self._open_check is not None:
            await asyncio.gather(self._open_check, return_exceptions=True)
        async with self._lock:  # after a search in flight: it may not start a build past this point
            await self._vectors.close()
            await self._frequent.close()
            await self._unmark_open()
            with contextlib.suppress(self._driver.module.Error):
                await self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
            await self._conn.close()

    async def _unmark_open(self) -> None:
        """Remove this open's row; a damaged store keeps it, as does one whose check at open did not end.

        A row kept outlives this process: the next open takes it for a crash and checks the file.
        """
        if self._marker is None or self.damaged is not None or (self.unclean_shutdown and self.open_check is None):
            return
        with contextlib.suppress(self._driver.module.Error, StorageError):
            async with self._transaction(bump=False):
                await integrity.forget_open(self._conn, self._marker)

    # ------------------------------------------------------------------ helpers
    @contextlib.contextmanager
    def _errors(self, what: str, *, at_open: bool = False) -> Iterator[None]:
        try:
            yield
        except self._driver.module.Error as e:
            error = _storage_error(e, self.path, what, at_open=at_open)
            if isinstance(error, CorruptDatabaseError) and self.damaged is None:
                self.damaged = str(e)
            raise error from e

    def _check_writable(self) -> None:
        """Refuse a write to a damaged or read-only file, before it starts."""
        if self.damaged is not None:
            msg = (
                f"{self.path!r} is damaged ({self.damaged}): this store refuses writes so the damage does not "
                f"spread. Copy what is readable into a new file with `elastic-memory repair {self.path} NEW.db` "
                "(or elastic_memory.repair) and open that"
            )
            raise CorruptDatabaseError(msg)
        if self.read_only is not None:
            msg = f"{self.path!r} is open read-only ({self.read_only}); nothing was written"
            raise StorageError(msg)

    @contextlib.asynccontextmanager
    async def _transaction(self, *, bump: bool = True) -> AsyncIterator[None]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT``, rolled back on any error or cancellation.

        With ``bump`` the store's generation moves on, telling other connections that what
        recall sees has changed (access tracking does not bump it).
        """
        self._check_writable()
        if self._conn.in_transaction:  # an earlier call was cancelled mid-way
            await self._conn.execute("ROLLBACK")
            self._keywords.forget()
        await self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            if bump:
                generation = await self._scalar(
                    "UPDATE store_state SET value = value + 1 WHERE key = 'generation' RETURNING value"
                )
            await self._conn.execute("COMMIT")
            self.writes += 1
        except BaseException:
            if self._conn.in_transaction:
                with contextlib.suppress(self._driver.module.Error):
                    await self._conn.execute("ROLLBACK")
            self._vectors.invalidate()
            self._keywords.forget()
            if bump:  # a COMMIT cut short by a cancellation may still have run: read the counter again
                self._generation = None
            raise
        if bump:
            if self._generation is not None and generation != self._generation + 1:
                # Another connection changed memories after our last look and before this
                # write: what this connection holds is stale, and the next call re-reads it.
                self._vectors.invalidate()
                generation = None
            self._generation = generation

    @contextlib.asynccontextmanager
    async def transaction(self, what: str, *, bump: bool = True) -> AsyncIterator[Transaction]:
        """A write transaction under the store lock (see :meth:`.Backend.transaction`).

        Driver errors become :class:`StorageError` naming ``what``; rows written through the
        transaction reach the RAM index after the commit.
        """
        self._check_open()
        tx = SQLiteTransaction(self, self._conn, self._keywords)
        async with self._lock:
            await self._sync_foreign()
            with self._errors(what):
                async with self._transaction(bump=bump):
                    yield tx
        await self._apply_to_index(tx.changed)

    async def read(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """One read statement: its rows."""
        return await self._read(sql, params)

    @contextlib.asynccontextmanager
    async def claim(self, name: str) -> AsyncIterator[bool]:
        """Always granted: a file's background jobs run in the process that opened it (see :meth:`.Backend.claim`)."""
        yield True

    @property
    def capabilities(self) -> Capabilities:
        """SQLite: vectors when sqlite-vec loads, RAM tiers, and the memory loop's tables."""
        return Capabilities(
            engine="sqlite", vectors=self.has_vec, ram_index=True, loop_tables=True, keyword_half=bm25.RELEVANCE_HALF
        )

    @contextlib.asynccontextmanager
    async def _snapshot(self) -> AsyncIterator[None]:
        """A read transaction: every query inside sees one state of the file."""
        if self._conn.in_transaction:
            await self._conn.execute("ROLLBACK")
            self._keywords.forget()
        await self._conn.execute("BEGIN")
        try:
            yield
        finally:
            if self._conn.in_transaction:
                await self._conn.execute("COMMIT")

    async def _apply_to_index(self, changed: Sequence[tuple[int, dict[str, Any], Any]]) -> None:
        """Committed rows into the RAM index; if that fails, drop the index (it reloads)."""
        try:
            await self._vectors.apply(changed)
        except BaseException:
            self._vectors.invalidate()
            raise

    async def _scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        row = await self._one(sql, params)
        return None if row is None else row[0]

    async def _one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        rows = await self._all(sql, params)
        return rows[0] if rows else None

    async def _all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        # One hop to the connection's thread (execute + fetchall + close would be three).
        return list(await self._conn.execute_fetchall(sql, params))

    def _check_open(self) -> None:
        if self.closed:
            msg = "this memory store is closed; open it again with Memory.open(path)"
            raise UsageError(msg)

    @property
    def has_vec(self) -> bool:
        """True when the SQLite driver could load sqlite-vec."""
        return self._driver.has_vec

    # ------------------------------------------------------------------- writes
    def check_vector(self, vector: F32) -> None:
        """Raise :class:`EmbeddingMismatchError` when ``vector`` does not fit the pin."""
        check_vector_against(vector, self.pin)

    async def write(
        self,
        rows: Sequence[dict[str, Any]],
        vectors: Sequence[F32 | Any | None],
        *,
        dedupe: Sequence[bool],
        mode: WriteMode,
        pin: EmbeddingPin | None,
    ) -> list[MemoryId]:
        """Insert or upsert ``rows`` (full column dicts) in one transaction.

        ``vectors[i]`` is the row's vector, ``None`` (no vector) or :data:`KEEP`. ``pin`` is
        written with the first vector of an unpinned database. ``mode`` says what an upsert of
        an existing id overwrites: ``"upsert"`` keeps the created and access bookkeeping,
        ``"update"`` also keeps the deleted/archived flags as they are now, ``"import"``
        overwrites every column.
        """
        self._check_open()
        async with self._lock:
            await self._sync_foreign()
            new_pin = pin if self.pin is None and any(isinstance(v, np.ndarray) for v in vectors) else None
            for v in vectors:
                if isinstance(v, np.ndarray):
                    check_vector_against(v, self.pin or new_pin)
            if new_pin is not None and not self.has_vec:
                new_pin = None
            with self._errors("write memories"):
                async with self._transaction():
                    if new_pin is not None:
                        new_pin = await settle_pin(self._conn, new_pin, vectors, clock=self.clock)
                    ids, changed = await write_batch(
                        self._conn,
                        self._keywords,
                        rows,
                        vectors,
                        dedupe,
                        mode=mode,
                        pinned=self.has_vec and (self.pin or new_pin) is not None,
                        now=self.clock(),
                    )
            if new_pin is not None:
                self.pin = new_pin
            await self._apply_to_index(changed)
            return ids

    async def set_flags(
        self, ids: Sequence[str], *, deleted: bool | None = None, archived: bool | None = None
    ) -> list[str]:
        """Soft-delete/restore or archive/unarchive; returns the ids that changed."""
        self._check_open()
        now = self.clock()
        async with self._lock:
            await self._sync_foreign()
            changed_ids: list[str] = []
            with self._errors("update memories"):
                async with self._transaction():
                    for chunk in chunks(list(ids)):
                        sql, params = q.select_rows(by="id", values=chunk)
                        for row in await self._all(sql, params):
                            record = record_from_row(row)
                            changes: dict[str, Any] = {}
                            if deleted is not None and (record.deleted_at is not None) != deleted:
                                changes["deleted_at"] = now if deleted else None
                            if archived is not None and record.archived != archived:
                                changes["archived"] = int(archived)
                            if changes:
                                changes["updated_at"] = now
                                await self._conn.execute(*q.update_row(seq_of(row), changes))
                                changed_ids.append(record.id)
            if changed_ids:
                await self._refresh_ram_for(changed_ids)
            return changed_ids

    async def _refresh_ram_for(self, ids: Sequence[str]) -> None:
        if self._vectors.ram is None:
            return
        for chunk in chunks(list(ids)):
            sql, params = q.select_rows(by="id", values=chunk)
            rows = await self._all(sql, params)
            changed = []
            for row in rows:
                r = record_from_row(row)
                data = {a: getattr(r, a) for a in ("agent_id", "pool", "session_id")}
                data |= {"scope": r.scope.value, "type": r.type.value, "deleted_at": r.deleted_at}
                data |= {"archived": r.archived, "has_vector": r.has_vector}
                changed.append((seq_of(row), data, KEEP if r.has_vector else None))
            await self._apply_to_index(changed)

    async def hard_delete(self, ids: Sequence[str]) -> list[str]:
        """Remove rows, their FTS entries and vectors; returns the ids that existed."""
        return await self._delete_where(lambda: seqs_of_ids(self._conn, ids))

    async def _delete_where(self, select: Callable[[], Awaitable[list[tuple[int, str]]]]) -> list[str]:
        """Hard-delete what ``select`` picks, choosing and deleting in one transaction."""
        self._check_open()
        async with self._lock:
            await self._sync_foreign()
            with self._errors("delete memories"):
                async with self._transaction():
                    found = await select()
                    await delete_seqs(
                        self._conn, self._keywords, [s for s, _ in found], vectors=self.has_vec and self.pin is not None
                    )
            self._vectors.remove(s for s, _ in found)
            return [i for _, i in found]

    async def purge(self, older_than: float, ids: Sequence[str] | None = None) -> list[str]:
        """Hard-delete memories soft-deleted, or expired, at least ``older_than`` seconds ago (of ``ids`` if given).

        With ``ids``, the check and the delete happen in one transaction: a memory renewed meanwhile stays.
        """
        cutoff = self.clock() - older_than
        return await self._delete_where(lambda: purgeable(self._conn, cutoff, ids))

    async def prune(self, policy: PrunePolicy) -> PruneReport:
        """Archive or purge the victims of ``policy`` in one transaction."""
        self._check_open()
        now = self.clock()
        async with self._lock:
            await self._sync_foreign()
            with self._errors("prune memories"):
                async with self._transaction():
                    victims, below, over = await apply_prune(
                        self._conn, self._keywords, policy, now=now, vectors=self.has_vec and self.pin is not None
                    )
            if not policy.dry_run:
                self._vectors.remove(s for s, _ in victims)
        return PruneReport(policy.action, tuple(i for _, i in victims), below, over, policy.dry_run)

    async def touch_ids(self, ids: Sequence[str]) -> None:
        """Record an access on the memories among ``ids`` (see :meth:`touch`)."""
        seqs: list[int] = []
        for chunk in chunks(list(dict.fromkeys(ids))):
            seqs += [seq_of(r) for r in await self._read(*q.select_rows(by="id", values=chunk))]
        await self.touch(seqs)

    async def touch(self, seqs: Sequence[int]) -> None:
        """Record an access: count, time, and retention growth (capped). Best effort.

        A read-only or damaged file, or a write lock another process holds past ``timeout``,
        skips the tracking with one logged warning per store: the recall stands.
        """
        if not seqs:
            return
        self._check_open()
        now = self.clock()
        async with self._lock:
            try:
                with self._errors("record access"):
                    async with self._transaction(bump=False):
                        for chunk in chunks(list(seqs)):
                            sql, params = q.in_list("seq", chunk)
                            await self._conn.execute(
                                "UPDATE memories SET access_count = access_count + 1, accessed_at = ?, "
                                f"retention_strength = min(?, retention_strength * ?) WHERE {sql}",
                                [now, _RETENTION_CAP, _RETENTION_GROWTH, *params],
                            )
            except StorageError as e:
                if not self._touch_warned:
                    self._touch_warned = True
                    log.warning("elastic-memory: access tracking skipped (warned once per store): %s", e)

    # -------------------------------------------------------------------- reads
    async def _read(self, sql: str, params: Sequence[Any]) -> list[Any]:
        self._check_open()
        async with self._lock:
            with self._errors("read memories"):
                return await self._all(sql, params)

    async def keyword(
        self, match: str, filters: Filters, limit: int, notes: dict[str, Any] | None = None
    ) -> list[tuple[int, float]]:
        """``(seq, bm25 relevance)`` best first among live memories matching ``filters`` (see :class:`.KeywordSearch`).

        ``notes["keyword_scale"]`` gets the query's BM25 of relevance 1 (``bm25.scale``).
        """
        self._check_open()
        now = self.clock()
        async with self._lock:
            with self._errors("search keywords"):
                found = await self._keyword.search(match, filters, limit, now=now)
            if notes is not None:
                notes["keyword_scale"] = self._keyword.scale
            return found

    async def session_neighbors(self, seqs: Sequence[int]) -> dict[int, tuple[int | None, int | None, str]]:
        """For each memory with a session: the live memories just before and after it there, and the session key.

        A session is one agent's: two agents' sessions of one name are two sessions (the key names both).
        """
        out: dict[int, tuple[int | None, int | None, str]] = {}
        for chunk in chunks(list(seqs)):
            sql, params = q.in_list("m.seq", chunk)
            rows = await self._read(
                "SELECT m.seq, "
                "(SELECT p.seq FROM memories AS p WHERE p.session_id = m.session_id AND p.agent_id = m.agent_id "
                "AND p.seq < m.seq "
                "AND p.deleted_at IS NULL ORDER BY p.seq DESC LIMIT 1), "
                "(SELECT n.seq FROM memories AS n WHERE n.session_id = m.session_id AND n.agent_id = m.agent_id "
                "AND n.seq > m.seq "
                "AND n.deleted_at IS NULL ORDER BY n.seq LIMIT 1), m.session_id, m.agent_id "
                f"FROM memories AS m WHERE m.session_id IS NOT NULL AND {sql}",
                params,
            )
            out.update((int(r[0]), (r[1], r[2], session_key(r[4], r[3]))) for r in rows)
        return out

    async def vectors_of(self, ids: Sequence[str]) -> dict[str, F32]:
        """The stored (unit) vectors of the memories among ``ids`` that have one."""
        out: dict[str, F32] = {}
        if not self.has_vec or self.pin is None:
            return out
        self._check_open()
        async with self._lock:
            with self._errors("read vectors"):
                await self._sync_foreign()  # the RAM index is dropped when another connection changed the file
                for chunk in chunks(list(dict.fromkeys(ids))):
                    sql, params = q.in_list("id", chunk)
                    by_seq = {
                        int(r[0]): str(r[1])
                        for r in await self._all(f"SELECT seq, id FROM memories WHERE {sql}", params)
                    }
                    for seq, vector in (await self._vectors.vectors(list(by_seq))).items():
                        out[by_seq[seq]] = vector
        return out

    async def iter_records(self, batch: int = 500) -> AsyncIterator[tuple[MemoryRecord, F32 | None]]:
        """Every record, hidden ones included, in insertion order, with its vector."""
        last = 0
        while True:
            sql = f"SELECT {q.columns()} FROM memories AS m WHERE m.seq > ? ORDER BY m.seq LIMIT ?"
            rows = await self._read(sql, [last, batch])
            if not rows:
                return
            vecs: dict[int, F32] = {}
            if self.has_vec and self.pin is not None:
                for r in await self._read(*q.vec_by_rowids([seq_of(r) for r in rows])):
                    vecs[int(r[0])] = from_blob(r[1])
            for row in rows:
                yield record_from_row(row), vecs.get(seq_of(row))
            last = seq_of(rows[-1])

    @contextlib.asynccontextmanager
    async def snapshot(self) -> AsyncIterator[Snapshot]:
        """A read transaction on a second, read-only connection: this process's writers go on.

        A store without a file of its own (``:memory:``) reads on its connection and holds
        the store lock meanwhile.
        """
        self._check_open()
        opener = self._reader()
        if opener is None:
            async with self._lock, self._snapshot():
                yield SQLiteSnapshot(self, self._conn, self._errors)
            return
        with self._errors("open a snapshot"):
            conn = await aiosqlite.Connection(opener, iter_chunk_size=256)
        try:
            with self._errors("open a snapshot"):
                await conn.execute("BEGIN")
            yield SQLiteSnapshot(self, conn, self._errors)
        finally:
            await conn.close()

    async def stats(self) -> dict[str, Any]:
        """Counts, index and file facts."""
        return await file_stats(self, self._read, drv=self._driver, vectors=self._vectors, frequent=self._frequent)

    # ------------------------------------------------------------ vector search
    def allow_ram_index(self, allowed: bool, *, ann: bool = True) -> None:
        """Whether ``vector_index="auto"`` may keep vectors in RAM, and build an ANN index (the governor's decision).

        The frequent-term keyword tier follows the RAM index's permission.
        """
        self._vectors.allow_ram(allowed, ann=ann)
        self._frequent.allow(allowed)

    async def load_index(self) -> str:
        """Load the vector index now (and finish building the ANN index when the tier wants one); the tier.

        The frequent-term keyword tier of a large file is built now too.
        """
        self._check_open()
        async with self._lock:
            with self._errors("load the keyword tier"):
                await self._frequent.start()  # its build reads in another thread, beside the vectors'
        for _ in range(3):  # a build of an index that was dropped meanwhile runs out first
            async with self._lock:
                with self._errors("load the vector index"):
                    await self._sync_foreign()
                    if not self.has_vec or self.pin is None:
                        break
                    await self._vectors.ensure(self.pin.dimension)
            if not self._vectors.busy:
                break
            await self._vectors.wait_for_builds()
        await self._frequent.wait()
        return self.vector_tier()

    def vector_tier(self) -> str:
        """``"none"`` without vectors, else ``"ann"``, ``"ram"`` or ``"vec0"`` (what serves searches)."""
        if not self.has_vec or self.pin is None:
            return "none"
        return self._vectors.tier()

    async def _sync_foreign(self, version: Any = None) -> None:
        """Drop caches when another connection committed since we last looked.

        ``PRAGMA data_version`` changes only on other connections' commits, never on ours;
        ``version`` is its value when the caller has just read it.
        """
        if version is None:
            version = await self._scalar("PRAGMA data_version")
        if version == self._data_version:
            return
        generation = await self._scalar(_GENERATION)
        if generation != self._generation:
            self._vectors.invalidate()
            await self._load_pin()
            self._generation = generation
        self._data_version = version  # last: a sync cut short is done again by the next call

    async def check(self) -> None:
        """Read the store's state and one row: raises :class:`StorageError` when the file cannot serve."""
        await self._read("SELECT count(*) FROM (SELECT 1 FROM memories LIMIT 1)", ())
        await self.refresh()

    async def refresh(self) -> None:
        """Pick up what other connections committed (the pin, and a stale RAM index)."""
        self._check_open()
        async with self._lock:
            with self._errors("read the store state"):
                await self._sync_foreign()

    async def generation(self) -> int:
        """The store's write counter as of now: moved on by every write that changes memories, any connection's.

        One statement when no other connection committed since the last look (``PRAGMA data_version``).
        """
        self._check_open()
        async with self._lock:
            with self._errors("read the store state"):
                await self._sync_foreign()
                if self._generation is None:  # a write found another connection's in between
                    self._generation = int(await self._scalar(_GENERATION))
                return self._generation

    async def vector(
        self, vector: F32, filters: Filters, limit: int, *, records: dict[int, MemoryRecord] | None = None
    ) -> tuple[list[tuple[int, float]], dict[str, Any]]:
        """``(seq, cosine)`` best first among live rows matching ``filters``, and how (``vector_index``: the tier).

        ``records`` receives the rows of candidates read on the way (pass them to :meth:`rows_for`).

        Never returns fewer than ``limit`` rows when that many match (see ``vectors.py``).
        """
        self._check_open()
        async with self._lock:
            with self._errors("search vectors"):
                if self.has_vec and self.pin is not None and self._vectors.ram is not None:
                    found = await self._vector_warm(vector, filters, limit, records)
                    if found is not None:
                        return found
                else:
                    await self._sync_foreign()
                if not self.has_vec or self.pin is None:
                    return [], {"vector_index": "none"}
                check_vector_against(vector, self.pin)
                return await self._vectors.search(vector, filters, limit, dimension=self.pin.dimension, records=records)

    async def _vector_warm(
        self, vector: F32, filters: Filters, limit: int, records: dict[int, MemoryRecord] | None
    ) -> tuple[list[tuple[int, float]], dict[str, Any]] | None:
        """Search a loaded RAM index before knowing whether another connection committed.

        Returns ``None`` (state synced) when one did and changed memories: the caller searches
        again. ``PRAGMA data_version`` is read on the driver thread alongside the search instead
        of before it, one round trip less; it may run after the candidates are read, which
        only detects more commits than reading it first.
        """
        assert self.pin is not None
        version = asyncio.ensure_future(self._scalar("PRAGMA data_version"))
        version.add_done_callback(_retrieved)  # a read abandoned by a cancelled search logs nothing
        try:
            check_vector_against(vector, self.pin)
            found = await self._vectors.search(vector, filters, limit, dimension=self.pin.dimension, records=records)
        except Exception:
            seen = (await asyncio.gather(version, return_exceptions=True))[0]
            if isinstance(seen, BaseException) or seen == self._data_version:
                raise
            found = None  # stale state (another process re-pinned the model) may be the cause: search again, synced
        else:
            seen = await version
            if seen == self._data_version:
                return found
        generation = self._generation
        await self._sync_foreign(seen)
        if found is not None and self._generation == generation:
            return found  # the commit changed no memory (access tracking): the answer stands
        if records is not None:
            records.clear()
        return None

    async def vector_scores(self, vector: F32, seqs: Sequence[int]) -> dict[int, float]:
        """Cosine similarity of the given memories to ``vector`` (absent: no stored vector)."""
        if not self.has_vec or self.pin is None or not seqs:
            return {}
        self._check_open()
        async with self._lock:
            with self._errors("score vectors"):
                return await self._vectors.scores(vector, seqs)


def _retrieved(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


def _storage_error(error: Exception, path: str, what: str, *, at_open: bool) -> StorageError:
    """The library error for a driver error: corruption gets its own class."""
    text = str(error)
    if "not a database" in text or "malformed" in text or "file is encrypted" in text:
        msg = (
            f"{path!r} is not a readable SQLite database ({text}); it was left untouched. "
            "Copy what is readable into a new file with `elastic-memory repair`, restore it from a backup, "
            "or open a different path"
        )
        return CorruptDatabaseError(msg)
    hint = "check that the folder exists and is writable" if at_open else "nothing was written; retry"
    return StorageError(f"could not {what}: {text}; {hint}")
