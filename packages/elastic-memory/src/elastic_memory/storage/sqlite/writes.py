"""The SQLite write path: a batch of rows with their FTS5 rows, keyword tables and vectors; the pin; deletes.

Everything here runs on the store's connection inside the write transaction the store
opened (``BEGIN IMMEDIATE``, under its lock); what a batch changed reaches the RAM index
after the commit, by the store. :class:`SQLiteTransaction` is the store's
:class:`.Transaction`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import aiosqlite
import numpy as np
import numpy.typing as npt

from ...errors import EmbeddingMismatchError
from ...filters import Filters
from ...types import MemoryId, PruneAction, PrunePolicy
from .. import queries as q
from .. import write_plan
from ..backend import Backend, EmbeddingPin
from ..rows import to_blob
from ..vectors.leg import KEEP, chunks
from ..write_plan import WriteMode
from .keyword_partitions import KeywordPartitions

__all__ = [
    "SQLiteTransaction",
    "apply_prune",
    "check_vector_against",
    "delete_seqs",
    "purgeable",
    "read_pin",
    "seqs_of_ids",
    "settle_pin",
    "write_batch",
    "write_pin",
    "write_vectors",
]

F32 = npt.NDArray[np.float32]
#: ``(seq, row as written, vector)`` per written row, for the RAM index.
Changed = list[tuple[int, dict[str, Any], Any]]

#: Where a stored row's agent is among :data:`write_plan.EXISTING`'s columns.
_STORED_AGENT = write_plan.EXISTING.split(", ").index("agent_id")


async def _rows(conn: aiosqlite.Connection, sql: str, params: Sequence[Any] = ()) -> list[Any]:
    # One hop to the connection's thread (execute + fetchall + close would be three).
    return list(await conn.execute_fetchall(sql, params))


def check_vector_against(vector: F32, pin: EmbeddingPin | None) -> None:
    """Raise :class:`EmbeddingMismatchError` when ``vector`` does not fit ``pin`` (``None``: anything fits)."""
    if pin is not None and vector.shape != (pin.dimension,):
        msg = (
            f"vector of width {vector.shape[-1] if vector.ndim else 0} refused: the database is pinned "
            f"to {pin.model_id!r} with dimension {pin.dimension}; use that model or one of family "
            f"{pin.family!r}"
        )
        raise EmbeddingMismatchError(msg)


async def read_pin(conn: aiosqlite.Connection) -> EmbeddingPin | None:
    """The pin the file holds, or ``None``."""
    rows = await _rows(conn, "SELECT model_id, dimension, family FROM embedding_meta WHERE id = 1")
    return None if not rows else EmbeddingPin(str(rows[0][0]), int(rows[0][1]), str(rows[0][2]))


async def write_pin(conn: aiosqlite.Connection, pin: EmbeddingPin, now: float) -> None:
    """Pin the file to ``pin`` and create its vec0 table."""
    await conn.execute(
        "INSERT INTO embedding_meta (id, model_id, dimension, family, created_at) VALUES (1, ?, ?, ?, ?)",
        (pin.model_id, pin.dimension, pin.family, now),
    )
    await conn.execute(q.vec_create(pin.dimension))


async def settle_pin(
    conn: aiosqlite.Connection, pin: EmbeddingPin, vectors: Sequence[F32 | Any | None], *, clock: Callable[[], float]
) -> EmbeddingPin:
    """Inside the write transaction: pin ``pin``, unless another connection pinned first (then check that pin)."""
    stored = await read_pin(conn)
    if stored is None:
        await write_pin(conn, pin, clock())
        return pin
    for v in vectors:
        if isinstance(v, np.ndarray):
            check_vector_against(v, stored)
    return stored


async def write_batch(
    conn: aiosqlite.Connection,
    keywords: KeywordPartitions,
    rows: Sequence[dict[str, Any]],
    vectors: Sequence[Any],
    dedupe: Sequence[bool],
    *,
    mode: WriteMode,
    pinned: bool,
    now: float,
) -> tuple[list[MemoryId], Changed]:
    """Write ``rows`` inside the open transaction with a fixed number of statements.

    Returns the ids (with their status) and ``(seq, row as written, vector)`` per written
    row. Later rows of the batch see earlier ones (same id: update; same text: duplicate).
    """
    stored: list[Any] = []
    for chunk in chunks(list(dict.fromkeys(r["id"] for r in rows))):
        sql, params = q.in_list("id", chunk)
        stored += await _rows(conn, f"SELECT {write_plan.EXISTING} FROM memories WHERE {sql}", params)
    live: list[Any] = []
    hashes = list(dict.fromkeys(r["content_hash"] for r, check in zip(rows, dedupe, strict=True) if check))
    for chunk in chunks(hashes, q.MAX_PARAMS // 2):
        live += await _rows(conn, *q.live_by_hash(chunk, now=now))
    # AUTOINCREMENT's counter never goes back, so a seq (and its vector rowid) is never reused.
    top = await _rows(
        conn,
        "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'memories'), 0), "
        "coalesce((SELECT max(seq) FROM memories), 0))",
    )
    next_seq = itertools.count(1 + int(top[0][0]))
    p = write_plan.plan(
        rows,
        vectors,
        dedupe,
        stored=stored,
        live=live,
        new_seq=next_seq.__next__,
        mode=mode,
        pinned=pinned,
        now=now,
    )
    # The agents' keyword tables first, while ``memories`` still holds the rows' old agents.
    await keywords.write(
        ((seq, row["agent_id"], row["content"], row["tags"]) for seq, (row, _) in p.final.items()),
        ((int(r[0]), str(r[_STORED_AGENT])) for r in stored if int(r[0]) in p.final),
    )
    if p.inserts:  # FTS5 first: the schema refuses a memory whose FTS5 row is missing (v5)
        await conn.executemany(*q.fts_insert_rows(p.inserts))
        await conn.executemany(q.insert_rows(), p.inserts)
    if p.updates:
        await conn.executemany(q.update_rows(p.update_columns), p.updates)
    if pinned:
        await write_vectors(conn, p.final, p.rewritten)
    return p.ids, p.changed


async def write_vectors(
    conn: aiosqlite.Connection, final: dict[int, tuple[dict[str, Any], Any]], rewritten: list[int]
) -> None:
    """Store each seq's final vector; ``rewritten`` seqs existed before this batch."""
    kept: dict[int, bytes] = {}
    keep_seqs = [s for s, (_, v) in final.items() if v is KEEP and s in set(rewritten)]
    if keep_seqs:
        kept.update(await _rows(conn, *q.vec_by_rowids(keep_seqs)))
    gone = [(s,) for s in rewritten if s in final]
    if gone:  # one lookup per rowid: vec0 scans everything for "rowid IN (...)"
        await conn.executemany("DELETE FROM memories_vec WHERE rowid = ?", gone)
    values = []
    for seq, (row, vector) in final.items():
        blob = to_blob(vector) if isinstance(vector, np.ndarray) else kept.get(seq) if vector is KEEP else None
        if blob is not None:
            values.append((seq, row["agent_id"], blob, row["scope"], row["type"]))
    if values:
        await conn.executemany(
            "INSERT INTO memories_vec (rowid, agent_id, embedding, scope, type) VALUES (?, ?, ?, ?, ?)", values
        )


