"""Schema versioning on PRAGMA user_version."""

from __future__ import annotations

from pathlib import Path

import pytest

from elastic_memory import Memory, SchemaVersionError, StorageError, UsageError
from elastic_memory.storage import migrations
from elastic_memory.storage.driver import driver


def _user_version(path: Path) -> int:
    conn = driver().module.connect(str(path))
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    finally:
        conn.close()


def test_open_migrates_a_new_file_to_the_latest_version(db_path: Path) -> None:
    Memory.open(db_path, embedder=None).close()
    assert _user_version(db_path) == migrations.LATEST


def test_reopening_keeps_data_and_version(db_path: Path) -> None:
    with Memory.open(db_path, embedder=None) as mem:
        mid = mem.remember("persisted")
    with Memory.open(db_path, embedder=None) as mem:
        assert mem.get(mid).content == "persisted"  # type: ignore[union-attr]
    assert _user_version(db_path) == migrations.LATEST


def test_a_newer_schema_is_refused_and_left_alone(db_path: Path) -> None:
    Memory.open(db_path, embedder=None).close()
    conn = driver().module.connect(str(db_path))
    conn.execute(f"PRAGMA user_version = {migrations.LATEST + 5}")
    conn.commit()
    conn.close()
    with pytest.raises(SchemaVersionError, match="upgrade elastic-memory"):
        Memory.open(db_path, embedder=None)
    assert _user_version(db_path) == migrations.LATEST + 5


def test_a_database_of_another_application_is_refused(db_path: Path) -> None:
    conn = driver().module.connect(str(db_path))
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)")
    conn.commit()
    conn.close()
    with pytest.raises(UsageError, match="something else"):
        Memory.open(db_path, embedder=None)
    assert _user_version(db_path) == 0


def test_a_failing_migration_rolls_back_whole(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A migration whose last statement fails leaves neither its tables nor its version."""
    broken = migrations.Migration(1, (*migrations.MIGRATIONS[0].statements, "CREATE TABLE broken (syntax error"))
    monkeypatch.setattr(migrations, "MIGRATIONS", (broken,))
    with pytest.raises(StorageError, match="it stays at 0"):
        Memory.open(db_path, embedder=None)
    conn = driver().module.connect(str(db_path))
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    conn.close()
    assert tables == []
    assert _user_version(db_path) == 0


def test_versions_are_contiguous_from_one() -> None:
    assert [m.version for m in migrations.MIGRATIONS] == list(range(1, migrations.LATEST + 1))


def test_a_version_1_file_upgrades_keeping_its_memories(db_path: Path) -> None:
    """A database written by 0.1 (schema v1) gains the loop tables; its memories read as notes."""
    conn = driver().module.connect(str(db_path))
    for statement in migrations.MIGRATIONS[0].statements:
        conn.execute(statement)
    conn.execute(
        "INSERT INTO memories (id, agent_id, scope, type, content, content_hash, importance, confidence, source, "
        "created_at, updated_at, accessed_at) VALUES ('m1', 'default', 'private', 'semantic', "
        "'The dog is called Biscuit.', 'h', 0.5, 1.0, 'agent', 1, 1, 1)"
    )
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    with Memory.open(db_path, embedder=None) as mem:
        record = mem.get("m1")
        assert record is not None and record.kind == "note"
        assert [h.id for h in mem.recall("Biscuit")] == ["m1"]
    assert _user_version(db_path) == migrations.LATEST
