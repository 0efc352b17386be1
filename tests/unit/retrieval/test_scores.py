"""The score contract (docs/concepts.md, "Scores"): what each mode's score and relevance mean.

Semantic scores are raw cosines, keyword scores BM25 with an IDF that never reaches zero,
hybrid scores absolute in [0, 1]; ``relevance`` is every mode on [0, 1].
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import ClassVar

import numpy as np
import numpy.typing as npt
import pytest

from elastic_memory import Memory, RecallConfig
from elastic_memory.retrieval import scores
from elastic_memory.testing import FakeEmbedder

STANDUP = (
    "The daily standup meeting is at 9:30 every weekday",
    "The retro meeting happens every other Friday",
    "Deploy to production after the meeting on Thursday",
    "Lunch meeting with the design team on Monday",
    "The quarterly planning document is in the shared drive",
)


class Axes:
    """Texts on fixed unit vectors: "east" (1, 0), "west" (-1, 0), "north" (0, 1), others between."""

    dimension = 2
    model_id = family = "axes"
    VECTORS: ClassVar[dict[str, tuple[float, float]]] = {
        "east": (1.0, 0.0),
        "west": (-1.0, 0.0),
        "north": (0.0, 1.0),
        "northeast": (0.8, 0.6),
    }

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        rows = [self.VECTORS.get(t.split()[0], (0.6, 0.8)) for t in texts]
        return np.array(rows, dtype=np.float32).reshape(len(texts), 2)


@pytest.fixture
def standup() -> Iterator[Memory]:
    with Memory.open(":memory:", embedder=None) as mem:
        mem.remember_many(list(STANDUP))
        yield mem


@pytest.fixture
def axes() -> Iterator[Memory]:
    with Memory.open(":memory:", embedder=Axes()) as mem:
        mem.remember_many(["east side", "west side", "northeast corner"])
        yield mem


def test_a_word_in_most_rows_still_counts_in_keyword_scores(standup: Memory) -> None:
    """If the deploy note outranks the retro one, the IDF is FTS5's floored one (1e-6 above half the rows)."""
    hits = standup.recall("when is the standup meeting", mode="keyword")
    assert [h.content.split()[1] for h in hits[:3]] == ["daily", "retro", "to"]


def test_keyword_scores_are_positive_bm25(standup: Memory) -> None:
    hits = standup.recall("meeting", mode="keyword")
    assert len(hits) == 4 and all(h.score > 0.1 and h.keyword_score == h.score for h in hits)


def test_keyword_relevance_is_near_one_for_a_row_holding_every_word(standup: Memory) -> None:
    """Relevance 1 is an average-length row holding each query word once (``bm25.scale``)."""
    best, *rest = standup.recall("standup meeting", mode="keyword")
    assert best.relevance is not None and best.relevance > 0.8
    assert all(h.relevance is not None and 0 < h.relevance < 0.5 for h in rest)


def test_explain_reports_the_keyword_scale(standup: Memory) -> None:
    details = standup.explain("standup meeting", mode="keyword").details
    assert details["keyword_scale"] > 1.0


def test_semantic_scores_are_raw_cosines_with_negatives_kept(axes: Memory) -> None:
    hits = {h.content: h for h in axes.recall("east", mode="semantic")}
    assert hits["west side"].score == pytest.approx(-1.0)
    assert hits["northeast corner"].score == pytest.approx(0.8)
    assert hits["west side"].relevance == 0.0


def test_semantic_relevance_maps_the_cosine_above_the_floor(axes: Memory) -> None:
    hit = next(h for h in axes.recall("east", mode="semantic") if h.content == "northeast corner")
    assert hit.relevance == pytest.approx((0.8 - scores.COSINE_FLOOR) / (1 - scores.COSINE_FLOOR))


def test_an_unrelated_query_does_not_score_one_in_hybrid() -> None:
    """Min-max per query would give the best of any recall 1.0."""
    with Memory.open(":memory:", embedder=FakeEmbedder()) as mem:
        mem.remember_many(list(STANDUP))
        hits = mem.recall("zebra migration patterns", mode="hybrid")
        assert hits and max(h.score for h in hits) < 0.5


