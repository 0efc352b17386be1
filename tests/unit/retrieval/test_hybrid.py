"""Hybrid recall: the fusion settings reach the store, the session-neighbour boost and the session boost."""

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
    [
        {"fusion": "max"},
        {"vector_weight": 1.5},
        {"rrf_k": 0},
        {"candidates": 0},
        {"neighbor_boost": -0.1},
        {"session_boost": 1.5},
        {"session_boost": True},
    ],
)
def test_bad_recall_config_is_a_usage_error(kwargs: dict[str, object]) -> None:
    with pytest.raises(UsageError):
        RecallConfig(**kwargs)  # type: ignore[arg-type]


#: Three turns of one session about a trip, and a lone turn elsewhere that shares more words with the query.
TRIP = [
    {"content": "we drove to the coast for the trip", "session_id": "trip"},
    {"content": "the coast trip had a great view", "session_id": "trip"},
    {"content": "unrelated chat about lunch", "session_id": "trip"},
    {"content": "mum loved the photos from the coast trip", "session_id": "trip"},
    {"content": "a book about a trip to the coast", "session_id": "library"},
]


def test_session_boost_lifts_a_match_from_the_session_most_candidates_come_from(db_path: Path) -> None:
    query = "book trip coast photos"
    with Memory.open(
        db_path, embedder=FakeEmbedder(), recall=RecallConfig(session_boost=0.0, neighbor_boost=0.0)
    ) as mem:
        mem.remember_many(TRIP, dedupe=False)
        before = [h.content for h in mem.explain(query, k=5, mode="hybrid").hits]
    with Memory.open(
        db_path, embedder=FakeEmbedder(), recall=RecallConfig(session_boost=1.0, neighbor_boost=0.0)
    ) as mem:
        explained = mem.explain(query, k=5, mode="hybrid")
    after = [h.content for h in explained.hits]
    photos = TRIP[3]["content"]
    assert after.index(photos) < before.index(photos)
    assert explained.details["session_boost"] == 1.0


def test_session_boost_leaves_relevance_to_the_hit_itself(db_path: Path) -> None:
    with Memory.open(db_path, embedder=FakeEmbedder(), recall=RecallConfig(session_boost=0.0)) as mem:
        mem.remember_many(TRIP, dedupe=False)
        before = {h.content: h.relevance for h in mem.explain("coast trip", k=5).hits}
    with Memory.open(db_path, embedder=FakeEmbedder(), recall=RecallConfig(session_boost=1.0)) as mem:
        after = {h.content: h.relevance for h in mem.explain("coast trip", k=5).hits}
    assert after == before


#: Two agents that both call a session "s1": alice's is full of matches, bob's holds one weaker match.
TWO_AGENTS = [
    *(
        {"content": c, "session_id": "s1", "agent_id": "alice"}
        for c in ("coast trip coast trip", "the coast trip again", "coast trip photos coast")
    ),
    *(
        {"content": c, "session_id": "s1", "agent_id": "alice"}
        for c in ("coast trip lantern photos", "trip coast lantern map")
    ),
    {"content": "lantern coast trip today", "session_id": "s1", "agent_id": "bob"},
    {"content": "lantern coast trip", "session_id": "s2", "agent_id": "bob"},
]


def test_session_boost_keeps_two_agents_sessions_of_one_name_apart(db_path: Path) -> None:
    """A session is an agent's: alice's heavy "s1" must not lift bob's "s1" over bob's better match."""
    query = "coast trip lantern"
    with Memory.open(db_path, embedder=FakeEmbedder(), recall=RecallConfig(session_boost=1.0, neighbor_boost=0.0)) as m:
        for item in TWO_AGENTS:
            m.remember(item["content"], session_id=item["session_id"], agent_id=item["agent_id"])
        bob = [h.content for h in m.explain(query, k=7, mode="hybrid").hits if h.agent_id == "bob"]
    assert bob == ["lantern coast trip", "lantern coast trip today"]


def test_session_boost_keeps_convex_scores_in_unit_range(db_path: Path) -> None:
    query = TRIP[1]["content"]  # an exact match: its convex score is near 1 before the boost
    config = RecallConfig(session_boost=1.0)
    with Memory.open(db_path, embedder=FakeEmbedder(), recall=config) as mem:
        mem.remember_many(TRIP, dedupe=False)
        hits = mem.explain(query, k=5, mode="hybrid").hits
    assert hits[0].content == query
    assert hits[0].score > 0.5, "a score a doubling would push past 1"
    assert all(0.0 <= h.score <= 1.0 for h in hits)


def test_neighbour_boost_takes_neighbours_from_the_same_agents_session(db_path: Path) -> None:
    turns = [
        {"content": "we hiked the mountain trail", "session_id": "s1", "agent_id": "alice"},
        {"content": "the mountain weather was cold", "session_id": "s1", "agent_id": "bob"},
        {"content": "the mountain trail was steep", "session_id": "s1", "agent_id": "alice"},
    ]
    scores = {}
    for beta in (0.0, 0.45):
        config = RecallConfig(neighbor_boost=beta, session_boost=0.0)
        with Memory.open(db_path, embedder=FakeEmbedder(), recall=config) as mem:
            if not mem.stats()["total_memories"]:
                mem.remember_many(turns, dedupe=False)
            hits = mem.explain("mountain trail hiked", k=3, mode="hybrid").hits
            scores[beta] = {h.agent_id: h.score for h in hits if h.agent_id == "bob"}
    # bob's turn has no neighbour in his own session "s1": the boost only rescales it
    assert scores[0.45]["bob"] == pytest.approx(scores[0.0]["bob"] / 1.45)
