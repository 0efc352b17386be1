"""Statements the library sends per call: SQLite's top-level statements, PostgreSQL's round trips.

Both count across every connection the library opens in this process (the background
worker's too): read a counter's change around one call on an otherwise idle store.
"""

from __future__ import annotations

import threading
from typing import Any

from elastic_memory.storage.sqlite.driver import Driver

__all__ = ["RoundTrips", "Statements"]


class Statements:
    """Top-level SQL statements on every SQLite connection the library opens (sqlite3's trace callback).

    Statements SQLite runs inside another (FTS5's own reads, triggers) are not counted.
    """

    def __init__(self) -> None:
        self.count = 0
        self._lock = threading.Lock()
        self._original: Any = None

    def install(self) -> None:
        original = self._original = Driver.connect

        def connect(driver: Driver, path: str, **kwargs: Any) -> Any:
            conn = original(driver, path, **kwargs)
            conn.set_trace_callback(self._seen)
            return conn

        Driver.connect = connect  # type: ignore[method-assign]

    def remove(self) -> None:
        if self._original is not None:
            Driver.connect = self._original  # type: ignore[method-assign]
            self._original = None

    def _seen(self, sql: str) -> None:
        if not sql.lstrip().startswith("--"):
            with self._lock:
                self.count += 1


class RoundTrips:
    """Statements psycopg sends to a PostgreSQL server (async cursors' ``execute``/``executemany``): round trips."""

    def __init__(self) -> None:
        self.count = 0
        self._lock = threading.Lock()
        self._originals: dict[str, Any] = {}

    def install(self) -> None:
        import psycopg

        for name in ("execute", "executemany"):
            original = self._originals[name] = getattr(psycopg.AsyncCursor, name)
            setattr(psycopg.AsyncCursor, name, self._counted(original))

    def remove(self) -> None:
        import psycopg

        for name, original in self._originals.items():
            setattr(psycopg.AsyncCursor, name, original)
        self._originals.clear()

    def _counted(self, original: Any) -> Any:
        async def counted(cursor: Any, *args: Any, **kwargs: Any) -> Any:
            with self._lock:
                self.count += 1
            return await original(cursor, *args, **kwargs)

        return counted
