"""The SQLite driver: which DB-API module is picked, what it can do, how it connects."""

from __future__ import annotations

import sqlite3
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from elastic_memory.storage.sqlite import driver as driver_module
from elastic_memory.storage.sqlite.driver import Driver, driver


@pytest.fixture
def reprobe() -> Iterator[None]:
    """Forget the process's driver before and after the test (it is probed once and cached)."""
    driver.cache_clear()
    yield
    driver.cache_clear()


def test_this_interpreter_gets_a_driver_that_loads_sqlite_vec() -> None:
    """Every Python the package claims loads sqlite-vec, through the stdlib or a drop-in wheel."""
    found = driver()
    assert found.has_vec, f"{found.name} (SQLite {found.sqlite_version}) cannot load sqlite-vec"
    assert found.vec_version is not None
    assert found.vec_version.startswith("v")


def test_the_driver_has_what_the_store_uses() -> None:
    """FTS5 with the porter stemmer, JSON functions and RETURNING (SQLite 3.35+)."""
    conn = driver().connect(":memory:", timeout=5)
    try:
        assert tuple(int(p) for p in driver().sqlite_version.split(".")[:2]) >= (3, 35)
        conn.execute("CREATE VIRTUAL TABLE f USING fts5(x, tokenize='porter unicode61')")
        conn.execute("INSERT INTO f VALUES ('the dogs are running')")
        assert conn.execute("SELECT count(*) FROM f WHERE f MATCH 'run'").fetchone()[0] == 1
        assert conn.execute("""SELECT json_extract('{"a": [1, 2]}', '$.a[1]')""").fetchone()[0] == 2
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
        assert conn.execute("INSERT INTO t (v) VALUES ('x') RETURNING id").fetchone()[0] == 1
    finally:
        conn.close()


def test_connections_are_autocommit_and_usable_from_another_thread(tmp_path: Path) -> None:
    path = str(tmp_path / "d.db")
    conn = driver().connect(path, timeout=5)
    conn.execute("CREATE TABLE t (v TEXT)")
    conn.execute("INSERT INTO t VALUES ('x')")
    assert not conn.in_transaction  # no implicit BEGIN: the store writes its own transactions
    seen: list[object] = []
    worker = threading.Thread(target=lambda: seen.append(conn.execute("SELECT v FROM t").fetchone()[0]))
    worker.start()
    worker.join()
    conn.close()
    assert seen == ["x"]
    other = driver().connect(path, timeout=5)
    try:
        assert other.execute("SELECT count(*) FROM t").fetchone()[0] == 1  # committed without COMMIT
    finally:
        other.close()


def test_a_uri_opens_read_only(tmp_path: Path) -> None:
    path = tmp_path / "ro.db"
    conn = driver().connect(str(path), timeout=5)
    conn.execute("CREATE TABLE t (v TEXT)")
    conn.close()
    ro = driver().connect(f"file:{path}?mode=ro", timeout=5, uri=True)
    try:
        with pytest.raises(driver().module.OperationalError, match="readonly"):
            ro.execute("INSERT INTO t VALUES ('x')")
    finally:
        ro.close()


def _fake(name: str, *, vec: bool) -> Driver:
    return Driver(name, sqlite3, sqlite3.sqlite_version, vec, "v0" if vec else None)


@pytest.mark.usefixtures("reprobe")
def test_the_first_driver_that_loads_vectors_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stdlib without extension loading (every pyenv build) falls through to pysqlite3."""
    probed = {"sqlite3": _fake("sqlite3", vec=False), "pysqlite3.dbapi2": _fake("pysqlite3.dbapi2", vec=True)}
    monkeypatch.setattr(driver_module, "_probe", probed.get)
    assert driver().name == "pysqlite3.dbapi2"


@pytest.mark.usefixtures("reprobe")
def test_without_a_vector_driver_the_first_importable_one_serves_keyword_only(monkeypatch: pytest.MonkeyPatch) -> None:
    probed = {"pysqlite3.dbapi2": _fake("pysqlite3.dbapi2", vec=False), "sqlean": _fake("sqlean", vec=False)}
    monkeypatch.setattr(driver_module, "_probe", probed.get)
    found = driver()
    assert (found.name, found.has_vec) == ("pysqlite3.dbapi2", False)


@pytest.mark.usefixtures("reprobe")
def test_with_nothing_importable_the_stdlib_serves(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(driver_module, "_probe", lambda name: None)
    assert (driver().name, driver().module, driver().has_vec) == ("sqlite3", sqlite3, False)


def test_a_driver_that_cannot_load_extensions_probes_as_keyword_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stdlib of a Python built without ``--enable-loadable-sqlite-extensions``."""

    class NoExtensions:
        def __init__(self, conn: sqlite3.Connection) -> None:
            self._conn = conn

        def execute(self, sql: str) -> sqlite3.Cursor:
            return self._conn.execute(sql)

        def enable_load_extension(self, on: bool) -> None:
            raise AttributeError("enable_load_extension")

        def close(self) -> None:
            self._conn.close()

    fake = ModuleType("nosqliteext")
    fake.connect = lambda path: NoExtensions(sqlite3.connect(path))  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "nosqliteext", fake)
    found = driver_module._probe("nosqliteext")
    assert found is not None
    assert (found.has_vec, found.vec_version, found.sqlite_version) == (False, None, sqlite3.sqlite_version)


def test_a_missing_module_probes_as_absent() -> None:
    assert driver_module._probe("no_such_sqlite_driver_module") is None
