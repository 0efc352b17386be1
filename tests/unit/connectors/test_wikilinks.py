"""Wikilinks: parsing every link form, resolving within the folder, and rewriting the edge set."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from elastic_memory import Memory, UsageError
from elastic_memory.connectors import EdgeIndexReport, Link, MarkdownFolder, WikilinkEdgeExtractor, note_id, parse_links
from elastic_memory.connectors.ingest import ingest_folder
from elastic_memory.types import Edge


class Sink:
    """A sync edge sink that keeps the last set per source."""

    def __init__(self) -> None:
        self.sets: dict[str, list[Edge]] = {}
        self.calls = 0

    def replace_source(self, source: str, edges: Sequence[Edge]) -> int:
        self.calls += 1
        self.sets[source] = list(edges)
        return len(edges)


class AsyncSink(Sink):
    async def replace_source(self, source: str, edges: Sequence[Edge]) -> int:  # type: ignore[override]
        return Sink.replace_source(self, source, edges)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


LINKS = (
    "# Links\n"
    "[[Plan]] [[projects/Plan]] [[Plan|the plan]] [[plan#Goals]] [[Plan#^block1]] ![[Plan]]\n"
    "[[Notes]] [[Missing]] [[Links]] [[#Local heading]] [[projects/Alpha/Notes.md]] [[archive/notes]]\n"
    "[[image.png]] `[[InCode]]`\n"
    "```\n[[InFence]]\n```\n"
)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write(root / "Links.md", LINKS)
    write(root / "projects" / "Plan.md", "# Plan\n[[Links]] and [[Plan]]\n")
    write(root / "projects" / "Alpha" / "Notes.md", "alpha")
    write(root / "archive" / "Notes.md", "archive")
    write(root / "InCode.md", "only linked from code")
    write(root / "InFence.md", "only linked from a fence")
    return root


# ------------------------------------------------------------------------ parsing
@pytest.mark.parametrize(
    ("text", "link"),
    [
        ("[[Note]]", Link("Note")),
        ("[[folder/Note]]", Link("folder/Note")),
        ("[[Note|alias]]", Link("Note", alias="alias")),
        ("[[Note#Heading]]", Link("Note", heading="Heading")),
        ("[[Note#^block-1]]", Link("Note", block="block-1")),
        ("![[embed.md]]", Link("embed.md", embed=True)),
        ("[[Note#Heading|alias]]", Link("Note", heading="Heading", alias="alias")),
        ("| [[Note\\|alias]] |", Link("Note", alias="alias")),
        ("[[#Heading]]", Link("", heading="Heading")),
    ],
)
def test_every_link_form_parses(text: str, link: Link) -> None:
    assert parse_links(text) == [link]


def test_links_in_code_are_ignored() -> None:
    assert parse_links("`[[a]]` ``[[b]]``\n```md\n[[c]]\n```\n~~~\n[[d]]\n~~~\n[[e]]") == [Link("e")]


def test_links_keep_their_order() -> None:
    assert [link.target for link in parse_links("[[b]] then [[a]] then [[b]]")] == ["b", "a", "b"]


def test_brackets_that_are_not_links_are_ignored() -> None:
    assert parse_links("[[]] [single] [[a\nb]] [[ok]]") == [Link("ok")]


# --------------------------------------------------------------------- resolution
def edges_from(vault: Path) -> set[tuple[str, str, str]]:
    edges, _ = WikilinkEdgeExtractor(MarkdownFolder(vault)).scan()
    return {(e.src_id, e.dst_id, e.relation) for e in edges}


def test_links_resolve_by_name_and_by_path(vault: Path) -> None:
    links, plan = note_id("Links.md"), note_id("projects/Plan.md")
    assert edges_from(vault) == {
        (links, plan, "references"),
        (links, plan, "embeds"),
        (links, note_id("projects/Alpha/Notes.md"), "references"),
        (links, note_id("archive/Notes.md"), "references"),
        (plan, links, "references"),
    }


def test_the_report_counts_every_outcome(vault: Path) -> None:
    _, report = WikilinkEdgeExtractor(MarkdownFolder(vault)).scan()
    assert report == EdgeIndexReport(
        notes_scanned=6, links_found=15, resolved=9, dangling=2, ambiguous=1, self_links=3, edges_written=0
    )


def test_edges_are_deduplicated_and_owned_by_the_folders_wikilinks(vault: Path) -> None:
    edges, _ = WikilinkEdgeExtractor(MarkdownFolder(vault)).scan()
    assert len(edges) == len({(e.src_id, e.dst_id, e.relation) for e in edges})
    assert {(e.source, e.confidence) for e in edges} == {(f"wikilinks:{vault.resolve()}", 1.0)}


def test_a_folder_path_too_long_for_a_source_is_hashed(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(MarkdownFolder, "key", property(lambda self: "/" + "x" * 2_000))
    source = WikilinkEdgeExtractor(MarkdownFolder(vault)).source
    assert source.startswith("wikilinks:sha256:")
    assert len(source) == len("wikilinks:sha256:") + 64


def test_a_bare_name_matching_two_notes_is_skipped_as_ambiguous(tmp_path: Path) -> None:
    write(tmp_path / "a" / "N.md", "one")
    write(tmp_path / "b" / "n.md", "two")
    write(tmp_path / "Only.md", "[[N]]")
    edges, report = WikilinkEdgeExtractor(MarkdownFolder(tmp_path)).scan()
    assert (edges, report.ambiguous, report.resolved) == ([], 1, 0)


def test_links_inside_code_make_no_edges(vault: Path) -> None:
    targets = {dst for _, dst, _ in edges_from(vault)}
    assert note_id("InCode.md") not in targets
    assert note_id("InFence.md") not in targets


# ------------------------------------------------------------------------ reindex
def test_reindex_rewrites_the_folders_wikilinks_source(vault: Path) -> None:
    sink = Sink()
    report = WikilinkEdgeExtractor(MarkdownFolder(vault)).reindex(sink)
    assert list(sink.sets) == [f"wikilinks:{vault.resolve()}"]
    assert report.edges_written == len(sink.sets[f"wikilinks:{vault.resolve()}"]) == 5


def test_reindexing_one_folder_keeps_another_folders_edges(tmp_path: Path) -> None:
    write(tmp_path / "one" / "A.md", "[[B]]")
    write(tmp_path / "one" / "B.md", "b")
    write(tmp_path / "two" / "C.md", "[[D]]")
    write(tmp_path / "two" / "D.md", "d")
    with Memory.open(":memory:", embedder=None) as mem:
        WikilinkEdgeExtractor(MarkdownFolder(tmp_path / "one")).reindex(mem.graph)
        WikilinkEdgeExtractor(MarkdownFolder(tmp_path / "two")).reindex(mem.graph)
        write(tmp_path / "two" / "C.md", "no links now")
        WikilinkEdgeExtractor(MarkdownFolder(tmp_path / "two")).reindex(mem.graph)
        assert mem.graph.edges(note_id("C.md")) == []
        assert mem.graph.neighbors(note_id("A.md")) == [note_id("B.md")]


def test_reindex_converges_when_links_change(vault: Path) -> None:
    sink = Sink()
    extractor = WikilinkEdgeExtractor(MarkdownFolder(vault))
    extractor.reindex(sink)
    write(vault / "Links.md", "now only [[archive/Notes]]")
    report = extractor.reindex(sink)
    links, plan = note_id("Links.md"), note_id("projects/Plan.md")
    source = f"wikilinks:{vault.resolve()}"
    assert report.edges_written == 2
    assert sink.sets[source] == [
        Edge(links, note_id("archive/Notes.md"), "references", source),
        Edge(plan, links, "references", source),
    ]


async def test_areindex_awaits_an_async_sink(vault: Path) -> None:
    sink = AsyncSink()
    report = await WikilinkEdgeExtractor(MarkdownFolder(vault)).areindex(sink)
    assert report.edges_written == 5


async def test_areindex_accepts_a_sync_sink(vault: Path) -> None:
    report = await WikilinkEdgeExtractor(MarkdownFolder(vault)).areindex(Sink())
    assert report.edges_written == 5


def test_reindex_on_an_async_sink_says_to_use_areindex(vault: Path) -> None:
    with pytest.raises(UsageError, match="areindex"):
        WikilinkEdgeExtractor(MarkdownFolder(vault)).reindex(AsyncSink())


def test_the_extractor_needs_a_folder(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="MarkdownFolder"):
        WikilinkEdgeExtractor(str(tmp_path))  # type: ignore[arg-type]


def test_reindex_into_a_real_store_and_recall_follows_the_links(tmp_path: Path) -> None:
    """The extractor writes into ``mem.graph``; a linked note is nudged into a recall it shares no word with."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Sourdough.md").write_text("# Sourdough\nFeed the starter daily. See [[Flour notes]].\n")
    (vault / "Flour notes.md").write_text("# Flour\nUse strong bread flour with 13 % protein.\n")
    folder = MarkdownFolder(vault)
    with Memory.open(tmp_path / "m.db", embedder=None) as mem:
        report = ingest_folder(mem, folder)
        ids = {Path(n.rel_path).stem: n.id for n in folder.notes()}
        assert report.links == 1
        assert mem.graph.neighbors(ids["Sourdough"]) == [ids["Flour notes"]]
        assert WikilinkEdgeExtractor(folder).reindex(mem.graph).edges_written == 1
        hits = [h.id for h in mem.recall("starter feeding", mode="keyword")]
    assert hits == [ids["Sourdough"], ids["Flour notes"]]
