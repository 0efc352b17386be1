"""The installed command line end to end: one scripted session of every new command, each in its own process.

Each process costs about 2 s (interpreter and imports), so the store is seeded in-process
and each command's output checks the one before it, instead of a test per command.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from elastic_memory import Memory


def run(*args: str | Path, db: Path, cwd: Path) -> str:
    env = {**os.environ, "ELASTIC_MEMORY_DB": str(db), "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-m", "elastic_memory.cli", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def run_json(*args: str | Path, db: Path, cwd: Path) -> Any:
    return json.loads(run(*args, "--json", db=db, cwd=cwd))


def test_scripted_session_of_every_command(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    with Memory.open(db, embedder=None) as mem:
        keep, low = mem.remember_many(
            [{"content": "The dog is Biscuit.", "importance": 0.9}, {"content": "Old note.", "importance": 0.1}]
        )
        mem.record_turn("I work at Acme Robotics. My sister Ana lives in Lisbon.", "Nice!")
        mem.drain()
        mem.facts.set("user.dog_name", "Biscuit")

    def cli(*args: str | Path) -> str:
        return run(*args, db=db, cwd=tmp_path)

    def cli_json(*args: str | Path) -> Any:
        return run_json(*args, db=db, cwd=tmp_path)

    # memories: list -> get -> update -> forget -> restore -> prune
    page = cli_json("list", "--limit", "1")
    assert [r["id"] for r in page["records"]] == [keep]
    assert keep not in cli("list", "--after", page["next"])
    assert cli_json("get", keep)["content"] == "The dog is Biscuit."
    assert cli_json("update", keep, "--tag", "pets", "--embedder", "none")["tags"] == ["pets"]
    assert cli_json("forget", keep)["forgotten"] == 1
    assert cli_json("restore", keep)["restored"] == 1
    assert cli_json("prune", "--min-importance", "0.5")["ids"] == [low]

    # facts (the first version was set above): set -> get -> history -> forget -> list
    assert cli_json("facts", "set", "user.dog_name", "Rex")["value"] == "Rex"
    assert json.loads(cli("facts", "get", "user.dog_name", "--json"))["value"] == "Rex"
    assert len(cli("facts", "history", "user.dog_name", "--json").splitlines()) == 2
    assert json.loads(cli("facts", "forget", "user.dog_name", "--json"))["forgotten"] is True
    assert "user.dog_name" not in cli("facts", "list", "--json")

    # lessons: add -> list
    lesson = cli_json("lessons", "add", "Ask before deleting files.", "--embedder", "none")["id"]
    assert lesson in cli("lessons", "list")

    # graph: entities -> neighbors -> path
    assert "Acme Robotics" in cli("graph", "entities")
    assert "works_at" in cli("graph", "neighbors", "user")
    assert cli("graph", "path", "user", "Lisbon").strip() == "2 hop(s): user → Acme Robotics → Lisbon"

    # backup -> restore --backup -> the restored store answers recall with ids
    assert cli_json("backup", db, tmp_path / "copy.db")["memories"] >= 2
    cli("restore", "--backup", tmp_path / "copy.db", "--db", tmp_path / "restored.db")
    assert keep in run("recall", "Biscuit", "--embedder", "none", db=tmp_path / "restored.db", cwd=tmp_path)
