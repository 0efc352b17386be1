"""``elastic-memory list|get|update|forget|restore|prune``: act on memories by id.

``list`` pages through a store in the order written (``--after`` the cursor it prints),
``get`` shows one memory, ``update`` changes its fields, ``forget`` hides (or, ``--hard``,
erases) memories and ``restore ID...`` brings hidden ones back, forgotten or archived (by
``prune`` or ``ingest``); ``restore --backup FILE`` puts a backup file in place instead.
``prune`` archives or purges low-value memories. An id that names no memory is a usage
error, checked before anything changes.
"""

# No `from __future__ import annotations`: the commands are defined inside register(), and typer
# must see their annotations (cli's option types) as objects, not as names it cannot resolve.

import datetime as dt
import enum
import json
import time
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from ..errors import UsageError
from ..facade.memory import Memory
from ..maintenance.backup import restore_backup
from ..types import MemoryRecord, MemoryType, PruneAction, PruneReport
from . import _common as common
from ._table import Column, Grid
from .backup import printable

__all__ = ["ListState", "record_state", "record_to_dict", "records_table", "register"]


class ListState(str, enum.Enum):
    """What ``list --state`` accepts (the library's ``state=``)."""

    LIVE = "live"
    ARCHIVED = "archived"
    DELETED = "deleted"
    ALL = "all"


def record_state(record: MemoryRecord, now: float) -> str:
    """``live``, ``archived``, ``deleted`` or ``expired``: where ``record`` stands."""
    if record.deleted_at is not None:
        return "deleted"
    if record.archived:
        return "archived"
    if record.expires_at is not None and record.expires_at <= now:
        return "expired"
    return "live"


def record_to_dict(record: MemoryRecord, now: float) -> dict[str, Any]:
    """One memory as plain JSON data, with its ``state``."""
    return {**record.to_dict(), "state": record_state(record, now)}


def _when(ts: float | None) -> str:
    return "" if ts is None else dt.datetime.fromtimestamp(ts, tz=dt.timezone.utc).strftime("%Y-%m-%d %H:%M")


def records_table(records: list[MemoryRecord], title: str, now: float) -> Grid:
    """Memories as a table: id, state, type, content, tags (``get`` shows every field)."""
    grid = Grid(
        [
            Column("id", style="dim"),
            Column("state"),
            Column("type", style="cyan"),
            Column("content", wrap=True),
            Column("tags", wrap=True, style="magenta", min_width=10),
        ],
        title=title,
    )
    for r in records:
        grid.add_row(r.id, record_state(r, now), r.type.value, r.content, ", ".join(r.tags))
    return grid


