"""The knowledge graph: entities from turns, dedup, relations, traversal, memory edges, graph-aware recall."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from elastic_memory import Edge, LoopConfig, Memory, RecallConfig, UsageError
from elastic_memory.forgetting import DAY

from ._stores import vet_store


@pytest.fixture
def mem(db_path: Path) -> Iterator[Memory]:
    with Memory.open(db_path, embedder=None, loop=LoopConfig(tier="standard", background=False)) as m:
        yield m


def test_a_named_entity_in_a_turn_becomes_an_entity(mem: Memory) -> None:
    mem.record_turn("Yesterday I met Marta Silva at the conference.", "How was it?", session_id="s1")
    entity = mem.graph.entity("Marta Silva")
    assert entity is not None and entity.mention_count == 1


def test_names_are_canonicalised_before_anything_fuzzier(mem: Memory) -> None:
    mem.record_turn("Biscuit saw Dr. Okonkwo today.", "Good.", session_id="s1")
    mem.record_turn("We visit Dr Okonkwo again on Friday.", "Okay.", session_id="s1")
    entity = mem.graph.entity("dr. OKONKWO")
    assert entity is not None and entity.mention_count == 2
    assert len([e for e in mem.graph.entities() if "okonkwo" in e.name.casefold()]) == 1


def test_repeated_mentions_average_the_confidence(mem: Memory) -> None:
    mem.record_turn("I work at Acme Robotics.", "Nice!", session_id="s1")
    first = mem.graph.entity("Acme Robotics")
    mem.record_turn("Acme Robotics launched a new arm.", "Cool.", session_id="s1")
    second = mem.graph.entity("Acme Robotics")
    assert first is not None and second is not None
    assert second.mention_count == first.mention_count + 1
    assert 0 < second.confidence <= 1


def test_stated_facts_become_relations_to_the_user(mem: Memory) -> None:
    mem.record_turn("I work at Acme Robotics and I live in Porto.", "Great.", session_id="s1")
    relations = {(r.source, r.relation, r.target) for r in mem.graph.relations()}
    assert ("user", "works_at", "Acme Robotics") in relations
    assert ("user", "lives_in", "Porto") in relations


def test_traversal_goes_as_far_as_asked(mem: Memory) -> None:
    mem.record_turn("My dog is called Biscuit.", "Cute.", session_id="s1")
    mem.record_turn("Biscuit sees Dr. Okonkwo at Estrela Clinic.", "Good vet.", session_id="s1")
    mem.record_turn("Biscuit sees Dr. Okonkwo at Estrela Clinic.", "Again.", session_id="s2")
    one = {r.name for r in mem.graph.traverse("user", hops=1)}
    two = {r.name for r in mem.graph.traverse("user", hops=2)}
    assert "Biscuit" in one and "Dr. Okonkwo" not in one
    assert "Dr. Okonkwo" in two


def test_traversal_survives_cycles(mem: Memory) -> None:
    for _ in range(3):
        mem.record_turn("Ana met Bruno, Bruno met Carla, Carla met Ana.", "A circle.", session_id="s1")
    reached = mem.graph.traverse("Ana", hops=3)
    assert len({r.name for r in reached}) == len(reached) == 2


def test_traversal_of_an_unknown_entity_is_empty(mem: Memory) -> None:
    assert mem.graph.traverse("Nobody Known") == []


@pytest.mark.parametrize("hops", [-1, 4, 1.5, True])
def test_bad_hops_are_refused(mem: Memory, hops: object) -> None:
    with pytest.raises(UsageError, match="hops"):
        mem.graph.traverse("x", hops=hops)  # type: ignore[arg-type]


def test_an_alias_finds_the_same_entity(mem: Memory) -> None:
    mem.record_turn("I met Margaret Thompson today.", "Nice.", session_id="s1")
    assert mem.graph.alias("Margaret Thompson", "Maggie")
    assert mem.graph.entity("maggie").name == "Margaret Thompson"  # type: ignore[union-attr]
    assert not mem.graph.alias("Nobody Known", "Nobody")


@pytest.mark.parametrize(
    "name", ["Robert'); DROP TABLE entities;--", 'Quote " Name', "N" * 10_000, "Zero\x00Byte", "\u202eEvil"]
)
def test_hostile_names_are_stored_safely(mem: Memory, name: str) -> None:
    receipt = mem.record_turn(f"Meeting With {name} Tomorrow.", "Ok.", session_id="s1")
    assert receipt.ok
    assert mem.graph.stats()["entities"] >= 0
    assert mem.recall("meeting", mode="keyword")


# ------------------------------------------------------------------ memory edges
def test_edges_are_idempotent(mem: Memory) -> None:
    edge = Edge("a", "b", "references", "test")
    mem.graph.add_edges([edge, edge])
    mem.graph.add_edges([edge])
    assert mem.graph.edges("a") == [edge]


def test_replace_source_rewrites_only_its_own_edges(mem: Memory) -> None:
    mem.graph.add_edges([Edge("a", "b", "references", "wikilinks"), Edge("a", "c", "cites", "manual")])
    mem.graph.replace_source("wikilinks", [Edge("a", "d", "references", "wikilinks")])
    assert sorted((e.dst_id, e.source) for e in mem.graph.edges("a")) == [("c", "manual"), ("d", "wikilinks")]


def test_replace_source_refuses_foreign_edges_and_changes_nothing(mem: Memory) -> None:
    mem.graph.add_edges([Edge("a", "b", "references", "wikilinks")])
    with pytest.raises(UsageError, match="source"):
        mem.graph.replace_source("wikilinks", [Edge("a", "c", "references", "manual")])
    assert [e.dst_id for e in mem.graph.edges("a")] == ["b"]


def test_neighbors_go_both_ways_outgoing_first(mem: Memory) -> None:
    mem.graph.add_edges([Edge("x", "b", "r", "t"), Edge("a", "x", "r", "t"), Edge("x", "c", "r", "t")])
    assert mem.graph.neighbors("x") == ["b", "c", "a"]


def test_self_loops_are_harmless(mem: Memory) -> None:
    mem.graph.add_edges([Edge("x", "x", "r", "t")])
    assert mem.graph.neighbors("x") == ["x"]


@pytest.mark.parametrize("bad", [Edge("", "b", "r", "t"), Edge("a", "b", "r", "t\x00"), ("a", "b")])
def test_bad_edges_are_refused(mem: Memory, bad: object) -> None:
    with pytest.raises(UsageError):
        mem.graph.add_edges([bad])  # type: ignore[list-item]


# ------------------------------------------------------------ graph-aware recall
def test_the_graph_surfaces_an_associated_memory(mem: Memory) -> None:
    biscuit, vet = vet_store(mem)
    ids = [h.id for h in mem.recall("What did Biscuit chew?", mode="keyword")]
    assert ids[0] == biscuit and vet in ids


def test_without_the_graph_boost_the_association_is_not_found(db_path: Path) -> None:
    config = LoopConfig(tier="standard", background=False)
    with Memory.open(db_path, embedder=None, loop=config, recall=RecallConfig(graph_boost=0)) as mem:
        _, vet = vet_store(mem)
        assert vet not in [h.id for h in mem.recall("What did Biscuit chew?", mode="keyword")]


def test_the_graph_never_manufactures_a_hit(mem: Memory) -> None:
    vet_store(mem)
    assert mem.recall("zebra xylophone", mode="keyword") == []


def test_the_nudge_stays_below_its_ceiling(mem: Memory) -> None:
    biscuit, vet = vet_store(mem)
    hits = {h.id: h.score for h in mem.recall("What did Biscuit chew?", mode="keyword")}
    assert hits[vet] <= 0.15 * hits[biscuit] + 1e-9


def test_explain_shows_the_traversal(mem: Memory) -> None:
    vet_store(mem)
    graph = mem.explain("What did Biscuit chew?", mode="keyword").details["graph"]
    assert graph["seeds"] == ["Biscuit"] and graph["surfaced"] >= 1
    assert any("Biscuit > Dr. Okonkwo" in p["via"] for p in graph["paths"])


def test_plans_have_related_topics(mem: Memory) -> None:
    mem.record_turn("I work at Acme Robotics.", "Nice!", session_id="s1")
    plan = mem.build_context("Any news from Acme Robotics?", session_id="s2")
    related = plan.section("related")
    assert related is not None and "user works at Acme Robotics" in [i.text for i in related.items]


def test_other_agents_entities_are_not_seeds(db_path: Path) -> None:
    with Memory.open(db_path, embedder=None, agent_id="alice") as alice:
        alice.record_turn("Yesterday Biscuit and Dr. Okonkwo met.", "Ok.", session_id="a")
    with Memory.open(db_path, embedder=None, agent_id="bob") as bob:
        assert bob.graph.entity("Biscuit") is None


def test_a_recall_pinned_to_another_agent_uses_that_agents_graph(db_path: Path) -> None:
    """Bob's graph never shapes a recall pinned to Alice: her hits and scores equal those her own store gives."""
    config = LoopConfig(tier="standard", background=False)
    with Memory.open(db_path, embedder=None, agent_id="alice", loop=config) as alice:
        vet_store(alice)
        pinned = {"agent_id": "alice"}
        own = [(h.id, h.score) for h in alice.recall("What did Biscuit chew?", mode="keyword", filters=pinned)]
    with Memory.open(db_path, embedder=None, agent_id="bob", loop=config) as bob:
        bob.record_turn("Biscuit loves Dr. Okonkwo and the old lighthouse.", "Ok.", session_id="b")
        bob.record_turn("Biscuit, Dr. Okonkwo and the lighthouse again.", "Ok.", session_id="b")
        seen = bob.explain("What did Biscuit chew?", mode="keyword", filters=pinned)
    assert [h.id for h in seen.hits] == [i for i, _ in own]
    assert [h.score for h in seen.hits] == pytest.approx([s for _, s in own], abs=1e-9)
    assert seen.details["graph"]["seeds"] == ["Biscuit"]


