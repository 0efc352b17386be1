"""Fixtures of the command-line tests: an isolated working folder and the store's path in it."""

from __future__ import annotations

from pathlib import Path

import pytest

from elastic_memory.cli import _common as cli_common


@pytest.fixture
def isolated_cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads the caller's $ELASTIC_MEMORY_DB or writes ./memory.db outside tmp_path."""
    monkeypatch.delenv(cli_common.DB_ENV, raising=False)
    monkeypatch.setenv("COLUMNS", "200")  # tables keep each cell on one line
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """The store's file, in the test's own folder."""
    return tmp_path / "memory.db"
