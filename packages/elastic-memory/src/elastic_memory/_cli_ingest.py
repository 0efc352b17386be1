"""``elastic-memory ingest FOLDER``: copy a folder of Markdown notes into a store, incrementally.

Each note is upserted under its folder id (:func:`elastic_memory.connectors.note_id`), so a
re-run updates instead of duplicating. The note's ``source_path``, ``source_mtime_ns`` and
``source_size`` go into its metadata: a re-run skips every note whose (mtime, size) and
content hash match what the store holds for its id. Notes deleted from the folder stay in the
store, and a note forgotten in the store comes back only when its file changes.
"""

# No `from __future__ import annotations`: the command is defined inside register(), and typer
# must see its annotations (cli's option types) as objects, not as names it cannot resolve.

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from ._validate import MAX_CONTENT_CHARS, content_hash
from .connectors.markdown import MarkdownFolder, Note
from .connectors.wikilinks import WikilinkEdgeExtractor
from .memory import Memory
from .types import MemoryRecord

__all__ = ["BATCH", "IngestReport", "ingest_folder", "note_item", "register"]

#: Notes written per ``remember_many`` call (one transaction each).
BATCH = 500


@dataclasses.dataclass(frozen=True)
class IngestReport:
    """What an ingest did: ``new + updated + unchanged`` notes were read, ``skipped`` were not."""

    scanned: int
    new: int
    updated: int
    unchanged: int
    skipped: int
    bad_frontmatter: int
    links: int = 0
    """Wikilink edges written to the store's graph (``[[Note]]`` resolved within the folder)."""


def note_item(note: Note) -> dict[str, Any]:
    """The ``remember_many`` item of a note (an empty note is remembered by its title)."""
    return {
        "id": note.id,
        "content": note.content if note.content.strip() else note.title,
        "type": note.type.value,
        "importance": note.importance,
        "pinned": note.pinned,
        "tags": list(note.tags),
        "source": "imported",
        "metadata": {
            **note.metadata,
            "source_path": note.rel_path,
            "source_mtime_ns": note.mtime_ns,
            "source_size": note.size,
        },
    }


def _unchanged(record: MemoryRecord | None, item: dict[str, Any]) -> bool:
    if record is None:
        return False
    meta, wanted = record.metadata, item["metadata"]
    return (
        meta.get("source_mtime_ns") == wanted["source_mtime_ns"]
        and meta.get("source_size") == wanted["source_size"]
        and record.content_hash == content_hash(item["content"])
    )


def ingest_folder(
    mem: Memory,
    folder: MarkdownFolder,
    *,
    on_start: Callable[[int], None] | None = None,
    on_batch: Callable[[int], None] | None = None,
) -> IngestReport:
    """Upsert the folder's new and changed notes into ``mem`` in batches of :data:`BATCH`.

    ``on_start(total)`` is called once the folder is scanned, ``on_batch(n)`` after each batch.
    """
    notes = folder.notes()
    scan = folder.scan_report
    items = [note_item(n) for n in notes]
    too_long = [i for i in items if len(i["content"]) > MAX_CONTENT_CHARS]
    items = [i for i in items if len(i["content"]) <= MAX_CONTENT_CHARS]
    if on_start is not None:
        on_start(len(items))
    new = updated = unchanged = 0
    for start in range(0, len(items), BATCH):
        batch = items[start : start + BATCH]
        held = {r.id: r for r in mem.get_many([i["id"] for i in batch])}
        changed = [i for i in batch if not _unchanged(held.get(i["id"]), i)]
        unchanged += len(batch) - len(changed)
        for mid in mem.remember_many(changed) if changed else []:
            new += mid.status == "created"
            updated += mid.status != "created"
        if on_batch is not None:
            on_batch(len(batch))
    skipped = (
        scan.skipped_large + scan.skipped_binary + scan.skipped_symlink + scan.skipped_ignored + scan.errors
    ) + len(too_long)
    edges = WikilinkEdgeExtractor(folder).reindex(mem.graph)  # link hops join graph-aware recall
    return IngestReport(scan.scanned, new, updated, unchanged, skipped, scan.bad_frontmatter, edges.edges_written)


def register(app: typer.Typer) -> None:
    """Add the ``ingest`` command to the ``elastic-memory`` app."""
    from . import cli  # noqa: PLC0415 - cli imports this module first; its helpers exist once it calls register()

    @app.command()
    def ingest(
        folder: Annotated[
            Path, typer.Argument(metavar="FOLDER", help="A folder of Markdown notes (an Obsidian vault).")
        ],
        db: cli.DbOption = cli.DEFAULT_DB,
        ignore: Annotated[
            list[str] | None,
            typer.Option("--ignore", metavar="GLOB", help="Skip paths matching GLOB; repeat for more."),
        ] = None,
        max_file_bytes: Annotated[int, typer.Option(min=1, help="Skip notes larger than this.")] = 1 << 20,
        embedder: cli.EmbedderOption = cli.EmbedderChoice.AUTO,
    ) -> None:
        """Copy the notes of FOLDER into the store; a re-run writes only new and changed notes."""
        console = cli.console_err()
        progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
            disable=not console.is_terminal,
        )
        task = progress.add_task(f"Ingesting {folder}", total=None)
        with cli.reported():
            source = MarkdownFolder(folder, ignore=ignore or (), max_file_bytes=max_file_bytes)
            with cli.open_memory(db, embedder) as mem, progress:
                report = ingest_folder(
                    mem,
                    source,
                    on_start=lambda total: progress.update(task, total=total),
                    on_batch=lambda n: progress.advance(task, n),
                )
        line = (
            f"Ingested {folder} into {db}: {report.scanned} notes scanned, {report.new} new, "
            f"{report.updated} updated, {report.unchanged} unchanged, {report.skipped} skipped; "
            f"{report.links} wikilink edges."
        )
        if report.bad_frontmatter:
            line += f" {report.bad_frontmatter} read without their malformed frontmatter."
        cli.console_out().print(Text(line), soft_wrap=True)