# ------------------------------------------------------------------ maintenance
def test_clusters_group_connected_entities(mem: Memory) -> None:
    mem.record_turn("Yesterday Biscuit and Dr. Okonkwo met.", "Ok.", session_id="s1")
    mem.record_turn("We drove from Porto to Lisbon in Portugal.", "Nice.", session_id="s1")
    mem.consolidate()
    mem.drain()
    biscuit, vet, porto = (mem.graph.entity(n) for n in ("Biscuit", "Dr. Okonkwo", "Porto"))
    assert biscuit is not None and vet is not None and porto is not None
    assert biscuit.cluster_id == vet.cluster_id != porto.cluster_id
    assert mem.graph.stats()["clusters"] >= 2
    groups = {c.id: set(c.members) for c in mem.graph.clusters()}
    assert {"Biscuit", "Dr. Okonkwo"} <= groups[biscuit.cluster_id]


def test_faded_graph_rows_are_deleted(db_path: Path, clock: Any) -> None:
    config = LoopConfig(tier="standard", background=False)
    with Memory.open(db_path, embedder=None, loop=config, clock=clock) as mem:
        mem.record_turn("Yesterday I met Marta Silva.", "Nice.", session_id="s1")
        clock.now += 5 * 365 * DAY
        mem.consolidate()
        mem.drain()
        assert mem.graph.entity("Marta Silva") is None
        assert mem.health()["turns"] == 1, "the transcript stays"


