"""Opening a database file that this process may read but not write.

A file whose permissions refuse writes, a folder where SQLite cannot create its ``-wal``
and ``-shm`` files, or a read-only filesystem: the store opens the file read-only instead
of failing, reads work, and writes refuse with a :class:`~elastic_memory.StorageError`.

A WAL-mode file (every elastic-memory file) needs its ``-shm`` index to be read. SQLite
(3.22+) opens it with ``mode=ro`` when the ``-shm`` and ``-wal`` files exist or can be
created. In a read-only folder after a clean close neither exists: the file is then opened
``immutable`` (nothing can be pending in a WAL that does not exist, and nobody can create
one in that folder). A ``-wal`` left behind in a read-only folder without its ``-shm`` cannot
be read: the message says to copy the files to a writable folder.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import aiosqlite

from ...errors import StorageError
from .driver import Driver

__all__ = ["connect", "reason"]

_PROBE = "SELECT count(*) FROM sqlite_master"


def reason(path: str) -> str | None:
    """Why ``path`` must be opened read-only, or ``None`` when it is writable (or new, or in memory).

    ``os.access`` answers for this process's user, so root still writes a file it does not
    own, while a read-only filesystem refuses everyone.
    """
    if path in ("", ":memory:") or path.startswith("file:") or not os.path.isfile(path):
        return None
    if not os.access(path, os.W_OK):
        return "a read-only filesystem" if _on_read_only_fs(path) else "the file is not writable"
    folder = os.path.dirname(os.path.abspath(path))
    if os.access(folder, os.W_OK):
        return None
    sidecars = [path + "-wal", path + "-shm"]
    if all(os.path.exists(p) and os.access(p, os.W_OK) for p in sidecars):
        return None  # SQLite writes through the existing -wal and -shm files
    return "its folder is not writable"


async def connect(drv: Driver, path: str, *, timeout: float) -> aiosqlite.Connection:
    """A read-only connection to the existing file ``path`` (``mode=ro``, else ``immutable``)."""
    uri = Path(path).absolute().as_uri()
    try:
        return await _open(drv, f"{uri}?mode=ro", timeout)
    except drv.module.OperationalError as e:
        wal = path + "-wal"
        if os.path.exists(wal) and os.path.getsize(wal) > 0:
            # Committed data may wait in the WAL: reading without it would show an old state.
            msg = (
                f"could not open {path!r} read-only: its {wal!r} holds committed data that SQLite cannot read "
                f"without a {path + '-shm'!r} it may create ({e}); copy the file with its -wal to a writable "
                "folder and open the copy"
            )
            raise StorageError(msg) from e
    return await _open(drv, f"{uri}?mode=ro&immutable=1", timeout)


def _on_read_only_fs(path: str) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # no statvfs on Windows
        return False


async def _open(drv: Driver, uri: str, timeout: float) -> aiosqlite.Connection:
    def connect_uri() -> Any:
        conn = drv.connect(uri, timeout=timeout, uri=True)
        try:
            conn.execute(_PROBE).fetchall()
        except BaseException:
            conn.close()
            raise
        return conn

    return await aiosqlite.Connection(connect_uri, iter_chunk_size=256)
