"""Copy what is still readable of a damaged database into a new file: :func:`repair`.

The source is never opened for writing: it is copied (with its ``-wal``) to a temporary
folder and read there, so not even SQLite's side files appear beside it. Memories are read
in runs of row ids, and a run that fails is read again row by row, so one damaged page
costs the rows on it and no more. Each memory is written to the new file through the
store's write path with its tags and vector, which rebuilds the keyword indexes from the
content. The memory loop's tables (sessions, turns, facts, quarantine, graph) are copied
row by row, best effort. The report counts, per table, the rows copied and the rows lost.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import _runner
from ..errors import CorruptDatabaseError, ElasticMemoryError, UsageError
from ..storage import EmbeddingPin, SQLiteStore
from ..storage import queries as q
from ..storage.rows import from_blob, seq_of
from ..storage.sqlite.driver import Driver, driver

__all__ = ["RepairReport", "TableReport", "arepair", "repair"]

#: Row ids read per query; a run that fails is read again one row at a time.
_RUN = 256
#: The memory loop's tables, copied as they are (parents before the rows that name them).
_LOOP_TABLES = (
    "sessions",
    "turns",
    "facts",
    "quarantine",
    "memory_edges",
    "entities",
    "entity_keys",
    "relations",
    "entity_mentions",
)


@dataclass(frozen=True)
class TableReport:
    """What :func:`repair` copied of one table: ``read`` rows copied, ``lost`` rows not.

    ``lost`` is the rows the source's count promised and the copy misses, or, when even
    the count is unreadable, the row ids whose read failed. ``error`` is the first error met.
    """

    table: str
    read: int
    lost: int
    error: str | None = None


@dataclass(frozen=True)
class RepairReport:
    """What :func:`repair` copied from ``source`` into ``destination``, table by table.

    ``tables`` starts with ``memories`` and ``vectors`` (of the memories copied: those whose
    vector was unreadable count as lost). Memories copied without their vector get one again
    from the memory loop when the new file is opened with an embedder.
    """

    source: str
    destination: str
    tables: tuple[TableReport, ...]

    @property
    def lost(self) -> int:
        """Rows lost over every table."""
        return sum(t.lost for t in self.tables)

    def table(self, name: str) -> TableReport:
        """The report of table ``name``."""
        for t in self.tables:
            if t.table == name:
                return t
        raise KeyError(name)

    def __str__(self) -> str:
        width = max(len(t.table) for t in self.tables)
        lines = [f"Copied what was readable of {self.source} into {self.destination}.", ""]
        lines.append(f"{'table':<{width}}  {'copied':>8}  {'lost':>8}")
        for t in self.tables:
            note = f"  ({t.error})" if t.error else ""
            lines.append(f"{t.table:<{width}}  {t.read:>8}  {t.lost:>8}{note}")
        lines.append("")
        lines.append("Nothing was lost." if self.lost == 0 else f"{self.lost} row(s) could not be read.")
        return "\n".join(lines)


def repair(source: str | Path, destination: str | Path) -> RepairReport:
    """Copy everything still readable of the database ``source`` into the new file ``destination``.

    ``source`` is only read (through a temporary copy); ``destination`` must not exist.
    Open the new file with :meth:`Memory.open` afterwards. Raises :class:`CorruptDatabaseError`
    when nothing at all can be read (the file is not an SQLite database).
    """
    return _runner.run(arepair(source, destination), "repair")


async def arepair(source: str | Path, destination: str | Path) -> RepairReport:
    """:func:`repair` for async code."""
    return await _runner.arun(_repair(source, destination))


async def _repair(source: str | Path, destination: str | Path) -> RepairReport:
    src, dst = _check_paths(source, destination)
    drv = driver()
    with tempfile.TemporaryDirectory(prefix="elastic-memory-repair-") as tmp:
        copy = os.path.join(tmp, "source.db")
        await asyncio.to_thread(_copy, src, copy)
        reader = await asyncio.to_thread(_Reader.open, drv, copy, src)
        try:
            store = await SQLiteStore.open(dst)
            try:
                tables = [*await _copy_memories(reader, store)]
                for table in _LOOP_TABLES:
                    tables.append(await _copy_table(reader, store, table))
            finally:
                await store.close()
        finally:
            await asyncio.to_thread(reader.close)
    return RepairReport(src, dst, tuple(tables))


def _check_paths(source: str | Path, destination: str | Path) -> tuple[str, str]:
    for name, value in (("source", source), ("destination", destination)):
        if not isinstance(value, str | Path) or not str(value):
            msg = f"{name} must be a file path, got {value!r}"
            raise UsageError(msg)
    src, dst = os.path.abspath(source), os.path.abspath(destination)
    if not os.path.isfile(src):
        msg = f"{src} is not a file: pass the path of the damaged database"
        raise UsageError(msg)
    if os.path.exists(dst) or os.path.exists(dst + "-wal"):
        msg = f"{dst} exists: repair writes a new file, pass a path that does not exist yet"
        raise UsageError(msg)
    if not os.path.isdir(os.path.dirname(dst)):
        msg = f"cannot write {dst}: the folder {os.path.dirname(dst)} does not exist"
        raise UsageError(msg)
    return src, dst


def _copy(src: str, copy: str) -> None:
    shutil.copyfile(src, copy)
    if os.path.exists(src + "-wal"):  # committed rows may still wait there; -shm is rebuilt from it
        shutil.copyfile(src + "-wal", copy + "-wal")


class _Reader:
    """Reads of the temporary copy that report failure instead of raising it."""

    def __init__(self, drv: Driver, conn: Any) -> None:
        self.drv = drv
        self.conn = conn

    @classmethod
    def open(cls, drv: Driver, copy: str, shown: str) -> _Reader:
        try:
            conn = drv.connect(copy, timeout=0.0)
            conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
        except drv.module.Error as e:
            msg = f"nothing of {shown!r} can be read ({e}): it is not an SQLite database any more"
            raise CorruptDatabaseError(msg) from e
        return cls(drv, conn)

    def close(self) -> None:
        self.conn.close()

    def rows(self, sql: str, params: list[Any]) -> list[Any] | str:
        """The rows, or the error's text."""
        try:
            return list(self.conn.execute(sql, params).fetchall())
        except self.drv.module.Error as e:
            return str(e)

    def scalar(self, sql: str, params: list[Any] | None = None) -> Any:
        """The first value, or ``None`` when the query fails."""
        rows = self.rows(sql, params or [])
        return rows[0][0] if isinstance(rows, list) and rows else None

    def columns(self, table: str) -> list[str]:
        rows = self.rows(f"SELECT name FROM pragma_table_info({_literal(table)})", [])
        return [str(r[0]) for r in rows] if isinstance(rows, list) else []

    def by_rowid(self, select: str, key: str, table: str) -> Iterator[tuple[list[Any], int, str | None]]:
        """``(rows, unreadable ids, error)`` per run of row ids of ``table`` (``select ... WHERE key ...``)."""
        column = key.rsplit(".", 1)[-1]
        top = max(
            int(self.scalar(f"SELECT max({column}) FROM {q.quote_ident(table)}") or 0),
            int(self.scalar("SELECT seq FROM sqlite_sequence WHERE name = ?", [table]) or 0),
        )
        for low in range(1, top + 1, _RUN):
            high = min(low + _RUN - 1, top)
            rows = self.rows(f"{select} WHERE {key} BETWEEN ? AND ? ORDER BY {key}", [low, high])
            if isinstance(rows, list):
                yield rows, 0, None
                continue
            found: list[Any] = []
            bad, error = 0, rows
            for rowid in range(low, high + 1):
                one = self.rows(f"{select} WHERE {key} = ?", [rowid])
                if isinstance(one, list):
                    found += one
                else:
                    bad += 1
            yield found, bad, error

    def scan(self, select: str) -> tuple[list[Any], str | None]:
        """Every row a full scan reaches before the first error."""
        rows: list[Any] = []
        try:
            for row in self.conn.execute(select):
                rows.append(row)
        except self.drv.module.Error as e:
            return rows, str(e)
        return rows, None


