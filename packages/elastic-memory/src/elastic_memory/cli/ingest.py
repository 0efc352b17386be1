"""``elastic-memory ingest FOLDER``: keep a store in step with a folder of Markdown notes.

The sync itself is :mod:`elastic_memory.connectors.ingest`; this module is its command.
"""

# No `from __future__ import annotations`: the command is defined inside register(), and typer
# must see its annotations (cli's option types) as objects, not as names it cannot resolve.

import dataclasses
import json
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from ..connectors.ingest import IngestReport, ingest_folder
from ..connectors.markdown import MarkdownFolder
from ..errors import UsageError
from . import _common as common

__all__ = ["register"]


def _line(folder: Path, db: Path, report: IngestReport) -> str:
    """The one-line summary the command prints."""
    line = (
        f"Ingested {folder} into {db}: {report.scanned} notes scanned, {report.new} new, "
        f"{report.updated} updated, {report.unchanged} unchanged, {report.renamed} renamed, "
        f"{report.restored} restored, {report.skipped} skipped; {report.links} wikilink edges."
    )
    gone = report.archived + report.deleted
    if gone:
        shown = ", ".join(report.missing_paths)
        more = f" and {gone - len(report.missing_paths)} more" if gone > len(report.missing_paths) else ""
        verb = f"{report.archived} archived" if report.archived else f"{report.deleted} deleted"
        line += f" {verb} (no longer in the folder): {shown}{more}."
    if report.moved_from:
        line += (
            f" {report.adopted} notes adopted from {', '.join(report.moved_from)}"
            " (gone from disk: the folder moved here)."
        )
    if report.sweep_skipped:
        line += f" Nothing archived: {report.sweep_skipped}."
    if report.bad_frontmatter:
        line += f" {report.bad_frontmatter} read without their malformed frontmatter."
    return line


def register(app: typer.Typer) -> None:
    """Add the ``ingest`` command to the ``elastic-memory`` app."""

    @app.command()
    def ingest(
        folder: Annotated[
            Path, typer.Argument(metavar="FOLDER", help="A folder of Markdown notes (an Obsidian vault).")
        ],
        db: common.DbOption = common.DEFAULT_DB,
        ignore: Annotated[
            list[str] | None,
            typer.Option("--ignore", metavar="GLOB", help="Skip paths matching GLOB; repeat for more."),
        ] = None,
        max_file_bytes: Annotated[int, typer.Option(min=1, help="Skip notes larger than this.")] = 1 << 20,
        delete_missing: Annotated[
            bool,
            typer.Option(
                "--delete-missing", help="Forget the notes whose file is gone (restorable) instead of archiving them."
            ),
        ] = False,
        hard: Annotated[
            bool, typer.Option("--hard", help="With --delete-missing: delete them for good, not restorable.")
        ] = False,
        allow_empty: Annotated[
            bool,
            typer.Option(
                "--allow-empty",
                help="Sweep even when the folder holds no note at all (by default an empty folder, "
                "such as an unmounted drive, archives nothing).",
            ),
        ] = False,
        as_json: Annotated[bool, typer.Option("--json", help="The report as one JSON object.")] = False,
        embedder: common.EmbedderOption = common.EmbedderChoice.AUTO,
        agent: Annotated[
            str, typer.Option("--agent", help="The agent the notes and their wikilink graph belong to.")
        ] = "default",
    ) -> None:
        """Sync the notes of FOLDER into the store: new and changed notes written, notes gone archived."""
        progress = common.item_progress("notes")
        task = progress.add_task(f"Ingesting {folder}", total=None)
        done = [0]

        def advance(n: int) -> None:
            done[0] += n
            progress.advance(task, n)

        with common.reported(), common.interruptible("notes", lambda: done[0]):
            if hard and not delete_missing:
                msg = "--hard deletes the missing notes for good: pass it with --delete-missing"
                raise UsageError(msg)
            source = MarkdownFolder(folder, ignore=ignore or (), max_file_bytes=max_file_bytes)
            with common.open_memory(db, embedder, agent_id=agent) as mem:
                common.load_model(mem, embedder)
                with progress:
                    report = ingest_folder(
                        mem,
                        source,
                        delete_missing=delete_missing,
                        hard=hard,
                        allow_empty=allow_empty,
                        on_start=lambda total: progress.update(task, total=total),
                        on_batch=advance,
                    )
        if as_json:
            data = {"folder": source.key, "db": str(db), **dataclasses.asdict(report)}
            typer.echo(json.dumps(data, ensure_ascii=False))
            return
        common.console_out().print(Text(_line(folder, db, report)), soft_wrap=True)
