"""The PostgreSQL write path: a batch of rows with their vectors, and the pin, inside the store's write transaction.

Everything here runs on the connection that holds the store's advisory lock, inside the
transaction the store opened. :class:`PgTransaction` is the store's :class:`.Transaction`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ...errors import EmbeddingMismatchError
from ...types import MemoryId
from .. import queries as q
from .. import write_plan
from ..backend import Backend, EmbeddingPin
from ..vectors.leg import chunks
from ..write_plan import WriteMode
from . import queries as pq
from . import schema as pg_schema
from .text import JsonText

__all__ = ["PgTransaction", "check_against", "settle_pin", "write_batch", "write_vectors"]

F32 = npt.NDArray[np.float32]
#: The ``jsonb`` columns (bound as :class:`~.text.JsonText`).
_JSON_COLUMNS = ("tags", "metadata")


def check_against(vector: F32, pin: EmbeddingPin | None) -> None:
    """Raise :class:`EmbeddingMismatchError` when ``vector`` does not fit ``pin`` (``None``: anything fits)."""
    if pin is not None and vector.shape != (pin.dimension,):
        msg = (
            f"vector of width {vector.shape[-1] if vector.ndim else 0} refused: the database is pinned "
            f"to {pin.model_id!r} with dimension {pin.dimension}; use that model or one of family {pin.family!r}"
        )
        raise EmbeddingMismatchError(msg)


async def settle_pin(
    conn: Any, pin: EmbeddingPin | None, vectors: Sequence[Any], *, clock: Callable[[], float]
) -> EmbeddingPin | None:
    """Inside the write: the stored pin (checked against the batch), else ``pin`` written (``None``: none)."""
    cur = await conn.execute("SELECT model_id, dimension, family FROM embedding_meta WHERE id = 1")
    row = await cur.fetchone()
    if row is None:
        if pin is None:
            return None
        await conn.execute(
            "INSERT INTO embedding_meta (id, model_id, dimension, family, created_at) VALUES (1, %s, %s, %s, %s)",
            [pin.model_id, pin.dimension, pin.family, clock()],
        )
        await conn.execute(pg_schema.vectors_table(pin.dimension))
        return pin
    stored = EmbeddingPin(str(row[0]), int(row[1]), str(row[2]))
    for v in vectors:
        if isinstance(v, np.ndarray):
            check_against(v, stored)
    return stored


async def write_batch(
    conn: Any,
    rows: Sequence[dict[str, Any]],
    vectors: Sequence[Any],
    dedupe: Sequence[bool],
    *,
    mode: WriteMode,
    pinned: bool,
    now: float,
) -> tuple[list[MemoryId], list[tuple[int, dict[str, Any], Any]]]:
    """Write ``rows`` inside the open transaction on ``conn``.

    Returns the ids (with their status) and ``(seq, row as written, vector)`` per written row.
    """
    ids = list(dict.fromkeys(r["id"] for r in rows))
    cur = await conn.execute(f"SELECT {write_plan.EXISTING} FROM memories WHERE id = ANY(%s)", [ids])
    stored = await cur.fetchall()
    hashes = list(dict.fromkeys(r["content_hash"] for r, check in zip(rows, dedupe, strict=True) if check))
    live: list[Any] = []
    for chunk in chunks(hashes, q.MAX_PARAMS // 2):
        cur = await conn.execute(*pq.translate(q.live_by_hash(chunk, now=now)))
        live += await cur.fetchall()
    new = max(0, len(rows) - len(stored))
    cur = await conn.execute("SELECT nextval('memories_seq') FROM generate_series(1, %s)", [new])
    seqs = iter([int(r[0]) for r in await cur.fetchall()])
    p = write_plan.plan(
        rows, vectors, dedupe, stored=stored, live=live, new_seq=seqs.__next__, mode=mode, pinned=pinned, now=now
    )
    json_at = [i + 1 for i, c in enumerate(q.WRITABLE) if c in _JSON_COLUMNS]  # after the seq
    for values in p.inserts:
        for i in json_at:
            values[i] = JsonText(values[i])
    json_at = [i for i, c in enumerate(p.update_columns) if c in _JSON_COLUMNS]
    for values in p.updates:
        for i in json_at:
            values[i] = JsonText(values[i])
    async with conn.cursor() as c:
        if p.inserts:
            await c.executemany(pq.pg(q.insert_rows()), p.inserts)
        if p.updates:
            await c.executemany(pq.pg(q.update_rows(p.update_columns)), p.updates)
        if pinned:
            await write_vectors(c, p.final, set(p.rewritten))
    return p.ids, p.changed


async def write_vectors(cur: Any, final: dict[int, tuple[dict[str, Any], Any]], rewritten: set[int]) -> None:
    """Store each seq's final vector through cursor ``cur``; ``rewritten`` seqs existed before this batch."""
    put = [(seq, v) for seq, (_, v) in final.items() if isinstance(v, np.ndarray)]
    gone = [(seq,) for seq, (_, v) in final.items() if v is None and seq in rewritten]
    if gone:
        await cur.executemany("DELETE FROM memory_vectors WHERE seq = %s", gone)
    if put:
        await cur.executemany(
            "INSERT INTO memory_vectors (seq, embedding) VALUES (%s, %s) "
            "ON CONFLICT (seq) DO UPDATE SET embedding = excluded.embedding",
            put,
        )