async def _copy_memories(reader: _Reader, store: SQLiteStore) -> tuple[TableReport, TableReport]:
    pin = await asyncio.to_thread(_source_pin, reader)
    with_vectors = pin is not None and reader.drv.has_vec
    expected = await asyncio.to_thread(reader.scalar, "SELECT count(*) FROM memories")
    read = bad = vectors_read = vectors_bad = 0
    first_error: str | None = None
    vector_error: str | None = None
    runs = reader.by_rowid(f"SELECT {q.columns()} FROM memories AS m", "m.seq", "memories")
    while (run := await asyncio.to_thread(next, runs, None)) is not None:
        rows, unreadable, error = run
        bad += unreadable
        first_error = first_error or error
        if not rows:
            continue
        vectors: dict[int, Any] = {}
        if with_vectors:
            wanted = [seq_of(r) for r in rows if r[q.COLUMNS.index("has_vector")]]
            vectors, missed, error = await asyncio.to_thread(_vectors, reader, wanted)
            vectors_bad += missed
            vector_error = vector_error or error
        written, failed, error = await _write_memories(store, rows, vectors, pin)
        read += written
        bad += failed
        first_error = first_error or error
        vectors_read += sum(1 for r in rows if seq_of(r) in vectors) if failed == 0 else 0
    return (
        TableReport("memories", read, _lost(expected, read, bad), first_error),
        TableReport("vectors", vectors_read, vectors_bad, vector_error),
    )


def _source_pin(reader: _Reader) -> EmbeddingPin | None:
    rows = reader.rows("SELECT model_id, dimension, family FROM embedding_meta WHERE id = 1", [])
    if not isinstance(rows, list) or not rows:
        return None
    return EmbeddingPin(str(rows[0][0]), int(rows[0][1]), str(rows[0][2]))


