"""The Markdown folder connector on real files: parsing, skips, the cache, search and faults."""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest

from elastic_memory import Memory, RecallMode, RecallWarning, UsageError
from elastic_memory.connectors import NAMESPACE, MarkdownFolder, ReadOnlyError, note_id
from elastic_memory.connectors import markdown as markdown_module
from elastic_memory.ingest import ingest_folder
from elastic_memory.types import MemoryType, Scope, Source

OUTSIDE_SECRET = "OUTSIDE-SECRET-never-read"


def write(path: Path, text: str | bytes, *, mtime: int | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    write(folder / "secret.md", f"# Secret\n{OUTSIDE_SECRET}\n")
    return folder


@pytest.fixture
def vault(tmp_path: Path, outside: Path) -> Path:
    """A small synthetic vault with every awkward case the connector must survive."""
    root = tmp_path / "vault"
    write(
        root / "Home.md",
        "---\ntype: procedural\nimportance: 0.9\npinned: true\ntags: [Start, project]\n"
        "created: 2024-01-02\naliases: [Index]\n---\n# Home\nWelcome to the vault. #Inbox\n",
    )
    write(root / "projects" / "Plan.md", "# Plan\nShip the zebra feature.\n")
    write(root / "projects" / "Alpha" / "Notes.md", "Alpha notes about zebra.\n")
    write(root / "archive" / "Notes.md", "Archived notes.\n")
    write(root / "broken.md", "---\ntags: [unclosed\n---\nBody of the broken note.\n")
    write(root / "binary.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    write(root / "latin1.md", "caf\u00e9 cr\u00e8me".encode("latin-1"))
    write(root / "big.md", "x" * (2 << 20))
    write(root / ".obsidian" / "workspace.md", "obsidian settings")
    write(root / ".trash" / "old.md", "trashed note")
    write(root / ".hidden.md", "hidden note")
    write(root / "readme.txt", "not a note")
    write(root / "Other.markdown", "The other extension.\n")
    (root / "escape.md").symlink_to(outside / "secret.md")
    (root / "linked_dir").symlink_to(outside, target_is_directory=True)
    return root


def rel_paths(folder: MarkdownFolder) -> list[str]:
    return [n.rel_path for n in folder.notes()]


# ------------------------------------------------------------------- what is read
def test_reads_notes_and_skips_everything_else(vault: Path) -> None:
    """If this fails, check the skip rules: dot entries, symlinks, size, binary, non-UTF-8, extensions."""
    assert rel_paths(MarkdownFolder(vault)) == [
        "Home.md",
        "Other.markdown",
        "archive/Notes.md",
        "broken.md",
        "projects/Alpha/Notes.md",
        "projects/Plan.md",
    ]


def test_scan_report_counts_every_skip(vault: Path) -> None:
    folder = MarkdownFolder(vault)
    folder.notes()
    report = folder.scan_report
    assert (report.scanned, report.parsed) == (9, 6)
    assert (report.skipped_large, report.skipped_binary, report.skipped_symlink) == (1, 2, 2)
    assert (report.skipped_ignored, report.bad_frontmatter, report.errors) == (0, 1, 0)


def test_never_reads_outside_the_root(vault: Path) -> None:
    """A symlinked file or folder pointing outside must never be followed."""
    folder = MarkdownFolder(vault)
    assert all(OUTSIDE_SECRET not in n.content for n in folder.notes())
    assert folder.search("OUTSIDE SECRET never read") == []


def test_ignore_globs_skip_files_and_folders(vault: Path) -> None:
    folder = MarkdownFolder(vault, ignore=["archive", "*/Plan.md"])
    assert "archive/Notes.md" not in rel_paths(folder)
    assert "projects/Plan.md" not in rel_paths(folder)
    assert folder.scan_report.skipped_ignored == 2


def test_custom_extensions(vault: Path) -> None:
    assert rel_paths(MarkdownFolder(vault, extensions=[".markdown"])) == ["Other.markdown"]


# ---------------------------------------------------------------------------- ids
def test_id_is_uuid5_of_the_relative_posix_path(vault: Path) -> None:
    note = next(n for n in MarkdownFolder(vault).notes() if n.rel_path == "projects/Plan.md")
    assert note.id == str(uuid.uuid5(NAMESPACE, "projects/Plan.md")) == note_id("projects/Plan.md")


def test_ids_are_stable_across_instances(vault: Path) -> None:
    first = {n.rel_path: n.id for n in MarkdownFolder(vault).notes()}
    assert {n.rel_path: n.id for n in MarkdownFolder(vault).notes()} == first


def test_a_rename_changes_the_id(vault: Path) -> None:
    folder = MarkdownFolder(vault)
    before = note_id("projects/Plan.md")
    (vault / "projects" / "Plan.md").rename(vault / "projects" / "Roadmap.md")
    ids = {n.id for n in folder.notes()}
    assert before not in ids
    assert note_id("projects/Roadmap.md") in ids


# -------------------------------------------------------------------- parsing
def note(folder: MarkdownFolder, rel_path: str) -> Any:
    found = folder.get(note_id(rel_path))
    assert found is not None
    return found


def test_frontmatter_maps_to_fields(vault: Path) -> None:
    home = note(MarkdownFolder(vault), "Home.md")
    assert (home.type, home.importance, home.pinned) == (MemoryType.PROCEDURAL, 0.9, True)
    assert home.tags == ("start", "project", "inbox")
    assert home.metadata == {"created": "2024-01-02", "aliases": ["Index"]}


def test_content_drops_the_frontmatter_and_keeps_the_title_line(vault: Path) -> None:
    home = note(MarkdownFolder(vault), "Home.md")
    assert home.content == "# Home\nWelcome to the vault. #Inbox\n"
    assert home.title == "Home"


def test_title_falls_back_to_the_file_name(vault: Path) -> None:
    assert note(MarkdownFolder(vault), "projects/Alpha/Notes.md").title == "Notes"


def test_defaults_without_frontmatter(vault: Path) -> None:
    plan = note(MarkdownFolder(vault), "projects/Plan.md")
    assert (plan.type, plan.importance, plan.pinned, plan.tags, plan.metadata) == (
        MemoryType.SEMANTIC,
        0.5,
        False,
        (),
        {},
    )


def test_comma_separated_tags(tmp_path: Path) -> None:
    write(tmp_path / "a.md", "---\ntags: 'one, #Two ,three'\n---\nbody")
    assert note(MarkdownFolder(tmp_path), "a.md").tags == ("one", "two", "three")


def test_unusable_field_values_fall_back_to_defaults(tmp_path: Path) -> None:
    write(tmp_path / "a.md", "---\ntype: diary\nimportance: high\npinned: 'yes'\n---\nbody")
    a = note(MarkdownFolder(tmp_path), "a.md")
    assert (a.type, a.importance, a.pinned) == (MemoryType.SEMANTIC, 0.5, False)


def test_importance_is_clamped(tmp_path: Path) -> None:
    write(tmp_path / "a.md", "---\nimportance: 7\n---\nbody")
    assert note(MarkdownFolder(tmp_path), "a.md").importance == 1.0


def test_metadata_is_json_safe(tmp_path: Path) -> None:
    write(tmp_path / "a.md", "---\nwhen: 2024-03-01T10:00:00Z\nblob: !!binary aGVsbG8=\nbad: .nan\n2024: year\n---\nb")
    assert note(MarkdownFolder(tmp_path), "a.md").metadata == {"when": "2024-03-01T10:00:00+00:00", "2024": "year"}


def test_malformed_frontmatter_is_ignored_and_counted(vault: Path) -> None:
    """One bad note never fails the scan: it is read as plain text."""
    folder = MarkdownFolder(vault)
    broken = note(folder, "broken.md")
    assert "Body of the broken note." in broken.content
    assert broken.tags == ()
    assert folder.scan_report.bad_frontmatter == 1


def test_a_yaml_alias_bomb_is_refused_not_expanded(tmp_path: Path) -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]" for i in range(12)]
    write(tmp_path / "bomb.md", "---\n" + "\n".join(lines) + "\n---\nstill read")
    folder = MarkdownFolder(tmp_path)
    assert "still read" in note(folder, "bomb.md").content
    assert folder.scan_report.bad_frontmatter == 1


def test_frontmatter_that_is_not_a_mapping_is_malformed(tmp_path: Path) -> None:
    write(tmp_path / "a.md", "---\nSome text\n---\nmore")
    folder = MarkdownFolder(tmp_path)
    assert note(folder, "a.md").content == "---\nSome text\n---\nmore"
    assert folder.scan_report.bad_frontmatter == 1


def test_hashtags_outside_code_headings_and_urls_become_tags(tmp_path: Path) -> None:
    text = (
        "# Heading\n## Sub #heading-tag\nA #Real-tag and #nested/tag, #real-tag again.\n"
        "Inline `#codespan` and https://example.com/page#fragment and #123 and a&#39;b.\n"
        "```\n#fenced\n```\n~~~python\n#tilde\n~~~\n#last"
    )
    write(tmp_path / "h.md", text)
    assert note(MarkdownFolder(tmp_path), "h.md").tags == ("heading-tag", "real-tag", "nested/tag", "last")


# ---------------------------------------------------------------- hostile input
@pytest.mark.parametrize(
    "name",
    ['it\'s "quoted".md', "'; DROP TABLE memories; --.md", "%s %(x)s {0}.md", "n" * 250 + ".md", "caf\u00e9 \u6f22.md"],
)
def test_hostile_file_names_are_plain_notes(tmp_path: Path, name: str) -> None:
    write(tmp_path / name, "hostile but fine")
    folder = MarkdownFolder(tmp_path)
    assert rel_paths(folder) == [name]
    assert folder.search("hostile")[0].id == note_id(name)


def test_nul_in_content_is_skipped_as_binary(tmp_path: Path) -> None:
    write(tmp_path / "nul.md", "text with a \x00 NUL")
    folder = MarkdownFolder(tmp_path)
    assert folder.notes() == []
    assert folder.scan_report.skipped_binary == 1


def test_a_bom_is_not_part_of_the_content(tmp_path: Path) -> None:
    write(tmp_path / "bom.md", "\ufeff---\npinned: true\n---\nbody")
    assert note(MarkdownFolder(tmp_path), "bom.md").pinned is True


# ------------------------------------------------------------------------ cache
def test_only_changed_files_are_parsed_again(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []
    real = markdown_module.parse_note

    def counting(rel_path: str, *args: Any, **kwargs: Any) -> Any:
        parsed.append(rel_path)
        return real(rel_path, *args, **kwargs)

    monkeypatch.setattr(markdown_module, "parse_note", counting)
    folder = MarkdownFolder(vault)
    folder.notes()
    assert len(parsed) == 8  # six notes, the binary file and the non-UTF-8 one
    parsed.clear()
    write(vault / "projects" / "Plan.md", "# Plan\nShip the okapi feature instead.\n", mtime=2_000_000_000)
    assert folder.search("okapi")[0].metadata["source_path"] == "projects/Plan.md"
    assert parsed == ["projects/Plan.md"]


def test_iter_notes_streams_the_same_notes(vault: Path) -> None:
    folder, cached = MarkdownFolder(vault), MarkdownFolder(vault)
    streamed = [note for _, note in folder.iter_notes() if note is not None]
    assert sorted(streamed, key=lambda n: n.rel_path) == cached.notes()
    assert folder.scan_report == cached.scan_report


def test_iter_notes_keeps_nothing_between_notes(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []
    real = markdown_module.parse_note

    def recording(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs.get("counters", True))
        return real(*args, **kwargs)

    monkeypatch.setattr(markdown_module, "parse_note", recording)
    folder = MarkdownFolder(vault)
    for _ in folder.iter_notes():
        pass
    assert seen and not any(seen)  # no token counts: only a folder search needs them
    folder.notes()
    assert len(seen) == 2 * len([s for s in seen if not s])  # nothing was cached: notes() parses every file again


def test_file_count_counts_the_files_iter_notes_yields(vault: Path) -> None:
    folder = MarkdownFolder(vault)
    assert folder.file_count() == sum(1 for _ in folder.iter_notes())


def test_unchanged_binary_files_are_not_read_again(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = MarkdownFolder(vault)
    folder.notes()
    monkeypatch.setattr(markdown_module, "read_note", lambda *a: pytest.fail("re-read an unchanged file"))
    assert len(folder.notes()) == 6
    assert folder.scan_report.skipped_binary == 2


def test_a_deleted_note_disappears(vault: Path) -> None:
    folder = MarkdownFolder(vault)
    folder.notes()
    (vault / "projects" / "Plan.md").unlink()
    assert "projects/Plan.md" not in rel_paths(folder)
    assert folder.get(note_id("projects/Plan.md")) is None


def test_a_new_note_appears(vault: Path) -> None:
    folder = MarkdownFolder(vault)
    folder.notes()
    write(vault / "projects" / "New.md", "fresh")
    assert "projects/New.md" in rel_paths(folder)


# ------------------------------------------------------------------------- faults
def test_root_vanishing_gives_no_notes_and_an_unhealthy_probe(vault: Path) -> None:
    folder = MarkdownFolder(vault)
    assert folder.notes()
    shutil.rmtree(vault)
    assert folder.notes() == []
    assert folder.search("zebra") == []
    health = folder.health_check()
    assert health["ok"] is False
    assert health["root"] == str(vault)
    assert "cannot be reached" in health["reason"]


def test_health_check_of_a_present_folder(vault: Path) -> None:
    assert MarkdownFolder(vault).health_check() == {"ok": True, "root": str(vault), "reason": None}


def test_a_folder_vanishing_mid_scan_is_skipped_and_counted(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from elastic_memory.connectors import _walk

    real = _walk._open_dir

    def flaky(parent: Any, name: str) -> Any:
        if name == "projects":
            shutil.rmtree(vault / "projects")
        return real(parent, name)

    monkeypatch.setattr(_walk, "_open_dir", flaky)
    folder = MarkdownFolder(vault)
    assert not any(p.startswith("projects/") for p in rel_paths(folder))
    assert folder.scan_report.errors == 1


def test_a_file_vanishing_mid_scan_is_skipped_and_counted(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = markdown_module.read_note

    def flaky(ref: Any, limit: int) -> Any:
        if ref.rel_path == "projects/Plan.md":
            (vault / "projects" / "Plan.md").unlink()
        return real(ref, limit)

    monkeypatch.setattr(markdown_module, "read_note", flaky)
    folder = MarkdownFolder(vault)
    assert "projects/Plan.md" not in rel_paths(folder)
    assert folder.scan_report.errors == 1


def test_a_file_swapped_for_a_symlink_mid_scan_is_not_followed(
    vault: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = markdown_module.read_note

    def swap(ref: Any, limit: int) -> Any:
        if ref.rel_path == "projects/Plan.md":
            (vault / "projects" / "Plan.md").unlink()
            (vault / "projects" / "Plan.md").symlink_to(outside / "secret.md")
        return real(ref, limit)

    monkeypatch.setattr(markdown_module, "read_note", swap)
    folder = MarkdownFolder(vault)
    assert all(OUTSIDE_SECRET not in n.content for n in folder.notes())
    assert folder.scan_report.skipped_symlink == 3


# ------------------------------------------------------------------------ search
def paths(hits: list[Any]) -> list[str]:
    return [h.metadata["source_path"] for h in hits]


def test_search_returns_only_matching_notes(vault: Path) -> None:
    assert sorted(paths(MarkdownFolder(vault).search("zebra"))) == ["projects/Alpha/Notes.md", "projects/Plan.md"]


def test_pinned_notes_come_first(tmp_path: Path) -> None:
    write(tmp_path / "a.md", "dog dog dog dog")
    write(tmp_path / "b.md", "---\npinned: true\n---\none dog")
    assert paths(MarkdownFolder(tmp_path).search("dog")) == ["b.md", "a.md"]


def test_a_title_match_outranks_a_body_match(tmp_path: Path) -> None:
    write(tmp_path / "a.md", "about the dog")
    write(tmp_path / "b.md", "# Dog\nabout it")
    assert paths(MarkdownFolder(tmp_path).search("dog")) == ["b.md", "a.md"]


def test_more_occurrences_rank_higher(tmp_path: Path) -> None:
    write(tmp_path / "a.md", "dog")
    write(tmp_path / "b.md", "dog dog dog")
    assert paths(MarkdownFolder(tmp_path).search("dog")) == ["b.md", "a.md"]


def test_importance_then_recency_then_path_break_ties(tmp_path: Path) -> None:
    write(tmp_path / "old.md", "dog", mtime=1_600_000_000)
    write(tmp_path / "new.md", "dog", mtime=1_700_000_000)
    write(tmp_path / "z.md", "dog", mtime=1_500_000_000)
    write(tmp_path / "y.md", "dog", mtime=1_500_000_000)
    write(tmp_path / "important.md", "---\nimportance: 0.9\n---\ndog", mtime=1_000_000_000)
    expected = ["important.md", "new.md", "old.md", "y.md", "z.md"]
    assert paths(MarkdownFolder(tmp_path).search("dog")) == expected


def test_an_empty_query_lists_by_pinned_importance_recency(tmp_path: Path) -> None:
    write(tmp_path / "a.md", "---\nimportance: 0.9\n---\nx", mtime=1_000_000_000)
    write(tmp_path / "b.md", "---\npinned: true\nimportance: 0.1\n---\ny", mtime=1_000_000_000)
    write(tmp_path / "c.md", "z", mtime=1_700_000_000)
    write(tmp_path / "d.md", "w", mtime=1_600_000_000)
    assert paths(MarkdownFolder(tmp_path).search("")) == ["b.md", "a.md", "c.md", "d.md"]


def test_k_limits_the_hits(vault: Path) -> None:
    assert len(MarkdownFolder(vault).search("", k=2)) == 2


def test_hits_describe_an_imported_note(vault: Path) -> None:
    hit = MarkdownFolder(vault, agent_id="reader", scope="shared", pool="vault").search("welcome")[0]
    assert (hit.id, hit.kind, hit.source, hit.agent_id) == (note_id("Home.md"), "note", Source.IMPORTED, "reader")
    assert (hit.scope, hit.pool, hit.pinned, hit.type) == (Scope.SHARED, "vault", True, MemoryType.PROCEDURAL)
    assert hit.keyword_score == hit.score > 0
    assert hit.vector_score is None


def test_the_default_scope_is_private(vault: Path) -> None:
    hit = MarkdownFolder(vault).search("welcome")[0]
    assert (hit.scope, hit.pool) == (Scope.PRIVATE, None)


def test_filters_on_tags_and_type(vault: Path) -> None:
    folder = MarkdownFolder(vault)
    assert paths(folder.search("", filters={"tags": ["INBOX"]})) == ["Home.md"]
    assert paths(folder.search("", filters={"type": "procedural"})) == ["Home.md"]
    assert "Home.md" not in paths(folder.search("", filters={"type": ["semantic", "episodic"]}))


def test_an_unknown_filter_is_a_usage_error(vault: Path) -> None:
    with pytest.raises(UsageError, match="cannot filter on \\['session_id'\\]"):
        MarkdownFolder(vault).search("", filters={"session_id": "s1"})


def test_a_non_keyword_mode_warns_once_and_runs_as_keyword(vault: Path) -> None:
    folder = MarkdownFolder(vault)
    with pytest.warns(RecallWarning, match="keyword search only"):
        hits = folder.search("zebra", mode="semantic")
    assert paths(hits) == paths(folder.search("zebra"))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        folder.search("zebra", mode="hybrid")


def test_the_warning_names_the_mode_by_its_value(vault: Path) -> None:
    with pytest.warns(RecallWarning, match="; hybrid search ran as keyword") as caught:
        MarkdownFolder(vault).search("zebra", mode=RecallMode.HYBRID)
    assert "RecallMode" not in str(caught[0].message)


def test_an_unknown_mode_is_a_usage_error(vault: Path) -> None:
    with pytest.raises(UsageError, match="mode"):
        MarkdownFolder(vault).search("zebra", mode="fuzzy")


# --------------------------------------------------------------------- misuse
def test_write_raises_read_only(vault: Path) -> None:
    with pytest.raises(ReadOnlyError, match="elastic-memory ingest"):
        MarkdownFolder(vault).write("anything")


def test_a_missing_root_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="missing does not exist"):
        MarkdownFolder(tmp_path / "missing")


def test_a_file_root_is_a_usage_error(vault: Path) -> None:
    with pytest.raises(UsageError, match=r"Home\.md is a file, not a folder"):
        MarkdownFolder(vault / "Home.md")


def test_a_shared_scope_needs_a_pool(vault: Path) -> None:
    with pytest.raises(UsageError, match="pool"):
        MarkdownFolder(vault, scope="shared")


def test_ignore_must_be_a_list(vault: Path) -> None:
    with pytest.raises(UsageError, match="list"):
        MarkdownFolder(vault, ignore="drafts/*")


def test_a_frontmatter_key_the_library_reserves_is_ingested_renamed(tmp_path: Path) -> None:
    """``em_`` metadata keys are the library's (em_flagged): a note's own is kept as ``note_em_...``."""
    write(tmp_path / "vault" / "a.md", "---\nem_flagged: mine\nproject: kayak\n---\nA note.\n")
    with Memory.open(tmp_path / "m.db", embedder=None) as mem:
        report = ingest_folder(mem, MarkdownFolder(tmp_path / "vault"))
        record = mem.get(note_id("a.md"))
    assert report.new == 1 and record is not None
    assert record.metadata["note_em_flagged"] == "mine" and "em_flagged" not in record.metadata
