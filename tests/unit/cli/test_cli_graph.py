"""``elastic-memory graph entities|neighbors|path``, through CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elastic_memory import Memory

from ._cli import ok

pytestmark = pytest.mark.usefixtures("isolated_cli")


@pytest.fixture
def graph_db(db: Path) -> Path:
    """A store whose graph has user -works_at-> Acme Robotics -mentioned_with- Ana -... Lisbon."""
    with Memory.open(db, embedder=None) as mem:
        mem.record_turn("I work at Acme Robotics. My sister Ana lives in Lisbon.", "Nice!")
        mem.drain()
    return db


def test_entities_table_shows_ids_and_names(graph_db: Path) -> None:
    with Memory.open(graph_db, embedder=None) as mem:
        acme = mem.graph.entity("Acme Robotics")
    assert acme is not None
    out = ok("graph", "entities", "--db", graph_db).stdout
    assert "Acme Robotics" in out
    assert str(acme.id) in out


def test_entities_of_another_agent_are_empty(graph_db: Path) -> None:
    assert ok("graph", "entities", "--agent", "nobody", "--db", graph_db, "--json").stdout == ""


def test_neighbors_lists_entities_within_hops(graph_db: Path) -> None:
    rows = [
        json.loads(line) for line in ok("graph", "neighbors", "user", "--db", graph_db, "--json").stdout.splitlines()
    ]
    assert [(r["name"], r["hops"], r["relation"]) for r in rows] == [
        ("Acme Robotics", 1, "works_at"),
        ("Ana", 1, "has_sister"),
    ]


def test_path_prints_the_chain(graph_db: Path) -> None:
    out = ok("graph", "path", "user", "Lisbon", "--db", graph_db).stdout
    assert out.strip() == "2 hop(s): user → Acme Robotics → Lisbon"


def test_path_json_is_null_without_a_path(graph_db: Path) -> None:
    out = ok("graph", "path", "user", "Lisbon", "--max-hops", "1", "--db", graph_db, "--json").stdout
    assert json.loads(out) is None


@pytest.fixture
def vault_db(db: Path, tmp_path: Path) -> Path:
    """A store holding an ingested folder: Sourdough -> Flour, Sourdough -> Oven, Oven => Flour (an embed)."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Sourdough.md").write_text("# Sourdough\nFeed the starter. See [[Flour]] and [[Oven]].\n")
    (vault / "Flour.md").write_text("# Flour\nStrong bread flour.\n")
    (vault / "Oven.md").write_text("# Oven\nBake at 250 C. ![[Flour]]\n")
    ingested = ok("ingest", vault, "--db", db)
    assert "3 wikilink edges" in ingested.output
    return db


def test_entities_lists_the_notes_an_ingest_linked(vault_db: Path) -> None:
    output = ok("graph", "entities", "--db", vault_db).output
    assert "Sourdough" in output and "Flour" in output and "Oven" in output
    assert "has no entities yet" not in output


def test_entities_json_has_a_row_per_linked_note(vault_db: Path) -> None:
    rows = [json.loads(line) for line in ok("graph", "entities", "--db", vault_db, "--json").output.splitlines()]
    links = {row["name"]: row["links"] for row in rows if "node" in row}
    assert links == {"Flour": 2, "Oven": 2, "Sourdough": 2}


def test_neighbors_of_a_note_are_the_notes_it_links(vault_db: Path) -> None:
    rows = [
        json.loads(line)
        for line in ok("graph", "neighbors", "Sourdough", "--db", vault_db, "--json").output.splitlines()
    ]
    assert {(r["name"], r["relation"], r["hops"]) for r in rows} == {
        ("Flour", "references", 1),
        ("Oven", "references", 1),
    }


def test_neighbors_follow_links_for_more_hops(vault_db: Path) -> None:
    output = ok("graph", "neighbors", "Flour", "--hops", "2", "--db", vault_db).output
    assert "Sourdough" in output and "Oven" in output and "embeds" in output