class PgTransaction:
    """The :class:`.Transaction` of a :class:`.PostgresStore`: statements on the connection holding its lock.

    ``store`` is read for its clock and pin.
    """

    def __init__(self, store: Backend, conn: Any) -> None:
        self._store = store
        self._conn = conn

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement; the number of rows it changed."""
        cur = await self._conn.execute(pq.pg(sql), list(params))
        return int(cur.rowcount)

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement per parameter row."""
        async with self._conn.cursor() as cur:
            await cur.executemany(pq.pg(sql), rows)

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """Run one statement (a query, or a write with ``RETURNING``); its rows."""
        cur = await self._conn.execute(pq.pg(sql), list(params))
        return list(await cur.fetchall()) if cur.description else []

    async def write_rows(
        self, rows: Sequence[dict[str, Any]], vectors: Sequence[Any], dedupe: Sequence[bool], *, mode: WriteMode
    ) -> list[MemoryId]:
        """Insert or upsert memories, as :meth:`.PostgresStore.write` does, inside this transaction."""
        store = self._store
        pinned = store.has_vec and store.pin is not None and any(isinstance(v, np.ndarray) for v in vectors)
        ids, _ = await write_batch(self._conn, rows, vectors, dedupe, mode=mode, pinned=pinned, now=store.clock())
        return ids

    async def archive(self, ids: Sequence[str]) -> None:
        """Archive memories by id inside this transaction."""
        await self._conn.execute(
            "UPDATE memories SET archived = 1, updated_at = %s WHERE id = ANY(%s)", [self._store.clock(), list(ids)]
        )

    async def put_vector(self, seq: int, row: Mapping[str, Any], vector: F32) -> None:
        """Store (or replace) the vector of memory ``seq``."""
        await self._conn.execute(
            "INSERT INTO memory_vectors (seq, embedding) VALUES (%s, %s) "
            "ON CONFLICT (seq) DO UPDATE SET embedding = excluded.embedding",
            [seq, vector],
        )
        await self._conn.execute("UPDATE memories SET has_vector = 1 WHERE seq = %s", [seq])

    async def settle_pin(self, pin: EmbeddingPin) -> EmbeddingPin:
        """The database's pin as committed now: ``pin`` written if there is none, else the stored one."""
        settled = await settle_pin(self._conn, pin, (), clock=self._store.clock)
        return pin if settled is None else settled
