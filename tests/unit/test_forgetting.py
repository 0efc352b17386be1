"""Forgetting math: retention, strength, priority, near-duplicate grouping and merged text."""

from __future__ import annotations

import math
import time

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given
from hypothesis import strategies as st

from elastic_memory import MemoryType
from elastic_memory.errors import UsageError
from elastic_memory.forgetting import (
    DAY,
    MIN_FACTOR,
    PriorityWeights,
    grow_strength,
    half_life_for,
    jaccard,
    merge_text,
    near_duplicate_groups,
    priority,
    retention,
    tokenize,
)

ages = st.floats(min_value=0, max_value=1e9)
factors = st.floats(min_value=0, max_value=20)


def _r(age: float = DAY, importance: float = 1.0, strength: float = 1.0, half_life: float = 7 * DAY) -> float:
    return retention(age_seconds=age, importance=importance, strength=strength, half_life_seconds=half_life)


def _unit(*values: float) -> npt.NDArray[np.float32]:
    vec = np.array(values, dtype=np.float32)
    vec /= np.linalg.norm(vec)
    return vec


# --- retention ----------------------------------------------------------------------------------


def test_retention_is_one_half_after_one_half_life() -> None:
    assert _r(age=7 * DAY) == pytest.approx(0.5)


def test_retention_is_one_for_a_fresh_memory() -> None:
    assert _r(age=0) == 1.0


def test_a_negative_age_counts_as_zero() -> None:
    assert _r(age=-DAY) == 1.0


def test_retention_after_forever_is_zero() -> None:
    assert _r(age=math.inf) == 0.0


def test_importance_zero_decays_at_the_floor_rate() -> None:
    assert _r(importance=0.0) == _r(importance=MIN_FACTOR) > 0.0


@given(ages, factors, factors)
def test_retention_stays_in_the_unit_interval(age: float, importance: float, strength: float) -> None:
    assert 0.0 <= _r(age=age, importance=importance, strength=strength) <= 1.0


@given(ages, ages)
def test_retention_falls_with_age(a: float, b: float) -> None:
    young, old = sorted([a, b])
    assert _r(age=young) >= _r(age=old)


@given(factors, factors)
def test_retention_rises_with_importance(a: float, b: float) -> None:
    low, high = sorted([a, b])
    assert _r(importance=low) <= _r(importance=high)


@given(factors, factors)
def test_retention_rises_with_strength(a: float, b: float) -> None:
    low, high = sorted([a, b])
    assert _r(strength=low) <= _r(strength=high)


@pytest.mark.parametrize("half_life", [0.0, -1.0, math.inf, math.nan])
def test_retention_rejects_a_bad_half_life(half_life: float) -> None:
    with pytest.raises(UsageError, match="half_life_seconds"):
        _r(half_life=half_life)


def test_retention_rejects_nan_inputs() -> None:
    with pytest.raises(UsageError, match="importance"):
        _r(importance=math.nan)


# --- strength and half-lives --------------------------------------------------------------------


def test_strength_grows_by_the_factor() -> None:
    assert grow_strength(2.0) == 3.0


def test_strength_is_capped() -> None:
    assert grow_strength(9.0) == 10.0
    assert grow_strength(3.0, factor=2.0, cap=5.0) == 5.0


def test_strength_rejects_a_shrinking_factor() -> None:
    with pytest.raises(UsageError, match="factor"):
        grow_strength(1.0, factor=0.5)


def test_half_lives_order_episodic_semantic_procedural() -> None:
    assert half_life_for("episodic") < half_life_for("semantic") < half_life_for("procedural")


def test_half_life_accepts_memory_type_members() -> None:
    assert half_life_for(MemoryType.SEMANTIC) == half_life_for("semantic")


def test_half_life_rejects_an_unknown_type() -> None:
    with pytest.raises(UsageError, match="episodic"):
        half_life_for("working")


# --- priority -----------------------------------------------------------------------------------


def test_priority_uses_the_documented_formula() -> None:
    got = priority(importance=0.5, age_days=1, access_count=50, retention=0.8)
    assert got == pytest.approx(0.4 * 0.5 + 0.2 * 0.5 + 0.1 * 0.5 + 0.3 * 0.8)


