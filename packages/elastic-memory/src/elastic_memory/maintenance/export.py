"""Export format 2: every table's user data as JSON lines, and its import (an upsert, atomic per batch).

A file is a ``header`` line, the memories (with their vectors when asked), then the memory
loop's and the graph's rows (:data:`.tables.TABLES`, in that order), then an
``end`` line with the counts; every line names its ``record``. The export reads one
snapshot of the store page by page, so it is consistent while writers go on and holds one
page in memory. Format 1 (memories only, no ``record`` key) still imports.

:func:`export_jsonl` and :func:`import_jsonl` do it over a
:class:`~elastic_memory.core.MemoryCore` (the facades' ``export_jsonl`` and ``import_jsonl``;
a user's handle is refused, it would speak for every user).

>>> import json; json.loads(header_line("sqlite", None, vectors=False))["version"]
2
"""

from __future__ import annotations

import base64
import contextlib
import errno
import itertools
import json
import os
import stat
import time
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import numpy.typing as npt

from .. import _validate as v
from .._version import __version__
from ..core import REMEMBER_FIELDS, MemoryCore
from ..embedders.checks import checked_matrix
from ..errors import AccessDeniedError, EmbedderError, StorageError, UsageError
from ..storage import KEEP, is_url
from ..storage import queries as q
from ..storage.backend import EmbeddingPin, Snapshot, Transaction
from ..storage.rows import record_from_row, seq_of
from ..types import ImportReport
from . import tables as d

__all__ = [
    "BATCH",
    "FORMAT",
    "MEMORY_BATCH",
    "VERSION",
    "Checker",
    "ImportTotals",
    "Importer",
    "check_owner",
    "decode_vector",
    "encode_vector",
    "export_jsonl",
    "header_line",
    "import_jsonl",
    "import_row",
    "stored_vectors_kept",
    "tmp_of",
    "write_export",
]

F32 = npt.NDArray[np.float32]

FORMAT = "elastic-memory-export"
VERSION = 2
#: Records of one type written per transaction.
BATCH = 500
#: Memories written per transaction: their embedding is the slow part, and an interrupted
#: import keeps every finished batch.
MEMORY_BATCH = 64

#: What every exported record holds (``import_jsonl`` refuses a line without one of them).
_IMPORT_FIELDS = (
    "content",
    "created_at",
    "updated_at",
    "accessed_at",
    "retention_strength",
    "access_count",
    "archived",
)


