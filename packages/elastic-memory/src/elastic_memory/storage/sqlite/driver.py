"""Which SQLite driver to use, and how to open a connection with it.

The stdlib ``sqlite3`` of many Pythons (every pyenv build, for one) is compiled without
``enable_load_extension``, so it cannot load sqlite-vec. The driver is picked once per
process, in order: the stdlib if it can load sqlite-vec, else ``pysqlite3`` (the
``pysqlite3-binary`` wheel), else ``sqlean`` (``sqlean.py``). If none can, the stdlib is
used without vectors and recall stays keyword-only.
"""

from __future__ import annotations

import functools
import importlib
import sqlite3
from dataclasses import dataclass
from types import ModuleType
from typing import Any

__all__ = ["Driver", "driver"]

_CANDIDATES = ("sqlite3", "pysqlite3.dbapi2", "sqlean")


@dataclass(frozen=True)
class Driver:
    """A DB-API module plus what it can do."""

    name: str
    module: ModuleType
    sqlite_version: str
    has_vec: bool
    vec_version: str | None

    def connect(self, path: str, *, timeout: float, uri: bool = False) -> Any:
        """Open a connection in autocommit mode with sqlite-vec loaded when available.

        Transactions are explicit (``BEGIN IMMEDIATE`` ... ``COMMIT``) in the store. With
        ``uri`` the path is an SQLite ``file:`` URI (``?mode=ro`` and the like).
        """
        conn = self.module.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False, uri=uri)
        if self.has_vec:
            _load_vec(conn)
        return conn


def _load_vec(conn: Any) -> str:
    import sqlite_vec  # noqa: PLC0415 - optional until a driver can load it

    conn.enable_load_extension(True)
    try:
        sqlite_vec.load(conn)
    finally:
        conn.enable_load_extension(False)
    return str(conn.execute("select vec_version()").fetchone()[0])


def _probe(name: str) -> Driver | None:
    try:
        module = importlib.import_module(name)
    except ImportError:
        return None
    conn = module.connect(":memory:")
    try:
        version = str(conn.execute("select sqlite_version()").fetchone()[0])
        try:
            vec_version = _load_vec(conn)
        except Exception:  # noqa: BLE001 - any failure just means "no vectors with this driver"
            return Driver(name, module, version, False, None)
        return Driver(name, module, version, True, vec_version)
    finally:
        conn.close()


@functools.cache
def driver() -> Driver:
    """The driver this process uses (probed once)."""
    fallback: Driver | None = None
    for name in _CANDIDATES:
        found = _probe(name)
        if found is None:
            continue
        if found.has_vec:
            return found
        fallback = fallback or found
    return fallback or Driver("sqlite3", sqlite3, sqlite3.sqlite_version, False, None)
