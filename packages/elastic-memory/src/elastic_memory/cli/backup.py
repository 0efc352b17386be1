"""``elastic-memory backup SRC DST``: copy a store while it is in use.

Restoring is ``elastic-memory restore --backup FILE --db PATH`` (beside ``restore ID...``,
which brings back soft-deleted memories).
"""

# No `from __future__ import annotations`: the command is defined inside register(), and typer
# must see its annotations as objects, not as names it cannot resolve. SRC and DST are str: a
# Path would fold a postgresql:// URL into postgresql:/ before the library could name pg_dump.

import json
from typing import Annotated

import typer
from rich.text import Text

from ..maintenance.backup import backup
from . import _common as common

__all__ = ["printable", "register"]


def printable(text: str) -> str:
    r"""``text`` as stdout can encode it: lone surrogates (a non-UTF-8 file name) become ``\udc80``.

    In JSON text that escape reads back as the same character, so whole JSON lines may pass through.
    """
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def register(app: typer.Typer) -> None:
    """Add the ``backup`` command to the ``elastic-memory`` app."""

    @app.command("backup")
    def backup_(
        source: Annotated[str, typer.Argument(metavar="SRC", help="The store to copy (it may be in use).")],
        destination: Annotated[str, typer.Argument(metavar="DST", help="The backup file to write.")],
        force: Annotated[bool, typer.Option("--force", help="Replace DST if it exists.")] = False,
        as_json: Annotated[bool, typer.Option("--json", help="The result as one JSON object.")] = False,
    ) -> None:
        """Copy the store SRC into DST, consistent even while other processes write to SRC.

        Restore it with `elastic-memory restore --backup DST --db PATH`.
        """
        with common.reported():
            report = backup(source, destination, force=force)
        if as_json:
            data = {"source": report.source, "destination": report.destination, "memories": report.memories}
            typer.echo(json.dumps({**data, "size_bytes": report.size_bytes, "schema_version": report.schema_version}))
            return
        common.console_out().print(
            Text(
                printable(
                    f"Backed up {report.source} to {report.destination}: {report.memories} memories, "
                    f"{common.human_bytes(report.size_bytes)}."
                )
            ),
            soft_wrap=True,
        )
