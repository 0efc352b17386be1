"""``elastic-memory facts get|set|history|forget|list``: an agent's versioned key-value facts.

``set`` supersedes the current version of a key (user-confirmed), ``history`` shows every
version with when it held, ``forget`` tombstones the key. Each command takes ``--agent``.
"""

# No `from __future__ import annotations`: the commands are defined inside register(), and typer
# must see their annotations (cli's option types) as objects, not as names it cannot resolve.

import dataclasses
import datetime as dt
import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from ..errors import UsageError
from ..types import Fact
from . import _common as common
from ._table import Column, Grid

__all__ = ["fact_to_dict", "register"]


def fact_to_dict(fact: Fact) -> dict[str, Any]:
    """One fact version as plain JSON data."""
    data = dataclasses.asdict(fact)
    data["source"] = fact.source.value
    return data


def _when(ts: float | None) -> str:
    return "" if ts is None else dt.datetime.fromtimestamp(ts, tz=dt.timezone.utc).strftime("%Y-%m-%d %H:%M")


def _status(fact: Fact) -> str:
    if fact.forgotten:
        return "forgotten"
    return "current" if fact.invalidated_at is None else "superseded"


def _table(facts: list[Fact], title: str) -> Grid:
    grid = Grid(
        [
            Column("id", justify="right"),
            Column("key"),
            Column("value", wrap=True, min_width=16),
            Column("status"),
            Column("valid from"),
            Column("valid to"),
        ],
        title=title,
    )
    for f in facts:
        grid.add_row(str(f.id), f.key, f.value, _status(f), _when(f.valid_from), _when(f.valid_to))
    return grid


def _as_of(value: str | None) -> float | str | None:
    """``--as-of``: seconds since the epoch, or an ISO date the library parses."""
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return value


def register(app: typer.Typer) -> None:
    """Add the ``facts`` commands to the ``elastic-memory`` app."""
    group = typer.Typer(help="An agent's versioned facts: get, set, history, forget, list.", no_args_is_help=True)
    app.add_typer(group, name="facts")
    Key = Annotated[str, typer.Argument(metavar="KEY", help="A dotted key, such as user.dog_name.")]
    JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]

    def show(facts: list[Fact], title: str, as_json: bool) -> None:
        if as_json:
            for fact in facts:
                typer.echo(json.dumps(fact_to_dict(fact), ensure_ascii=False, sort_keys=True))
            return
        if not facts:
            common.console_out().print(Text("No facts.", style="dim"))
            return
        common.console_out().print(_table(facts, title))

    def show_or_hint(facts: list[Fact], title: str, as_json: bool, where: tuple[Path, str, str | None]) -> None:
        """:func:`show`, then, when there is nothing, the other agents that hold facts."""
        show(facts, title, as_json)
        if not facts and not as_json:
            common.note_others(where[0], "facts", where[1], where[2])

    @group.command()
    def get(
        key: Key,
        db: common.DbOption = common.DEFAULT_DB,
        agent: common.AgentOption = "default",
        user: common.UserOption = None,
        as_of: Annotated[
            str | None, typer.Option(metavar="TIME", help="The version that held then: epoch seconds or ISO date.")
        ] = None,
        as_json: JsonOption = False,
    ) -> None:
        """Show the current value of KEY (or the one that held at --as-of)."""
        with common.reported():
            when = _as_of(as_of)
            with common.open_memory(
                db, common.EmbedderChoice.NONE, must_exist=True, agent_id=agent, user_id=user
            ) as mem:
                fact = mem.facts.get(key, as_of=when)
            if fact is None:
                msg = f"agent {agent!r} has no fact {key!r}" + (" at that time" if as_of else "")
                raise UsageError(common.with_others(msg, db, "facts", agent, user))
        show([fact], f"fact {key}", as_json)

    @group.command("set")
    def set_(
        key: Key,
        value: Annotated[str, typer.Argument(metavar="VALUE", help="The value (text).")],
        db: common.DbOption = common.DEFAULT_DB,
        agent: common.AgentOption = "default",
        user: common.UserOption = None,
        category: Annotated[
            str | None, typer.Option(help="profile (always shown to the model) or note (shown when relevant).")
        ] = None,
        as_json: JsonOption = False,
    ) -> None:
        """Set KEY to VALUE (user-confirmed); the previous version stays in its history."""
        with common.reported(), common.open_memory(db, common.EmbedderChoice.NONE, agent_id=agent, user_id=user) as mem:
            fact = mem.facts.set(key, value, category=category)
        if as_json:
            show([fact], "", as_json)
            return
        common.console_out().print(
            Text(f"set {fact.key} = {fact.value} (fact {fact.id}, {fact.category})"), soft_wrap=True
        )

    @group.command()
    def history(
        key: Key,
        db: common.DbOption = common.DEFAULT_DB,
        agent: common.AgentOption = "default",
        user: common.UserOption = None,
        as_json: JsonOption = False,
    ) -> None:
        """Show every version of KEY, oldest first."""
        with (
            common.reported(),
            common.open_memory(db, common.EmbedderChoice.NONE, must_exist=True, agent_id=agent, user_id=user) as mem,
        ):
            facts = mem.facts.history(key)
        show_or_hint(facts, f"history of {key}", as_json, (db, agent, user))

    @group.command()
    def forget(
        key: Key,
        db: common.DbOption = common.DEFAULT_DB,
        agent: common.AgentOption = "default",
        user: common.UserOption = None,
        as_json: JsonOption = False,
    ) -> None:
        """Tombstone KEY so it is no longer shown (its history stays)."""
        with (
            common.reported(),
            common.open_memory(db, common.EmbedderChoice.NONE, must_exist=True, agent_id=agent, user_id=user) as mem,
        ):
            done = mem.facts.forget(key)
            if not done and not mem.facts.history(key):
                msg = f"agent {agent!r} has no fact {key!r}; `elastic-memory facts list` shows the keys"
                raise UsageError(common.with_others(msg, db, "facts", agent, user))
        if as_json:
            typer.echo(json.dumps({"key": key, "forgotten": done}))
            return
        common.console_out().print(Text(f"forgot {key}" if done else f"{key} was already forgotten; nothing to do"))

    @group.command("list")
    def list_(
        db: common.DbOption = common.DEFAULT_DB,
        agent: common.AgentOption = "default",
        user: common.UserOption = None,
        category: Annotated[str | None, typer.Option(help="Only profile or only note facts.")] = None,
        as_json: JsonOption = False,
    ) -> None:
        """Show the current facts, most important first."""
        with (
            common.reported(),
            common.open_memory(db, common.EmbedderChoice.NONE, must_exist=True, agent_id=agent, user_id=user) as mem,
        ):
            facts = mem.facts.list(category=category)
        show_or_hint(facts, f"facts of {agent}", as_json, (db, agent, user))