def _record_table(record: MemoryRecord, now: float) -> Table:
    table = Table(box=box.SIMPLE, show_header=False, title_justify="left")
    table.add_column("field", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    for key, value in record_to_dict(record, now).items():
        shown = "" if value is None else str(value)
        if key in ("created_at", "updated_at", "accessed_at", "deleted_at", "expires_at") and value is not None:
            shown = f"{_when(value)} ({value:.0f})"
        elif isinstance(value, dict | list):
            shown = json.dumps(value, ensure_ascii=False)
        table.add_row(key, Text(shown))
    return table


def _prune_dict(report: PruneReport) -> dict[str, Any]:
    return {
        "action": report.action.value,
        "dry_run": report.dry_run,
        "count": report.count,
        "below_importance": report.below_importance,
        "over_cap": report.over_cap,
        "ids": list(report.ids),
    }


def known_records(mem: Memory, ids: list[str]) -> list[MemoryRecord]:
    """The memories ``ids`` name (hidden ones too); a :class:`UsageError` naming the ids that name none.

    Checked before anything changes, so a mistyped id leaves every memory as it was.
    """
    wanted = list(dict.fromkeys(ids))
    records = mem.get_many(wanted)
    found = {r.id for r in records}
    missing = [i for i in wanted if i not in found]
    if missing:
        shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
        msg = (
            f"no memory with id {shown} (erased, or never stored); nothing was changed. "
            "`elastic-memory list --state all` shows every id"
        )
        raise UsageError(msg)
    return records


def _restored_line(records: list[MemoryRecord]) -> tuple[str, dict[str, Any]]:
    """What ``restore ID...`` says it did, in words and as JSON data."""
    forgotten = [r.id for r in records if r.deleted_at is not None]
    archived = [r.id for r in records if r.archived]
    back = {r.id for r in records if r.deleted_at is not None or r.archived}
    live = [r.id for r in records if r.id not in back]
    line = f"restored {len(back)} of {len(records)} memories ({len(forgotten)} forgotten, {len(archived)} archived)"
    if live:
        line += f"; not hidden, left as they were: {', '.join(live)}"
    data = {"restored": len(back), "undeleted": len(forgotten), "unarchived": len(archived), "not_hidden": live}
    return line, data


def _echo_json(data: Any) -> None:
    typer.echo(printable(json.dumps(data, ensure_ascii=False, sort_keys=True)))


def register(app: typer.Typer) -> None:
    """Add ``list``, ``get``, ``update``, ``forget``, ``restore`` and ``prune`` to the ``elastic-memory`` app."""
    Ids = Annotated[list[str], typer.Argument(metavar="ID...", help="Memory ids (from `list` or `recall`).")]
    JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]

    @app.command("list")
    def list_(
        db: common.DbOption = common.DEFAULT_DB,
        filter_: Annotated[
            list[str] | None,
            typer.Option(
                "--filter",
                "-f",
                metavar="KEY=VALUE",
                help="Narrow the list; repeat for more. The keys of `recall --filter`.",
            ),
        ] = None,
        state: Annotated[
            ListState,
            typer.Option(
                help="live (what recall sees), archived, deleted (soft-deleted) or all (expired ones too).",
                case_sensitive=False,
            ),
        ] = ListState.LIVE,
        agent: Annotated[
            str | None, typer.Option("--agent", help="Only this agent's memories (default: every agent's).")
        ] = None,
        limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=1000, help="Memories per page.")] = 50,
        after: Annotated[
            str | None, typer.Option(metavar="CURSOR", help="Start after this cursor (printed under the last page).")
        ] = None,
        as_json: Annotated[
            bool, typer.Option("--json", help='One JSON object: {"records": [...], "next": CURSOR or null}.')
        ] = False,
    ) -> None:
        """List memories in the order written, a page at a time, with their ids (no access is recorded)."""
        with common.reported():
            filters = common.parse_filters([*(filter_ or []), *([f"agent_id={agent}"] if agent else [])])
            with common.open_memory(db, common.EmbedderChoice.NONE, must_exist=True) as mem:
                page = mem.list(filters, state=state.value, limit=limit, after=after)
        now = time.time()
        if as_json:
            _echo_json({"records": [record_to_dict(r, now) for r in page.records], "next": page.next})
            return
        out = common.console_out()
        if not page.records:
            out.print(Text(f"No {state.value} memories" + (" after that cursor." if after else "."), style="dim"))
            if agent is not None and after is None:
                common.note_others(db, "memories", agent, None)
            return
        out.print(records_table(list(page.records), f"{state.value} memories", now))
        if page.next:
            out.print(Text(f"next page: --after {page.next}", style="bold"), soft_wrap=True)

    @app.command()
    def get(
        memory_id: Annotated[str, typer.Argument(metavar="ID", help="The memory's id.")],
        db: common.DbOption = common.DEFAULT_DB,
        as_json: JsonOption = False,
    ) -> None:
        """Show every field of memory ID, hidden or not (no access is recorded)."""
        with common.reported(), common.open_memory(db, common.EmbedderChoice.NONE, must_exist=True) as mem:
            record = mem.get(memory_id)
            if record is None:
                msg = f"no memory with id {memory_id!r}; `elastic-memory list --state all` shows every id"
                raise UsageError(msg)
        if as_json:
            _echo_json(record_to_dict(record, time.time()))
            return
        common.console_out().print(_record_table(record, time.time()))

    @app.command()
    def update(
        memory_id: Annotated[str, typer.Argument(metavar="ID", help="The memory's id.")],
        db: common.DbOption = common.DEFAULT_DB,
        content: Annotated[str | None, typer.Option(help="New text (re-embedded).")] = None,
        importance: Annotated[float | None, typer.Option(min=0.0, max=1.0, help="New importance, 0 to 1.")] = None,
        tag: Annotated[list[str] | None, typer.Option("--tag", "-t", help="Replace the tags; repeat for more.")] = None,
        metadata: Annotated[str | None, typer.Option(help="Replace the metadata with this JSON object.")] = None,
        type_: Annotated[MemoryType | None, typer.Option("--type", help="New kind of memory.")] = None,
        pinned: Annotated[
            bool | None, typer.Option("--pinned/--no-pinned", help="Pin (never pruned, listed first) or unpin.")
        ] = None,
        as_json: JsonOption = False,
        embedder: common.EmbedderOption = common.EmbedderChoice.AUTO,
    ) -> None:
        """Change fields of the live memory ID; what is not given stays as it is."""
        with common.reported():
            changes: dict[str, Any] = {
                "importance": importance,
                "tags": tag,
                "metadata": common.parse_metadata(metadata),
                "type": None if type_ is None else type_.value,
                "pinned": pinned,
            }
            changes = {k: v for k, v in changes.items() if v is not None}
            if content is not None:
                changes["content"] = content
            if not changes:
                msg = (
                    "nothing to change: pass --content, --importance, --tag, --metadata, --type or --pinned/--no-pinned"
                )
                raise UsageError(msg)
            with common.open_memory(db, embedder, must_exist=True) as mem:
                record = mem.update(memory_id, **changes)
        if as_json:
            _echo_json(record_to_dict(record, time.time()))
            return
        common.console_out().print(Text(f"updated {record.id} ({', '.join(sorted(changes))})"), soft_wrap=True)

    @app.command()
    def forget(
        memory_ids: Ids,
        db: common.DbOption = common.DEFAULT_DB,
        hard: Annotated[
            bool, typer.Option("--hard", help="Erase for good instead of hiding (cannot be undone).")
        ] = False,
        as_json: JsonOption = False,
    ) -> None:
        """Hide memories ID... from recall (undo with `restore ID...`), or erase them with --hard."""
        with common.reported(), common.open_memory(db, common.EmbedderChoice.NONE, must_exist=True) as mem:
            known_records(mem, memory_ids)
            count = mem.forget(memory_ids, hard=hard)
        if as_json:
            _echo_json({"forgotten": count, "hard": hard, "ids": memory_ids})
            return
        how = "erased" if hard else "forgot"
        undo = "" if hard or not count else "; `elastic-memory restore ID...` brings them back"
        common.console_out().print(Text(f"{how} {count} of {len(memory_ids)} memories{undo}"), soft_wrap=True)

    @app.command()
    def restore(
        memory_ids: Annotated[
            list[str] | None,
            typer.Argument(metavar="[ID...]", help="Forgotten or archived memories to bring back (not with --backup)."),
        ] = None,
        db: common.DbOption = common.DEFAULT_DB,
        backup: Annotated[
            str | None,
            typer.Option(
                "--backup",
                metavar="FILE",
                help="Instead: put this backup file (from `elastic-memory backup`) in place as the store --db.",
            ),
        ] = None,
        force: Annotated[
            bool, typer.Option("--force", help="With --backup: replace an existing store (close its users first).")
        ] = False,
        as_json: JsonOption = False,
    ) -> None:
        """Bring memories ID... back (forgotten or archived), or with --backup FILE restore a store from a backup."""
        with common.reported():
            if backup is not None:
                if memory_ids:
                    msg = "pass memory ids or --backup FILE, not both"
                    raise UsageError(msg)
                report = restore_backup(backup, db, force=force)
                data: dict[str, Any] = {"restored_from": report.source, "db": report.destination}
                data |= {"memories": report.memories, "size_bytes": report.size_bytes}
                line = f"restored {report.destination} from {report.source} ({report.memories} memories)"
            else:
                if not memory_ids:
                    msg = "pass the ids of the memories to restore, or --backup FILE to restore a store from a backup"
                    raise UsageError(msg)
                if force:
                    msg = "--force goes with --backup FILE only"
                    raise UsageError(msg)
                with common.open_memory(db, common.EmbedderChoice.NONE, must_exist=True) as mem:
                    records = known_records(mem, memory_ids)
                    mem.restore(memory_ids)
                    mem.archive(memory_ids, archived=False)
                line, data = _restored_line(records)
                data["ids"] = memory_ids
        if as_json:
            _echo_json(data)
            return
        common.console_out().print(Text(printable(line)), soft_wrap=True)

    @app.command()
    def prune(
        db: common.DbOption = common.DEFAULT_DB,
        min_importance: Annotated[
            float | None, typer.Option(min=0.0, max=1.0, help="Prune unpinned memories below this importance.")
        ] = None,
        max_entries: Annotated[
            int | None, typer.Option(min=0, help="Keep at most this many live memories (least valuable go first).")
        ] = None,
        action: Annotated[
            PruneAction, typer.Option(help="archive (hidden, reversible) or purge (erased).")
        ] = PruneAction.ARCHIVE,
        dry_run: Annotated[bool, typer.Option("--dry-run", help="Only report what would be pruned.")] = False,
        as_json: JsonOption = False,
    ) -> None:
        """Archive or purge low-value memories by an importance floor and/or an entry cap (pinned never)."""
        with common.reported():
            if min_importance is None and max_entries is None:
                msg = "pass --min-importance, --max-entries, or both"
                raise UsageError(msg)
            with common.open_memory(db, common.EmbedderChoice.NONE, must_exist=True) as mem:
                report = mem.prune(
                    min_importance=min_importance, max_entries=max_entries, action=action, dry_run=dry_run
                )
        if as_json:
            _echo_json(_prune_dict(report))
            return
        verb = {PruneAction.ARCHIVE: "archive", PruneAction.PURGE: "purge"}[report.action]
        head = f"would {verb}" if report.dry_run else f"{verb}d"
        out = common.console_out()
        out.print(
            Text(
                f"{head} {report.count} memories ({report.below_importance} below the importance floor, "
                f"{report.over_cap} over the cap)"
            ),
            soft_wrap=True,
        )
        for mid in report.ids:
            out.print(Text(mid, style="dim"))
        if report.ids and report.action is PruneAction.ARCHIVE and not report.dry_run:
            out.print(Text("`elastic-memory restore ID...` brings an archived memory back.", style="dim"))
