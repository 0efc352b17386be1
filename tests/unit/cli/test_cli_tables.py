"""CLI tables at any width: ids, keys, times, content and tags are never clipped or dropped."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner, Result

from elastic_memory import Memory, cli
from elastic_memory.cli import _common as cli_common
from elastic_memory.cli._table import Column, Grid

runner = CliRunner()

DOG = "My dog is called Biscuit — a three-year-old beagle who loves the beach at Matosinhos."
VET = "Biscuit's vet is Dr. Okonkwo at the Estrela clinic, open weekdays from nine to six."


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(cli_common.DB_ENV, raising=False)
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "memory.db"


def invoke(*args: str | Path, columns: int | None = 80) -> Result:
    env = None if columns is None else {"COLUMNS": str(columns)}
    result = runner.invoke(cli.app, [str(a) for a in args], env=env)
    assert result.exit_code == 0, result.output
    return result


def flat(text: str) -> str:
    """``text`` with every run of whitespace as one space: wrapped lines read as one."""
    return re.sub(r"\s+", " ", text)


def widest(text: str) -> int:
    return max(len(line.rstrip()) for line in text.splitlines())


def seed(db: Path) -> list[str]:
    with Memory.open(db, embedder=None) as mem:
        return [str(mem.remember(DOG, tags=["pets", "dog"])), str(mem.remember(VET, tags=["pets", "health"]))]


@pytest.mark.parametrize("columns", [80, None], ids=["COLUMNS=80", "piped"])
def test_recall_shows_whole_ids_content_and_tags_at_80_columns(db: Path, columns: int | None) -> None:
    ids = seed(db)
    out = invoke("recall", "Biscuit", "--db", db, "--embedder", "none", columns=columns).stdout
    assert widest(out) <= 80
    assert all(i in out for i in ids)
    assert DOG in flat(out) and VET in flat(out)
    assert "dog, pets" in out and "health, pets" in out


def test_list_at_80_columns_keeps_each_content_together(db: Path) -> None:
    ids = seed(db)
    out = invoke("list", "--db", db).stdout
    assert widest(out) <= 80
    assert all(i in out for i in ids)
    assert DOG in flat(out) and VET in flat(out)
    assert len(out.splitlines()) < 20


def test_an_em_dash_survives_a_narrow_table(db: Path) -> None:
    seed(db)
    out = invoke("list", "--db", db, columns=60).stdout
    assert "Biscuit — a" in flat(out)


def test_facts_history_at_80_columns_keeps_keys_and_times_whole(db: Path) -> None:
    invoke("facts", "set", "user.dog_name", "Biscuit", "--db", db)
    invoke("facts", "set", "user.dog_name", "Biscuit the beagle", "--db", db)
    out = invoke("facts", "history", "user.dog_name", "--db", db).stdout
    assert widest(out) <= 80
    assert out.count("user.dog_name") == 3  # the title and both versions
    assert len(re.findall(r"\d{4}-\d\d-\d\d \d\d:\d\d", out)) == 3  # two from, one to
    assert "Biscuit the beagle" in out


def render(grid: Grid, width: int) -> str:
    console = Console(width=width, color_system=None, force_terminal=False)
    with console.capture() as captured:
        console.print(grid)
    return captured.get()


def words(text: str) -> Counter[str]:
    return Counter(text.split())


@pytest.mark.parametrize("width", [50, 60, 80, 100, 140, 220])
def test_a_grid_keeps_every_word_of_every_cell_at_any_width(width: int) -> None:
    grid = Grid([Column("id"), Column("when"), Column("content", wrap=True), Column("tags", wrap=True, min_width=8)])
    rows = [
        ("3f2a9c1e-5b7d-4e0f-9a8b-1c2d3e4f5a6b", "2026-12-07 00:15", DOG, "pets, dog"),
        ("k2", "2025-01-01 09:00", VET, ""),
    ]
    for row in rows:
        grid.add_row(*row)
    out = render(grid, width)
    assert widest(out) <= width
    assert words(out) >= words(" ".join(" ".join(row) for row in rows))


def test_a_grid_folds_a_value_wider_than_the_line_without_losing_it() -> None:
    url = "https://example.com/" + "a" * 100
    grid = Grid([Column("id"), Column("content", wrap=True)])
    grid.add_row("m1", url)
    out = render(grid, 50)
    assert widest(out) <= 50
    assert url in "".join(line.strip().removeprefix("content").strip() for line in out.splitlines())


def test_a_grid_is_a_table_when_it_fits() -> None:
    grid = Grid([Column("id"), Column("content", wrap=True)])
    grid.add_row("m1", DOG)
    lines = render(grid, 200).strip().splitlines()
    assert lines[0].split() == ["id", "content"]
    assert lines[-1].split() == ["m1", *DOG.split()]
