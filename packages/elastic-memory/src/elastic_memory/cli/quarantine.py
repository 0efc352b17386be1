"""``elastic-memory quarantine list|release|discard``: review what the guards refused to store.

``list`` shows each item's id, reason, kind, source turn and text; ``release ID`` writes the
fact or memory as it would have been (a reviewer's decision: the guards are not asked again);
``discard ID`` deletes it for good.
"""

# No `from __future__ import annotations`: the commands are defined inside register(), and typer
# must see their annotations (cli's option types) as objects, not as names it cannot resolve.

import datetime as dt
import json
from typing import Annotated

import typer
from rich.text import Text

from ..types import QuarantinedItem
from . import _common as common
from ._table import Column, Grid

__all__ = ["item_to_dict", "register"]


def item_to_dict(item: QuarantinedItem) -> dict[str, object]:
    """One quarantined item as plain JSON data."""
    return {
        "id": item.id,
        "reason": item.reason,
        "what": item.what,
        "text": item.text,
        "origin": item.origin,
        "session_id": item.session_id,
        "turn_seq": item.turn_seq,
        "created_at": item.created_at,
        "releasable": item.releasable,
    }


def _table(items: list[QuarantinedItem]) -> Grid:
    grid = Grid(
        [
            Column("id", justify="right"),
            Column("reason", wrap=True, min_width=12),
            Column("what"),
            Column("session"),
            Column("turn seq", justify="right"),
            Column("when"),
            Column("releasable"),
            Column("text", wrap=True),
        ],
        title="Quarantine (most recent first)",
    )
    for item in items:
        when = dt.datetime.fromtimestamp(item.created_at, tz=dt.timezone.utc).strftime("%Y-%m-%d %H:%M")
        turn = "" if item.turn_seq is None else str(item.turn_seq)
        releasable = "yes" if item.releasable else "no"
        grid.add_row(str(item.id), item.reason, item.what, item.session_id or "", turn, when, releasable, item.text)
    return grid


def register(app: typer.Typer) -> None:
    """Add the ``quarantine`` commands to the ``elastic-memory`` app."""
    group = typer.Typer(help="Review what the guards refused to store: list, release or discard items.")
    app.add_typer(group, name="quarantine")
    ItemId = Annotated[int, typer.Argument(metavar="ID", min=1, help="The item's id (from `quarantine list`).")]

    @group.command("list")
    def list_(
        db: common.DbOption = common.DEFAULT_DB,
        agent: common.AgentOption = "default",
        user: common.UserOption = None,
        limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=1000, help="Items to show.")] = 100,
        as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
        embedder: common.EmbedderOption = common.EmbedderChoice.NONE,
    ) -> None:
        """Show the quarantined items, most recent first, with their reason and source turn."""
        with common.reported(), common.open_memory(db, embedder, must_exist=True, agent_id=agent, user_id=user) as mem:
            items = mem.quarantine(limit)
        if as_json:
            for item in items:
                typer.echo(json.dumps(item_to_dict(item), ensure_ascii=False))
            return
        if not items:
            common.console_out().print(Text(f"The quarantine of agent {agent!r} is empty."))
            common.note_others(db, "quarantined items", agent, user)
            return
        common.console_out().print(_table(items))

    @group.command()
    def release(
        item_id: ItemId,
        db: common.DbOption = common.DEFAULT_DB,
        agent: common.AgentOption = "default",
        user: common.UserOption = None,
        embedder: common.EmbedderOption = common.EmbedderChoice.AUTO,
    ) -> None:
        """Write item ID as the fact or memory it would have been, and take it out of the quarantine."""
        with common.reported(), common.open_memory(db, embedder, must_exist=True, agent_id=agent, user_id=user) as mem:
            written = mem.release_quarantined(item_id)
        common.console_out().print(Text(f"Released item {item_id}: wrote {written}."), soft_wrap=True)

    @group.command()
    def discard(
        item_id: ItemId,
        db: common.DbOption = common.DEFAULT_DB,
        agent: common.AgentOption = "default",
        user: common.UserOption = None,
        embedder: common.EmbedderOption = common.EmbedderChoice.NONE,
    ) -> None:
        """Delete item ID from the quarantine for good."""
        with common.reported(), common.open_memory(db, embedder, must_exist=True, agent_id=agent, user_id=user) as mem:
            mem.discard_quarantined(item_id)
        common.console_out().print(Text(f"Discarded item {item_id}."), soft_wrap=True)