def test_priority_clamps_out_of_range_inputs() -> None:
    wild = priority(importance=7, age_days=-3, access_count=10_000, retention=2)
    assert wild == priority(importance=1, age_days=0, access_count=100, retention=1) == pytest.approx(1.0)


@given(st.floats(0, 1), st.floats(0, 1))
def test_priority_rises_with_importance(a: float, b: float) -> None:
    low, high = sorted([a, b])

    def at(importance: float) -> float:
        return priority(importance=importance, age_days=3.0, access_count=5, retention=0.5)

    assert at(low) <= at(high)


def test_priority_honours_custom_weights() -> None:
    only_access = PriorityWeights(importance=0, recency=0, access=1, retention=0)
    assert priority(importance=1, age_days=0, access_count=25, retention=1, weights=only_access) == 0.25


def test_priority_weights_reject_negatives() -> None:
    with pytest.raises(UsageError, match="recency"):
        PriorityWeights(recency=-0.1)


# --- tokens -------------------------------------------------------------------------------------


def test_tokenize_lowercases_and_drops_stopwords() -> None:
    assert tokenize("The User drinks a Cortado") == {"user", "drinks", "cortado"}


def test_tokenize_keeps_negations() -> None:
    assert "not" in tokenize("User does not like coffee")
    assert "doesn't" in tokenize("User doesn't like coffee")


def test_jaccard_of_two_empty_sets_is_zero() -> None:
    assert jaccard(frozenset(), frozenset()) == 0.0


def test_jaccard_of_equal_sets_is_one() -> None:
    assert jaccard(frozenset({"a", "b"}), frozenset({"b", "a"})) == 1.0


# --- near-duplicate groups ----------------------------------------------------------------------


def test_a_changed_value_is_not_a_duplicate() -> None:
    items = [("m1", "User drinks cortado"), ("m2", "User drinks flat white")]
    close = {"m1": _unit(1, 0.1), "m2": _unit(1, 0.12)}
    assert near_duplicate_groups(items) == []
    assert near_duplicate_groups(items, vectors=close) == []


def test_paraphrases_of_one_fact_are_grouped() -> None:
    items = [
        ("m1", "The user prefers dark mode in the editor."),
        ("m2", "User's editor: prefers dark mode!"),
        ("m3", "User lives in Lisbon"),
    ]
    assert near_duplicate_groups(items) == [["m1", "m2"]]


def test_the_cosine_gate_can_veto_a_token_match() -> None:
    items = [("m1", "User lives in Paris"), ("m2", "User lives in Paris")]
    far = {"m1": _unit(1, 0), "m2": _unit(0, 1)}
    assert near_duplicate_groups(items, vectors=far) == []


def test_a_pair_missing_a_vector_uses_jaccard_alone() -> None:
    items = [("m1", "User lives in Paris"), ("m2", "User lives in Paris")]
    assert near_duplicate_groups(items, vectors={"m1": _unit(1, 0)}) == [["m1", "m2"]]


def test_groups_follow_input_order() -> None:
    items = [("z", "likes tea"), ("y", "owns a cat"), ("x", "likes tea"), ("w", "owns a cat")]
    assert near_duplicate_groups(items) == [["z", "x"], ["y", "w"]]


def test_min_group_filters_small_groups() -> None:
    items = [("a", "likes tea"), ("b", "likes tea"), ("c", "owns cat"), ("d", "owns cat"), ("e", "owns cat")]
    assert near_duplicate_groups(items, min_group=3) == [["c", "d", "e"]]


def test_only_the_first_max_items_are_considered() -> None:
    items = [("a", "likes tea"), ("b", "owns cat"), ("c", "likes tea")]
    assert near_duplicate_groups(items, max_items=2) == []


def test_texts_of_only_stopwords_are_never_grouped() -> None:
    assert near_duplicate_groups([("a", "It is."), ("b", "it is")]) == []


def test_duplicate_ids_are_rejected() -> None:
    with pytest.raises(UsageError, match="unique"):
        near_duplicate_groups([("a", "x"), ("a", "y")])


