"""What the CliRunner tests of the ``elastic-memory`` command share: one runner, ``invoke``."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner, Result

from elastic_memory import cli

runner = CliRunner()


def invoke(*args: str | Path) -> Result:
    """Run ``elastic-memory ARGS...`` in-process; the result holds the exit code and the output."""
    return runner.invoke(cli.app, [str(a) for a in args])


def ok(*args: str | Path) -> Result:
    """``invoke`` that must succeed: the output is in the failure message."""
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    return result
