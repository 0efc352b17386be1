"""``elastic-memory add|recall|stats|export|import``: write, search and move a store's memories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from .._validate import build_row
from ..errors import UsageError
from ..types import MemoryType, RecallMode
from ._common import (
    DEFAULT_DB,
    MIN_RELEVANCE,
    AgentOption,
    DbOption,
    EmbedderChoice,
    EmbedderOption,
    UserOption,
    above_floor,
    console_out,
    degraded_note,
    floor_line,
    hit_to_dict,
    hits_table,
    interruptible,
    item_progress,
    json_line,
    load_model,
    note,
    note_others,
    open_memory,
    parse_filters,
    parse_metadata,
    public_stats,
    reported,
    spinner,
    stats_table,
)

__all__ = ["register"]


def add(
    text: Annotated[str, typer.Argument(metavar="TEXT", help="What to remember.", show_default=False)],
    db: DbOption = DEFAULT_DB,
    type_: Annotated[MemoryType, typer.Option("--type", help="What kind of memory it is.")] = MemoryType.SEMANTIC,
    importance: Annotated[float, typer.Option(min=0.0, max=1.0, help="How much it matters, from 0 to 1.")] = 0.5,
    tag: Annotated[list[str] | None, typer.Option("--tag", "-t", help="A tag; repeat for more.")] = None,
    session: Annotated[str | None, typer.Option(help="The conversation or session it came from.")] = None,
    metadata: Annotated[
        str | None, typer.Option(help='A JSON object of your own fields, e.g. \'{"project": "halvorsen"}\'.')
    ] = None,
    embedder: EmbedderOption = EmbedderChoice.AUTO,
    agent: AgentOption = "default",
    user: UserOption = None,
) -> None:
    """Remember TEXT; prints whether it was created (or already stored) and its id."""
    with reported():
        fields = parse_metadata(metadata)
        # checked before the store is opened, so bad input never creates an empty database file
        build_row(
            text,
            now=0.0,
            default_agent=agent,
            type=type_.value,
            importance=importance,
            tags=tag,
            session_id=session,
            metadata=fields,
            user_id=user,
        )
        with open_memory(db, embedder, agent_id=agent, user_id=user) as mem:
            mid = mem.remember(
                text, type=type_.value, importance=importance, tags=tag, session_id=session, metadata=fields
            )
    style = {"created": "green", "updated": "cyan"}.get(mid.status, "yellow")
    line = Text.assemble((mid.status, f"bold {style}"), " ", str(mid))
    if mid.status == "duplicate":
        line.append(" (this content was already stored; nothing new was written)", style="dim")
    console_out().print(line, soft_wrap=True)


def recall(
    query: Annotated[
        str, typer.Argument(metavar="QUERY", help="What to look for. An empty string lists memories by importance.")
    ],
    db: DbOption = DEFAULT_DB,
    k: Annotated[int, typer.Option("-k", "--top-k", min=1, max=1000, help="How many memories to return.")] = 5,
    mode: Annotated[RecallMode, typer.Option(help="keyword (BM25), semantic (vectors) or both fused.")] = (
        RecallMode.HYBRID
    ),
    filter_: Annotated[
        list[str] | None,
        typer.Option(
            "--filter",
            "-f",
            metavar="KEY=VALUE",
            help=(
                "Narrow the search; repeat for more. Keys: type, tags, tags_all, session_id, source, scope, "
                "min_importance, min_confidence, since, until, pinned, metadata.KEY (JSON or text)."
            ),
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object per hit, one per line.")] = False,
    embedder: EmbedderOption = EmbedderChoice.AUTO,
    agent: Annotated[
        str | None,
        typer.Option("--agent", help="Only this agent's memories (default: every agent's; with --user: 'default')."),
    ] = None,
    user: Annotated[str | None, typer.Option("--user", help="Only this user's memories (of --agent).")] = None,
    min_relevance: Annotated[
        float,
        typer.Option(
            "--min-relevance",
            "--min-score",
            min=0.0,
            max=1.0,
            help="Hide hits less relevant than this (0 to 1, one scale in every mode; 0 shows every hit).",
        ),
    ] = MIN_RELEVANCE,
) -> None:
    """Find the memories that best match QUERY (a pure read: no access is recorded)."""
    owner = agent or "default"
    with reported():
        # a user's handle reads only that user's memories; an agent's own handle reads every agent's unless filtered
        by_agent = [f"agent_id={agent}"] if agent is not None and user is None else []
        filters = parse_filters([*(filter_ or []), *by_agent])
        with open_memory(db, embedder, must_exist=True, agent_id=owner, user_id=user, reads=True) as mem:
            explanation = mem.explain(query, k=k, mode=mode.value, filters=filters)
    degraded_note(explanation, embedder)
    hits, hidden = above_floor(explanation.hits, min_relevance)
    if as_json:
        for rank, hit in enumerate(hits, start=1):
            typer.echo(json_line(hit_to_dict(hit, rank)))
        if hidden:
            note(f"note: {floor_line(min_relevance, hidden)}")
        return
    out = console_out()
    if not hits:
        out.print(Text(f"No memory matches {query!r} ({mode.value}).", style="dim"), soft_wrap=True)
        if hidden:
            out.print(Text(floor_line(min_relevance, hidden), style="dim"))
        elif agent is not None or user is not None:
            note_others(db, "memories", owner, user)
        return
    title = f"{mode.value} recall of {query!r}" if query.strip() else "memories by importance"
    out.print(hits_table(hits, title))
    if query.strip() and min_relevance > 0:
        out.print(Text(floor_line(min_relevance, hidden), style="dim"))


def stats(
    db: DbOption = DEFAULT_DB,
    as_json: Annotated[bool, typer.Option("--json", help="Print the statistics as one JSON object.")] = False,
    embedder: EmbedderOption = EmbedderChoice.AUTO,
) -> None:
    """Show counts, the vector index, the embedding model and the file size of a store."""
    with reported(), open_memory(db, embedder, must_exist=True, reads=True) as mem:
        data = public_stats(mem.stats())
    if as_json:
        typer.echo(json.dumps(data, ensure_ascii=False, sort_keys=True, indent=2))
        return
    console_out().print(stats_table(data, brief=False))


def export(
    path: Annotated[Path, typer.Argument(metavar="PATH", help="The JSONL file to write (replaced if it exists).")],
    db: DbOption = DEFAULT_DB,
    vectors: Annotated[bool, typer.Option(help="Include each memory's vector (no re-embedding on import).")] = False,
    embedder: EmbedderOption = EmbedderChoice.AUTO,
) -> None:
    """Write the whole store to PATH as JSON lines: memories (hidden ones too), turns, facts with history, the graph."""
    with (
        reported(),
        open_memory(db, embedder, must_exist=True, reads=True) as mem,
        spinner(f"Exporting {db} to {path}"),
    ):
        count = mem.export_jsonl(path, vectors=vectors)
    extra = " with their vectors" if vectors else ""
    console_out().print(Text(f"Exported {count} memories{extra} to {path}."), soft_wrap=True)


def import_(
    path: Annotated[Path, typer.Argument(metavar="PATH", help="A JSONL export (from `elastic-memory export`).")],
    db: DbOption = DEFAULT_DB,
    embedder: EmbedderOption = EmbedderChoice.AUTO,
) -> None:
    """Read an export into the store: ids, times and counters kept, existing rows updated (a re-run is safe)."""
    progress = item_progress("records")
    task = progress.add_task(f"Importing {path}", total=None)
    done = [0]

    def advance(written: int, total: int) -> None:
        done[0] = written
        progress.update(task, completed=written, total=total)

    with reported(), interruptible("records", lambda: done[0]):
        if not path.is_file():
            msg = f"{path} is not a file; pass the path of a JSONL export made by `elastic-memory export`"
            raise UsageError(msg)
        with open_memory(db, embedder) as mem:
            load_model(mem, embedder)
            with progress:
                report = mem.import_jsonl(path, progress=advance)
    others = ", ".join(f"{n} {kind}" for kind, n in report.records.items() if kind != "memory")
    console_out().print(
        Text(
            f"Imported {report.total} memories into {db}: {report.created} created, "
            f"{report.updated} updated, {report.duplicates} duplicates"
            + (f"; and {others} records." if others else ".")
        ),
        soft_wrap=True,
    )


# ------------------------------------------------------------------------ demo


def register(app: typer.Typer) -> None:
    """Add the store commands to the ``elastic-memory`` app."""
    app.command()(add)
    app.command()(recall)
    app.command()(stats)
    app.command("export")(export)
    app.command("import")(import_)
