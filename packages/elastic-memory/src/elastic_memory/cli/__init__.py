"""The ``elastic-memory`` command line: try the library, inspect a store, move memories in and out.

Every command works on one SQLite file: ``--db PATH``, else ``$ELASTIC_MEMORY_DB``, else
``./memory.db``. ``--embedder auto`` (the default) uses the built-in offline MiniLM model;
``--embedder none`` loads no model and keeps recall keyword-only.

Expected failures print one red line that says what to do, and exit with 2 when the input
was wrong (:class:`~elastic_memory.UsageError`) or 1 when something failed::

    $ elastic-memory demo
    $ elastic-memory add "The user's dog is called Biscuit." --tag pets --type semantic
    $ elastic-memory recall "what pet do I have" -k 3 --filter tags=pets --min-relevance 0.1
    $ elastic-memory list --filter tags=pets --state all
    $ elastic-memory forget 3f2a... && elastic-memory restore 3f2a...
    $ elastic-memory facts set user.dog_name Biscuit
    $ elastic-memory graph path user "Acme Robotics"
    $ elastic-memory backup memory.db backup.db
    $ elastic-memory export memories.jsonl --vectors
    $ elastic-memory quarantine list
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from typing import Annotated

import typer

from .._version import __version__
from . import _common, backup, check, demo, facts, graph, ingest, lessons, mcp, memories, quarantine, repair, store, ui

__all__ = ["app", "main"]

app = typer.Typer(
    name="elastic-memory",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    pretty_exceptions_show_locals=False,  # locals would print memory contents into bug reports
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"elastic-memory {__version__}")
        raise typer.Exit


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Long-term memory for AI agents in one SQLite file: keyword, semantic and hybrid recall.

    Start with [bold]elastic-memory demo[/bold]. Stores default to $ELASTIC_MEMORY_DB, else ./memory.db.
    """
    _tolerant_output()


def _tolerant_output() -> None:
    r"""Let stdout and stderr print any path: a file name that is not UTF-8 shows as ``\udc80``, never a crash."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if callable(reconfigure):
            with contextlib.suppress(ValueError, OSError):  # a stream that cannot change keeps its ways
                reconfigure(errors="backslashreplace")


# The order of ``--help``.
for group in (store, demo, ingest, memories, facts, lessons, graph, quarantine, backup, repair, check, mcp, ui):
    group.register(app)


def main() -> None:
    """Run the command line; the ``elastic-memory`` console script calls this."""
    warnings.showwarning = _common.show_warning
    app(prog_name="elastic-memory")


if __name__ == "__main__":  # pragma: no cover
    main()
