"""The user is one entity: ``user`` and the name the user gave ("My name is Priya") name the same node."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from elastic_memory import LoopConfig, Memory


@pytest.fixture
def mem(db_path: Path) -> Iterator[Memory]:
    with Memory.open(db_path, embedder=None, loop=LoopConfig(tier="standard", background=False)) as m:
        yield m


def test_the_users_name_names_the_user_entity(mem: Memory) -> None:
    mem.record_turn("My name is Priya. I work at Acme Robotics.", "Nice to meet you!")
    by_name, user = mem.graph.entity("Priya"), mem.graph.entity("user")
    assert by_name is not None and user is not None and by_name.id == user.id
    assert "Priya" in user.aliases


def test_the_graph_holds_no_second_node_for_the_users_name(mem: Memory) -> None:
    mem.record_turn("My name is Priya. I work at Acme Robotics.", "Nice to meet you!")
    names = [e.name.casefold() for e in mem.graph.entities()]
    assert names.count("user") == 1 and "priya" not in names


def test_relations_are_found_by_the_users_name(mem: Memory) -> None:
    mem.record_turn("My name is Priya. I work at Acme Robotics.", "Nice to meet you!")
    found = {(r.source, r.relation, r.target) for r in mem.graph.relations("Priya")}
    assert ("user", "works_at", "Acme Robotics") in found
    assert [r.name for r in mem.graph.traverse("Priya")] == [r.name for r in mem.graph.traverse("user")]


def test_a_name_seen_before_it_was_learned_is_folded_into_the_user(mem: Memory) -> None:
    mem.record_turn("The trip with Marta was booked by Priya yesterday.", "Great.")
    assert mem.graph.entity("Priya") is not None and mem.graph.entity("Priya").name == "Priya"  # type: ignore[union-attr]
    mem.record_turn("My name is Priya.", "Hello Priya!")
    user = mem.graph.entity("Priya")
    assert user is not None and user.name == "user"
    assert "priya" not in [e.name.casefold() for e in mem.graph.entities()]
    assert "Marta" in [r.name for r in mem.graph.traverse("user")]  # the old node's relations came along


def test_a_later_mention_of_the_name_is_the_user(mem: Memory) -> None:
    mem.record_turn("My name is Priya.", "Hello!")
    before = mem.graph.entity("user")
    mem.record_turn("Tomorrow Priya and Marta go kayaking.", "Have fun.")
    after = mem.graph.entity("user")
    assert before is not None and after is not None and after.mention_count > before.mention_count
    assert "priya" not in [e.name.casefold() for e in mem.graph.entities()]
