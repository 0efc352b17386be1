"""``elastic-memory check --db PATH [--full]``: look for damaged pages in a store's file.

The file is only read (it may be in use by other processes): exit 0 when no damage was
found, 1 when some was (with what to do: ``elastic-memory repair``), 2 for a wrong path.
"""

# No `from __future__ import annotations`: the command is defined inside register(), and typer
# must see its annotations as objects, not as names it cannot resolve.

import json
import shlex
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from ..storage.sqlite.driver import driver
from ..storage.sqlite.integrity import check_file
from . import _common as common

__all__ = ["register"]

#: Problems printed (the JSON output has every one SQLite listed).
_SHOWN = 10


def _repaired_name(db: Path) -> Path:
    return db.with_name(f"{db.stem}-repaired{db.suffix or '.db'}")


def register(app: typer.Typer) -> None:
    """Add the ``check`` command to the ``elastic-memory`` app."""

    @app.command("check")
    def check_(
        db: common.DbOption = common.DEFAULT_DB,
        full: Annotated[
            bool,
            typer.Option("--full", help="PRAGMA integrity_check: also compare every index with its table (slower)."),
        ] = False,
        as_json: Annotated[bool, typer.Option("--json", help="The result as one JSON object.")] = False,
    ) -> None:
        """Look for damage in the store --db (only read; other processes may use it meanwhile).

        Exits 1 when damage is found: copy what is readable with `elastic-memory repair`.
        """
        with common.reported():
            report = check_file(db, drv=driver(), full=full)
        what = "integrity check" if full else "quick check"
        if as_json:
            data = {"db": str(db), "ok": report.ok, "problems": list(report.problems), "full": report.full}
            typer.echo(json.dumps({**data, "seconds": round(report.seconds, 3)}, ensure_ascii=False))
        elif report.ok:
            common.console_out().print(Text(f"{db}: no damage found ({what}, {report.seconds:.2f} s)."), soft_wrap=True)
        else:
            out = common.console_out()
            out.print(Text(f"{db} is damaged ({what} found {len(report.problems)} problems):"), soft_wrap=True)
            for problem in report.problems[:_SHOWN]:
                out.print(Text(f"  {problem}"), soft_wrap=True)
            if len(report.problems) > _SHOWN:
                out.print(Text(f"  ... and {len(report.problems) - _SHOWN} more (--json lists them)"))
            repair = f"elastic-memory repair {shlex.quote(str(db))} {shlex.quote(str(_repaired_name(db)))}"
            out.print(
                Text(
                    "Stop writing to it. Copy what is readable into a new file with "
                    f"`{repair}`, then use that file (or restore a backup)."
                ),
                soft_wrap=True,
            )
        if not report.ok:
            raise typer.Exit(1)
