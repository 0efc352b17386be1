"""Versioned facts: supersession, validity time, tombstones, trust rules, validation."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from elastic_memory import LoopConfig, Memory, UsageError


@pytest.fixture
def mem(db_path: Path) -> Iterator[Memory]:
    with Memory.open(db_path, embedder=None, loop=LoopConfig(tier="standard", background=False)) as m:
        yield m


def test_setting_the_same_value_again_adds_no_version(mem: Memory) -> None:
    mem.facts.set("user.name", "Alice")
    mem.facts.set("user.name", "Alice")
    assert len(mem.facts.history("user.name")) == 1


def test_an_update_closes_the_validity_of_the_old_version(mem: Memory) -> None:
    mem.facts.set("user.location", "Austin", valid_from=100.0)
    mem.facts.set("user.location", "Lisbon", valid_from=200.0)
    old, new = mem.facts.history("user.location")
    assert (old.valid_from, old.valid_to) == (100.0, 200.0)
    assert new.valid_to is None and new.invalidated_at is None
    assert old.invalidated_at is not None


def test_as_of_before_any_version_is_none(mem: Memory) -> None:
    mem.facts.set("user.location", "Austin", valid_from=100.0)
    assert mem.facts.get("user.location", as_of=50.0) is None


def test_explicit_facts_are_user_confirmed_with_full_confidence(mem: Memory) -> None:
    fact = mem.facts.set("user.dog_name", "Biscuit")
    assert (fact.source.value, fact.origin, fact.confidence) == ("user_confirmed", "explicit", 1.0)


def test_profile_keys_default_to_the_profile_category(mem: Memory) -> None:
    assert mem.facts.set("user.name", "Alice").category == "profile"
    assert mem.facts.set("user.dog_name", "Biscuit").category == "note"


def test_a_forgotten_key_can_be_set_again(mem: Memory) -> None:
    mem.facts.set("user.location", "Austin")
    mem.facts.forget("user.location")
    mem.facts.set("user.location", "Lisbon")
    assert mem.facts.get("user.location").value == "Lisbon"  # type: ignore[union-attr]
    assert [f.forgotten for f in mem.facts.history("user.location")] == [False, True, False]


def test_forgetting_an_unknown_key_reports_false(mem: Memory) -> None:
    assert mem.facts.forget("user.unknown") is False


def test_forgotten_facts_leave_the_plan(mem: Memory) -> None:
    mem.facts.set("user.location", "Lisbon")
    mem.facts.forget("user.location")
    assert "Lisbon" not in mem.build_context("where do I live?").render()


def test_list_shows_current_facts_only(mem: Memory) -> None:
    mem.facts.set("user.name", "Alice")
    mem.facts.set("user.name", "Alicia")
    mem.facts.set("user.dog_name", "Biscuit")
    assert sorted(f.value for f in mem.facts.list()) == ["Alicia", "Biscuit"]
    assert [f.value for f in mem.facts.list(category="profile")] == ["Alicia"]


@pytest.mark.parametrize("key", ["User.Name", "user..name", "", "user name", "x" * 101, 5, None])
def test_a_malformed_key_is_refused(mem: Memory, key: object) -> None:
    with pytest.raises(UsageError, match="dotted lowercase"):
        mem.facts.set(key, "v")  # type: ignore[arg-type]


@pytest.mark.parametrize("key", ["system.prompt", "host.api_key", "elastic_memory.tier", "em.x"])
def test_reserved_keys_are_refused(mem: Memory, key: str) -> None:
    with pytest.raises(UsageError, match="reserved"):
        mem.facts.set(key, "v")


@pytest.mark.parametrize("value", ["", "   ", None, [1], float("nan"), "x" * 2_001])
def test_a_bad_value_is_refused_and_nothing_is_written(mem: Memory, value: object) -> None:
    with pytest.raises(UsageError):
        mem.facts.set("user.name", value)
    assert mem.facts.history("user.name") == []


def test_numbers_are_stored_as_text(mem: Memory) -> None:
    assert mem.facts.set("user.age", 42).value == "42"


def test_a_bad_category_is_refused(mem: Memory) -> None:
    with pytest.raises(UsageError, match="category"):
        mem.facts.set("user.name", "Alice", category="secret")


def test_a_later_user_statement_supersedes_an_earlier_one(mem: Memory) -> None:
    mem.record_turn("I live in Austin.", "Nice city.", session_id="s1")
    mem.record_turn("I moved to Lisbon last month.", "Exciting!", session_id="s1")
    assert [f.value for f in mem.facts.history("user.location")] == ["Austin", "Lisbon"]


def test_facts_persist_across_processes(db_path: Path) -> None:
    with Memory.open(db_path, embedder=None) as first:
        first.facts.set("user.dog_name", "Biscuit")
    with Memory.open(db_path, embedder=None) as second:
        assert second.facts.get("user.dog_name").value == "Biscuit"  # type: ignore[union-attr]


def test_facts_belong_to_their_agent(db_path: Path) -> None:
    with Memory.open(db_path, embedder=None, agent_id="a") as a:
        a.facts.set("user.name", "Alice")
    with Memory.open(db_path, embedder=None, agent_id="b") as b:
        assert b.facts.get("user.name") is None


def test_a_fact_the_agent_sets_is_capped_below_a_user_confirmed_one(mem: Memory) -> None:
    fact = mem.facts.set("user.location", "Lisbon", source="agent")
    assert (fact.source.value, fact.origin, fact.confidence) == ("agent", "agent", 0.8)


def test_an_agent_fact_never_replaces_a_user_confirmed_one(mem: Memory) -> None:
    mem.facts.set("user.location", "Lisbon")
    kept = mem.facts.set("user.location", "attacker-chosen", source="agent")
    assert (kept.value, kept.source.value) == ("Lisbon", "user_confirmed")


def test_the_users_own_statement_replaces_an_agent_fact(mem: Memory) -> None:
    """A fact an agent (or an injected tool output steering it) set is not final: the user's words win."""
    mem.facts.set("user.location", "attacker-chosen", source="agent")
    mem.record_turn("I live in Berlin.", "Noted.")
    mem.drain()
    fact = mem.facts.get("user.location")
    assert fact is not None and fact.value == "Berlin"


def test_an_unknown_fact_source_is_a_usage_error(mem: Memory) -> None:
    with pytest.raises(UsageError, match="source must be"):
        mem.facts.set("user.location", "Lisbon", source="extracted")
    assert mem.facts.get("user.location") is None


def test_a_lesson_the_agent_adds_is_marked_as_the_agents(mem: Memory) -> None:
    lesson_id = mem.lessons.add("Answer in British English.", source="agent")
    record = mem.get(lesson_id)
    assert record is not None and (record.kind, record.source.value) == ("lesson", "agent")