def test_the_only_memory_is_not_a_perfect_match_for_anything() -> None:
    with Memory.open(":memory:", embedder=FakeEmbedder()) as mem:
        mem.remember("Kestrel is the staging server.")
        (hit,) = mem.recall("what should we order for lunch", mode="hybrid")
        assert hit.score < 0.5


def test_hybrid_scores_and_relevance_are_in_unit_range_with_the_neighbour_boost() -> None:
    with Memory.open(":memory:", embedder=FakeEmbedder()) as mem:
        mem.remember_many([{"content": text, "session_id": "s1"} for text in STANDUP])  # neighbours boost
        hits = mem.recall("standup meeting", mode="hybrid")
        assert all(0.0 <= h.score <= 1.0 and 0.0 <= (h.relevance or 0.0) <= 1.0 for h in hits)


def _exact_match_relevance(session: str | None) -> float | None:
    with Memory.open(":memory:", embedder=FakeEmbedder()) as mem:
        mem.remember("Paris is in France")
        mem.remember_many([{"content": t, "session_id": session} for t in ("lunch at noon", "bring an umbrella")])
        return mem.recall("Paris is in France", mode="hybrid")[0].relevance


def test_a_hits_relevance_does_not_depend_on_the_other_candidates() -> None:
    """Whether unrelated memories have session neighbours (so the boost runs) must not move an exact match."""
    alone, beside_sessions = _exact_match_relevance(None), _exact_match_relevance("s1")
    assert alone is not None and alone > 0.9
    assert beside_sessions == pytest.approx(alone)


def test_hybrid_score_is_the_convex_relevance_of_both_legs() -> None:
    """Without the neighbour boost the score is ``scores.hybrid`` of the hit's BM25 and cosine."""
    with Memory.open(":memory:", embedder=FakeEmbedder(), recall=RecallConfig(neighbor_boost=0)) as mem:
        mem.remember_many(list(STANDUP))
        ex = mem.explain("standup meeting", mode="hybrid")
        scale = ex.details["keyword_scale"]
        for h in ex.hits:
            assert h.score == pytest.approx(
                scores.hybrid(h.keyword_score, h.vector_score, vector_weight=0.5, scale=scale)
            )


def test_rrf_relevance_is_absolute_though_its_score_is_rank_based() -> None:
    with Memory.open(":memory:", embedder=FakeEmbedder(), recall=RecallConfig(fusion="rrf")) as mem:
        mem.remember_many(list(STANDUP))
        hits = mem.recall("standup meeting", mode="hybrid")
        assert all(h.score < 0.05 for h in hits)
        assert max(h.relevance or 0.0 for h in hits) > 0.3


def test_browsing_without_query_text_has_no_relevance(standup: Memory) -> None:
    hits = standup.recall("", k=3)
    assert [h.relevance for h in hits] == [None, None, None]


@pytest.mark.parametrize(("score", "expected"), [(0.0, 0.0), (-2.0, 0.0), (3.0, 0.5), (6.0, 1.0), (60.0, 1.0)])
def test_keyword_relevance_against_a_scale(score: float, expected: float) -> None:
    assert scores.keyword_relevance(score, scale=6.0) == expected


def test_keyword_relevance_without_a_scale_saturates_below_one() -> None:
    """PostgreSQL's ts_rank has no per-query scale: 0.5 at the backend's half, never 1."""
    assert scores.keyword_relevance(0.1, half=0.1) == 0.5
    assert scores.keyword_relevance(1e6, half=0.1) < 1.0


def test_the_bounded_neighbour_boost_keeps_scores_in_unit_range() -> None:
    from elastic_memory.retrieval.fusion import neighbor_boost

    boosted = neighbor_boost([(1, 1.0), (2, 1.0)], {1: (None, 2, "s"), 2: (1, None, "s")}, beta=0.45, bounded=True)
    assert [score for _, score in boosted] == [pytest.approx(1.0), pytest.approx(1.0)]
