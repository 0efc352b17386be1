"""Governor policy (pure): tier choice and per-tier budgets."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from elastic_memory.errors import UsageError
from elastic_memory.governor import MemoryProfile, Tier, choose_tier, profile_for
from elastic_memory.governor.policy import SECTIONS

GIB = 1 << 30
MIB = 1 << 20


def test_tiers_compare_by_rank_not_alphabetically() -> None:
    assert Tier.OFF < Tier.LITE < Tier.STANDARD < Tier.FULL
    assert max(Tier.LITE, Tier.FULL) is Tier.FULL
    assert [t.rank for t in Tier] == [0, 1, 2, 3]


def test_tier_parse_accepts_any_case() -> None:
    assert Tier.parse(" STANDARD ") is Tier.STANDARD


def test_jetson_and_workstation_get_different_tiers() -> None:
    jetson = choose_tier(available_ram_bytes=1536 * MIB, context_tokens=4_096, has_llm=True)
    workstation = choose_tier(available_ram_bytes=96 * GIB, context_tokens=32_768, has_llm=True)
    assert (jetson, workstation) == (Tier.STANDARD, Tier.FULL)


def test_tiny_context_is_off_on_any_machine() -> None:
    assert choose_tier(available_ram_bytes=128 * GIB, context_tokens=512, has_llm=True) is Tier.OFF


def test_scarce_ram_is_off() -> None:
    assert choose_tier(available_ram_bytes=100 * MIB, context_tokens=8_192, has_llm=True) is Tier.OFF


def test_small_context_is_lite() -> None:
    assert choose_tier(available_ram_bytes=64 * GIB, context_tokens=2_048, has_llm=True) is Tier.LITE


def test_full_needs_an_llm() -> None:
    assert choose_tier(available_ram_bytes=64 * GIB, context_tokens=32_768, has_llm=False) is Tier.STANDARD


def test_forced_tier_wins_over_thresholds() -> None:
    assert choose_tier(available_ram_bytes=0, context_tokens=512, has_llm=False, forced="full") is Tier.FULL


def test_unknown_forced_tier_names_the_choices() -> None:
    with pytest.raises(UsageError, match=r"forced must be one of \['off', 'lite', 'standard', 'full'\]"):
        choose_tier(available_ram_bytes=GIB, context_tokens=8_192, has_llm=True, forced="max")


@pytest.mark.parametrize("context", [0, -5, True, 8192.0, "8192", None])
def test_bad_context_tokens_is_refused(context: object) -> None:
    with pytest.raises(UsageError, match="context_tokens must be the model's context window"):
        choose_tier(available_ram_bytes=GIB, context_tokens=context, has_llm=True)  # type: ignore[arg-type]


@pytest.mark.parametrize("ram", [-1, 1.5, False])
def test_bad_ram_is_refused(ram: object) -> None:
    with pytest.raises(UsageError, match="available_ram_bytes must be a non-negative int"):
        choose_tier(available_ram_bytes=ram, context_tokens=8_192, has_llm=True)  # type: ignore[arg-type]


def test_has_llm_must_be_a_bool() -> None:
    with pytest.raises(UsageError, match="has_llm must be True or False"):
        profile_for(Tier.LITE, context_tokens=8_192, has_llm=None)  # type: ignore[arg-type]


def test_worked_example_standard_8k() -> None:
    p = profile_for(Tier.STANDARD, context_tokens=8_192, has_llm=True)
    assert p.budget_tokens == 983  # 12 % of 8,192
    assert dict(p.section_tokens) == {
        "profile": 147, "facts": 196, "past": 393, "lessons": 98, "related": 49, "summary": 98
    }  # fmt: skip
    assert p.keep_last_n_turns == (8_192 - 983 - 1_024) // 150


def test_budget_is_clamped_to_the_tier_floor() -> None:
    assert profile_for(Tier.FULL, context_tokens=4_096, has_llm=True).budget_tokens == 900


def test_budget_is_clamped_to_the_tier_ceiling() -> None:
    assert profile_for(Tier.LITE, context_tokens=128_000, has_llm=True).budget_tokens == 800


def test_budget_never_exceeds_half_the_window() -> None:
    assert profile_for(Tier.FULL, context_tokens=1_000, has_llm=True).budget_tokens == 500


def test_host_budget_overrides_the_share() -> None:
    assert profile_for(Tier.LITE, context_tokens=8_192, has_llm=True, budget_tokens=2_000).budget_tokens == 2_000


@pytest.mark.parametrize("budget", [0, -1, 4_097, True, 100.0])
def test_bad_host_budget_is_refused(budget: object) -> None:
    with pytest.raises(
        UsageError, match=r"budget_tokens must be a positive int at most half of context_tokens \(4096\)"
    ):
        profile_for(Tier.STANDARD, context_tokens=8_192, has_llm=True, budget_tokens=budget)  # type: ignore[arg-type]


def test_off_plans_nothing() -> None:
    p = profile_for(Tier.OFF, context_tokens=8_192, has_llm=True)
    assert p.budget_tokens == 0
    assert set(p.section_tokens.values()) == {0}
    assert (p.recall_k, p.past_max, p.graph_hops, p.queue_max) == (0, 0, 0, 0)
    assert not (p.embedder or p.llm_extraction or p.llm_summaries)


def test_graph_hops_per_tier() -> None:
    hops = [profile_for(t, context_tokens=8_192, has_llm=True).graph_hops for t in Tier]
    assert hops == [0, 1, 1, 2]


def test_lite_keeps_a_host_embedder_but_not_the_builtin_one() -> None:
    p = profile_for(Tier.LITE, context_tokens=8_192, has_llm=True)
    assert (p.embedder, p.builtin_embedder, p.ram_vector_index) == (True, False, False)


def test_standard_loads_the_builtin_embedder_and_ram_index() -> None:
    p = profile_for(Tier.STANDARD, context_tokens=8_192, has_llm=True)
    assert (p.embedder, p.builtin_embedder, p.ram_vector_index) == (True, True, True)


def test_contradiction_merge_and_idle_consolidation_are_full_only() -> None:
    std = profile_for(Tier.STANDARD, context_tokens=8_192, has_llm=True)
    full = profile_for(Tier.FULL, context_tokens=8_192, has_llm=True)
    assert (std.llm_contradiction_merge, std.idle_consolidate_seconds) == (False, None)
    assert (full.llm_contradiction_merge, full.idle_consolidate_seconds) == (True, 90.0)


def test_extraction_cadence_per_tier() -> None:
    cadence = [profile_for(t, context_tokens=8_192, has_llm=True).extract_every_n_turns for t in Tier]
    assert cadence == [0, 0, 2, 1]


@pytest.mark.parametrize("tier", list(Tier))
def test_no_llm_turns_every_llm_flag_off(tier: Tier) -> None:
    p = profile_for(tier, context_tokens=32_768, has_llm=False)
    assert not (p.llm_extraction or p.llm_summaries or p.llm_contradiction_merge)
    assert p.extract_every_n_turns == 0


def test_worker_max_tokens_defaults_to_96() -> None:
    assert profile_for(Tier.FULL, context_tokens=8_192, has_llm=True).worker_max_tokens == 96


def test_section_lookup_of_unknown_name_lists_the_sections() -> None:
    p = profile_for(Tier.LITE, context_tokens=8_192, has_llm=True)
    with pytest.raises(UsageError, match="unknown section 'history'; use one of"):
        p.section("history")


def test_section_budgets_are_read_only() -> None:
    p = profile_for(Tier.LITE, context_tokens=8_192, has_llm=True)
    with pytest.raises(TypeError):
        p.section_tokens["past"] = 10  # type: ignore[index]


def test_profile_is_frozen_and_hashable() -> None:
    p = profile_for(Tier.LITE, context_tokens=8_192, has_llm=True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.budget_tokens = 1  # type: ignore[misc]
    assert hash(p) == hash(profile_for(Tier.LITE, context_tokens=8_192, has_llm=True))


def test_profile_refuses_sections_over_budget() -> None:
    p = profile_for(Tier.LITE, context_tokens=8_192, has_llm=True)
    with pytest.raises(UsageError, match="more than budget_tokens"):
        dataclasses.replace(p, section_tokens={**p.section_tokens, "past": p.budget_tokens})


def test_profile_refuses_missing_sections() -> None:
    p = profile_for(Tier.LITE, context_tokens=8_192, has_llm=True)
    with pytest.raises(UsageError, match="section_tokens must map each of"):
        dataclasses.replace(p, section_tokens={"past": 10})


@given(
    tier=st.sampled_from(list(Tier)),
    context=st.integers(min_value=1, max_value=2_000_000),
    has_llm=st.booleans(),
)
def test_sections_never_exceed_the_budget(tier: Tier, context: int, has_llm: bool) -> None:
    p = profile_for(tier, context_tokens=context, has_llm=has_llm)
    assert set(p.section_tokens) == set(SECTIONS)
    assert sum(p.section_tokens.values()) <= p.budget_tokens <= context // 2
    assert 2 <= p.keep_last_n_turns <= 50


@given(context=st.integers(min_value=2, max_value=2_000_000), data=st.data())
def test_host_budget_sections_never_exceed_it(context: int, data: st.DataObject) -> None:
    budget = data.draw(st.integers(min_value=1, max_value=context // 2))
    p = profile_for(Tier.STANDARD, context_tokens=context, has_llm=True, budget_tokens=budget)
    assert isinstance(p, MemoryProfile)
    assert sum(p.section_tokens.values()) <= p.budget_tokens == budget


@given(ram=st.integers(min_value=0, max_value=1 << 40), extra=st.integers(min_value=0, max_value=1 << 40))
def test_more_ram_never_lowers_the_tier(ram: int, extra: int) -> None:
    low = choose_tier(available_ram_bytes=ram, context_tokens=8_192, has_llm=True)
    high = choose_tier(available_ram_bytes=ram + extra, context_tokens=8_192, has_llm=True)
    assert low <= high


def test_the_ann_index_comes_with_the_ram_index() -> None:
    """STANDARD and FULL may add an ANN index above the threshold (the RAM budget decides); below, none."""
    flags = [profile_for(t, context_tokens=8_192, has_llm=False).ann_vector_index for t in Tier]
    assert flags == [False, False, True, True]
