"""``elastic-memory repair SOURCE DESTINATION``: copy what a damaged database still holds into a new file.

The source is only read; the report lists, per table, the rows copied and the rows lost.
"""

# No `from __future__ import annotations`: the command is defined inside register(), and typer
# must see its annotations as objects, not as names it cannot resolve.

import json
from pathlib import Path
from typing import Annotated

import typer

from ..maintenance.repair import repair
from . import _common as common

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Add the ``repair`` command to the ``elastic-memory`` app."""

    @app.command("repair")
    def repair_(
        source: Annotated[Path, typer.Argument(help="The damaged database (only read).")],
        destination: Annotated[Path, typer.Argument(help="The new database to write (must not exist).")],
        as_json: Annotated[bool, typer.Option("--json", help="The report as one JSON object.")] = False,
    ) -> None:
        """Copy everything still readable of SOURCE into the new file DESTINATION and report what was lost."""
        with common.reported():
            report = repair(source, destination)
        if as_json:
            tables = {t.table: {"copied": t.read, "lost": t.lost, "error": t.error} for t in report.tables}
            data = {"source": report.source, "destination": report.destination, "lost": report.lost}
            typer.echo(json.dumps({**data, "tables": tables}, ensure_ascii=False))
            return
        typer.echo(str(report))
