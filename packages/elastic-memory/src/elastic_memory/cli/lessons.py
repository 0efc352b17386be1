"""``elastic-memory lessons list|add``: what an agent learnt about how to work (``--agent``)."""

# No `from __future__ import annotations`: the commands are defined inside register(), and typer
# must see their annotations (cli's option types) as objects, not as names it cannot resolve.

import json
import time
from typing import Annotated

import typer
from rich.text import Text

from . import _common as common
from . import memories as memory_commands

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Add the ``lessons`` commands to the ``elastic-memory`` app."""
    group = typer.Typer(help="An agent's lessons: list them or add one.", no_args_is_help=True)
    app.add_typer(group, name="lessons")

    @group.command("list")
    def list_(
        db: common.DbOption = common.DEFAULT_DB,
        agent: common.AgentOption = "default",
        user: common.UserOption = None,
        as_json: Annotated[bool, typer.Option("--json", help="One JSON object per lesson, one per line.")] = False,
    ) -> None:
        """Show the agent's lessons with their ids."""
        with (
            common.reported(),
            common.open_memory(db, common.EmbedderChoice.NONE, must_exist=True, agent_id=agent, user_id=user) as mem,
        ):
            lessons = mem.lessons.list()
        now = time.time()
        if as_json:
            for record in lessons:
                typer.echo(json.dumps(memory_commands.record_to_dict(record, now), ensure_ascii=False, sort_keys=True))
            return
        if not lessons:
            common.console_out().print(Text(f"Agent {agent!r} has no lessons.", style="dim"))
            common.note_others(db, "lessons", agent, user)
            return
        common.console_out().print(memory_commands.records_table(lessons, f"lessons of {agent}", now))

    @group.command()
    def add(
        text: Annotated[str, typer.Argument(metavar="TEXT", help="The lesson, such as 'Ask before deleting files.'")],
        db: common.DbOption = common.DEFAULT_DB,
        agent: common.AgentOption = "default",
        user: common.UserOption = None,
        importance: Annotated[float, typer.Option(min=0.0, max=1.0, help="How much it matters, 0 to 1.")] = 0.7,
        as_json: Annotated[bool, typer.Option("--json", help='Print {"id": ...}.')] = False,
        embedder: common.EmbedderOption = common.EmbedderChoice.AUTO,
    ) -> None:
        """Add a lesson for the agent; prints its id."""
        with common.reported(), common.open_memory(db, embedder, agent_id=agent, user_id=user) as mem:
            lesson_id = mem.lessons.add(text, importance=importance)
        if as_json:
            typer.echo(json.dumps({"id": lesson_id}))
            return
        common.console_out().print(Text(f"added lesson {lesson_id}"), soft_wrap=True)