async def delete_seqs(
    conn: aiosqlite.Connection, keywords: KeywordPartitions, seqs: Sequence[int], *, vectors: bool
) -> None:
    """Erase memories ``seqs``: their rows, keyword rows and (``vectors``: the file has a vec0 table) vectors."""
    for chunk in chunks(list(seqs)):
        sql, params = q.in_list("seq", chunk)
        await keywords.delete(chunk)
        await conn.execute(f"DELETE FROM memories WHERE {sql}", params)
        if vectors:
            await conn.executemany("DELETE FROM memories_vec WHERE rowid = ?", [(s,) for s in chunk])


async def seqs_of_ids(conn: aiosqlite.Connection, ids: Sequence[str]) -> list[tuple[int, str]]:
    """``(seq, id)`` of the memories among ``ids``."""
    found: list[tuple[int, str]] = []
    for chunk in chunks(list(ids)):
        sql, params = q.in_list("id", chunk)
        rows = await _rows(conn, f"SELECT seq, id FROM memories WHERE {sql}", params)
        found += [(int(r[0]), str(r[1])) for r in rows]
    return found


async def purgeable(conn: aiosqlite.Connection, cutoff: float, ids: Sequence[str] | None) -> list[tuple[int, str]]:
    """``(seq, id)`` of the memories (among ``ids`` if given) soft-deleted or expired at ``cutoff`` or before."""
    old = "((deleted_at IS NOT NULL AND deleted_at <= ?) OR (expires_at IS NOT NULL AND expires_at <= ?))"
    if ids is None:
        rows = await _rows(conn, f"SELECT seq, id FROM memories WHERE {old}", [cutoff, cutoff])
        return [(int(r[0]), str(r[1])) for r in rows]
    found: list[tuple[int, str]] = []
    for chunk in chunks(list(dict.fromkeys(ids)), q.MAX_PARAMS - 2):
        sql, params = q.in_list("id", chunk)
        rows = await _rows(conn, f"SELECT seq, id FROM memories WHERE {old} AND {sql}", [cutoff, cutoff, *params])
        found += [(int(r[0]), str(r[1])) for r in rows]
    return found


