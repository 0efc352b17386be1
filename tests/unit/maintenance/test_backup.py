"""backup() and restore_backup(): a consistent copy of a live store, and putting one back."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlparse
from urllib.request import url2pathname

import pytest

from elastic_memory import Memory, StorageError, UsageError, backup, restore_backup
from elastic_memory.maintenance import backup as _backup
from elastic_memory.testing import FakeEmbedder


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "live.db"
    with Memory.open(path, embedder=FakeEmbedder()) as mem:
        mem.remember("The user's dog is called Biscuit.", tags=["pets"])
    return path


def test_backup_of_live_store_is_consistent_while_a_writer_commits(store: Path, tmp_path: Path) -> None:
    stop, first_commit = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            with Memory.open(store, embedder=None) as mem:
                n = 0
                while not stop.is_set():
                    mem.remember_many([f"batch {n} item {i}" for i in range(20)])  # one transaction of 20
                    n += 1
                    first_commit.set()
        except BaseException as e:  # reported by the test thread below
            errors.append(e)
            first_commit.set()

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        assert first_commit.wait(60), "the writer never committed"
        reports = [backup(store, tmp_path / f"copy{i}.db") for i in range(3)]
    finally:
        stop.set()
        thread.join()
    assert not errors, errors
    for report in reports:
        with Memory.open(report.destination, embedder=None) as copy:
            total = copy.stats()["total_memories"]
        assert total == report.memories
        assert total > 1  # the writer's commits are in the copy: it is not the fixture's store alone
        assert (total - 1) % 20 == 0  # whole transactions only


def _crash_after_writes(store: Path, count: int) -> None:
    """Another process writes ``count`` memories to ``store`` and dies: they are only in its WAL."""
    code = (
        "import os, sys\n"
        "from elastic_memory import Memory\n"
        "mem = Memory.open(sys.argv[1], embedder=None)\n"
        f"mem.remember_many(['crash note %d' % i for i in range({count})])\n"
        "os._exit(0)  # no close: the WAL is neither checkpointed nor removed\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run([sys.executable, "-c", code, str(store)], check=True, env=env, timeout=120)
    wal = store.with_name(store.name + "-wal")
    assert wal.exists() and wal.stat().st_size > 0
    main_only = store.parent / "main-only"
    main_only.mkdir()
    shutil.copyfile(store, main_only / store.name)  # the main file without its WAL
    with contextlib.closing(sqlite3.connect(main_only / store.name)) as conn:
        assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 1  # the fixture's memory only


def test_backup_includes_commits_left_in_the_wal_by_a_crashed_process(store: Path, tmp_path: Path) -> None:
    _crash_after_writes(store, 50)
    report = backup(store, tmp_path / "copy.db")
    assert report.memories == 51
    with Memory.open(report.destination, embedder=None) as copy:
        assert copy.stats()["total_memories"] == 51
        assert len(copy.recall("crash note", mode="keyword", k=100)) == 50
    with Memory.open(store, embedder=None) as mem:  # the source is untouched
        assert mem.stats()["total_memories"] == 51


@pytest.mark.parametrize("suffix", ["", "-wal", "-shm", "-journal"])
def test_backup_refuses_the_store_or_its_side_files_as_destination(store: Path, suffix: str) -> None:
    _crash_after_writes(store, 30)
    wal = store.with_name(store.name + "-wal")
    before = wal.read_bytes()
    target = store.with_name(store.name + suffix)
    with pytest.raises(UsageError, match="side files"):
        backup(store, target, force=True)
    assert wal.read_bytes() == before  # the un-checkpointed commits are still there
    with Memory.open(store, embedder=None) as mem:
        assert mem.stats()["total_memories"] == 31


def test_backup_refuses_a_link_to_the_stores_wal(store: Path, tmp_path: Path) -> None:
    _crash_after_writes(store, 10)
    wal = store.with_name(store.name + "-wal")
    link = tmp_path / "copy.db"
    os.link(wal, link)  # another name for the same file: only samefile() tells
    with pytest.raises(UsageError, match="side files"):
        backup(store, link, force=True)
    with Memory.open(store, embedder=None) as mem:
        assert mem.stats()["total_memories"] == 11


def test_backup_refuses_a_symlink_to_the_stores_future_wal(store: Path, tmp_path: Path) -> None:
    link = tmp_path / "copy.db"
    try:
        link.symlink_to(store.with_name(store.name + "-wal"))  # dangling: the store is closed, no WAL yet
    except OSError:
        pytest.skip("symbolic links are not available here")
    with pytest.raises(UsageError, match="side files"):
        backup(store, link, force=True)


def test_backup_refuses_a_destination_whose_temp_file_is_the_source(tmp_path: Path) -> None:
    source = tmp_path / "copy.db.partial"  # the temp name of copy.db: the copy would remove it first
    with Memory.open(source, embedder=None) as mem:
        mem.remember("kept")
    with pytest.raises(UsageError, match="side files"):
        backup(source, tmp_path / "copy.db")
    with Memory.open(source, embedder=None) as mem:
        assert mem.stats()["total_memories"] == 1


def test_backup_keeps_vectors_and_keyword_index(store: Path, tmp_path: Path) -> None:
    backup(store, tmp_path / "copy.db")
    with Memory.open(tmp_path / "copy.db", embedder=FakeEmbedder()) as copy:
        semantic = copy.recall("dog called Biscuit", mode="semantic")
        keyword = copy.recall("Biscuit", mode="keyword")
    assert [h.content for h in semantic] == ["The user's dog is called Biscuit."]
    assert [h.content for h in keyword] == ["The user's dog is called Biscuit."]


def test_restore_puts_the_backup_in_place(store: Path, tmp_path: Path) -> None:
    backup(store, tmp_path / "copy.db")
    report = restore_backup(tmp_path / "copy.db", tmp_path / "restored.db")
    with Memory.open(report.destination, embedder=None) as mem:
        assert [h.content for h in mem.recall("Biscuit")] == ["The user's dog is called Biscuit."]


def test_restore_refuses_existing_without_force(store: Path, tmp_path: Path) -> None:
    backup(store, tmp_path / "copy.db")
    with pytest.raises(UsageError, match="exists"):
        restore_backup(tmp_path / "copy.db", store)


@pytest.mark.parametrize("suffix", ["", "-wal", "-shm", "-journal"])
def test_restore_refuses_the_backup_or_its_side_files_as_destination(store: Path, tmp_path: Path, suffix: str) -> None:
    backup(store, tmp_path / "copy.db")
    with pytest.raises(UsageError, match="side files"):
        restore_backup(tmp_path / "copy.db", tmp_path / f"copy.db{suffix}", force=True)
    assert restore_backup(tmp_path / "copy.db", tmp_path / "restored.db").memories == 1


@pytest.mark.parametrize("suffix", ["-wal", "-shm", "-journal"])
def test_restore_refuses_a_backup_that_is_a_side_file_of_the_destination(
    store: Path, tmp_path: Path, suffix: str
) -> None:
    saved = tmp_path / f"target.db{suffix}"  # restoring removes target.db's side files: this one too
    backup(store, saved)
    with pytest.raises(UsageError, match="side files"):
        restore_backup(saved, tmp_path / "target.db")
    assert saved.exists()
    assert not (tmp_path / "target.db").exists()


def test_restore_refuses_a_hard_link_to_the_backup(store: Path, tmp_path: Path) -> None:
    backup(store, tmp_path / "copy.db")
    os.link(tmp_path / "copy.db", tmp_path / "same.db")
    with pytest.raises(UsageError, match="side files"):
        restore_backup(tmp_path / "copy.db", tmp_path / "same.db", force=True)
    assert restore_backup(tmp_path / "same.db", tmp_path / "restored.db").memories == 1


def test_restore_with_force_removes_stale_wal(store: Path, tmp_path: Path) -> None:
    backup(store, tmp_path / "copy.db")
    (tmp_path / "live.db-wal").write_bytes(b"stale")
    restore_backup(tmp_path / "copy.db", store, force=True)
    assert not (tmp_path / "live.db-wal").exists()


def test_restore_rejects_non_store_file(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (x)")
    conn.close()
    with pytest.raises(UsageError, match="not an elastic-memory store"):
        restore_backup(other, tmp_path / "restored.db")


def test_restore_rejects_text_file(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello", encoding="utf-8")
    with pytest.raises(UsageError, match="not an elastic-memory store"):
        restore_backup(tmp_path / "notes.txt", tmp_path / "restored.db")


def test_backup_refuses_postgres(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="pg_dump"):
        backup("postgresql://ana@db/mem", tmp_path / "copy.db")


def test_restore_into_postgres_names_pg_restore(store: Path, tmp_path: Path) -> None:
    backup(store, tmp_path / "copy.db")
    for target in ("postgresql://ana@db/mem", Path("postgresql://ana@db/mem")):  # Path folds // into /
        with pytest.raises(UsageError, match="pg_restore"):
            restore_backup(tmp_path / "copy.db", target)


def test_backup_into_missing_folder_is_usage_error(store: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        backup(store, tmp_path / "missing" / "copy.db")


def test_backup_of_missing_store_is_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no store"):
        backup(tmp_path / "absent.db", tmp_path / "copy.db")


class _FullDisk:
    """A SQLite connection whose VACUUM INTO writes part of the copy, then fails with ``error``."""

    def __init__(self, conn: Any, error: Exception) -> None:
        self.conn, self.error = conn, error

    def execute(self, sql: str, params: Any = ()) -> Any:
        if sql.startswith("VACUUM INTO"):
            Path(url2pathname(urlparse(params[0]).path)).write_bytes(b"SQLite format 3\x00 half a copy")
            raise self.error
        return self.conn.execute(sql, params)

    def close(self) -> None:
        self.conn.close()


@pytest.fixture(params=["ENOSPC", "sqlite-full"])
def full_disk(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The copy step runs out of space: an OSError, or the error SQLite reports for a full disk."""
    real = _backup.driver()
    error: Exception = (
        OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        if request.param == "ENOSPC"
        else real.module.OperationalError("database or disk is full")
    )

    class Driver:
        module = real.module

        def connect(self, path: str, **options: Any) -> Any:
            return _FullDisk(real.connect(path, **options), error)

    monkeypatch.setattr(_backup, "driver", Driver)


@pytest.mark.usefixtures("full_disk")
def test_backup_out_of_space_leaves_no_partial_file(store: Path, tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="free space"):
        backup(store, tmp_path / "copy.db")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("copy")) == []


@pytest.mark.usefixtures("full_disk")
def test_restore_out_of_space_leaves_no_partial_file(store: Path, tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="free space"):
        restore_backup(store, tmp_path / "restored.db")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("restored")) == []
