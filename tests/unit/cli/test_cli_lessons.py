"""``elastic-memory lessons list|add``, through CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elastic_memory import Memory

from ._cli import ok

pytestmark = pytest.mark.usefixtures("isolated_cli")


def test_add_prints_id_and_list_shows_it(db: Path) -> None:
    lesson_id = json.loads(
        ok("lessons", "add", "Ask before deleting files.", "--db", db, "--embedder", "none", "--json").stdout
    )["id"]
    out = ok("lessons", "list", "--db", db).stdout
    assert lesson_id in out
    assert "Ask before deleting files." in out


def test_list_json_has_one_lesson_per_line(db: Path) -> None:
    ok("lessons", "add", "Ask first.", "--db", db, "--embedder", "none")
    ok("lessons", "add", "Cite sources.", "--db", db, "--embedder", "none")
    rows = [json.loads(line) for line in ok("lessons", "list", "--db", db, "--json").stdout.splitlines()]
    assert sorted(r["content"] for r in rows) == ["Ask first.", "Cite sources."]


def test_lessons_are_per_agent(db: Path) -> None:
    ok("lessons", "add", "Ask first.", "--agent", "ana", "--db", db, "--embedder", "none")
    assert "has no lessons" in ok("lessons", "list", "--db", db).stdout
    with Memory.open(db, embedder=None, agent_id="ana") as mem:
        assert [r.content for r in mem.lessons.list()] == ["Ask first."]
