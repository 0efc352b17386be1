"""``elastic-memory graph entities|neighbors|path``: explore an agent's knowledge graph (``--agent``).

``entities`` lists the most mentioned entities with their ids, then the notes an ingested
folder's ``[[wikilinks]]`` join; ``neighbors NAME`` the entities within ``--hops`` relations of
NAME (or, for a note, the notes within ``--hops`` links of it); ``path A B`` the shortest chain
of relations between two entities.
"""

# No `from __future__ import annotations`: the commands are defined inside register(), and typer
# must see their annotations (cli's option types) as objects, not as names it cannot resolve.

import dataclasses
import json
from typing import Annotated

import typer
from rich.text import Text

from ..facade.graph import Node, Reached
from ..types import Entity
from . import _common as common
from ._table import Column, Grid

__all__ = ["register"]


def _entities_table(entities: list[Entity], title: str) -> Grid:
    grid = Grid(
        [
            Column("id", justify="right"),
            Column("name", wrap=True, min_width=12),
            Column("type"),
            Column("mentions", justify="right"),
            Column("aliases", wrap=True, min_width=12),
        ],
        title=title,
    )
    for e in entities:
        grid.add_row(str(e.id), e.name, e.type, str(e.mention_count), ", ".join(e.aliases))
    return grid


def _nodes_table(nodes: list[Node], title: str) -> Grid:
    grid = Grid(
        [Column("name", wrap=True, min_width=12), Column("links", justify="right"), Column("memory id")],
        title=title,
    )
    for n in nodes:
        grid.add_row(n.name, str(n.links), n.id)
    return grid


def _reached_table(reached: list[Reached], title: str) -> Grid:
    grid = Grid(
        [
            Column("name", wrap=True, min_width=12),
            Column("type"),
            Column("hops", justify="right"),
            Column("relation"),
            Column("path", wrap=True),
        ],
        title=title,
    )
    for r in reached:
        grid.add_row(r.name, r.type, str(r.hops), r.relation, " → ".join(r.path))
    return grid


def register(app: typer.Typer) -> None:
    """Add the ``graph`` commands to the ``elastic-memory`` app."""
    group = typer.Typer(help="An agent's knowledge graph: entities, neighbors, paths.", no_args_is_help=True)
    app.add_typer(group, name="graph")
    JsonOption = Annotated[bool, typer.Option("--json", help="One JSON object per row, one per line.")]

    def echo_rows(rows: list[Entity] | list[Reached]) -> None:
        for row in rows:
            typer.echo(json.dumps(dataclasses.asdict(row), ensure_ascii=False, sort_keys=True))

    @group.command()
    def entities(
        db: common.DbOption = common.DEFAULT_DB,
        agent: common.AgentOption = "default",
        user: common.UserOption = None,
        limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=1000, help="Entities to show.")] = 50,
        as_json: JsonOption = False,
    ) -> None:
        """Show the most mentioned entities first, with their ids, then the notes wikilinks join."""
        with (
            common.reported(),
            common.open_memory(db, common.EmbedderChoice.NONE, must_exist=True, agent_id=agent, user_id=user) as mem,
        ):
            found = mem.graph.entities(limit)
            linked = mem.graph.nodes(limit)
        if as_json:
            echo_rows(found)
            for node in linked:  # a "node" key: a linked memory, not an entity
                typer.echo(json.dumps({"node": node.id, "name": node.name, "links": node.links}, ensure_ascii=False))
            return
        if not found and not linked:
            common.console_out().print(Text(f"Agent {agent!r} has no entities yet.", style="dim"))
            common.note_others(db, "entities", agent, user)
        if found:
            common.console_out().print(_entities_table(found, f"entities of {agent}"))
        if linked:
            common.console_out().print(_nodes_table(linked, f"linked notes of {agent}"))

    @group.command()
    def neighbors(
        name: Annotated[
            str, typer.Argument(metavar="NAME", help="An entity's name or alias, or a linked note's name, path or id.")
        ],
        db: common.DbOption = common.DEFAULT_DB,
        agent: common.AgentOption = "default",
        user: common.UserOption = None,
        hops: Annotated[int, typer.Option(min=1, max=3, help="How many relations away.")] = 1,
        relation: Annotated[str | None, typer.Option(help="Follow only relations of this type.")] = None,
        limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=1000, help="Entities to show.")] = 100,
        as_json: JsonOption = False,
    ) -> None:
        """Show the entities within --hops relations of NAME (either direction), nearest first.

        When NAME is a note an ingest linked (its name, path or memory id), the notes within --hops links.
        """
        with (
            common.reported(),
            common.open_memory(db, common.EmbedderChoice.NONE, must_exist=True, agent_id=agent, user_id=user) as mem,
        ):
            found = mem.graph.traverse(name, hops=hops, relation=relation, limit=limit)
        if as_json:
            echo_rows(found)
        elif not found:
            common.console_out().print(Text(f"Nothing is related to {name!r} (agent {agent!r}).", style="dim"))
            common.note_others(db, "entities", agent, user)
        else:
            common.console_out().print(_reached_table(found, f"within {hops} hop(s) of {name}"))

    @group.command()
    def path(
        source: Annotated[str, typer.Argument(metavar="A", help="The entity to start from.")],
        target: Annotated[str, typer.Argument(metavar="B", help="The entity to reach.")],
        db: common.DbOption = common.DEFAULT_DB,
        agent: common.AgentOption = "default",
        user: common.UserOption = None,
        max_hops: Annotated[int, typer.Option(min=1, max=6, help="The longest chain to look for.")] = 4,
        as_json: Annotated[
            bool, typer.Option("--json", help="One JSON object, or null when there is no path.")
        ] = False,
    ) -> None:
        """Show the shortest chain of relations between entities A and B."""
        with (
            common.reported(),
            common.open_memory(db, common.EmbedderChoice.NONE, must_exist=True, agent_id=agent, user_id=user) as mem,
        ):
            found = mem.graph.path(source, target, max_hops=max_hops)
        if as_json:
            typer.echo(json.dumps(None if found is None else dataclasses.asdict(found), ensure_ascii=False))
        elif found is None:
            common.console_out().print(
                Text(f"No path from {source!r} to {target!r} within {max_hops} hops.", style="dim"), soft_wrap=True
            )
            common.note_others(db, "entities", agent, user)
        else:
            common.console_out().print(Text(f"{found.hops} hop(s): " + " → ".join(found.path)), soft_wrap=True)