def _vectors(reader: _Reader, seqs: list[int]) -> tuple[dict[int, Any], int, str | None]:
    """The vectors of ``seqs`` that can be read, how many cannot, the first error."""
    if not seqs:
        return {}, 0, None
    out: dict[int, Any] = {}
    rows = reader.rows(*q.vec_by_rowids(seqs))
    if isinstance(rows, list):
        out.update((int(r[0]), from_blob(r[1])) for r in rows)
        return out, len(seqs) - len(out), None
    error, missed = rows, 0
    for seq in seqs:
        one = reader.rows(*q.vec_by_rowids([seq]))
        if isinstance(one, list) and one:
            out[seq] = from_blob(one[0][1])
        else:
            missed += 1
    return out, missed, error


async def _write_memories(
    store: SQLiteStore, rows: list[Any], vectors: dict[int, Any], pin: EmbeddingPin | None
) -> tuple[int, int, str | None]:
    """Write ``rows`` (``queries.COLUMNS``) with their vectors; ``(written, failed, first error)``.

    A batch the new file refuses (a value damage made invalid) is written again row by row.
    """

    def row_of(r: Any) -> dict[str, Any]:
        return {c: r[i] for i, c in enumerate(q.COLUMNS) if c != "seq"}

    def vector_of(r: Any) -> Any:
        vector = vectors.get(seq_of(r))
        return vector if isinstance(vector, np.ndarray) else None

    async def write(batch: list[Any]) -> None:
        await store.write(
            [row_of(r) for r in batch],
            [vector_of(r) for r in batch],
            dedupe=[False] * len(batch),
            mode="import",
            pin=pin,
        )

    try:
        await write(rows)
    except (ElasticMemoryError, KeyError, TypeError, ValueError) as e:
        written, failed = 0, 0
        for r in rows:
            try:
                await write([r])
                written += 1
            except (ElasticMemoryError, KeyError, TypeError, ValueError):
                failed += 1
        return written, failed, str(e)
    return len(rows), 0, None


async def _copy_table(reader: _Reader, store: SQLiteStore, table: str) -> TableReport:
    wanted = await _columns_of(store, table)
    have = set(await asyncio.to_thread(reader.columns, table))
    columns = [c for c in wanted if c in have]
    if not columns:
        return TableReport(table, 0, 0, None if not have else "no column in common")
    listed = ", ".join(q.quote_ident(c) for c in columns)
    select = f"SELECT {listed} FROM {q.quote_ident(table)}"
    expected = await asyncio.to_thread(reader.scalar, f"SELECT count(*) FROM {q.quote_ident(table)}")
    insert = f"INSERT OR IGNORE INTO {q.quote_ident(table)} ({listed}) VALUES ({', '.join('?' * len(columns))})"
    key = await asyncio.to_thread(_rowid_alias, reader, table)
    batches: list[tuple[list[Any], int, str | None]] = []
    if key is not None:
        batches = await asyncio.to_thread(lambda: list(reader.by_rowid(select, key, table)))
    else:
        rows, error = await asyncio.to_thread(reader.scan, select)
        batches = [(rows, 0, error)]
    read = bad = 0
    first_error: str | None = None
    for rows, unreadable, read_error in batches:
        written, failed, write_error = await _insert(store, insert, rows)
        read += written
        bad += unreadable + failed
        first_error = first_error or read_error or write_error
    return TableReport(table, read, _lost(expected, read, bad), first_error)


async def _columns_of(store: SQLiteStore, table: str) -> list[str]:
    rows = await store.read(f"SELECT name FROM pragma_table_info({_literal(table)})")
    return [str(r[0]) for r in rows]


def _rowid_alias(reader: _Reader, table: str) -> str | None:
    """The table's ``INTEGER PRIMARY KEY`` column (its row id), if it has one."""
    rows = reader.rows(f"SELECT name, type, pk FROM pragma_table_info({_literal(table)})", [])
    if not isinstance(rows, list):
        return None
    keys = [r for r in rows if int(r[2]) > 0]
    if len(keys) == 1 and str(keys[0][1]).upper() == "INTEGER":
        return q.quote_ident(str(keys[0][0]))
    return None


async def _insert(store: SQLiteStore, insert: str, rows: list[Any]) -> tuple[int, int, str | None]:
    """Insert ``rows`` into the new file in one transaction, else one by one; ``(written, failed, error)``."""
    if not rows:
        return 0, 0, None

    async def run(batch: list[Any]) -> None:
        async with store.transaction("copy rows", bump=False) as tx:
            await tx.executemany(insert, [tuple(r) for r in batch])

    try:
        await run(rows)
    except ElasticMemoryError as e:
        written = failed = 0
        for r in rows:
            try:
                await run([r])
                written += 1
            except ElasticMemoryError:
                failed += 1
        return written, failed, str(e)
    return len(rows), 0, None


def _lost(expected: Any, read: int, unreadable: int) -> int:
    return max(int(expected) - read, 0) if isinstance(expected, int) else unreadable


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
