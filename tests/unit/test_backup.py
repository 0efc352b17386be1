"""backup() and restore_backup(): a consistent copy of a live store, and putting one back."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from elastic_memory import Memory, UsageError, backup, restore_backup
from elastic_memory.testing import FakeEmbedder


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "live.db"
    with Memory.open(path, embedder=FakeEmbedder()) as mem:
        mem.remember("The user's dog is called Biscuit.", tags=["pets"])
    return path


def test_backup_of_live_store_is_consistent_while_a_writer_commits(store: Path, tmp_path: Path) -> None:
    stop = threading.Event()

    def writer() -> None:
        with Memory.open(store, embedder=None) as mem:
            n = 0
            while not stop.is_set():
                mem.remember_many([f"batch {n} item {i}" for i in range(20)])  # one transaction of 20
                n += 1

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        reports = [backup(store, tmp_path / f"copy{i}.db") for i in range(3)]
    finally:
        stop.set()
        thread.join()
    for report in reports:
        with Memory.open(report.destination, embedder=None) as copy:
            total = copy.stats()["total_memories"]
        assert (total - 1) % 20 == 0  # whole transactions only
        assert total == report.memories


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


def test_backup_into_missing_folder_is_usage_error(store: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        backup(store, tmp_path / "missing" / "copy.db")


def test_backup_of_missing_store_is_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no store"):
        backup(tmp_path / "absent.db", tmp_path / "copy.db")
