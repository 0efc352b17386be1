"""build_context: sections, budgets, tiers, ranking nudges, failure floor."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from elastic_memory import LoopConfig, Memory, UsageError
from elastic_memory.context import estimate_tokens
from elastic_memory.loop.attach import loop_of
from elastic_memory.testing import FakeEmbedder


@pytest.fixture
def mem(db_path: Path) -> Iterator[Memory]:
    with Memory.open(db_path, embedder=FakeEmbedder(), loop=LoopConfig(tier="standard", background=False)) as m:
        yield m


def test_an_empty_store_gives_an_empty_plan(mem: Memory) -> None:
    plan = mem.build_context("hello")
    assert plan.render() == "" and plan.tokens == 0 and plan.sections == ()


def test_the_plan_reports_the_working_window(mem: Memory) -> None:
    plan = mem.build_context("hello")
    assert plan.keep_last_n_turns == mem.tick().keep_last_n_turns > 0


def test_relevant_note_facts_compete_on_relevance(mem: Memory) -> None:
    mem.facts.set("user.dog_name", "Biscuit")
    mem.facts.set("user.favorite_color", "green")
    facts = mem.build_context("what is my dog called?").section("facts")
    assert facts is not None and [i.text for i in facts.items] == ["Biscuit"]


def test_irrelevant_note_facts_stay_out(mem: Memory) -> None:
    mem.facts.set("user.dog_name", "Biscuit")
    assert mem.build_context("what time is it in Tokyo?").section("facts") is None


def test_semantic_memories_join_the_facts_section(mem: Memory) -> None:
    mem.remember("The user is training for a marathon in October.")
    facts = mem.build_context("how is the marathon training going?").section("facts")
    assert facts is not None and "marathon" in facts.items[0].text


def test_every_section_keeps_to_its_budget(mem: Memory) -> None:
    for i in range(40):
        mem.record_turn(f"Story {i}: the lighthouse keeper saw a ship at night.", "How eerie.", session_id=f"s{i}")
    mem.drain()
    plan = mem.build_context("lighthouse ship at night", session_id="now")
    assert plan.sections
    for section in plan.sections:
        assert section.tokens <= section.budget
    assert estimate_tokens(plan.render()) == plan.tokens <= plan.budget


def test_a_host_budget_is_honoured(db_path: Path) -> None:
    with Memory.open(db_path, embedder=FakeEmbedder(), loop=LoopConfig(tier="standard", budget_tokens=120)) as mem:
        for i in range(20):
            mem.record_turn(f"Fact {i}: the lighthouse is painted red and white.", "Nice.", session_id=f"s{i}")
        mem.drain()
        plan = mem.build_context("lighthouse colours", session_id="now")
    assert plan.budget == 120 and 0 < plan.tokens <= 120


def test_a_host_token_counter_is_used(db_path: Path) -> None:
    with Memory.open(db_path, embedder=None, loop=LoopConfig(tier="standard", token_counter=len)) as mem:
        mem.facts.set("user.name", "Alice")
        plan = mem.build_context("hi")
    assert plan.tokens == len(plan.render())


def test_a_broken_host_token_counter_falls_back(db_path: Path) -> None:
    def broken(text: str) -> int:
        raise RuntimeError("tokenizer gone")

    with Memory.open(db_path, embedder=None, loop=LoopConfig(tier="standard", token_counter=broken)) as mem:
        mem.facts.set("user.name", "Alice")
        plan = mem.build_context("hi")
    assert "Alice" in plan.render() and plan.tokens == estimate_tokens(plan.render())


def test_the_off_tier_plans_nothing_but_keeps_the_transcript(db_path: Path) -> None:
    with Memory.open(db_path, embedder=None, loop=LoopConfig(tier="off")) as mem:
        mem.facts.set("user.name", "Alice")
        receipt = mem.record_turn("I live in Lisbon.", "Nice.", session_id="s1")
        plan = mem.build_context("where do I live?")
        fact = mem.facts.get("user.location")
    assert receipt.ok and receipt.turn == 1
    assert plan.render() == "" and plan.budget == 0
    assert fact is not None and fact.value == "Lisbon"


def test_the_lite_tier_uses_a_smaller_budget(db_path: Path) -> None:
    with Memory.open(db_path, embedder=None, loop=LoopConfig(tier="lite")) as lite:
        small = lite.build_context("x").budget
    with Memory.open(db_path, embedder=None, loop=LoopConfig(tier="standard")) as standard:
        large = standard.build_context("x").budget
    assert 0 < small < large


def test_shown_memories_count_an_access(mem: Memory) -> None:
    mem.record_turn("We adopted a greyhound from the shelter.", "Congratulations!", session_id="s1")
    mem.drain()
    plan = mem.build_context("greyhound", session_id="s2")
    mem.drain()  # access counts are written in the background
    chunk_id = plan.section("past").items[0].source_id  # type: ignore[union-attr]
    record = mem.get(chunk_id)  # type: ignore[arg-type]
    assert record is not None and record.access_count == 1


def test_a_plan_built_without_touch_counts_no_access(mem: Memory) -> None:
    """``touch=False`` (a read-only viewer such as ``elastic-memory mcp --read-only``) writes nothing."""
    mem.record_turn("We adopted a greyhound from the shelter.", "Congratulations!", session_id="s1")
    mem.facts.set("user.dog_name", "Biscuit")
    mem.drain()
    plan = mem.build_context("greyhound Biscuit", session_id="s2", touch=False)
    mem.drain()
    chunk_id = plan.section("past").items[0].source_id  # type: ignore[union-attr]
    record = mem.get(chunk_id)  # type: ignore[arg-type]
    fact = mem.facts.get("user.dog_name")
    assert record is not None and record.access_count == 0
    assert fact is not None and fact.access_count == 0


def test_touch_must_be_a_bool(mem: Memory) -> None:
    with pytest.raises(UsageError, match="touch must be True or False"):
        mem.build_context("x", touch="no")  # type: ignore[arg-type]


def test_importance_breaks_a_near_tie_but_never_beats_relevance(mem: Memory) -> None:
    low = mem.remember("The red kite nests in the old oak.", type="episodic", importance=0.1)
    high = mem.remember("The red kite nests in the old elm.", type="episodic", importance=0.9)
    mem.remember("A kite.", type="episodic", importance=1.0)
    items = mem.build_context("red kite nests in the old oak", session_id="s").section("past").items  # type: ignore[union-attr]
    ids = [i.source_id for i in items]
    assert ids.index(low) < ids.index(high), "the exact match stays first despite lower importance"


def test_a_failure_inside_gives_an_empty_plan_and_is_reported(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    mem.facts.set("user.name", "Alice")

    async def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(loop_of(mem._core).store, "current_facts", broken)
    plan = mem.build_context("hi")
    health = mem.health()
    assert plan.render() == ""
    assert health["errors"] == {"build_context": 1} and "disk on fire" in health["last_error"]


def test_a_closed_store_gives_an_empty_plan(db_path: Path) -> None:
    mem = Memory.open(db_path, embedder=None, loop=LoopConfig(tier="standard"))
    mem.close()
    assert mem.build_context("hi").render() == ""
    assert not mem.record_turn("hi", "there").ok


def test_lite_keeps_vectors_out_of_ram(db_path: Path) -> None:
    """At LITE the governor says no RAM vector index: searches scan sqlite-vec instead."""
    with Memory.open(db_path, embedder=FakeEmbedder(), loop=LoopConfig(tier="lite", background=False)) as mem:
        mem.record_turn("We adopted a greyhound from the shelter.", "Congratulations!", session_id="s1")
        mem.drain()
        plan = mem.build_context("greyhound", session_id="s2")
        stats = mem.stats()
    assert plan.section("past") is not None
    assert (stats["vector_index"], stats["vector_index_loaded"]) == ("vec0", 0)


def test_a_governor_without_ann_keeps_the_exact_matrix(db_path: Path) -> None:
    """The store obeys the governor's ANN flag: refused, the matrix stays exact above ``ann_threshold``."""
    with Memory.open(db_path, embedder=FakeEmbedder(), ann_threshold=1) as mem:
        mem.remember_many([f"memory {i} about greyhounds" for i in range(20)])
        assert mem.load_index() == "ann"
        mem._ops.store.allow_ram_index(True, ann=False)  # what the governor does when it says no
        mem.recall("greyhound", mode="semantic")
        stats = mem.stats()
    assert (stats["vector_index"], stats["ann_vectors"], stats["ann_building"]) == ("ram", 0, False)


def test_standard_uses_the_ram_index(db_path: Path) -> None:
    with Memory.open(db_path, embedder=FakeEmbedder(), loop=LoopConfig(tier="standard", background=False)) as mem:
        mem.record_turn("We adopted a greyhound from the shelter.", "Congratulations!", session_id="s1")
        mem.drain()
        mem.build_context("greyhound", session_id="s2")
        assert mem.stats()["vector_index"] == "ram"
