"""The PostgreSQL store: psycopg 3 and a connection pool, pgvector, ``tsvector`` full text.

It does what :class:`~.sqlite.SQLiteStore` does for the memories (the same methods, the
same rows, the same write planner and filters), so the recall pipeline, fusion and the
facades run on it unchanged. Every write is one transaction under an advisory lock on the
store's schema, so writers on many hosts are serialised as SQLite's writers are, and a
write that fails (a dropped connection included) is rolled back by the server: nothing is
half-applied. Each store lives in its own schema (``?schema=`` in the URL, default
``elastic_memory``): stores sharing a database never see each other's rows.

The memory loop's tables (turns, sessions, versioned facts with a ``tsvector``,
quarantine) and the knowledge graph live in the same schema (migration 2); the loop and
the graph reach them through the :class:`~.backend.Backend` protocol, as on SQLite.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from typing import Any, ClassVar, Literal

import numpy as np
import numpy.typing as npt

from ...errors import StorageError, UsageError
from ...filters import Filters
from ...types import MemoryId, MemoryRecord, PruneAction, PrunePolicy, PruneReport
from .. import queries as q
from ..backend import Capabilities, EmbeddingPin, Snapshot, Transaction
from ..record_reads import Dialect, RecordReads
from ..rows import record_from_row, seq_of, session_key
from ..vectors.leg import DEFAULT_ANN_THRESHOLD, chunks
from ..write_plan import WriteMode
from . import queries as pq
from . import schema as pg_schema
from .connect import LOCK_SPACE, configure, first_line, is_url, prepare, psycopg_module, redact, split_url
from .snapshot import PgSnapshot, to_array
from .writes import PgTransaction, check_against, settle_pin, write_batch

# Re-exported: everything but PostgresStore lives in .connect.
__all__ = ["LOCK_SPACE", "PostgresStore", "first_line", "is_url", "psycopg_module", "redact", "split_url"]

log = logging.getLogger("elastic_memory")

F32 = npt.NDArray[np.float32]
PgTier = Literal["exact", "hnsw"]

_NO_FILTERS = Filters()
#: A pooled connection given back less than this many seconds ago is handed out again without
#: the pool's check (an empty query: one round trip per read): it served a moment ago. An
#: older one is checked first, as a connection the server may have dropped since.
FRESH_SECONDS = 1.0
_HNSW_VALID = (
    "SELECT i.indisvalid FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid "
    "JOIN pg_namespace AS n ON n.oid = c.relnamespace WHERE c.relname = 'memory_vectors_hnsw' AND n.nspname = %s"
)
#: HNSW candidate list (pgvector's ``hnsw.ef_search``; its default is 40): recall@10 against speed.
_EF_SEARCH = 100
#: pgvector's ceiling for ``hnsw.ef_search``; past it, iterative scans (0.8+) or the exact scan go on.
_EF_SEARCH_MAX = 1000
_RETENTION_GROWTH = 1.1
#: Seconds between two looks at the vector count under ``vector_index="auto"`` (is an HNSW index due?).
_GROWTH_CHECK_EVERY = 30.0
_RETENTION_CAP = 5.0


class PostgresStore(RecordReads):
    """Async storage in one schema of a PostgreSQL database. Create with :meth:`open`."""

    dialect: ClassVar[Dialect] = pq

    def __init__(
        self,
        pool: Any,
        url: str,
        schema: str,
        *,
        clock: Callable[[], float],
        tier: PgTier,
        pgvector: tuple[int, ...] | None,
        timeout: float = 5.0,
        ann_threshold: int | None = None,
    ) -> None:
        self._pool = pool
        self._psycopg = psycopg_module()
        #: Where the store lives, without the password (``postgresql://user@host/db?schema=...``).
        base = split_url(redact(url))[0]
        self.path = f"{base}{'&' if '?' in base else '?'}schema={schema}"
        self.schema = schema
        self.clock = clock
        self._tier: PgTier = tier
        self._pgvector = pgvector
        self._lock_timeout = f"{int(timeout * 1000)}ms"
        self._hnsw_lock = asyncio.Lock()
        #: ``vector_index="auto"``: the vector count from which an HNSW index is built (``None``: fixed tier).
        self._ann_threshold = ann_threshold if tier == "exact" and (pgvector or ()) >= (0, 5) else None
        self._growth: asyncio.Task[None] | None = None
        self._growth_checked = -math.inf
        self.pin: EmbeddingPin | None = None
        self.closed = False
        #: Always ``None`` here: the server answers for read-only and damaged storage (see SQLiteStore).
        self.read_only: str | None = None
        self.damaged: str | None = None
        #: Transactions this store committed (recall re-reads rows when it moved).
        self.writes = 0

    # ----------------------------------------------------------------- lifecycle
    @classmethod
    async def open(
        cls,
        url: str,
        *,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.time,
        vector_tier: str = "auto",
        pool_size: int = 4,
        ann_threshold: int = DEFAULT_ANN_THRESHOLD,
    ) -> PostgresStore:
        """Connect, create the schema (and pgvector) when missing, and migrate.

        ``vector_tier``: ``"auto"`` (the exact cosine scan; from ``ann_threshold`` vectors on,
        an HNSW index, built in the background) or ``"ann"`` (an HNSW index from the start).
        """
        if vector_tier not in ("auto", "ann"):
            msg = f"on PostgreSQL vector_index must be 'auto' (exact scan) or 'ann' (HNSW index), got {vector_tier!r}"
            raise UsageError(msg)
        psycopg = psycopg_module()
        from psycopg_pool import AsyncConnectionPool  # noqa: PLC0415 - optional

        conninfo, schema = split_url(url)
        shown = redact(url)
        try:
            conn = await psycopg.AsyncConnection.connect(
                conninfo, autocommit=True, connect_timeout=max(1, int(timeout))
            )
        except psycopg.Error as e:
            msg = f"could not connect to {shown}: {first_line(e)}; check the URL, the server and PGPASSWORD"
            raise StorageError(msg) from e
        try:
            server = await prepare(conn, schema, shown)
        finally:
            await conn.close()

        fresh = FreshConnections(AsyncConnectionPool.check_connection)

        async def set_up(c: Any) -> None:
            await configure(c, server, timeout)
            await fresh.returned(c)  # just opened: as fresh as one just given back

        pool = AsyncConnectionPool(
            conninfo,
            min_size=1,
            max_size=max(1, pool_size),
            open=False,
            configure=set_up,
            check=fresh.check,
            reset=fresh.returned,
            kwargs={"autocommit": True, "connect_timeout": max(1, int(timeout))},
            timeout=max(timeout, 1.0),
            name=f"elastic-memory:{schema}",
        )
        try:
            await pool.open(wait=True, timeout=max(timeout, 1.0))
        except Exception as e:
            await pool.close()
            msg = f"could not open a connection pool to {shown}: {first_line(e)}"
            raise StorageError(msg) from e
        tier: PgTier = "hnsw" if vector_tier == "ann" else "exact"
        store = cls(
            pool,
            url,
            schema,
            clock=clock,
            tier=tier,
            pgvector=server.pgvector,
            timeout=timeout,
            ann_threshold=ann_threshold,
        )
        try:
            await store._load_pin()
            if tier == "hnsw" and store.pin is not None:
                await store._ensure_hnsw()
        except BaseException:
            await pool.close()
            raise
        return store

    async def _ensure_hnsw(self) -> None:
        """Build the HNSW index when missing (once; on a big store it takes a while). Never raises.

        ``CREATE INDEX CONCURRENTLY`` lets writers go on meanwhile. One builder at a time: a
        process that finds another building does not wait (searches are exact until the
        index is valid, the planner ignores it before). An index a failed build left invalid
        is dropped and built again. A failure is logged: the store serves exactly.
        """
        async with self._hnsw_lock:
            try:
                await self._build_hnsw()
            except Exception as e:  # noqa: BLE001 - the index is an accelerator: exact search stands without it
                log.warning(
                    "elastic-memory: the HNSW index of %s was not built (%s); searches stay exact", self.path, e
                )

    async def _build_hnsw(self) -> None:
        key = [LOCK_SPACE + 1, self.schema]
        async with self._pool.connection() as conn:
            try:
                got = await (await conn.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))", key)).fetchone()
                if not got[0]:
                    return  # another process is building it
                try:
                    valid = await (await conn.execute(_HNSW_VALID, [self.schema])).fetchone()
                    if valid is not None and valid[0]:
                        return
                    await conn.execute("SELECT set_config('lock_timeout', '0', false)")
                    if valid is not None:  # left invalid by a failed build
                        await conn.execute("DROP INDEX CONCURRENTLY IF EXISTS memory_vectors_hnsw")
                    await conn.execute(pg_schema.HNSW_INDEX)
                finally:
                    await conn.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", key)
                    await conn.execute("SELECT set_config('lock_timeout', %s, false)", [self._lock_timeout])
            except BaseException:
                await conn.close()  # a connection that may still hold the lock never goes back to the pool
                raise

    async def _grow(self) -> None:
        """Under ``"auto"``: search through the HNSW index once it is valid, building it from the threshold on.

        Another process may have built it already, or be building it: searches stay exact
        until the index is valid. Never raises (a failed build is logged; exact search stands).
        """
        if self._ann_threshold is None or self._tier == "hnsw" or self.pin is None:
            return
        try:
            valid = await self._read(_HNSW_VALID, [self.schema])
            if not (valid and valid[0][0]):
                rows = await self._read("SELECT count(*) FROM memory_vectors")
                if int(rows[0][0]) < self._ann_threshold:
                    return
                await self._ensure_hnsw()
                valid = await self._read(_HNSW_VALID, [self.schema])
        except StorageError as e:
            log.warning(
                "elastic-memory: could not check the vector index of %s (%s); searches stay exact",
                self.path,
                e,
            )
            return
        if valid and valid[0][0]:
            self._tier = "hnsw"

    def _grow_later(self) -> None:
        """Schedule :meth:`_grow` in the background, at most every ``_GROWTH_CHECK_EVERY`` seconds."""
        if self._ann_threshold is None or self._tier == "hnsw" or (self._growth and not self._growth.done()):
            return
        now = time.monotonic()
        if now - self._growth_checked >= _GROWTH_CHECK_EVERY:
            self._growth_checked = now
            self._growth = asyncio.get_running_loop().create_task(self._grow())

    async def close(self) -> None:
        """Close the pool (idempotent); an index build in flight is cancelled (the next open builds it)."""
        if self.closed:
            return
        self.closed = True
        if self._growth is not None and not self._growth.done():
            self._growth.cancel()
            await asyncio.gather(self._growth, return_exceptions=True)
        await self._pool.close()

    # ------------------------------------------------------------------ helpers
    @contextlib.contextmanager
    def _errors(self, what: str, *, write: bool = False) -> Iterator[None]:
        try:
            yield
        except self._psycopg.Error as e:  # the pool's PoolTimeout (no connection in time) included
            hint = "retry"
            if write:  # the server rolls back what it did not commit; a commit cut off in flight may have landed
                hint = (
                    "nothing was written unless the connection dropped during the commit; writing again is safe "
                    "(the same content is deduplicated, the same ids are updated)"
                )
            msg = f"could not {what} on {self.path}: {first_line(e)}; {hint}"
            raise StorageError(msg) from e

    def _check_open(self) -> None:
        if self.closed:
            msg = "this memory store is closed; open it again with Memory.open(url)"
            raise UsageError(msg)

    @contextlib.asynccontextmanager
    async def _transaction(self, what: str) -> AsyncIterator[Any]:
        """A write transaction holding the store's advisory lock: writers queue as SQLite's do."""
        self._check_open()
        with self._errors(what, write=True):
            async with self._pool.connection() as conn, conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", [LOCK_SPACE, self.schema])
                yield conn
        self.writes += 1

    @contextlib.asynccontextmanager
    async def transaction(self, what: str, *, bump: bool = True) -> AsyncIterator[Transaction]:
        """A write transaction holding the store's advisory lock (see :meth:`.Backend.transaction`).

        ``bump`` is accepted for the protocol: PostgreSQL stores keep no RAM index to invalidate.
        """
        async with self._transaction(what) as conn:
            yield PgTransaction(self, conn)

    async def read(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """One read statement written with ``?`` placeholders: its rows."""
        return await self._read(pq.pg(sql), params)

    @contextlib.asynccontextmanager
    async def claim(self, name: str) -> AsyncIterator[bool]:
        """A session advisory lock on ``(schema, name)`` for the block, if free (see :meth:`.Backend.claim`).

        The lock lives on one pooled connection held for the block; if that connection
        drops, the server releases the lock with it, and a connection that may still hold it
        is closed, never returned to the pool.
        """
        self._check_open()
        key = [LOCK_SPACE + 2, f"{self.schema}:{name}"]
        async with self._pool.connection() as conn:
            with self._errors("claim background work"):
                cur = await conn.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))", key)
                row = await cur.fetchone()
            mine = bool(row and row[0])
            try:
                yield mine
            finally:
                if mine:
                    try:
                        await conn.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", key)
                    except BaseException as e:
                        await conn.close()  # a connection that may still hold the lock never goes back to the pool
                        if not isinstance(e, self._psycopg.Error):
                            raise

    @property
    def capabilities(self) -> Capabilities:
        """PostgreSQL: vectors when pgvector is installed; no RAM tiers (the server searches)."""
        return Capabilities(
            engine="postgresql", vectors=self.has_vec, ram_index=False, loop_tables=True, keyword_half=pq.TS_RANK_HALF
        )

    async def _read(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """One statement (``%s`` placeholders) on a pooled connection: its rows."""
        self._check_open()
        with self._errors("read memories"):
            async with self._pool.connection() as conn:
                cur = await conn.execute(sql, list(params))
                return list(await cur.fetchall()) if cur.description else []

    async def _load_pin(self) -> None:
        rows = await self._read("SELECT model_id, dimension, family FROM embedding_meta WHERE id = 1")
        self.pin = None if not rows else EmbeddingPin(str(rows[0][0]), int(rows[0][1]), str(rows[0][2]))

    @property
    def has_vec(self) -> bool:
        """True when pgvector is installed in the database."""
        return self._pgvector is not None

    def check_vector(self, vector: F32) -> None:
        """Raise :class:`EmbeddingMismatchError` when ``vector`` does not fit the pin."""
        check_against(vector, self.pin)

    # ------------------------------------------------------------------- writes
    async def write(
        self,
        rows: Sequence[dict[str, Any]],
        vectors: Sequence[F32 | Any | None],
        *,
        dedupe: Sequence[bool],
        mode: WriteMode,
        pin: EmbeddingPin | None,
    ) -> list[MemoryId]:
        """Insert or upsert ``rows`` in one transaction (see :meth:`.SQLiteStore.write`)."""
        self._check_open()
        if self.pin is None:
            await self._load_pin()
            if self.pin is not None and self._tier == "hnsw":
                await self._ensure_hnsw()
        for v in vectors:
            if isinstance(v, np.ndarray):
                check_against(v, self.pin or pin)
        wants_pin = self.has_vec and pin is not None and any(isinstance(v, np.ndarray) for v in vectors)
        async with self._transaction("write memories") as conn:
            # The pin as committed now (another process may have pinned since we looked), under the lock.
            settled = await settle_pin(conn, pin if wants_pin else None, vectors, clock=self.clock)
            pinned = self.has_vec and settled is not None
            ids, _ = await write_batch(conn, rows, vectors, dedupe, mode=mode, pinned=pinned, now=self.clock())
        if settled is not None and self.pin is None:
            self.pin = settled
            if self._tier == "hnsw":
                await self._ensure_hnsw()
        return ids

    async def set_flags(
        self, ids: Sequence[str], *, deleted: bool | None = None, archived: bool | None = None
    ) -> list[str]:
        """Soft-delete/restore or archive/unarchive; returns the ids that changed."""
        now = self.clock()
        changed: list[str] = []
        async with self._transaction("update memories") as conn:
            for chunk in chunks(list(ids)):
                cur = await conn.execute(*pq.select_rows(by="id", values=chunk))
                for row in await cur.fetchall():
                    record = record_from_row(row)
                    changes: dict[str, Any] = {}
                    if deleted is not None and (record.deleted_at is not None) != deleted:
                        changes["deleted_at"] = now if deleted else None
                    if archived is not None and record.archived != archived:
                        changes["archived"] = int(archived)
                    if changes:
                        changes["updated_at"] = now
                        await conn.execute(*pq.translate(q.update_row(seq_of(row), changes)))
                        changed.append(record.id)
        return changed

    async def hard_delete(self, ids: Sequence[str]) -> list[str]:
        """Remove rows (their tags and vectors go with them); returns the ids that existed."""
        async with self._transaction("delete memories") as conn:
            cur = await conn.execute("DELETE FROM memories WHERE id = ANY(%s) RETURNING id", [list(ids)])
            gone = {str(r[0]) for r in await cur.fetchall()}
        return [i for i in dict.fromkeys(ids) if i in gone]

    async def purge(self, older_than: float, ids: Sequence[str] | None = None) -> list[str]:
        """Hard-delete memories soft-deleted, or expired, at least ``older_than`` seconds ago (of ``ids`` if given)."""
        cutoff = self.clock() - older_than
        only, params = ("", []) if ids is None else (" AND id = ANY(%s)", [list(ids)])
        async with self._transaction("delete memories") as conn:
            cur = await conn.execute(
                "DELETE FROM memories WHERE ((deleted_at IS NOT NULL AND deleted_at <= %s) "
                f"OR (expires_at IS NOT NULL AND expires_at <= %s)){only} RETURNING seq, id",
                [cutoff, cutoff, *params],
            )
            return [str(r[1]) for r in sorted(await cur.fetchall())]

    async def prune(self, policy: PrunePolicy) -> PruneReport:
        """Archive or purge the victims of ``policy`` in one transaction."""
        now = self.clock()
        live, params = pq.live_filter(Filters(), now=now)
        victims: list[tuple[int, str]] = []
        below = over = 0
        async with self._transaction("prune memories") as conn:
            if policy.min_importance is not None:
                cur = await conn.execute(
                    f"SELECT seq, id FROM memories AS m WHERE {live} AND m.pinned = 0 AND m.importance < %s "
                    "ORDER BY m.seq",
                    [*params, policy.min_importance],
                )
                rows = await cur.fetchall()
                victims += [(int(r[0]), str(r[1])) for r in rows]
                below = len(rows)
            if policy.max_entries is not None:
                cur = await conn.execute(f"SELECT count(*) FROM memories AS m WHERE {live}", params)
                total = int((await cur.fetchone())[0])
                excess = total - below - policy.max_entries
                if excess > 0:
                    floor = policy.min_importance if policy.min_importance is not None else -1.0
                    cur = await conn.execute(
                        f"SELECT seq, id FROM memories AS m WHERE {live} AND m.pinned = 0 AND m.importance >= %s "
                        "ORDER BY m.importance ASC, m.accessed_at ASC, m.seq ASC LIMIT %s",
                        [*params, floor, excess],
                    )
                    rows = await cur.fetchall()
                    victims += [(int(r[0]), str(r[1])) for r in rows]
                    over = len(rows)
            if not policy.dry_run and victims:
                seqs = [s for s, _ in victims]
                if policy.action is PruneAction.PURGE:
                    await conn.execute("DELETE FROM memories WHERE seq = ANY(%s)", [seqs])
                else:
                    await conn.execute(
                        "UPDATE memories SET archived = 1, updated_at = %s WHERE seq = ANY(%s)", [now, seqs]
                    )
        return PruneReport(policy.action, tuple(i for _, i in victims), below, over, policy.dry_run)

    async def touch_ids(self, ids: Sequence[str]) -> None:
        """Record an access on the memories among ``ids``."""
        rows = await self._read("SELECT seq FROM memories WHERE id = ANY(%s)", [list(dict.fromkeys(ids))])
        await self.touch([int(r[0]) for r in rows])

    async def touch(self, seqs: Sequence[int]) -> None:
        """Record an access: count, time, and retention growth (capped). Best effort, never waits.

        Rows a writer holds are skipped (``SKIP LOCKED``): access tracking never blocks, and
        never deadlocks with, a write. A failure is logged, not raised: the recall stands.
        """
        if not seqs:
            return
        self._check_open()
        try:
            with self._errors("record access"):
                async with self._pool.connection() as conn:
                    await conn.execute(
                        "UPDATE memories SET access_count = access_count + 1, accessed_at = %s, "
                        "retention_strength = least(%s, retention_strength * %s) WHERE seq IN ("
                        "SELECT seq FROM memories WHERE seq = ANY(%s) ORDER BY seq FOR NO KEY UPDATE SKIP LOCKED)",
                        [self.clock(), _RETENTION_CAP, _RETENTION_GROWTH, list(seqs)],
                    )
        except StorageError as e:
            log.warning("elastic-memory: access tracking skipped: %s", e)

    # -------------------------------------------------------------------- reads
    async def keyword(
        self, match: str, filters: Filters, limit: int, notes: dict[str, Any] | None = None
    ) -> list[tuple[int, float]]:
        """``(seq, relevance)`` best first among live memories matching ``filters`` (``ts_rank``; no ``notes``)."""
        sql, params = pq.keyword_search(match, filters, now=self.clock(), limit=limit)
        return [(int(r[0]), float(r[1])) for r in await self._read(sql, params)]

    async def session_neighbors(self, seqs: Sequence[int]) -> dict[int, tuple[int | None, int | None, str]]:
        """For each memory with a session: the live memories just before and after it there, and the session key.

        A session is one agent's: two agents' sessions of one name are two sessions (the key names both).
        """
        rows = await self._read(
            "SELECT m.seq, "
            "(SELECT p.seq FROM memories AS p WHERE p.session_id = m.session_id AND p.agent_id = m.agent_id "
            "AND p.seq < m.seq "
            "AND p.deleted_at IS NULL ORDER BY p.seq DESC LIMIT 1), "
            "(SELECT n.seq FROM memories AS n WHERE n.session_id = m.session_id AND n.agent_id = m.agent_id "
            "AND n.seq > m.seq "
            "AND n.deleted_at IS NULL ORDER BY n.seq LIMIT 1), m.session_id, m.agent_id "
            "FROM memories AS m WHERE m.session_id IS NOT NULL AND m.seq = ANY(%s)",
            [list(seqs)],
        )
        return {int(r[0]): (r[1], r[2], session_key(r[4], r[3])) for r in rows}

    async def vectors_of(self, ids: Sequence[str]) -> dict[str, F32]:
        """The stored (unit) vectors of the memories among ``ids`` that have one."""
        if not self.has_vec or self.pin is None:
            return {}
        rows = await self._read(
            "SELECT m.id, v.embedding FROM memories AS m JOIN memory_vectors AS v ON v.seq = m.seq "
            "WHERE m.id = ANY(%s)",
            [list(dict.fromkeys(ids))],
        )
        return {str(r[0]): to_array(r[1]) for r in rows}

    async def iter_records(self, batch: int = 500) -> AsyncIterator[tuple[MemoryRecord, F32 | None]]:
        """Every record, hidden ones included, in insertion order, with its vector."""
        last = 0
        vectors = self.has_vec and self.pin is not None
        join = "LEFT JOIN memory_vectors AS v ON v.seq = m.seq" if vectors else ""
        what = ", v.embedding" if vectors else ""
        while True:
            rows = await self._read(
                f"SELECT {q.columns()}{what} FROM memories AS m {join} WHERE m.seq > %s ORDER BY m.seq LIMIT %s",
                [last, batch],
            )
            if not rows:
                return
            for row in rows:
                vec = row[len(q.COLUMNS)] if vectors else None
                yield record_from_row(row), None if vec is None else to_array(vec)
            last = seq_of(rows[-1])

    @contextlib.asynccontextmanager
    async def snapshot(self) -> AsyncIterator[Snapshot]:
        """A ``REPEATABLE READ READ ONLY`` transaction on one pooled connection: writers go on."""
        self._check_open()
        async with self._pool.connection() as conn, conn.transaction():
            with self._errors("open a snapshot"):
                await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield PgSnapshot(self, conn, self._errors)

    async def stats(self) -> dict[str, Any]:
        """Counts, index and database facts."""
        now = self.clock()
        live, params = pq.live_filter(Filters(), now=now)
        counts = await self._read(
            "SELECT count(*), count(*) FILTER (WHERE deleted_at IS NOT NULL), "
            "count(*) FILTER (WHERE deleted_at IS NULL AND archived = 1), "
            "count(*) FILTER (WHERE deleted_at IS NULL AND expires_at IS NOT NULL AND expires_at <= %s), "
            "count(*) FILTER (WHERE has_vector = 1) FROM memories",
            [now],
        )
        total, deleted, archived, expired, vectors = (int(v) for v in counts[0])
        by_type = dict(await self._read(f"SELECT type, count(*) FROM memories AS m WHERE {live} GROUP BY type", params))
        by_scope = dict(
            await self._read(f"SELECT scope, count(*) FROM memories AS m WHERE {live} GROUP BY scope", params)
        )
        size = await self._read(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class AS c "
            "JOIN pg_namespace AS n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'"
        )
        version = await self._read(
            "SELECT current_setting('server_version'), (SELECT extversion FROM pg_extension WHERE extname = 'vector')"
        )
        return {
            "path": self.path,
            "total_memories": total,
            "active_memories": sum(int(v) for v in by_type.values()),
            "deleted_memories": deleted,
            "archived_memories": archived,
            "expired_memories": expired,
            "by_type": {str(k): int(v) for k, v in by_type.items()},
            "by_scope": {str(k): int(v) for k, v in by_scope.items()},
            "vectors": vectors,
            "vector_index": self.vector_tier(),
            "embedding_model": self.pin.model_id if self.pin else None,
            "embedding_dimension": self.pin.dimension if self.pin else None,
            "embedding_family": self.pin.family if self.pin else None,
            "schema_version": pg_schema.LATEST,
            "backend": "postgresql",
            "postgres_schema": self.schema,
            "postgres_version": version[0][0],
            "pgvector_version": version[0][1],
            "db_size_bytes": int(size[0][0]),
        }

    # ------------------------------------------------------------ vector search
    def allow_ram_index(self, allowed: bool, *, ann: bool = True) -> None:
        """The governor's RAM decision: nothing to do, vectors are searched in the server."""

    async def load_index(self) -> str:
        """Nothing to load (the server holds the index); under ``"auto"``, the HNSW index built now if due; the tier."""
        self._check_open()
        await self.refresh()
        await self._grow()
        return self.vector_tier()

    def vector_tier(self) -> str:
        """``"none"`` without vectors, else ``"exact"`` or ``"hnsw"``."""
        return "none" if not self.has_vec or self.pin is None else self._tier

    async def check(self) -> None:
        """Read one row: raises :class:`StorageError` when the database cannot serve."""
        await self._read("SELECT count(*) FROM (SELECT 1 FROM memories LIMIT 1) AS one")
        await self.refresh()

    async def refresh(self) -> None:
        """Pick up a pin another process wrote."""
        self._check_open()
        if self.pin is None:
            await self._load_pin()

    async def generation(self) -> None:
        """``None``: PostgreSQL keeps no write counter (one row every writer updates would serialise them)."""
        self._check_open()

    async def vector(
        self, vector: F32, filters: Filters, limit: int, *, records: dict[int, MemoryRecord] | None = None
    ) -> tuple[list[tuple[int, float]], dict[str, Any]]:
        """``(seq, cosine)`` best first among live rows matching ``filters``, and how (``vector_index``).

        Without filters the vectors are ranked alone and the top rows checked for liveness
        afterwards (fetching more when some are hidden), instead of joining every row. With
        the HNSW index, a search that returns fewer than ``limit`` rows (a selective filter)
        is run again exactly, so it never returns fewer rows than match. ``records`` is
        not filled here: the rows are read once, for the hits.
        """
        self._check_open()
        if not self.has_vec or self.pin is None:
            await self.refresh()
            if not self.has_vec or self.pin is None:
                return [], {"vector_index": "none"}
        check_against(vector, self.pin)
        self._grow_later()
        now = self.clock()
        hnsw = self._tier == "hnsw"
        if filters == _NO_FILTERS:
            ranking, complete = await self._unfiltered(vector, limit, now, hnsw=hnsw)
            if complete:
                return ranking, {"vector_index": self._tier}
        elif hnsw:
            ranking = await self._search(*pq.vector_scan(vector, filters, now=now, limit=limit, exact=False), ef=limit)
            if len(ranking) >= limit:
                return ranking[:limit], {"vector_index": "hnsw"}
        how: dict[str, Any] = {"vector_index": "exact"}
        if hnsw:
            how["ann_fallback"] = "the HNSW index returned fewer rows than asked"
        sql, params = pq.vector_scan(vector, filters, now=now, limit=limit, exact=True)
        return await self._search(sql, params), how

    async def _unfiltered(
        self, vector: F32, limit: int, now: float, *, hnsw: bool
    ) -> tuple[list[tuple[int, float]], bool]:
        """The best live rows from the vectors alone; whether the answer is complete."""
        fetch = limit + 16
        while True:
            rows = await self._vector_rows(*pq.vector_ranking(vector, limit=fetch, exact=not hnsw, now=now), ef=fetch)
            candidates = _best_first(rows)
            live = {int(r[0]) for r in rows if r[2]}
            kept = [c for c in candidates if c[0] in live]
            if len(kept) >= limit:
                return kept[:limit], True
            if len(candidates) < fetch:  # every vector seen; for HNSW, the index gave up first
                return kept, not hnsw
            if hnsw and fetch > _EF_SEARCH_MAX and (self._pgvector or ()) < (0, 8):
                return kept, False  # no iterative scans: the index cannot give more than ef_search rows
            fetch *= 4

    async def _search(self, sql: str, params: Sequence[Any], *, ef: int | None = None) -> list[tuple[int, float]]:
        """A vector query's ``(seq, cosine)`` rows, best first; ``ef``: the HNSW candidate list to ask for."""
        return _best_first(await self._vector_rows(sql, params, ef=ef))

    async def _vector_rows(self, sql: str, params: Sequence[Any], *, ef: int | None) -> list[Any]:
        """A vector query's rows, in the HNSW index's order when ``ef`` (its candidate list) is given."""
        if self._tier != "hnsw" or ef is None:
            rows = await self._read(sql, params)
        else:  # the settings hold for this transaction only
            with self._errors("search vectors"):
                async with self._pool.connection() as conn, conn.transaction():
                    settings = "SELECT set_config('hnsw.ef_search', %s, true)"
                    if self._pgvector is not None and self._pgvector >= (0, 8):  # iterative scans came in 0.8
                        settings += ", set_config('hnsw.iterative_scan', 'relaxed_order', true)"
                    await conn.execute(settings, [str(min(_EF_SEARCH_MAX, max(_EF_SEARCH, ef)))])
                    cur = await conn.execute(sql, list(params))
                    rows = await cur.fetchall()
        return list(rows)

    async def vector_scores(self, vector: F32, seqs: Sequence[int]) -> dict[int, float]:
        """Cosine similarity of the given memories to ``vector`` (absent: no stored vector)."""
        if not self.has_vec or self.pin is None or not seqs:
            return {}
        rows = await self._read(
            "SELECT seq, 1 - (embedding <=> %s) FROM memory_vectors WHERE seq = ANY(%s)", [vector, list(seqs)]
        )
        return {int(r[0]): float(r[1]) for r in rows}


def _best_first(rows: Sequence[Any]) -> list[tuple[int, float]]:
    """``(seq, cosine)`` of vector rows, best first (ties by seq)."""
    return sorted(((int(r[0]), float(r[1])) for r in rows), key=lambda x: (-x[1], x[0]))


class FreshConnections:
    """The pool's connection check, skipped for a connection given back (or opened) within :data:`FRESH_SECONDS`."""

    def __init__(self, check: Callable[[Any], Awaitable[None]], *, clock: Callable[[], float] = time.monotonic) -> None:
        self._check = check
        self._clock = clock
        self._returned: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()

    async def returned(self, conn: Any) -> None:
        """The pool's ``reset``: note when ``conn`` came back (in good order: the pool discards a broken one)."""
        self._returned[conn] = self._clock()

    async def check(self, conn: Any) -> None:
        """The pool's ``check``: the empty query, unless ``conn`` came back a moment ago."""
        back = self._returned.pop(conn, None)
        if back is None or self._clock() - back >= FRESH_SECONDS:
            await self._check(conn)