def _full(db_path: Path, answers: dict[str, str]) -> Memory:
    def llm(prompt: str) -> str:
        for cue, answer in answers.items():
            if cue in prompt:
                return answer
        return '{"facts": []}'

    return Memory.open(db_path, embedder=None, llm=llm, loop=LoopConfig(tier="full", background=False))


def test_full_merges_duplicate_entities_the_llm_confirms(db_path: Path) -> None:
    with _full(db_path, {"name the same": "Yes."}) as mem:
        mem.record_turn("Yesterday Margaret Thompson called.", "Oh?", session_id="s1")
        mem.record_turn("Later Maggie Thompson called again.", "Busy day.", session_id="s1")
        mem.consolidate()
        mem.drain()
        names = [e.name for e in mem.graph.entities() if "Thompson" in e.name]
        merged = mem.graph.entity("Maggie Thompson")
    assert names == ["Margaret Thompson"]
    assert merged is not None and merged.name == "Margaret Thompson" and "Maggie Thompson" in merged.aliases


def test_a_no_keeps_entities_apart(db_path: Path) -> None:
    with _full(db_path, {"name the same": "No."}) as mem:
        mem.record_turn("Yesterday Margaret Thompson called.", "Oh?", session_id="s1")
        mem.record_turn("Later Maggie Thompson called again.", "Busy day.", session_id="s1")
        mem.consolidate()
        mem.drain()
        assert len([e for e in mem.graph.entities() if "Thompson" in e.name]) == 2


def test_full_labels_clusters(db_path: Path) -> None:
    with _full(db_path, {"topic label": "Pet care"}) as mem:
        mem.record_turn("Yesterday Biscuit saw Dr. Okonkwo at Estrela Clinic.", "Ok.", session_id="s1")
        mem.consolidate()
        mem.drain()
        biscuit = mem.graph.entity("Biscuit")
    assert biscuit is not None and biscuit.cluster_label == "Pet care"


def test_an_alias_mentioned_later_reinforces_the_same_entity(mem: Memory) -> None:
    mem.record_turn("I met Margaret Thompson today.", "Nice.", session_id="s1")
    mem.graph.alias("Margaret Thompson", "Maggie")
    mem.record_turn("Later I called Maggie about the trip.", "Good.", session_id="s1")
    thompson = mem.graph.entity("Margaret Thompson")
    assert thompson is not None and thompson.mention_count == 2
    assert [e.name for e in mem.graph.entities() if e.name == "Maggie"] == []


def test_a_merge_sticks_when_the_merged_name_comes_back(db_path: Path) -> None:
    with _full(db_path, {"name the same": "Yes."}) as mem:
        mem.record_turn("Yesterday Margaret Thompson called.", "Oh?", session_id="s1")
        mem.record_turn("Later Maggie Thompson called again.", "Busy day.", session_id="s1")
        mem.consolidate()
        mem.drain()
        mem.record_turn("Today Maggie Thompson wrote.", "Ok.", session_id="s1")
        names = [e.name for e in mem.graph.entities() if "Thompson" in e.name]
    assert names == ["Margaret Thompson"]


def test_a_cluster_label_outlives_the_next_sweep(db_path: Path) -> None:
    with _full(db_path, {"topic label": "Pet care"}) as mem:
        mem.record_turn("Yesterday Biscuit saw Dr. Okonkwo at Estrela Clinic.", "Ok.", session_id="s1")
        for _ in range(2):
            mem.consolidate()
            mem.drain()
        biscuit = mem.graph.entity("Biscuit")
    assert biscuit is not None and biscuit.cluster_label == "Pet care"
