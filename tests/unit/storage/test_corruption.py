"""A corrupt file raises a distinct error at open and is never overwritten."""

from __future__ import annotations

from pathlib import Path

import pytest

from elastic_memory import CorruptDatabaseError, Memory, StorageError


def test_garbage_file_raises_corrupt_database_error_and_stays_unchanged(db_path: Path) -> None:
    garbage = b"this is not a database" * 500
    db_path.write_bytes(garbage)
    with pytest.raises(CorruptDatabaseError, match="left untouched"):
        Memory.open(db_path, embedder=None)
    assert db_path.read_bytes() == garbage


def test_truncated_database_raises_corrupt_database_error(db_path: Path) -> None:
    with Memory.open(db_path, embedder=None) as mem:
        mem.remember_many([f"memory {i} " * 20 for i in range(300)])
    data = db_path.read_bytes()
    db_path.write_bytes(data[:100] + b"\xff" * 400 + data[500:])
    with pytest.raises(CorruptDatabaseError), Memory.open(db_path, embedder=None) as mem:
        mem.recall("memory", mode="keyword")


def test_missing_folder_is_a_storage_error_with_a_hint(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="folder exists"):
        Memory.open(tmp_path / "no" / "such" / "dir" / "m.db", embedder=None)
