"""Hybrid recall: the fusion settings reach the store, and the session-neighbour boost."""

from __future__ import annotations

from pathlib import Path

import pytest

from elastic_memory import Memory, RecallConfig, UsageError
from elastic_memory.testing import FakeEmbedder

TURNS = [
    {"content": "Caroline: where did you go hiking last weekend?", "session_id": "s1"},
    {"content": "Melanie: up the Serra da Estrela trail with my sister", "session_id": "s1"},
    {"content": "Caroline: I bought new paint brushes", "session_id": "s2"},
    {"content": "Melanie: the museum had a sculpture exhibition", "session_id": "s3"},
]


def _rank(db: Path, config: RecallConfig, query: str) -> list[str]:
    with Memory.open(db, embedder=FakeEmbedder(), recall=config) as mem:
        if not mem.stats()["total_memories"]:
            mem.remember_many(TURNS, dedupe=False)
        return [h.content for h in mem.recall(query, k=4, mode="hybrid")]


def test_neighbour_boost_lifts_the_answer_next_to_the_matching_turn(db_path: Path) -> None:
    query = "where did Caroline go hiking last weekend"
    plain = _rank(db_path, RecallConfig(neighbor_boost=0.0), query)
    boosted = _rank(db_path, RecallConfig(neighbor_boost=0.5), query)
    answer = TURNS[1]["content"]
    assert boosted.index(answer) < plain.index(answer)
    assert boosted[0] == TURNS[0]["content"]


@pytest.mark.parametrize("fusion", ["convex", "weighted", "rrf"])
def test_every_fusion_is_used_and_reported(db_path: Path, fusion: str) -> None:
    with Memory.open(db_path, embedder=FakeEmbedder(), recall=RecallConfig(fusion=fusion)) as mem:
        mem.remember_many(TURNS)
        details = mem.explain("hiking trail", mode="hybrid").details
    assert details["fusion"] == fusion
    assert details["vector_weight"] == RecallConfig(fusion=fusion).effective_vector_weight


def test_convex_gives_keyword_only_candidates_their_cosine(db_path: Path) -> None:
    config = RecallConfig(candidates=1)
    with Memory.open(db_path, embedder=FakeEmbedder(), recall=config) as mem:
        mem.remember_many([*TURNS, *(f"filler memory number {i}" for i in range(40))])
        lookups = 0
        for query in ("paint brushes", "sculpture exhibition museum", "hiking trail sister", "weekend"):
            explanation = mem.explain(query, k=1, mode="hybrid")
            lookups += explanation.details["cosine_lookups"]
            assert all(h.vector_score is not None for h in explanation.hits)
    assert lookups > 0


@pytest.mark.parametrize(
    "kwargs",
    [{"fusion": "max"}, {"vector_weight": 1.5}, {"rrf_k": 0}, {"candidates": 0}, {"neighbor_boost": -0.1}],
)
def test_bad_recall_config_is_a_usage_error(kwargs: dict[str, object]) -> None:
    with pytest.raises(UsageError):
        RecallConfig(**kwargs)  # type: ignore[arg-type]
