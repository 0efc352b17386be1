"""Folder sync: a re-ingest archives (or forgets) notes that left, keeps renamed notes' ids, embeds only new text."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from elastic_memory import Memory, UsageError, cli
from elastic_memory.cli import _common as cli_common
from elastic_memory.connectors import MarkdownFolder, note_id
from elastic_memory.ingest import IngestReport, ingest_folder
from elastic_memory.testing import FakeEmbedder

runner = CliRunner()


def write(path: Path, text: str, *, mtime: int | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mtime is not None:
        os.utime(path, ns=(mtime * 10**9, mtime * 10**9))


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write(root / "Dog.md", "Biscuit is a beagle. See [[Vet]].")
    write(root / "Vet.md", "Dr. Okonkwo runs the Estrela clinic.")
    write(root / "projects" / "Zebra.md", "Ship the zebra feature by Friday.")
    return root


@pytest.fixture
def mem() -> Iterator[Memory]:
    with Memory.open(":memory:", embedder=None) as store:
        yield store


def sync(mem: Memory, root: Path, **options: bool) -> IngestReport:
    return ingest_folder(mem, MarkdownFolder(root), **options)


def keyword(mem: Memory, word: str) -> list[str]:
    """The paths of the notes a keyword recall of ``word`` finds (not those a wikilink hop adds)."""
    return [h.metadata["source_path"] for h in mem.recall(word, mode="keyword") if word in h.content.lower()]


def test_deleted_note_is_archived_and_not_recalled(mem: Memory, vault: Path) -> None:
    sync(mem, vault)
    (vault / "projects" / "Zebra.md").unlink()
    report = sync(mem, vault)
    record = mem.get(note_id("projects/Zebra.md"))
    assert (report.archived, report.deleted) == (1, 0)
    assert record is not None
    assert record.archived
    assert keyword(mem, "zebra") == []


def test_delete_missing_flag_forgets_it(mem: Memory, vault: Path) -> None:
    sync(mem, vault)
    (vault / "projects" / "Zebra.md").unlink()
    report = sync(mem, vault, delete_missing=True)
    record = mem.get(note_id("projects/Zebra.md"))
    assert (report.archived, report.deleted) == (0, 1)
    assert record is not None
    assert record.deleted_at is not None


def test_delete_missing_forgets_a_note_archived_by_an_earlier_run(mem: Memory, vault: Path) -> None:
    sync(mem, vault)
    (vault / "projects" / "Zebra.md").unlink()
    sync(mem, vault)
    assert sync(mem, vault, delete_missing=True).deleted == 1


def test_hard_deletes_it_for_good(mem: Memory, vault: Path) -> None:
    sync(mem, vault)
    (vault / "projects" / "Zebra.md").unlink()
    assert sync(mem, vault, delete_missing=True, hard=True).deleted == 1
    assert mem.get(note_id("projects/Zebra.md")) is None


def test_hard_without_delete_missing_is_a_usage_error(mem: Memory, vault: Path) -> None:
    with pytest.raises(UsageError, match="delete_missing"):
        sync(mem, vault, hard=True)


def test_renamed_unchanged_note_keeps_its_id(mem: Memory, vault: Path) -> None:
    sync(mem, vault)
    (vault / "pets").mkdir()
    (vault / "Dog.md").rename(vault / "pets" / "Biscuit.md")
    report = sync(mem, vault)
    record = mem.get(note_id("Dog.md"))
    assert (report.renamed, report.new, report.archived) == (1, 0, 0)
    assert record is not None
    assert (record.metadata["source_path"], record.archived) == ("pets/Biscuit.md", False)
    assert mem.get(note_id("pets/Biscuit.md")) is None


def test_renamed_note_is_not_re_embedded(vault: Path) -> None:
    embedder = FakeEmbedder()
    with Memory.open(":memory:", embedder=embedder) as mem:
        sync(mem, vault)
        (vault / "Dog.md").rename(vault / "Beagle.md")
        before = embedder.calls
        sync(mem, vault)
        assert embedder.calls == before
        assert note_id("Dog.md") in mem.vectors([note_id("Dog.md")])


def test_a_renamed_note_stays_unchanged_on_the_next_run(mem: Memory, vault: Path) -> None:
    sync(mem, vault)
    (vault / "Dog.md").rename(vault / "Beagle.md")
    sync(mem, vault)
    report = sync(mem, vault)
    assert (report.unchanged, report.new, report.renamed, report.archived) == (3, 0, 0, 0)


def test_a_new_note_at_a_renamed_notes_old_path_gets_its_own_id(mem: Memory, vault: Path) -> None:
    sync(mem, vault)
    (vault / "Dog.md").rename(vault / "Beagle.md")
    sync(mem, vault)
    write(vault / "Dog.md", "A new note about a dachshund.")
    assert sync(mem, vault).new == 1
    assert keyword(mem, "beagle") == ["Beagle.md"]
    assert keyword(mem, "dachshund") == ["Dog.md"]


def test_touched_note_is_not_re_embedded(vault: Path) -> None:
    embedder = FakeEmbedder()
    with Memory.open(":memory:", embedder=embedder) as mem:
        sync(mem, vault)
        write(vault / "Vet.md", "Dr. Okonkwo runs the Estrela clinic.", mtime=2_000_000_000)
        before = embedder.calls
        report = sync(mem, vault)
        record = mem.get(note_id("Vet.md"))
    assert embedder.calls == before
    assert report.unchanged == 3
    assert record is not None
    assert record.metadata["source_mtime_ns"] == 2_000_000_000 * 10**9


def test_changed_frontmatter_updates_fields_without_re_embedding(vault: Path) -> None:
    embedder = FakeEmbedder()
    with Memory.open(":memory:", embedder=embedder) as mem:
        sync(mem, vault)
        write(vault / "Vet.md", "---\ntags: [health]\n---\nDr. Okonkwo runs the Estrela clinic.")
        before = embedder.calls
        report = sync(mem, vault)
        record = mem.get(note_id("Vet.md"))
    assert (embedder.calls, report.updated) == (before, 1)
    assert record is not None
    assert record.tags == ("health",)


def test_edited_note_is_embedded_again(vault: Path) -> None:
    embedder = FakeEmbedder()
    with Memory.open(":memory:", embedder=embedder) as mem:
        sync(mem, vault)
        write(vault / "Vet.md", "Dr. Okonkwo moved to the Lapa clinic.")
        before = embedder.calls
        assert sync(mem, vault).updated == 1
    assert embedder.calls == before + 1


def test_returning_note_is_unarchived(mem: Memory, vault: Path) -> None:
    sync(mem, vault)
    zebra = vault / "projects" / "Zebra.md"
    zebra.unlink()
    sync(mem, vault)
    write(zebra, "Ship the zebra feature by Friday.")
    report = sync(mem, vault)
    record = mem.get(note_id("projects/Zebra.md"))
    assert report.restored == 1
    assert record is not None
    assert not record.archived
    assert "source_missing_at" not in record.metadata
    assert keyword(mem, "zebra") == ["projects/Zebra.md"]


def test_a_note_forgotten_by_delete_missing_comes_back_with_its_file(mem: Memory, vault: Path) -> None:
    sync(mem, vault)
    zebra = vault / "projects" / "Zebra.md"
    zebra.unlink()
    sync(mem, vault, delete_missing=True)
    write(zebra, "Ship the zebra feature by Friday.")
    assert sync(mem, vault).restored == 1
    assert keyword(mem, "zebra") == ["projects/Zebra.md"]


def test_a_note_archived_by_hand_stays_archived(mem: Memory, vault: Path) -> None:
    sync(mem, vault)
    mem.archive(note_id("Vet.md"))
    write(vault / "Vet.md", "Dr. Okonkwo runs the Estrela clinic.", mtime=2_000_000_000)
    assert sync(mem, vault).unchanged == 3
    record = mem.get(note_id("Vet.md"))
    assert record is not None
    assert record.archived


def test_second_folder_is_not_swept(mem: Memory, vault: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    write(other / "Cat.md", "Miso the cat sleeps all day.")
    sync(mem, vault)
    sync(mem, other)
    (vault / "Dog.md").unlink()
    report = sync(mem, vault)
    assert report.missing_paths == ("Dog.md",)
    assert keyword(mem, "miso") == ["Cat.md"]


def test_same_path_in_two_folders_is_two_notes(mem: Memory, vault: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    write(other / "Dog.md", "Rex the dachshund.")
    sync(mem, vault)
    assert sync(mem, other).new == 1
    assert sync(mem, vault).unchanged == 3
    assert sync(mem, other).unchanged == 1
    assert keyword(mem, "beagle") == keyword(mem, "dachshund") == ["Dog.md"]  # one in each folder


def test_skipped_file_is_not_swept(mem: Memory, vault: Path) -> None:
    sync(mem, vault)
    assert ingest_folder(mem, MarkdownFolder(vault, ignore=["projects/*"])).archived == 0
    assert keyword(mem, "zebra") == ["projects/Zebra.md"]


def test_legacy_records_are_adopted(mem: Memory, vault: Path) -> None:
    sync(mem, vault)
    for rel in ("Dog.md", "Vet.md", "projects/Zebra.md"):  # as an ingest before source_folder wrote them
        record = mem.get(note_id(rel))
        assert record is not None
        mem.update(record.id, metadata={k: v for k, v in record.metadata.items() if k != "source_folder"})
    assert sync(mem, vault).unchanged == 3
    (vault / "Vet.md").unlink()
    assert sync(mem, vault).missing_paths == ("Vet.md",)
    record = mem.get(note_id("Dog.md"))
    assert record is not None
    assert record.metadata["source_folder"] == str(vault.resolve())


def test_wikilink_edges_follow_renamed_ids(mem: Memory, vault: Path) -> None:
    sync(mem, vault)
    (vault / "Vet.md").rename(vault / "Clinic.md")
    write(vault / "Dog.md", "Biscuit is a beagle. See [[Clinic]].")
    assert sync(mem, vault).links == 1
    assert mem.graph.neighbors(note_id("Dog.md")) == [note_id("Vet.md")]


def test_two_folders_keep_their_own_wikilink_edges(mem: Memory, vault: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    write(other / "Cat.md", "Miso. See [[Food]].")
    write(other / "Food.md", "Salmon.")
    sync(mem, vault)
    sync(mem, other)
    sync(mem, vault)
    assert mem.graph.neighbors(note_id("Cat.md")) == [note_id("Food.md")]
    assert mem.graph.neighbors(note_id("Dog.md")) == [note_id("Vet.md")]


def test_sweep_report_lists_missing_paths(mem: Memory, vault: Path) -> None:
    sync(mem, vault)
    (vault / "Vet.md").unlink()
    (vault / "projects" / "Zebra.md").unlink()
    report = sync(mem, vault)
    assert (report.archived, report.missing_paths) == (2, ("Vet.md", "projects/Zebra.md"))


def test_a_second_sweep_reports_nothing_new(mem: Memory, vault: Path) -> None:
    sync(mem, vault)
    (vault / "Vet.md").unlink()
    sync(mem, vault)
    assert (sync(mem, vault).archived, sync(mem, vault).missing_paths) == (0, ())


# ------------------------------------------------------------- a folder that moved
def folder_of(mem: Memory, rel: str, mid: str | None = None) -> str:
    record = mem.get(mid or note_id(rel))
    assert record is not None
    return record.metadata["source_folder"]


def test_a_moved_folder_keeps_its_notes(vault: Path, tmp_path: Path) -> None:
    embedder = FakeEmbedder()
    with Memory.open(":memory:", embedder=embedder) as mem:
        sync(mem, vault)
        moved = vault.rename(tmp_path / "moved")
        (moved / "projects" / "Zebra.md").unlink()
        before = embedder.calls
        report = sync(mem, moved)
        assert embedder.calls == before  # no note embedded again
        assert (report.new, report.unchanged, report.archived) == (0, 2, 1)
        assert (report.moved_from, report.adopted) == ((str(vault.resolve()),), 2)
        assert report.missing_paths == ("projects/Zebra.md",)
        assert keyword(mem, "beagle") == ["Dog.md"]  # once: no duplicate
        assert keyword(mem, "zebra") == []  # the note deleted meanwhile left recall
        assert folder_of(mem, "Dog.md") == folder_of(mem, "Vet.md") == str(moved.resolve())
        assert note_id("Dog.md") in mem.vectors([note_id("Dog.md")])
        assert [(e.dst_id, e.source) for e in mem.graph.edges(note_id("Dog.md"))] == [
            (note_id("Vet.md"), f"wikilinks:{moved.resolve()}")
        ]  # the old folder's edge set is gone
        assert sync(mem, moved).unchanged == 2  # settled: the next run adopts nothing
        assert sync(mem, moved).moved_from == ()


def test_a_moved_folder_drops_its_old_wikilink_edges(mem: Memory, vault: Path, tmp_path: Path) -> None:
    sync(mem, vault)
    moved = vault.rename(tmp_path / "moved")
    write(moved / "Dog.md", "Biscuit is a beagle.")  # the link to Vet is gone while it moved
    report = sync(mem, moved)
    assert (report.updated, report.adopted, report.links) == (1, 3, 0)
    assert mem.graph.edges(note_id("Dog.md")) == []


def test_a_moved_folder_with_delete_missing_forgets_the_notes_gone(mem: Memory, vault: Path, tmp_path: Path) -> None:
    sync(mem, vault)
    moved = vault.rename(tmp_path / "moved")
    (moved / "Vet.md").unlink()
    report = sync(mem, moved, delete_missing=True, hard=True)
    assert (report.deleted, report.missing_paths, report.adopted) == (1, ("Vet.md",), 2)
    assert mem.get(note_id("Vet.md")) is None


def test_a_note_renamed_while_its_folder_moved_keeps_its_id(mem: Memory, vault: Path, tmp_path: Path) -> None:
    sync(mem, vault)
    moved = vault.rename(tmp_path / "moved")
    (moved / "Dog.md").rename(moved / "Biscuit.md")
    report = sync(mem, moved)
    assert (report.renamed, report.new, report.archived, report.adopted) == (1, 0, 0, 3)
    record = mem.get(note_id("Dog.md"))
    assert record is not None
    assert (record.metadata["source_path"], record.metadata["source_folder"]) == ("Biscuit.md", str(moved.resolve()))


def test_a_moved_second_folder_keeps_its_own_ids(mem: Memory, vault: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    write(other / "Dog.md", "Rex the dachshund.")
    sync(mem, vault)
    sync(mem, other)  # Dog.md's path id is the vault's: this note has a folder-scoped id
    rex = [h.id for h in mem.recall("dachshund", mode="keyword")]
    moved = other.rename(tmp_path / "elsewhere")
    report = sync(mem, moved)
    assert (report.new, report.unchanged, report.adopted) == (0, 1, 1)
    assert [h.id for h in mem.recall("dachshund", mode="keyword")] == rex
    assert sync(mem, vault).unchanged == 3


def test_a_folder_whose_old_path_still_exists_is_never_adopted(mem: Memory, vault: Path, tmp_path: Path) -> None:
    sync(mem, vault)
    copy = Path(shutil.copytree(vault, tmp_path / "copy"))
    (copy / "Vet.md").unlink()
    report = sync(mem, copy)
    assert (report.new, report.moved_from, report.archived) == (2, (), 0)
    assert folder_of(mem, "Vet.md") == folder_of(mem, "Dog.md") == str(vault.resolve())
    assert sync(mem, vault).unchanged == 3


def test_a_gone_folder_with_few_notes_here_is_not_adopted(mem: Memory, vault: Path, tmp_path: Path) -> None:
    old = tmp_path / "old"
    write(old / "Dog.md", "Biscuit is a beagle. See [[Vet]].")  # the same note, by chance
    write(old / "Cat.md", "Miso the cat sleeps all day.")
    write(old / "Fish.md", "Nemo the clownfish.")
    sync(mem, old)
    shutil.rmtree(old)
    report = sync(mem, vault)
    assert (report.moved_from, report.archived, report.new) == ((), 0, 3)
    assert keyword(mem, "miso") == ["Cat.md"]  # the gone folder's notes are left alone


def test_duplicates_of_a_moved_folder_are_swept(mem: Memory, vault: Path, tmp_path: Path) -> None:
    sync(mem, vault)
    copy = Path(shutil.copytree(vault, tmp_path / "copy"))
    sync(mem, copy)  # the old path still exists: two copies of each note
    shutil.rmtree(vault)  # now it moved for good
    report = sync(mem, copy)
    assert (report.moved_from, report.archived, report.unchanged) == ((str(vault.resolve()),), 3, 3)
    assert keyword(mem, "beagle") == ["Dog.md"]
    assert sync(mem, copy).moved_from == ()


def test_a_note_forgotten_in_a_moved_folder_stays_forgotten(mem: Memory, vault: Path, tmp_path: Path) -> None:
    sync(mem, vault)
    mem.forget(note_id("Vet.md"))
    moved = vault.rename(tmp_path / "moved")
    assert sync(mem, moved).new == 0
    assert sync(mem, moved).new == 0
    assert keyword(mem, "okonkwo") == []


# -------------------------------------------------------------- an empty folder
def test_an_empty_folder_sweeps_nothing(mem: Memory, vault: Path) -> None:
    sync(mem, vault)
    shutil.rmtree(vault)
    vault.mkdir()  # an unmounted drive: an empty mount point
    report = sync(mem, vault, delete_missing=True, hard=True)
    assert (report.archived, report.deleted, report.missing_paths) == (0, 0, ())
    assert report.sweep_skipped is not None
    assert "3 live notes" in report.sweep_skipped
    assert "allow_empty" in report.sweep_skipped
    assert len(mem.list(state="live").records) == 3
    assert mem.graph.neighbors(note_id("Dog.md")) == [note_id("Vet.md")]  # the links are kept too


def test_an_empty_folder_is_swept_with_allow_empty(mem: Memory, vault: Path) -> None:
    sync(mem, vault)
    shutil.rmtree(vault)
    vault.mkdir()
    report = sync(mem, vault, allow_empty=True)
    assert (report.archived, report.sweep_skipped) == (3, None)
    assert mem.graph.neighbors(note_id("Dog.md")) == []


def test_an_empty_folder_with_nothing_live_reports_nothing(mem: Memory, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert sync(mem, tmp_path / "empty").sweep_skipped is None


def test_a_folder_with_one_note_left_is_swept(mem: Memory, vault: Path) -> None:
    sync(mem, vault)
    (vault / "Dog.md").unlink()
    (vault / "Vet.md").unlink()
    report = sync(mem, vault)
    assert (report.archived, report.sweep_skipped) == (2, None)


def test_allow_empty_must_be_a_bool(mem: Memory, vault: Path) -> None:
    with pytest.raises(UsageError, match="allow_empty"):
        ingest_folder(mem, MarkdownFolder(vault), allow_empty="yes")  # type: ignore[arg-type]


def test_read_one_note_as_the_walk_would(vault: Path, tmp_path: Path) -> None:
    write(vault / ".trash" / "Old.md", "gone")
    write(tmp_path / "outside.md", "outside")
    (vault / "link.md").symlink_to(tmp_path / "outside.md")
    (vault / "linked").symlink_to(vault / "projects")
    folder = MarkdownFolder(vault, ignore=["Vet.md"])
    note = folder.read("projects/Zebra.md")
    assert note is not None
    assert (note.id, note.content) == (note_id("projects/Zebra.md"), "Ship the zebra feature by Friday.")
    for path in ("Vet.md", ".trash/Old.md", "link.md", "linked/Zebra.md", "../outside.md", "Nope.md", "projects", ""):
        assert folder.read(path) is None, path


# --------------------------------------------------------------------------- CLI
@pytest.fixture
def cli_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.delenv(cli_common.DB_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path / "memory.db"


def run(*args: str) -> str:
    result = runner.invoke(cli.app, [*args, "--embedder", "none"])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_a_deleted_note_disappears_from_cli_recall_after_re_ingest(cli_env: Path, vault: Path) -> None:
    recall = ("recall", "zebra", "--db", str(cli_env), "--mode", "keyword", "--json")
    run("ingest", str(vault), "--db", str(cli_env))
    assert "Ship the zebra feature" in run(*recall)
    (vault / "projects" / "Zebra.md").unlink()
    line = run("ingest", str(vault), "--db", str(cli_env))
    assert "1 archived (no longer in the folder): projects/Zebra.md." in line
    assert run(*recall) == ""


def test_cli_json_report_has_every_field(cli_env: Path, vault: Path) -> None:
    run("ingest", str(vault), "--db", str(cli_env))
    (vault / "Vet.md").unlink()
    data = json.loads(run("ingest", str(vault), "--db", str(cli_env), "--delete-missing", "--json"))
    assert (data["deleted"], data["missing_paths"], data["unchanged"]) == (1, ["Vet.md"], 2)
    assert data["folder"] == str(vault.resolve())


def test_cli_hard_needs_delete_missing(cli_env: Path, vault: Path) -> None:
    result = runner.invoke(cli.app, ["ingest", str(vault), "--db", str(cli_env), "--embedder", "none", "--hard"])
    assert result.exit_code == 2
    assert "--delete-missing" in result.stderr


def test_cli_reports_an_empty_folder_and_sweeps_it_with_allow_empty(cli_env: Path, vault: Path) -> None:
    run("ingest", str(vault), "--db", str(cli_env))
    shutil.rmtree(vault)
    vault.mkdir()
    line = run("ingest", str(vault), "--db", str(cli_env), "--delete-missing")
    assert "Nothing archived: the folder holds no note file now" in line
    assert "--allow-empty" in line
    data = json.loads(run("ingest", str(vault), "--db", str(cli_env), "--json"))
    assert (data["archived"], data["sweep_skipped"] is not None) == (0, True)
    data = json.loads(run("ingest", str(vault), "--db", str(cli_env), "--allow-empty", "--json"))
    assert (data["archived"], data["sweep_skipped"]) == (3, None)


def test_cli_reports_a_moved_folder(cli_env: Path, vault: Path, tmp_path: Path) -> None:
    run("ingest", str(vault), "--db", str(cli_env))
    moved = vault.rename(tmp_path / "moved")
    line = run("ingest", str(moved), "--db", str(cli_env))
    assert f"3 notes adopted from {vault.resolve()} (gone from disk: the folder moved here)." in line
    assert "0 new" in line
    data = json.loads(run("ingest", str(moved), "--db", str(cli_env), "--json"))
    assert (data["moved_from"], data["adopted"], data["unchanged"]) == ([], 0, 3)


def test_cli_a_folder_that_does_not_exist_is_an_error(cli_env: Path, vault: Path, tmp_path: Path) -> None:
    run("ingest", str(vault), "--db", str(cli_env))
    args = ["ingest", str(tmp_path / "unmounted"), "--db", str(cli_env), "--delete-missing", "--hard"]
    result = runner.invoke(cli.app, [*args, "--embedder", "none"])
    assert result.exit_code == 2
    assert "does not exist" in result.stderr
    with Memory.open(cli_env, embedder=None) as mem:
        assert len(mem.list().records) == 3
