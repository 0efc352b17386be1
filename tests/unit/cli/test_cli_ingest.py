"""``elastic-memory ingest``: a folder of notes copied into a store, incrementally, through CliRunner."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from elastic_memory import Memory, cli
from elastic_memory.cli import _common as cli_common
from elastic_memory.connectors import MarkdownFolder
from elastic_memory.connectors import ingest as _cli_ingest

runner = CliRunner()


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads the caller's $ELASTIC_MEMORY_DB or writes ./memory.db outside tmp_path."""
    monkeypatch.delenv(cli_common.DB_ENV, raising=False)
    monkeypatch.chdir(tmp_path)


def write(path: Path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write(
        root / "Home.md", "---\ntype: procedural\nimportance: 0.8\npinned: true\ntags: [start]\n---\n# Home\nhi #inbox"
    )
    write(root / "projects" / "Plan.md", "# Plan\nShip the zebra feature.\n")
    write(root / "projects" / "Notes.md", "Notes about zebras.\n")
    write(root / "archive" / "Notes.md", "Archived notes.\n")
    write(root / "broken.md", "---\ntags: [unclosed\n---\nBroken frontmatter.\n")
    write(root / "empty.md", "")
    write(root / "binary.md", b"\x00\x01\x02")
    write(root / ".obsidian" / "app.md", "settings")
    return root


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "memory.db"


def ingest(vault: Path, db: Path, *extra: str) -> Result:
    result = runner.invoke(cli.app, ["ingest", str(vault), "--db", str(db), "--embedder", "none", *extra])
    assert result.exit_code == 0, result.output
    return result


def counts(result: Result) -> dict[str, int]:
    return {
        word: int(n)
        for n, word in re.findall(
            r"(\d+) (notes scanned|new|updated|unchanged|renamed|restored|skipped)", result.stdout
        )
    }


def test_ingest_stores_every_note(vault: Path, db: Path) -> None:
    """If this fails, check that `ingest` writes one memory per parsed note."""
    result = ingest(vault, db)
    assert counts(result) == {
        "notes scanned": 7,
        "new": 6,
        "updated": 0,
        "unchanged": 0,
        "renamed": 0,
        "restored": 0,
        "skipped": 1,
    }
    assert "1 read without their malformed frontmatter" in result.stdout


def test_ingested_ids_are_the_folder_note_ids(vault: Path, db: Path) -> None:
    ingest(vault, db)
    notes = MarkdownFolder(vault).notes()
    with Memory.open(db, embedder=None) as mem:
        records = mem.get_many([n.id for n in notes])
    assert [r.id for r in records] == [n.id for n in notes]


def test_ingested_fields_come_from_the_note(vault: Path, db: Path) -> None:
    ingest(vault, db)
    home = next(n for n in MarkdownFolder(vault).notes() if n.rel_path == "Home.md")
    with Memory.open(db, embedder=None) as mem:
        record = mem.get(home.id)
    assert record is not None
    assert (record.content, record.type.value, record.importance, record.pinned) == (
        "# Home\nhi #inbox",
        "procedural",
        0.8,
        True,
    )
    assert (record.tags, record.source.value, record.kind) == (("inbox", "start"), "imported", "note")
    assert record.metadata == {
        "source_folder": str(vault.resolve()),
        "source_path": "Home.md",
        "source_mtime_ns": home.mtime_ns,
        "source_size": home.size,
    }


def test_an_empty_note_is_remembered_by_its_title(vault: Path, db: Path) -> None:
    ingest(vault, db)
    with Memory.open(db, embedder=None) as mem:
        hits = mem.recall("empty", mode="keyword")
    assert [h.content for h in hits] == ["empty"]


def test_a_rerun_finds_everything_unchanged(vault: Path, db: Path) -> None:
    ingest(vault, db)
    assert counts(ingest(vault, db)) == {
        "notes scanned": 7,
        "new": 0,
        "updated": 0,
        "unchanged": 6,
        "renamed": 0,
        "restored": 0,
        "skipped": 1,
    }


def test_editing_one_note_updates_exactly_one(vault: Path, db: Path) -> None:
    ingest(vault, db)
    plan = vault / "projects" / "Plan.md"
    write(plan, "# Plan\nShip the okapi feature.\n")
    os.utime(plan, ns=(2_000_000_000_000_000_000, 2_000_000_000_000_000_000))
    assert counts(ingest(vault, db))["updated"] == 1
    assert counts(ingest(vault, db))["unchanged"] == 6
    with Memory.open(db, embedder=None) as mem:
        assert [h.metadata["source_path"] for h in mem.recall("okapi", mode="keyword")] == ["projects/Plan.md"]


def test_a_new_note_is_added(vault: Path, db: Path) -> None:
    ingest(vault, db)
    write(vault / "projects" / "New.md", "fresh")
    assert counts(ingest(vault, db))["new"] == 1


def test_a_note_edited_in_the_store_is_rewritten_from_the_folder(vault: Path, db: Path) -> None:
    ingest(vault, db)
    plan = next(n for n in MarkdownFolder(vault).notes() if n.rel_path == "projects/Plan.md")
    with Memory.open(db, embedder=None) as mem:
        mem.update(plan.id, content="changed in the store")
    assert counts(ingest(vault, db))["updated"] == 1


def test_batches_cover_every_note(vault: Path, db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_cli_ingest, "BATCH", 2)
    assert counts(ingest(vault, db))["new"] == 6
    with Memory.open(db, embedder=None) as mem:
        assert mem.stats()["active_memories"] == 6


def test_ignore_globs_are_passed_on(vault: Path, db: Path) -> None:
    assert counts(ingest(vault, db, "--ignore", "archive/*"))["new"] == 5


def test_embedder_none_loads_no_model(vault: Path, db: Path) -> None:
    ingest(vault, db)
    with Memory.open(db, embedder=None) as mem:
        stats = mem.stats()
    assert (stats["vectors"], stats["embedding_model"]) == (0, None)


def test_a_missing_folder_exits_2_with_a_hint(tmp_path: Path, db: Path) -> None:
    result = runner.invoke(cli.app, ["ingest", str(tmp_path / "nope"), "--db", str(db), "--embedder", "none"])
    assert result.exit_code == 2
    assert "nope does not exist" in result.stderr
    assert not db.exists()
