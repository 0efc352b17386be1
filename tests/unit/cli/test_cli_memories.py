"""``elastic-memory list|get|update|forget|restore|prune`` and recall's id column, through CliRunner."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from elastic_memory import Memory

from ._cli import invoke, ok

pytestmark = pytest.mark.usefixtures("isolated_cli")


def seed(db: Path, *texts: str, agent_id: str = "default", **fields: Any) -> list[str]:
    with Memory.open(db, embedder=None, agent_id=agent_id) as mem:
        return [str(mem.remember(text, **fields)) for text in texts]


def listed(db: Path, *extra: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(ok("list", "--db", db, "--json", *extra).stdout)
    return data


def test_list_table_shows_every_id(db: Path) -> None:
    ids = seed(db, "The dog is Biscuit.", "The cat is Tom.")
    out = ok("list", "--db", db).stdout
    assert all(i in out for i in ids)


def test_list_prints_next_cursor_and_after_reads_on(db: Path) -> None:
    ids = seed(db, "one", "two", "three")
    first = ok("list", "--db", db, "--limit", "2").stdout
    cursor = first.split("--after ")[1].split()[0]
    rest = listed(db, "--limit", "2", "--after", cursor)
    assert [r["id"] for r in rest["records"]] == ids[2:]
    assert rest["next"] is None


def test_list_state_deleted_shows_only_forgotten(db: Path) -> None:
    ids = seed(db, "keep", "drop")
    with Memory.open(db, embedder=None) as mem:
        mem.forget(ids[1])
    records = listed(db, "--state", "deleted")["records"]
    assert [(r["id"], r["state"]) for r in records] == [(ids[1], "deleted")]


def test_list_filter_and_agent_narrow_the_list(db: Path) -> None:
    seed(db, "mine, tagged", tags=["pets"])
    seed(db, "theirs, tagged", agent_id="other", tags=["pets"])
    records = listed(db, "--filter", "tags=pets", "--agent", "other")["records"]
    assert [r["content"] for r in records] == ["theirs, tagged"]


def test_list_bad_cursor_is_usage_error(db: Path) -> None:
    seed(db, "one")
    result = invoke("list", "--db", db, "--after", "nonsense")
    assert result.exit_code == 2
    assert "cursor" in result.stderr


def test_get_prints_every_field_as_json(db: Path) -> None:
    (mid,) = seed(db, "The dog is Biscuit.", tags=["pets"])
    data = json.loads(ok("get", mid, "--db", db, "--json").stdout)
    assert (data["id"], data["content"], data["tags"], data["state"]) == (mid, "The dog is Biscuit.", ["pets"], "live")


def test_get_unknown_id_is_usage_error(db: Path) -> None:
    seed(db, "one")
    result = invoke("get", "no-such-id", "--db", db)
    assert result.exit_code == 2
    assert "no memory with id" in result.stderr


def test_update_changes_only_the_given_fields(db: Path) -> None:
    (mid,) = seed(db, "The dog is Biscuit.", tags=["pets"], importance=0.4)
    ok("update", mid, "--db", db, "--importance", "0.9", "--pinned", "--metadata", '{"n": 1}', "--embedder", "none")
    with Memory.open(db, embedder=None) as mem:
        record = mem.get(mid)
    assert record is not None
    assert (record.importance, record.pinned, record.metadata, record.tags) == (0.9, True, {"n": 1}, ("pets",))


def test_update_without_changes_is_usage_error(db: Path) -> None:
    (mid,) = seed(db, "one")
    result = invoke("update", mid, "--db", db, "--embedder", "none")
    assert result.exit_code == 2
    assert "nothing to change" in result.stderr


def test_forget_hides_and_restore_brings_back(db: Path) -> None:
    ids = seed(db, "one", "two")
    assert "forgot 2 of 2" in ok("forget", *ids, "--db", db).stdout
    assert listed(db)["records"] == []
    assert json.loads(ok("restore", *ids, "--db", db, "--json").stdout)["restored"] == 2
    assert [r["id"] for r in listed(db)["records"]] == ids


def test_forget_hard_erases(db: Path) -> None:
    (mid,) = seed(db, "one")
    ok("forget", mid, "--hard", "--db", db)
    assert listed(db, "--state", "all")["records"] == []


def test_restore_brings_back_a_memory_prune_archived(db: Path) -> None:
    (low,) = seed(db, "low", importance=0.1)
    ok("prune", "--db", db, "--min-importance", "0.5")
    data = json.loads(ok("restore", low, "--db", db, "--json").stdout)
    assert (data["restored"], data["unarchived"]) == (1, 1)
    assert [r["id"] for r in listed(db)["records"]] == [low]


def test_restore_names_the_memories_that_were_not_hidden(db: Path) -> None:
    live, gone = seed(db, "one", "two")
    ok("forget", gone, "--db", db)
    out = ok("restore", live, gone, "--db", db).stdout
    assert "restored 1 of 2 memories" in out
    assert f"not hidden, left as they were: {live}" in out


@pytest.mark.parametrize("command", ["forget", "restore"])
def test_an_unknown_id_exits_2_naming_it(db: Path, command: str) -> None:
    seed(db, "one")
    result = invoke(command, "no-such-id", "--db", db)
    assert result.exit_code == 2
    assert "no memory with id no-such-id" in result.stderr


def test_forget_with_an_unknown_id_changes_nothing(db: Path) -> None:
    (mid,) = seed(db, "one")
    assert invoke("forget", mid, "typo-id", "--db", db).exit_code == 2
    assert [r["id"] for r in listed(db)["records"]] == [mid]


def test_restore_without_ids_or_backup_is_usage_error(db: Path) -> None:
    seed(db, "one")
    result = invoke("restore", "--db", db)
    assert result.exit_code == 2
    assert "--backup" in result.stderr


def test_prune_dry_run_reports_without_changing(db: Path) -> None:
    (low,) = seed(db, "low", importance=0.1)
    seed(db, "high", importance=0.9)
    data = json.loads(ok("prune", "--db", db, "--min-importance", "0.5", "--dry-run", "--json").stdout)
    assert (data["ids"], data["dry_run"]) == ([low], True)
    assert len(listed(db)["records"]) == 2


def test_prune_archives_below_the_floor(db: Path) -> None:
    (low,) = seed(db, "low", importance=0.1)
    seed(db, "high", importance=0.9)
    ok("prune", "--db", db, "--min-importance", "0.5")
    assert [r["id"] for r in listed(db, "--state", "archived")["records"]] == [low]


def test_prune_without_a_policy_is_usage_error(db: Path) -> None:
    seed(db, "one")
    result = invoke("prune", "--db", db)
    assert result.exit_code == 2
    assert "--min-importance" in result.stderr


def test_recall_table_shows_ids(db: Path) -> None:
    (mid,) = seed(db, "The dog is Biscuit.")
    assert mid in ok("recall", "dog", "--db", db, "--embedder", "none").stdout
