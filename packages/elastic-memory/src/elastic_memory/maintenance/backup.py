"""Copy a store while it is in use: :func:`backup`, and put a copy back: :func:`restore_backup`.

A backup is SQLite's ``VACUUM INTO`` run on a read-only connection: one read transaction,
so the copy is the store as of one commit even while other connections write (the file is
in WAL mode, so they are not blocked), with its vectors, keyword indexes and the memory
loop's tables, compacted. The copy is written to ``DESTINATION.partial``, checked
(``PRAGMA quick_check``), flushed to disk and only then renamed over ``DESTINATION``: a
crash leaves the old file or the new one, never half of one, and a copy that fails (a full
disk too) removes its ``.partial`` file.

A restore makes the same kind of copy from a backup file into a store path, after checking
that the backup is an elastic-memory store this version can open. PostgreSQL stores are
copied with ``pg_dump`` (or ``export_jsonl``), not here.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import _runner
from .._validate import check_path
from ..errors import CorruptDatabaseError, SchemaVersionError, StorageError, UsageError
from ..storage.postgres.connect import is_url
from ..storage.sqlite import integrity, migrations
from ..storage.sqlite.driver import driver

__all__ = ["BackupReport", "abackup", "arestore_backup", "backup", "restore_backup"]

#: Tables every elastic-memory file has had since schema 1.
_REQUIRED = ("memories", "embedding_meta")
_SIDECARS = ("-wal", "-shm", "-journal")
_TIMEOUT = 30.0
#: A PostgreSQL URL after ``Path()`` folded its ``//`` (``restore --db`` is a path option).
_FOLDED_URL = re.compile(r"postgres(?:ql)?:[/\\]")


@dataclass(frozen=True)
class BackupReport:
    """What :func:`backup` or :func:`restore_backup` wrote: ``destination`` holds ``memories`` (hidden ones too)."""

    source: str
    destination: str
    size_bytes: int
    memories: int
    schema_version: int


def backup(source: str | Path, destination: str | Path, *, force: bool = False) -> BackupReport:
    """Copy the store at ``source`` into the file ``destination``: consistent while others write to it.

    The way to copy a live store (copying the file itself is safe only when no process has
    it open). ``destination`` must not exist unless ``force``; its folder must. Open the copy
    with :meth:`Memory.open`, or put it back with :func:`restore_backup`.

    Raises:
        UsageError: A path is wrong (no store at ``source``, a missing folder, ``destination``
            exists without ``force``, ``destination`` is ``source`` or one of its side files
            such as ``-wal``, a PostgreSQL URL: use ``pg_dump`` or ``export_jsonl``).
        CorruptDatabaseError: The copy fails SQLite's integrity check (``destination`` is untouched).
    """
    return _runner.run(abackup(source, destination, force=force), "backup")


async def abackup(source: str | Path, destination: str | Path, *, force: bool = False) -> BackupReport:
    """:func:`backup` for async code."""
    src = _path(source, "source", "back up")
    dst = _path(destination, "destination", "back up")
    return await _runner.arun(asyncio.to_thread(_copy, src, dst, force=force, restoring=False))


def restore_backup(backup: str | Path, destination: str | Path, *, force: bool = False) -> BackupReport:
    """Put the backup file ``backup`` in place as the store ``destination``.

    ``backup`` must be an elastic-memory store that passes SQLite's integrity check and is not
    newer than this version. An existing ``destination`` is replaced only with ``force``:
    close every process that has it open first. Its stale ``-wal``/``-shm`` files are removed.

    Raises:
        UsageError: ``backup`` is not an elastic-memory store, ``destination`` exists without
            ``force``, one path is the other or one of its side files (``-wal``, ``-shm``,
            ``-journal``), a folder is missing, or a path is a PostgreSQL URL.
        SchemaVersionError: ``backup`` was written by a newer elastic-memory.
        CorruptDatabaseError: ``backup`` fails SQLite's integrity check.
    """
    return _runner.run(arestore_backup(backup, destination, force=force), "restore_backup")


async def arestore_backup(backup: str | Path, destination: str | Path, *, force: bool = False) -> BackupReport:
    """:func:`restore_backup` for async code."""
    src = _path(backup, "backup", "restore")
    dst = _path(destination, "destination", "restore")
    return await _runner.arun(asyncio.to_thread(_copy, src, dst, force=force, restoring=True))


# ----------------------------------------------------------------------- checks
def _path(value: Any, name: str, verb: str) -> str:
    if not isinstance(value, str | Path) or not str(value):
        msg = f"{name} must be a file path, got {value!r}"
        raise UsageError(msg)
    text = check_path(value, name)  # a name os.fsencode() cannot encode (a lone "\ud800") names no file
    if is_url(text) or _FOLDED_URL.match(text):  # folded: Path("postgresql://u@h/db") is postgresql:/u@h/db
        if verb == "restore":
            msg = (
                "cannot restore a PostgreSQL store here: PostgreSQL stores are restored with pg_restore "
                "(from a pg_dump), or with import_jsonl (`elastic-memory import`) from an export"
            )
        else:
            msg = (
                "cannot back up a PostgreSQL store here (or into one): use pg_dump, "
                "or export_jsonl / import_jsonl (`elastic-memory export` / `import`)"
            )
        raise UsageError(msg)
    if text == ":memory:" or text.startswith("file:"):
        msg = f"{name} must be the path of a database file, got {text!r}; an in-memory store can use export_jsonl"
        raise UsageError(msg)
    return os.path.abspath(os.path.expanduser(text))


def _check_paths(src: str, dst: str, *, force: bool, restoring: bool) -> None:
    what = "backup file" if restoring else "store"
    if not os.path.isfile(src):
        msg = f"there is no {what} at {src}" + (
            ": pass the path of an elastic-memory database file" if not restoring else ""
        )
        raise UsageError(msg)
    folder = os.path.dirname(dst)
    if not os.path.isdir(folder):
        msg = f"cannot write {dst}: the folder {folder} does not exist; create it first"
        raise UsageError(msg)
    if os.path.isdir(dst):
        msg = f"{dst} is a folder; pass the path of the file to write, such as {os.path.join(dst, 'memory.db')}"
        raise UsageError(msg)
    clash = _clash(src, dst)
    if clash is not None:
        src_file, dst_file = clash
        same = "" if src_file == dst_file else f" (the same file as {src_file})"
        owner, verb = ("the backup file", "restore") if restoring else ("the store", "back up")
        msg = (
            f"cannot {verb} {src} to {dst}: that would replace or remove {dst_file}{same}, "
            f"which belongs to {owner}; pass a destination that is not {owner} or one of its side files "
            "(-wal, -shm, -journal)"
        )
        raise UsageError(msg)
    if os.path.exists(dst) and not force:
        msg = f"{dst} exists; replace it with force=True (--force on the command line)" + (
            ", after closing every process that has it open" if restoring else ""
        )
        raise UsageError(msg)


def _family(path: str) -> tuple[str, ...]:
    """``path`` and the side files SQLite keeps beside it (write-ahead log, shared memory, journal)."""
    return (path, *(path + suffix for suffix in _SIDECARS))


def _same_file(a: str, b: str) -> bool:
    """Whether the paths ``a`` and ``b`` name one file: by name (links resolved) or, both existing, by inode."""
    if os.path.normcase(a) == os.path.normcase(b):
        return True
    try:
        if os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b)):
            return True  # a symbolic link to the other, even one whose target does not exist yet
        return os.path.exists(a) and os.path.exists(b) and os.path.samefile(a, b)  # a hard link
    except OSError:  # a link loop, or a file we may not look at: not provably the same
        return False


def _clash(src: str, dst: str) -> tuple[str, str] | None:
    """A file of ``src`` (itself or a side file) that copying to ``dst`` would write or remove, and its name there.

    The copy writes ``dst`` and ``dst.partial`` and removes both files' side files: none of
    them may be the source or one of its side files (copying a store onto its own ``-wal``
    would replace the log that holds its last commits).
    """
    touched = (*_family(dst), *_family(dst + ".partial"))
    for src_file in _family(src):
        for dst_file in touched:
            if _same_file(src_file, dst_file):
                return src_file, dst_file
    return None


def _check_store(conn: Any, shown: str, *, restoring: bool) -> int:
    """The schema version of the open database ``shown``, after checking it is an elastic-memory store."""
    drv = driver()
    try:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()}
    except drv.module.DatabaseError as e:
        msg = (
            f"{shown} is not an elastic-memory store ({e}); pass the path of one "
            "(`elastic-memory repair` copies what a damaged store still holds)"
        )
        raise UsageError(msg) from e
    missing = [t for t in _REQUIRED if t not in tables]
    if version < 1 or missing:
        msg = f"{shown} is an SQLite file but not an elastic-memory store (no {', '.join(missing) or 'schema version'})"
        raise UsageError(msg)
    if restoring and version > migrations.LATEST:
        msg = (
            f"{shown} has schema version {version}, newer than this elastic-memory understands "
            f"({migrations.LATEST}); upgrade elastic-memory to restore it"
        )
        raise SchemaVersionError(msg)
    return version


def _quick_check(conn: Any, shown: str) -> None:
    try:
        rows = [str(r[0]) for r in conn.execute("PRAGMA quick_check").fetchall()]
    except driver().module.DatabaseError as e:
        rows = [str(e)]
    if rows != ["ok"]:
        msg = (
            f"{shown} fails SQLite's integrity check ({'; '.join(rows[:3])}); "
            "`elastic-memory repair` copies what it still holds"
        )
        raise CorruptDatabaseError(msg)


# ------------------------------------------------------------------------- copy
def _copy(src: str, dst: str, *, force: bool, restoring: bool) -> BackupReport:
    _check_paths(src, dst, force=force, restoring=restoring)
    partial = dst + ".partial"
    _remove(partial)
    try:
        _vacuum_into(src, partial, restoring=restoring)
        _clear_markers(partial)
        memories, version = _verify(partial)
        _fsync(partial)
        for suffix in _SIDECARS:  # another file's WAL beside the new one would be replayed into it
            _remove(dst + suffix)
        os.replace(partial, dst)
        _fsync(os.path.dirname(dst))
    finally:  # every failure (a full disk too) takes the half-written copy with it
        for leftover in _family(partial):
            _remove(leftover)
    return BackupReport(src, dst, os.path.getsize(dst), memories, version)


def _vacuum_into(src: str, partial: str, *, restoring: bool) -> None:
    """Write the copy of the store ``src`` to ``partial``, after checking that ``src`` is a store."""
    drv = driver()
    try:
        conn = drv.connect(Path(src).as_uri() + "?mode=ro", timeout=_TIMEOUT, uri=True)
    except drv.module.OperationalError as e:
        msg = f"cannot open {src} to read it ({e}); check the path and its permissions"
        raise StorageError(msg) from e
    except drv.module.DatabaseError as e:  # "file is not a database"
        msg = f"{src} is not an elastic-memory store ({e}); pass the path of one"
        raise UsageError(msg) from e
    try:
        _check_store(conn, src, restoring=restoring)
        if restoring:
            _quick_check(conn, src)
        try:
            # a URI (the connection takes them): a bound str must be UTF-8, a file name need not be
            conn.execute("VACUUM INTO ?", [Path(partial).as_uri()])
        except (drv.module.Error, OSError) as e:
            folder = os.path.dirname(partial)
            msg = f"could not copy {src} to {partial} ({e}); check the free space and permissions of {folder}"
            raise StorageError(msg) from e
    finally:
        conn.close()


def _clear_markers(path: str) -> None:
    """The copy forgets the processes that had the source open (else its first open would take them for crashes)."""
    conn = driver().connect(path, timeout=_TIMEOUT)
    try:
        integrity.clear_markers(conn)
    finally:
        conn.close()


def _verify(path: str) -> tuple[int, int]:
    """``(memories, schema version)`` of the fresh copy at ``path``, after SQLite's integrity check."""
    conn = driver().connect(Path(path).as_uri() + "?mode=ro", timeout=_TIMEOUT, uri=True)
    try:
        _quick_check(conn, path)
        memories = int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])
        return memories, int(conn.execute("PRAGMA user_version").fetchone()[0])
    finally:
        conn.close()


def _fsync(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # a folder cannot be opened on Windows; the rename is durable there anyway
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)