def _line(data: Mapping[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True) + "\n"


def header_line(backend: str, pin: EmbeddingPin | None, *, vectors: bool) -> str:
    """The first line: format, version, where it came from, and the embedding pin of the vectors."""
    return _line(
        {
            "record": "header",
            "format": FORMAT,
            "version": VERSION,
            "library": __version__,
            "backend": backend,
            "created_at": time.time(),
            "vectors": vectors,
            "pin": None
            if pin is None
            else {"model_id": pin.model_id, "dimension": pin.dimension, "family": pin.family},
        }
    )


def encode_vector(vector: F32) -> dict[str, str]:
    """A vector as little-endian float32 bytes in base64: exact, and a quarter of its JSON floats."""
    return {"dtype": "<f4", "b64": base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")}


def decode_vector(data: Any) -> F32:
    """The vector of :func:`encode_vector` (``ValueError`` if it is not one)."""
    if not isinstance(data, dict) or data.get("dtype") != "<f4" or not isinstance(data.get("b64"), str):
        msg = "a vector is {'dtype': '<f4', 'b64': ...}"
        raise ValueError(msg)
    raw = base64.b64decode(data["b64"], validate=True)
    if not raw or len(raw) % 4:
        msg = "a vector's bytes are a whole number of float32 values"
        raise ValueError(msg)
    vector = np.frombuffer(raw, dtype="<f4").astype(np.float32)
    if not np.isfinite(vector).all():
        msg = "a vector holds NaN or infinite values"
        raise ValueError(msg)
    return vector


async def write_export(snap: Snapshot, out: TextIO, *, backend: str, pin: EmbeddingPin | None, vectors: bool) -> int:
    """Write a whole export of the store seen by ``snap`` to ``out``; returns the number of memories."""
    out.write(header_line(backend, pin, vectors=vectors))
    counts: dict[str, int] = {"memory": 0}
    sql = f"SELECT {q.columns()} FROM memories AS m WHERE m.seq > ? ORDER BY m.seq LIMIT ?"
    last = 0
    while rows := await snap.fetch(sql, [last, d.PAGE]):
        vecs = await snap.vectors([seq_of(r) for r in rows]) if vectors else {}
        for row in rows:
            data = {"record": "memory", **record_from_row(row).to_dict()}
            vector = vecs.get(seq_of(row))
            if vector is not None:
                data["vector"] = encode_vector(vector)
            out.write(_line(data))
        counts["memory"] += len(rows)
        last = seq_of(rows[-1])
    for table in d.TABLES:
        counts[table.record] = 0
        key: list[Any] = []
        while rows := await snap.fetch(d.page(table, first=not key), [*key, d.PAGE]):
            for row in rows:
                out.write(_line({"record": table.record, **dict(zip(table.columns, row, strict=True))}))
            counts[table.record] += len(rows)
            at = [table.columns.index(c) for c in table.order]
            key = [rows[-1][i] for i in at]
    out.write(_line({"record": "end", "counts": counts}))
    return counts["memory"]


@dataclass
class ImportTotals:
    """What a format 2 import wrote: memories by outcome, and rows per record type."""

    created: int = 0
    updated: int = 0
    duplicates: int = 0
    records: dict[str, int] = field(default_factory=dict)


class Checker:
    """The first pass over a format 2 file: every record valid, the end record last, its counts right.

    An import writes nothing until the whole file passed, so a bad line or a file cut short
    changes nothing.
    """

    def __init__(self, core: MemoryCore, *, where: Callable[[int], str], owner: str | None = None) -> None:
        self.core = core
        self.where = where
        #: The only agent whose rows the file may hold (a federation's private tier), or ``None``.
        self.owner = owner
        self.read: dict[str, int] = {}
        self.end: dict[str, int] | None = None

    def check(self, line_no: int, data: Any) -> None:
        """``ValueError`` naming the line if the record is not valid."""
        at = self.where(line_no)
        if not isinstance(data, dict):
            msg = f"{at}: a JSON object per line is expected, got a JSON {type(data).__name__}"
            raise ValueError(msg)
        kind = data.get("record")
        if self.end is not None:
            msg = f"{at}: a {kind!r} record after the end record"
            raise ValueError(msg)
        if kind == "end":
            counts = data.get("counts")
            if not isinstance(counts, dict) or not all(type(n) is int for n in counts.values()):
                msg = f"{at}: the end record's counts are not a record -> number object"
                raise ValueError(msg)
            self.end = {str(k): n for k, n in counts.items()}
            return
        try:
            if kind == "memory":
                row, _ = import_row(self.core, {k: v for k, v in data.items() if k not in ("record", "vector")}, None)
                if data.get("vector") is not None:
                    decode_vector(data["vector"])
                check_owner(at, self.owner, row["agent_id"], row["scope"])
            elif isinstance(kind, str) and kind in d.BY_RECORD:
                table = d.BY_RECORD[kind]
                missing = [c for c in table.columns if c not in data]
                if missing:
                    msg = f"missing field {missing[0]!r}" if len(missing) == 1 else f"missing fields {missing}"
                    raise ValueError(msg)
                for column, kind_of in table.kinds.items():
                    d.check(column, kind_of, data[column])
                if "agent_id" in table.columns:
                    check_owner(at, self.owner, data["agent_id"], "private")
            else:
                known = ", ".join(["memory", *d.BY_RECORD])
                msg = f"{at}: unknown record {kind!r} (known: {known})"
                raise ValueError(msg)
        except (ValueError, KeyError, TypeError, RecursionError) as e:
            if str(e).startswith(at):
                raise
            msg = f"{at}: not a {kind} record ({e})"
            raise ValueError(msg) from e
        self.read[kind] = self.read.get(kind, 0) + 1

    def done(self, source: object) -> None:
        """``ValueError`` if the file was cut short or its counts do not match."""
        if self.end is None:
            msg = f"{source} ends before its end record: the export was cut short; export again"
            raise ValueError(msg)
        short = {k: (n, self.read.get(k, 0)) for k, n in self.end.items() if self.read.get(k, 0) != n}
        extra = {k: (0, n) for k, n in self.read.items() if k not in self.end}
        if short or extra:
            msg = (
                f"{source}: the end record's counts differ from the records read {short | extra}; the file was altered"
            )
            raise ValueError(msg)


class Importer:
    """Imports the records of a format 2 file in order, a batch of one record type at a time.

    Ids of the loop's and the graph's rows are kept when free in the target; the few that
    are not are remapped (only those are remembered), and references follow.
    """

    def __init__(
        self,
        core: MemoryCore,
        header: Mapping[str, Any],
        *,
        where: Callable[[int], str],
        progress: Callable[[int, int], object] | None = None,
    ) -> None:
        self.core = core
        self.where = where
        self.progress = progress
        #: The file's records (the progress' total), once checked.
        self.total = 0
        self.done = 0
        self.totals = ImportTotals()
        self.pin = _pin_of(header.get("pin"))
        self.remap: dict[str, dict[int, int]] = {"turn": {}, "fact": {}, "entity": {}}
        self._postgres = core.store.capabilities.engine == "postgresql"
        self._pending: list[tuple[int, dict[str, Any]]] = []
        self._kind: str | None = None
        #: ``(seq, exported invalidated_by)`` of facts, fixed up once every fact is in.
        self._forward: list[tuple[int, int]] = []

    async def add(self, line_no: int, data: dict[str, Any]) -> None:
        """Queue one record (checked by :class:`Checker`); a full batch, or a new record type, is written first."""
        kind = str(data["record"])
        if kind == "end":
            await self.flush()
            return
        if kind != self._kind or len(self._pending) >= (MEMORY_BATCH if kind == "memory" else BATCH):
            await self.flush()
            self._kind = kind
        self._pending.append((line_no, data))

    async def flush(self) -> None:
        """Write the queued batch in one transaction (all of it or none)."""
        pending, kind = self._pending, self._kind
        if not pending or kind is None:
            return
        self._pending = []
        if kind == "memory":
            await self._memories(pending)
        else:
            await self._rows(d.BY_RECORD[kind], pending)
        self.totals.records[kind] = self.totals.records.get(kind, 0) + len(pending)
        self.done += len(pending)
        if self.progress is not None:
            self.progress(self.done, self.total)
        if kind != "fact":  # the facts' section is over (or not begun): their references can be fixed
            await self._fix_forward()

    async def finish(self) -> ImportTotals:
        """Write what is queued and fix forward references (the :class:`Checker` checked the counts)."""
        await self.flush()
        await self._fix_forward()
        return self.totals

    # --------------------------------------------------------------- memories
    async def _memories(self, pending: list[tuple[int, dict[str, Any]]]) -> None:
        core, store = self.core, self.core.store
        embedder = await core.embedder()
        family = embedder.family if embedder is not None else None
        rows: list[dict[str, Any]] = []
        vectors: list[Any] = []
        for line_no, data in pending:
            fields = {k: val for k, val in data.items() if k not in ("record", "vector")}
            try:
                row, _ = import_row(core, fields, None)
                vector = decode_vector(data["vector"]) if data.get("vector") is not None else None
                if vector is not None and not self._usable(vector, family):
                    vector = None
                if vector is not None:
                    store.check_vector(vector)
            except (ValueError, KeyError, TypeError, RecursionError) as e:
                msg = f"{self.where(line_no)}: not a memory record ({e}); nothing from this batch was written"
                raise ValueError(msg) from e
            rows.append(row)
            vectors.append(vector)
        vectors = await stored_vectors_kept(core, rows, vectors)
        ids = await core.write_rows(rows, dedupe=[False] * len(rows), mode="import", vectors=vectors, pin=self.pin)
        self.totals.created += sum(i.status == "created" for i in ids)
        self.totals.updated += sum(i.status == "updated" for i in ids)
        self.totals.duplicates += sum(i.status == "duplicate" for i in ids)

    def _usable(self, vector: F32, family: str | None) -> bool:
        """An exported vector is kept if it comes from the model the target embeds with (or is pinned to)."""
        pin = self.pin
        if pin is None or vector.shape != (pin.dimension,):
            return False
        if family is not None:
            return pin.family == family
        stored = self.core.store.pin
        return stored is None or (stored.family == pin.family and stored.dimension == pin.dimension)

    # ------------------------------------------------------------------- rows
    async def _rows(self, table: d.DumpTable, pending: list[tuple[int, dict[str, Any]]]) -> None:
        async with self.core.store.transaction(f"import {table.table}", bump=False) as tx:
            for line_no, data in pending:
                try:
                    values = self._values(table, data)
                except ValueError as e:
                    msg = (
                        f"{self.where(line_no)}: not a {table.record} record ({e}); nothing from this batch was written"
                    )
                    raise ValueError(msg) from e
                await self._put(tx, table, values)
            if self._postgres and table.ident is not None:
                await tx.fetch(*d.pg_sequence_reset(table))

    def _values(self, table: d.DumpTable, data: Mapping[str, Any]) -> dict[str, Any]:
        missing = [c for c in table.columns if c not in data]
        if missing:
            msg = f"missing field {missing[0]!r}" if len(missing) == 1 else f"missing fields {missing}"
            raise ValueError(msg)
        values: dict[str, Any] = {c: d.check(c, kind, data[c]) for c, kind in table.kinds.items()}
        for column, record in table.refs.items():
            old = values[column]
            if old is not None and column != "invalidated_by":  # facts point forward: fixed up after
                values[column] = self.remap[record].get(old, old)
        return values

    async def _put(self, tx: Transaction, table: d.DumpTable, values: dict[str, Any]) -> None:
        if table.ident is None:
            await tx.execute(d.upsert(table), [values[c] for c in table.columns])
            return
        old = int(values[table.ident])
        found = await tx.fetch(d.find(table), [values[c] for c in table.natural])
        if table is d.TURNS and not found:
            await self._free_turn_number(tx, values)
        forward = values["invalidated_by"] if table is d.FACTS else None
        closed = await self._one_current_fact(tx, values, found) if table is d.FACTS else None
        if found:
            new = int(found[0][0])
            sql, binds = d.update(table)
            await tx.execute(sql, [*(values[c] for c in binds), new])
        elif not await tx.fetch(d.taken(table), [old]):
            new = old
            await tx.execute(d.insert(table, with_ident=True), [values[c] for c in table.columns])
        else:
            rows = await tx.fetch(
                d.insert(table, with_ident=False), [values[c] for c in table.columns if c != table.ident]
            )
            new = int(rows[0][0])
        remap = self.remap.get(table.record)
        if remap is not None and new != old:
            remap[old] = new
        if closed is not None:
            await tx.execute(d.SET_INVALIDATED_BY, [new, closed])
        if forward is not None and values["invalidated_by"] == forward:
            self._forward.append((new, int(forward)))

    async def _free_turn_number(self, tx: Transaction, values: dict[str, Any]) -> None:
        """A new turn whose number its session already has (another conversation) goes after the last."""
        where = [values["agent_id"], values["session_id"]]
        if await tx.fetch(d.TURN_TAKEN, [*where, values["turn"]]):
            values["turn"] = int((await tx.fetch(d.NEXT_TURN, where))[0][0])
            await tx.execute(d.SESSION_AT_LEAST, [values["turn"], values["turn"], *where])

    async def _one_current_fact(self, tx: Transaction, values: dict[str, Any], found: list[Any]) -> int | None:
        """Keep one current fact per key: of the target's and the imported one, the later recorded stays current.

        Returns the target's fact that the imported one closes (its ``invalidated_by`` is set
        once the imported fact has its id), or ``None``.
        """
        if values["invalidated_at"] is not None:
            return None
        current = await tx.fetch(d.CURRENT_FACT, [values["agent_id"], values["key"]])
        if not current or (found and int(current[0][0]) == int(found[0][0])):
            return None
        seq, recorded_at, valid_from = int(current[0][0]), float(current[0][1]), float(current[0][2])
        if recorded_at <= float(values["recorded_at"]):
            await tx.execute(d.CLOSE_FACT, [values["recorded_at"], values["valid_from"], None, seq])
            return seq
        values["invalidated_at"], values["valid_to"] = recorded_at, values["valid_to"] or valid_from
        values["invalidated_by"] = seq
        return None

    async def _fix_forward(self) -> None:
        """Point each fact's ``invalidated_by`` at the replacing fact's id in this store."""
        remap = self.remap["fact"]
        fixes = [(remap[old], seq) for seq, old in self._forward if old in remap]
        self._forward = []
        if fixes:
            async with self.core.store.transaction("import facts", bump=False) as tx:
                await tx.executemany(d.SET_INVALIDATED_BY, fixes)


def check_owner(at: str, owner: str | None, agent_id: Any, scope: Any) -> None:
    """:class:`AccessDeniedError` if a row is not ``owner``'s private row (no check without an owner)."""
    if owner is None or (agent_id == owner and scope == "private"):
        return
    msg = (
        f"{at}: a row of agent {agent_id!r} ({scope}) cannot be imported by agent {owner!r}: an import writes "
        "the agent's own private memory only; shared and global memories are written by their tiers"
    )
    raise AccessDeniedError(msg)


def _pin_of(data: Any) -> EmbeddingPin | None:
    """The header's embedding pin (``ValueError`` if it is not one)."""
    if data is None:
        return None
    if not isinstance(data, dict):
        msg = "the pin is an object with model_id, dimension and family"
        raise ValueError(msg)
    model_id, dimension, family = data.get("model_id"), data.get("dimension"), data.get("family")
    if not isinstance(model_id, str) or not isinstance(family, str) or type(dimension) is not int or dimension < 1:
        msg = "the pin's model_id and family are strings and its dimension a positive whole number"
        raise ValueError(msg)
    return EmbeddingPin(model_id, dimension, family)


# ------------------------------------------------------ files, over a core
async def export_jsonl(core: MemoryCore, path: Any, *, vectors: bool = False) -> int:
    """Write the whole store as JSON lines (format 2, see above); returns the number of memories.

    One snapshot is read, so the file is consistent while writers go on. The lines go to
    ``<path>.partial``, renamed over ``path`` once all are written; on any failure that
    file is removed and ``path`` is left as it was.
    """
    if core.user_id is not None:
        msg = "export_jsonl() writes every user's memories: export from the agent's own handle"
        raise UsageError(msg)
    target = _file_path(path, "export to")
    if _kind(target, "export to") == "dir":
        msg = f"cannot export to {target}: it is a folder; pass a file path such as {target / 'memories.jsonl'}"
        raise UsageError(msg)
    if _kind(target.parent, "export to") != "dir":
        msg = f"cannot export to {target}: the folder {target.parent} does not exist"
        raise UsageError(msg)
    if not isinstance(vectors, bool):
        msg = f"vectors must be True or False, got {vectors!r}"
        raise UsageError(msg)
    if _is_store_file(target, core.store.path) or _is_store_file(tmp_of(target), core.store.path):
        msg = f"cannot export to {target}: it is this store's own database file; pass another path"
        raise UsageError(msg)
    tmp = tmp_of(target)
    try:
        with tmp.open("w", encoding="utf-8") as fh:
            async with core.store.snapshot() as snap:
                engine, pin = core.store.capabilities.engine, core.store.pin
                count = await write_export(snap, fh, backend=engine, pin=pin, vectors=vectors)
        tmp.replace(target)
    except OSError as e:
        raise _export_error(target, e) from e
    finally:
        with contextlib.suppress(OSError):  # gone after the rename; a failure must not leave it behind
            tmp.unlink(missing_ok=True)
    return count


async def import_jsonl(
    core: MemoryCore, path: Any, *, batch: int = MEMORY_BATCH, progress: Any = None, owner: str | None = None
) -> ImportReport:
    """Read an export back, ids and times included (an upsert); one transaction per batch.

    The whole file is checked before anything is written: a bad line or a file cut short
    changes nothing. Format 2 files carry every table; format 1 files (memories only)
    still import. With ``owner`` (a federation's private tier) every row must be that
    agent's, and every memory private: an :class:`AccessDeniedError` names the first that is not.
    """
    if core.user_id is not None:
        msg = "import_jsonl() writes the agents and users its lines name: import on the agent's own handle"
        raise UsageError(msg)
    source = _file_path(path, "import from")
    if _kind(source, "import from") != "file":
        msg = f"{source} is not a file; pass the path of a JSONL export"
        raise UsageError(msg)
    if progress is not None and not callable(progress):
        msg = f"progress must be a callable (done, total) or None, got {type(progress).__name__}"
        raise UsageError(msg)
    with contextlib.closing(_json_lines(source)) as lines:
        first = next(lines, None)
    if first is not None and isinstance(first[1], dict) and first[1].get("record") == "header":
        return await _import_v2(core, source, first, progress, owner)
    return await _import_v1(core, source, batch, progress, owner)


async def _import_v2(
    core: MemoryCore, source: Path, header: tuple[int, Any], progress: Any, owner: str | None
) -> ImportReport:
    data = header[1]
    if data.get("format") != FORMAT or data.get("version") != VERSION:
        msg = (
            f"{source}:{header[0]}: an export of format {data.get('format')!r} version {data.get('version')!r}; "
            f"this release reads {FORMAT!r} versions 1 and 2: upgrade elastic-memory to import it"
        )
        raise UsageError(msg)
    where = lambda n: f"{source}:{n}"  # noqa: E731 - a name for the two passes
    try:
        importer = Importer(core, data, where=where, progress=progress)
        checker = Checker(core, where=where, owner=owner)
        with contextlib.closing(_json_lines(source)) as lines:
            for line_no, record in itertools.islice(lines, 1, None):
                checker.check(line_no, record)
        checker.done(source)
        importer.total = sum(checker.read.values())
    except UsageError:
        raise
    except ValueError as e:
        msg = f"{e}; nothing was imported"
        raise UsageError(msg) from e
    with contextlib.closing(_json_lines(source)) as lines:
        for line_no, record in itertools.islice(lines, 1, None):
            await importer.add(line_no, record)
    totals = await importer.finish()
    total = totals.created + totals.updated + totals.duplicates
    return ImportReport(totals.created, totals.updated, totals.duplicates, total, dict(totals.records))


async def _import_v1(core: MemoryCore, source: Path, batch: int, progress: Any, owner: str | None) -> ImportReport:
    embedder = await core.embedder()
    family = embedder.family if embedder is not None else None
    count = 0
    with contextlib.closing(_json_lines(source)) as lines:
        for line_no, data in lines:  # the whole file first: a bad line writes nothing
            row, _ = _v1_row(core, source, line_no, data, family)
            check_owner(f"{source}:{line_no}", owner, row["agent_id"], row["scope"])
            count += 1
    created = updated = dup = 0
    pending: list[dict[str, Any]] = []
    pending_vectors: list[Any] = []

    async def flush() -> None:
        nonlocal created, updated, dup
        vectors = await stored_vectors_kept(core, pending, pending_vectors)
        ids = await core.write_rows(pending, dedupe=[False] * len(pending), mode="import", vectors=vectors)
        created += sum(i.status == "created" for i in ids)
        updated += sum(i.status == "updated" for i in ids)
        dup += sum(i.status == "duplicate" for i in ids)
        pending.clear()
        pending_vectors.clear()
        if progress is not None:
            progress(created + updated + dup, count)

    with contextlib.closing(_json_lines(source)) as lines:
        for line_no, data in lines:
            row, vector = _v1_row(core, source, line_no, data, family)
            pending.append(row)
            pending_vectors.append(vector)
            if len(pending) >= batch:
                await flush()
    if pending:
        await flush()
    total = created + updated + dup
    return ImportReport(created, updated, dup, total, {"memory": total} if total else {})


async def stored_vectors_kept(core: MemoryCore, rows: list[dict[str, Any]], vectors: list[Any]) -> list[Any]:
    """``vectors`` with :data:`KEEP` for rows without one whose id is stored with the same text and a vector.

    A re-run of an import (or of an interrupted one) then embeds nothing it already did.
    """
    wanted = [row["id"] for row, vector in zip(rows, vectors, strict=True) if vector is None]
    if not wanted:
        return vectors
    held = await core.store.get(wanted)
    out = list(vectors)
    for i, row in enumerate(rows):
        record = held.get(row["id"]) if out[i] is None else None
        if record is not None and record.has_vector and record.content_hash == row["content_hash"]:
            out[i] = KEEP
    return out


def _v1_row(
    core: MemoryCore, source: Path, line_no: int, data: Any, family: str | None
) -> tuple[dict[str, Any], F32 | None]:
    try:
        return import_row(core, data, family)
    except (ValueError, KeyError, TypeError, RecursionError) as e:
        msg = f"{source}:{line_no}: not a memory record ({e}); nothing was imported"
        raise UsageError(msg) from e


def import_row(core: MemoryCore, data: Any, family: str | None) -> tuple[dict[str, Any], F32 | None]:
    """A row to write, and the exported vector if it is of ``family`` (else it is re-embedded)."""
    if not isinstance(data, dict):
        msg = f"a JSON object per line is expected, got a JSON {type(data).__name__}"
        raise TypeError(msg)
    missing = [key for key in _IMPORT_FIELDS if key not in data]
    if missing:
        msg = f"missing field {missing[0]!r}" if len(missing) == 1 else f"missing fields {missing}"
        raise ValueError(msg)
    fields = {k: data[k] for k in REMEMBER_FIELDS if k in data and k not in ("ttl",)}
    # A note is what remember() wrote: its em_ keys are refused as there. The other kinds (turn
    # chunks, summaries, lessons) only the library writes: an export of them keeps its flags.
    row = core.make_row(data["content"], fields, library=fields.get("kind", "note") != "note")
    for column in ("created_at", "updated_at", "accessed_at", "retention_strength"):
        row[column] = float(data[column])
    row["access_count"] = int(data["access_count"])
    row["archived"] = int(bool(data["archived"]))
    row["deleted_at"] = None if data.get("deleted_at") is None else float(data["deleted_at"])
    vector, model = data.get("vector"), data.get("vector_model")
    if vector is None or family is None or not isinstance(model, dict) or model.get("family") != family:
        return row, None
    try:
        vec = checked_matrix([vector], 1, len(vector), "of the export")[0]
    except EmbedderError as e:
        raise ValueError(str(e)) from e
    core.store.check_vector(vec)
    return row, vec


def _file_path(path: Any, doing: str) -> Path:
    """``path`` (a str or ``os.PathLike``) as a :class:`Path`, or a :class:`UsageError`."""
    if isinstance(path, str | os.PathLike) and str(path).strip():
        return Path(v.check_path(path, "path"))
    msg = f"cannot {doing} {path!r}: pass a file path (a str or pathlib.Path)"
    raise UsageError(msg)


def _kind(path: Path, doing: str) -> str | None:
    """``"dir"``, ``"file"``, ``"other"`` (a device, a pipe) or ``None`` (missing); a path the OS refuses raises."""
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:
        if e.errno == errno.ENAMETOOLONG:
            msg = f"cannot {doing} {path}: {e.strerror}; pass a shorter path"
            raise UsageError(msg) from e
        msg = f"cannot {doing} {path}: {e.strerror or e}; check the path and its permissions"
        raise StorageError(msg) from e
    return "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"


def _json_lines(source: Path) -> Generator[tuple[int, Any]]:
    """The non-blank lines of an export, parsed, numbered; a :class:`UsageError` names a line that is not JSON."""
    try:
        fh = source.open("rb")
    except OSError as e:
        msg = f"cannot read {source}: {e.strerror or e}; check that the file is readable"
        raise StorageError(msg) from e
    with fh:
        for line_no, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                yield line_no, json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError as e:
                msg = f"{source}:{line_no}: not UTF-8 text; pass an export made by export_jsonl(); nothing was imported"
                raise UsageError(msg) from e
            except (ValueError, RecursionError) as e:  # RecursionError: nested too deep to read
                msg = f"{source}:{line_no}: not JSON ({e}); nothing was imported"
                raise UsageError(msg) from e


def tmp_of(target: Path) -> Path:
    """Where an export is written before it is renamed over ``target``."""
    return target.with_name(target.name + ".partial")


def _is_store_file(target: Path, store_path: str) -> bool:
    """Whether ``target`` is the SQLite file at ``store_path`` or one of its side files (WAL, shm, journal)."""
    if not store_path or store_path == ":memory:" or store_path.startswith("file:") or is_url(store_path):
        return False
    base = Path(store_path)
    for candidate in (base, *(base.with_name(base.name + side) for side in ("-wal", "-shm", "-journal"))):
        if os.path.abspath(target) == os.path.abspath(candidate):
            return True
        with contextlib.suppress(OSError):
            if target.exists() and candidate.exists() and os.path.samefile(target, candidate):
                return True
    return False


def _export_error(target: Path, error: OSError) -> StorageError:
    """The library error for an OS error while exporting to ``target``: the path and what to do."""
    if error.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):  # EDQUOT: not on Windows
        hint = "the disk is full; free some space or export to another disk"
    elif error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        hint = f"the folder {target.parent} is not writable; export to a folder you can write to"
    else:
        hint = "check the path and its permissions, then export again"
    return StorageError(f"could not export to {target}: {error.strerror or error}; {hint}")
