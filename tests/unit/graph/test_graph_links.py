"""A folder's ``[[wikilinks]]`` (memory edges between notes) through the core graph API: nodes and traversal."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from elastic_memory import Edge, Memory
from elastic_memory.connectors import MarkdownFolder, note_id
from elastic_memory.ingest import ingest_folder


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    vault = tmp_path / "vault"
    (vault / "bread").mkdir(parents=True)
    (vault / "Sourdough.md").write_text("# Sourdough\nFeed the starter. See [[Flour]] and [[bread/Oven]].\n")
    (vault / "Flour.md").write_text("# Flour\nStrong bread flour.\n")
    (vault / "bread" / "Oven.md").write_text("# Oven\nBake at 250 C.\n")
    with Memory.open(tmp_path / "memory.db", embedder=None) as m:
        assert ingest_folder(m, MarkdownFolder(vault)).links == 2
        yield m


def test_nodes_are_the_linked_notes_by_name_most_linked_first(mem: Memory) -> None:
    nodes = mem.graph.nodes()
    assert (nodes[0].name, nodes[0].links) == ("Sourdough", 2)
    assert {(n.name, n.links) for n in nodes[1:]} == {("Flour", 1), ("Oven", 1)}
    assert nodes[0].id == note_id("Sourdough.md")


def test_traverse_from_a_note_by_name_follows_its_links(mem: Memory) -> None:
    reached = mem.graph.traverse("Sourdough")
    assert {(r.name, r.relation, r.hops, r.path) for r in reached} == {
        ("Flour", "references", 1, ("Sourdough", "Flour")),
        ("Oven", "references", 1, ("Sourdough", "Oven")),
    }


def test_traverse_from_a_note_by_id_or_path(mem: Memory) -> None:
    by_id = mem.graph.traverse(note_id("bread/Oven.md"))
    by_path = mem.graph.traverse("bread/Oven.md")
    assert [r.name for r in by_id] == [r.name for r in by_path] == ["Sourdough"]


def test_traverse_reaches_notes_two_links_away(mem: Memory) -> None:
    reached = mem.graph.traverse("Flour", hops=2)
    assert {(r.name, r.hops) for r in reached} == {("Sourdough", 1), ("Oven", 2)}


def test_another_agents_linked_memories_are_not_this_agents_nodes(mem: Memory) -> None:
    a = mem.remember("Bob's note.", agent_id="bob")
    b = mem.remember("Bob's other note.", agent_id="bob")
    mem.graph.add_edges([Edge(str(a), str(b), "references", "bob-links")])
    assert "Bob's note." not in [n.name for n in mem.graph.nodes()]
    assert mem.graph.traverse(str(a)) == []
