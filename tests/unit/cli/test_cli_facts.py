"""``elastic-memory facts get|set|history|forget|list``, through CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elastic_memory import Memory

from ._cli import invoke, ok

pytestmark = pytest.mark.usefixtures("isolated_cli")


def test_set_then_get_prints_the_value(db: Path) -> None:
    ok("facts", "set", "user.dog_name", "Biscuit", "--db", db)
    assert json.loads(ok("facts", "get", "user.dog_name", "--db", db, "--json").stdout)["value"] == "Biscuit"


def test_set_category_is_kept(db: Path) -> None:
    ok("facts", "set", "user.diet", "vegetarian", "--category", "profile", "--db", db)
    with Memory.open(db, embedder=None) as mem:
        fact = mem.facts.get("user.diet")
    assert fact is not None
    assert fact.category == "profile"


def test_get_as_of_returns_the_version_then(db: Path) -> None:
    with Memory.open(db, embedder=None) as mem:
        mem.facts.set("user.city", "Porto", valid_from=1_000.0)
        mem.facts.set("user.city", "Lisbon", valid_from=2_000.0)
    out = ok("facts", "get", "user.city", "--as-of", "1500", "--db", db, "--json").stdout
    assert json.loads(out)["value"] == "Porto"


def test_get_missing_key_is_usage_error(db: Path) -> None:
    ok("facts", "set", "user.a", "1", "--db", db)
    result = invoke("facts", "get", "user.b", "--db", db)
    assert result.exit_code == 2
    assert "no fact 'user.b'" in result.stderr


def test_history_lists_every_version_with_ids(db: Path) -> None:
    ok("facts", "set", "user.dog_name", "Biscuit", "--db", db)
    ok("facts", "set", "user.dog_name", "Rex", "--db", db)
    rows = [
        json.loads(line) for line in ok("facts", "history", "user.dog_name", "--db", db, "--json").stdout.splitlines()
    ]
    assert [(r["value"], r["invalidated_at"] is None) for r in rows] == [("Biscuit", False), ("Rex", True)]
    assert all(isinstance(r["id"], int) for r in rows)


def test_forget_hides_the_key(db: Path) -> None:
    ok("facts", "set", "user.dog_name", "Biscuit", "--db", db)
    assert "forgot user.dog_name" in ok("facts", "forget", "user.dog_name", "--db", db).stdout
    assert ok("facts", "list", "--db", db, "--json").stdout == ""


def test_forget_of_a_key_never_set_exits_2(db: Path) -> None:
    ok("facts", "set", "user.dog_name", "Biscuit", "--db", db)
    result = invoke("facts", "forget", "user.cat_name", "--db", db)
    assert result.exit_code == 2
    assert "has no fact 'user.cat_name'" in result.stderr


def test_forget_twice_is_not_an_error(db: Path) -> None:
    ok("facts", "set", "user.dog_name", "Biscuit", "--db", db)
    ok("facts", "forget", "user.dog_name", "--db", db)
    assert "already forgotten" in ok("facts", "forget", "user.dog_name", "--db", db).stdout


def test_list_table_shows_ids_of_current_facts(db: Path) -> None:
    ok("facts", "set", "user.dog_name", "Biscuit", "--db", db)
    out = ok("facts", "list", "--db", db).stdout
    assert "user.dog_name" in out
    assert "Biscuit" in out


def test_agent_option_keeps_facts_apart(db: Path) -> None:
    ok("facts", "set", "user.dog_name", "Biscuit", "--agent", "ana", "--db", db)
    assert ok("facts", "list", "--db", db, "--json").stdout == ""
    assert "Biscuit" in ok("facts", "list", "--agent", "ana", "--db", db, "--json").stdout