@pytest.mark.parametrize("threshold", [0.0, 1.5, math.nan])
def test_a_jaccard_threshold_outside_the_unit_interval_is_rejected(threshold: float) -> None:
    with pytest.raises(UsageError, match="jaccard_threshold"):
        near_duplicate_groups([], jaccard_threshold=threshold)


def test_vectors_of_mixed_sizes_are_rejected() -> None:
    with pytest.raises(UsageError, match="size"):
        near_duplicate_groups([("a", "x"), ("b", "x")], vectors={"a": _unit(1, 0), "b": _unit(1, 0, 0)})


def _brute_force(
    items: list[tuple[str, str]], vectors: dict[str, npt.NDArray[np.float32]], threshold: float, cosine: float
) -> list[list[str]]:
    parent = list(range(len(items)))

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    sets = [tokenize(text) for _, text in items]
    for j in range(len(items)):
        for i in range(j):
            a, b = vectors.get(items[i][0]), vectors.get(items[j][0])
            if jaccard(sets[i], sets[j]) >= threshold and (a is None or b is None or float(a @ b) >= cosine):
                parent[root(j)] = root(i)
    groups: dict[int, list[str]] = {}
    for i, (key, _) in enumerate(items):
        groups.setdefault(root(i), []).append(key)
    return [g for g in groups.values() if len(g) >= 2]


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("threshold", [0.34, 0.5, 0.8, 1.0])
def test_the_inverted_index_finds_what_brute_force_finds(seed: int, threshold: float) -> None:
    rng = np.random.default_rng(seed)
    vocab = "coffee tea cat dog lisbon paris runs likes owns blue red green".split()
    items = [(f"m{i}", " ".join(rng.choice(vocab, size=rng.integers(1, 6)))) for i in range(120)]
    vectors = {key: _unit(*rng.normal(size=4)) for key, _ in items if rng.random() < 0.5}
    for i, (key, text) in enumerate(items[:10]):  # exact copies, vector included
        items.append((f"copy{i}", text))
        if key in vectors:
            vectors[f"copy{i}"] = vectors[key]
    expected = _brute_force(items, vectors, threshold, 0.3)
    got = near_duplicate_groups(items, vectors=vectors, jaccard_threshold=threshold, cosine_threshold=0.3)
    assert got == expected
    assert got  # the corpus is built to have groups


def test_a_few_thousand_items_group_quickly() -> None:
    rng = np.random.default_rng(0)
    vocab = [f"w{i}" for i in range(3000)] + ["user", "likes", "the"] * 300
    items = [(f"m{i}", " ".join(rng.choice(vocab, size=8))) for i in range(5000)]
    started = time.perf_counter()
    near_duplicate_groups(items)
    assert time.perf_counter() - started < 30.0  # a loose guard (2 s here under load): a pairwise scan is 10-30 s


# --- merge_text ---------------------------------------------------------------------------------


def test_merge_keeps_the_longest_text_first() -> None:
    assert merge_text(["User likes tea.", "User likes tea a lot."]) == "User likes tea a lot."


def test_merge_appends_sentences_the_longest_lacks() -> None:
    merged = merge_text(["User likes tea a lot, every day.", "User likes tea. Has a cat"])
    assert merged == "User likes tea a lot, every day. Has a cat"


def test_merge_keeps_a_sentence_whose_words_are_not_one_run() -> None:
    merged = merge_text(["User likes green tea a lot.", "User likes tea."])
    assert merged == "User likes green tea a lot. User likes tea."


def test_merge_skips_sentences_already_contained_ignoring_case_and_punctuation() -> None:
    assert merge_text(["User lives in Lisbon, Portugal.", "user lives in LISBON"]) == "User lives in Lisbon, Portugal."


def test_merge_does_not_match_inside_words() -> None:
    assert merge_text(["Owns teapots and mugs", "Owns tea"]) == "Owns teapots and mugs. Owns tea"


def test_merge_rejects_only_blank_texts() -> None:
    with pytest.raises(UsageError, match="non-blank"):
        merge_text(["", "  "])
