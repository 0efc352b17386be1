"""``elastic-memory backup SRC DST`` and ``restore --backup FILE``, through CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elastic_memory import Memory

from ._cli import invoke, ok

pytestmark = pytest.mark.usefixtures("isolated_cli")


@pytest.fixture
def store(db: Path) -> Path:
    with Memory.open(db, embedder=None) as mem:
        mem.remember("The dog is Biscuit.")
    return db


def test_backup_writes_a_store_with_the_memories(store: Path, tmp_path: Path) -> None:
    data = json.loads(ok("backup", store, tmp_path / "copy.db", "--json").stdout)
    assert data["memories"] == 1
    with Memory.open(tmp_path / "copy.db", embedder=None) as mem:
        assert [h.content for h in mem.recall("dog")] == ["The dog is Biscuit."]


def test_backup_refuses_existing_destination_without_force(store: Path, tmp_path: Path) -> None:
    (tmp_path / "copy.db").write_bytes(b"")
    result = invoke("backup", store, tmp_path / "copy.db")
    assert result.exit_code == 2
    assert "--force" in result.stderr
    assert ok("backup", store, tmp_path / "copy.db", "--force").exit_code == 0


def test_backup_of_postgres_url_names_pg_dump(tmp_path: Path) -> None:
    result = invoke("backup", "postgresql://ana@db/mem", tmp_path / "copy.db")
    assert result.exit_code == 2
    assert "pg_dump" in result.stderr


def test_restore_backup_puts_the_store_in_place(store: Path, tmp_path: Path) -> None:
    ok("backup", store, tmp_path / "copy.db")
    ok("restore", "--backup", tmp_path / "copy.db", "--db", tmp_path / "restored.db")
    with Memory.open(tmp_path / "restored.db", embedder=None) as mem:
        assert mem.stats()["total_memories"] == 1


def test_restore_backup_refuses_existing_store_without_force(store: Path, tmp_path: Path) -> None:
    ok("backup", store, tmp_path / "copy.db")
    result = invoke("restore", "--backup", tmp_path / "copy.db", "--db", store)
    assert result.exit_code == 2
    assert "exists" in result.stderr
    assert ok("restore", "--backup", tmp_path / "copy.db", "--db", store, "--force").exit_code == 0


def test_restore_with_ids_and_backup_is_usage_error(store: Path, tmp_path: Path) -> None:
    result = invoke("restore", "some-id", "--backup", tmp_path / "copy.db", "--db", store)
    assert result.exit_code == 2
    assert "not both" in result.stderr


def test_backup_onto_the_stores_own_wal_is_refused(store: Path) -> None:
    with Memory.open(store, embedder=None) as mem:  # open: the WAL exists while it runs
        mem.remember("The cat is Pixel.")
        result = invoke("backup", store, f"{store}-wal", "--force")
        assert result.exit_code == 2
        assert "side files" in result.stderr
    with Memory.open(store, embedder=None) as mem:
        assert mem.stats()["total_memories"] == 2


def test_restore_backup_into_postgres_url_names_pg_restore(store: Path, tmp_path: Path) -> None:
    ok("backup", store, tmp_path / "copy.db")
    result = invoke("restore", "--backup", tmp_path / "copy.db", "--db", "postgresql://u@localhost/mem")
    assert result.exit_code == 2
    assert "pg_restore" in result.stderr
    assert "does not exist" not in result.stderr