async def apply_prune(
    conn: aiosqlite.Connection, keywords: KeywordPartitions, policy: PrunePolicy, *, now: float, vectors: bool
) -> tuple[list[tuple[int, str]], int, int]:
    """Inside the write transaction: the victims of ``policy`` archived or purged (unless a dry run).

    Returns ``(seq, id)`` per victim, and how many fell below the importance floor and over
    the entry cap. ``vectors``: the file has a vec0 table (see :func:`delete_seqs`).
    """
    live, params = q.live_filter(Filters(), now=now)
    victims: list[tuple[int, str]] = []
    below = over = 0
    if policy.min_importance is not None:
        rows = await _rows(
            conn,
            f"SELECT seq, id FROM memories AS m WHERE {live} AND m.pinned = 0 AND m.importance < ? ORDER BY m.seq",
            [*params, policy.min_importance],
        )
        victims += [(int(r[0]), str(r[1])) for r in rows]
        below = len(rows)
    if policy.max_entries is not None:
        total = int((await _rows(conn, f"SELECT count(*) FROM memories AS m WHERE {live}", params))[0][0])
        excess = total - below - policy.max_entries
        if excess > 0:
            floor = policy.min_importance if policy.min_importance is not None else -1.0
            rows = await _rows(
                conn,
                f"SELECT seq, id FROM memories AS m WHERE {live} AND m.pinned = 0 "
                "AND m.importance >= ? ORDER BY m.importance ASC, m.accessed_at ASC, m.seq ASC LIMIT ?",
                [*params, floor, excess],
            )
            victims += [(int(r[0]), str(r[1])) for r in rows]
            over = len(rows)
    if not policy.dry_run and victims:
        if policy.action is PruneAction.PURGE:
            await delete_seqs(conn, keywords, [s for s, _ in victims], vectors=vectors)
        else:
            for chunk in chunks([s for s, _ in victims]):
                sql, p = q.in_list("seq", chunk)
                await conn.execute(f"UPDATE memories SET archived = 1, updated_at = ? WHERE {sql}", [now, *p])
    return victims, below, over


class SQLiteTransaction:
    """The :class:`.Transaction` of a :class:`.SQLiteStore`: statements on its connection.

    ``store`` is read for its clock and pin; ``keywords`` are its per-agent keyword tables.
    """

    def __init__(self, store: Backend, conn: aiosqlite.Connection, keywords: KeywordPartitions) -> None:
        self._store = store
        self._conn = conn
        self._keywords = keywords
        #: ``(seq, row as written, vector)`` for the RAM index, applied after the commit.
        self.changed: Changed = []

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement; the number of rows it changed."""
        cur = await self._conn.execute(sql, params)
        return int(cur.rowcount)

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement per parameter row."""
        await self._conn.executemany(sql, rows)

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """Run one statement (a query, or a write with ``RETURNING``); its rows."""
        return await _rows(self._conn, sql, params)

    async def write_rows(
        self, rows: Sequence[dict[str, Any]], vectors: Sequence[Any], dedupe: Sequence[bool], *, mode: WriteMode
    ) -> list[MemoryId]:
        """Insert or upsert memories, as :meth:`.SQLiteStore.write` does, inside this transaction."""
        store = self._store
        pinned = store.has_vec and store.pin is not None and any(isinstance(v, np.ndarray) for v in vectors)
        ids, changed = await write_batch(
            self._conn, self._keywords, rows, vectors, dedupe, mode=mode, pinned=pinned, now=store.clock()
        )
        self.changed.extend(changed)
        return ids

    async def archive(self, ids: Sequence[str]) -> None:
        """Archive memories by id inside this transaction."""
        now = self._store.clock()
        for chunk in chunks(list(ids)):
            sql, params = q.in_list("id", chunk)
            hidden = await self.fetch(
                f"UPDATE memories SET archived = 1, updated_at = ? WHERE {sql} RETURNING seq", [now, *params]
            )
            self.changed.extend((int(r[0]), {"archived": 1}, None) for r in hidden)

    async def put_vector(self, seq: int, row: Mapping[str, Any], vector: F32) -> None:
        """Store (or replace) the vector of memory ``seq``."""
        await self._conn.execute("DELETE FROM memories_vec WHERE rowid = ?", [seq])
        await self._conn.execute(
            "INSERT INTO memories_vec (rowid, agent_id, embedding, scope, type) VALUES (?, ?, ?, ?, ?)",
            [seq, row["agent_id"], to_blob(vector), row["scope"], row["type"]],
        )
        await self._conn.execute("UPDATE memories SET has_vector = 1 WHERE seq = ?", [seq])
        self.changed.append((seq, {**row, "has_vector": 1}, vector))

    async def settle_pin(self, pin: EmbeddingPin) -> EmbeddingPin:
        """The file's pin as committed now: ``pin`` written if there is none, else the stored one."""
        return await settle_pin(self._conn, pin, (), clock=self._store.clock)
