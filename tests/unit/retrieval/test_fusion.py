"""Hybrid fusion functions (pure)."""

from __future__ import annotations

import pytest

from elastic_memory.retrieval import fusion


def test_minmax_scales_to_unit_range() -> None:
    assert fusion.minmax({1: 2.0, 2: 4.0, 3: 3.0}) == {1: 0.0, 2: 1.0, 3: 0.5}


def test_minmax_of_equal_scores_is_all_ones() -> None:
    assert fusion.minmax({1: 5.0, 2: 5.0}) == {1: 1.0, 2: 1.0}


def test_weighted_gives_zero_to_a_leg_that_missed() -> None:
    ranked = dict(fusion.weighted({1: 10.0, 2: 5.0}, {3: 0.9, 2: 0.1}, vector_weight=0.7))
    assert ranked[1] == pytest.approx(0.3)
    assert ranked[3] == pytest.approx(0.7)
    assert ranked[2] == pytest.approx(0.0)


def test_convex_uses_both_scores_of_every_candidate() -> None:
    # 3 is found only by the vector leg but the caller scored it on BM25 too (absent = 0).
    ranked = fusion.convex({1: 4.0, 2: 2.0}, {1: 0.2, 2: 0.8, 3: 0.5}, vector_weight=0.5)
    assert [s for s, _ in ranked] == [2, 1, 3]


def test_convex_with_vector_weight_zero_is_keyword_order() -> None:
    ranked = fusion.convex({1: 1.0, 2: 3.0, 3: 2.0}, {1: 0.9, 2: 0.1, 3: 0.5}, vector_weight=0.0)
    assert [s for s, _ in ranked] == [2, 3, 1]


def test_rrf_rewards_agreement() -> None:
    ranked = fusion.rrf([1, 2, 3], [3, 2, 4], vector_weight=0.5, k=60)
    assert ranked[0][0] in (2, 3)
    assert {s for s, _ in ranked} == {1, 2, 3, 4}


def test_neighbor_boost_lifts_the_turn_after_a_strong_match() -> None:
    ranked = [(10, 1.0), (20, 0.5), (11, 0.45)]
    boosted = fusion.neighbor_boost(ranked, {11: (10, None, "s"), 10: (None, 11, "s")}, beta=0.3)
    assert [s for s, _ in boosted] == [10, 11, 20]
    assert dict(boosted)[11] == pytest.approx(0.45 + 0.3 * 1.0)


def test_neighbor_boost_ignores_neighbours_that_are_not_candidates() -> None:
    ranked = [(1, 0.9), (2, 0.5)]
    assert fusion.neighbor_boost(ranked, {2: (99, None, "s")}, beta=0.5) == ranked


def test_neighbor_boost_of_zero_changes_nothing() -> None:
    ranked = [(1, 0.9), (2, 0.5)]
    assert fusion.neighbor_boost(ranked, {2: (1, None, "s")}, beta=0.0) == ranked


def test_convex_breaks_a_tie_by_keyword_score_then_vector_score_then_seq() -> None:
    # vector_weight 0: the fused score is the normalised keyword score, equal for 5, 6 and 7.
    ranked = fusion.convex(
        {5: 2.0, 6: 2.0, 7: 2.0, 8: 1.0}, {5: 0.1, 6: 0.3, 7: 0.3, 8: 0.0, 9: 0.9}, vector_weight=0.0
    )
    assert [s for s, _ in ranked] == [6, 7, 5, 8, 9]


def test_rrf_breaks_a_tie_by_keyword_rank() -> None:
    ranked = fusion.rrf([2, 1], [1, 2], vector_weight=0.5, k=60)
    assert [s for s, _ in ranked] == [2, 1]


def test_neighbor_boost_keeps_the_fused_order_of_equal_scores() -> None:
    ranked = [(3, 0.5), (1, 0.5), (2, 0.5)]
    assert fusion.neighbor_boost(ranked, {9: (3, None, "s")}, beta=0.3) == ranked


PLACES = {1: (None, None, "a"), 2: (None, None, "b"), 3: (None, None, "a"), 4: (None, None, "c")}


def test_session_boost_lifts_the_session_holding_most_of_the_top() -> None:
    ranked = [(1, 0.9), (2, 0.5), (3, 0.45), (4, 0.1)]
    assert [s for s, _ in fusion.session_boost(ranked, PLACES, beta=0.5, top=3)] == [1, 3, 2, 4]


def test_session_boost_gives_nothing_to_a_session_outside_the_top() -> None:
    ranked = [(1, 0.9), (2, 0.5), (3, 0.45), (4, 0.1)]
    boosted = dict(fusion.session_boost(ranked, PLACES, beta=0.5, top=3))
    assert boosted[4] == 0.1


def test_session_boost_leaves_memories_without_a_session_alone() -> None:
    ranked = [(1, 0.9), (9, 0.5)]
    assert dict(fusion.session_boost(ranked, PLACES, beta=0.5))[9] == 0.5


def test_session_boost_of_zero_changes_nothing() -> None:
    ranked = [(2, 0.5), (1, 0.45)]
    assert fusion.session_boost(ranked, PLACES, beta=0.0) == ranked


def test_bounded_session_boost_keeps_scores_in_unit_range() -> None:
    ranked = [(1, 1.0), (3, 1.0)]
    assert max(s for _, s in fusion.session_boost(ranked, PLACES, beta=1.0, bounded=True)) == 1.0
