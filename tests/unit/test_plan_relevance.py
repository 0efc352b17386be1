"""A plan holds what is relevant: past moments above LoopConfig.past_floor, and never the question's own echo."""

from __future__ import annotations

from pathlib import Path

import pytest

from elastic_memory import LoopConfig, Memory, UsageError
from elastic_memory.testing import FakeEmbedder


def _open(path: Path, floor: float) -> Memory:
    config = LoopConfig(tier="standard", background=False, past_floor=floor)
    return Memory.open(path, embedder=FakeEmbedder(), loop=config)


def _moments(mem: Memory, question: str) -> list[str]:
    plan = mem.build_context(question, session_id="now", touch=False)
    return [i.text for i in plan.items() if i.kind == "chunk"]


def _fill(path: Path) -> None:
    with _open(path, 0.0) as mem:
        mem.record_turn("The attic oak beam measures 4.2 metres.", "Noted.", session_id="s1")
        mem.record_turn("We painted the garden shed blue; the oak door stays.", "Lovely.", session_id="s2")
        mem.drain()


def test_without_a_floor_weak_matches_fill_the_plan(db_path: Path) -> None:
    _fill(db_path)
    with _open(db_path, 0.0) as mem:
        assert any("shed" in m for m in _moments(mem, "How long is the attic oak beam?"))


def test_a_floor_leaves_weak_matches_out(db_path: Path) -> None:
    _fill(db_path)
    with _open(db_path, 0.0) as mem:
        hits = {h.content: h.relevance for h in mem.recall("How long is the attic oak beam?", k=5)}
    weak = min(r for r in hits.values() if r is not None)
    strong = max(r for r in hits.values() if r is not None)
    assert weak < strong
    with _open(db_path, (weak + strong) / 2) as mem:
        moments = _moments(mem, "How long is the attic oak beam?")
    assert any("4.2" in m for m in moments)
    assert not any("shed" in m for m in moments)


def test_the_questions_own_echo_is_left_out(db_path: Path) -> None:
    with _open(db_path, 0.0) as mem:
        mem.record_turn("Suggest a salsa recipe.", "Try pico de gallo with lime.", session_id="monday")
        mem.drain()
        assert _moments(mem, "Suggest a  salsa recipe.") == []
        assert _moments(mem, "Suggest a salsa recipe with lime.") != []


@pytest.mark.parametrize("floor", [-0.1, 1.5, True, "0.3", float("nan")])
def test_a_bad_floor_is_refused(floor: object) -> None:
    with pytest.raises(UsageError, match="past_floor"):
        LoopConfig(past_floor=floor)  # type: ignore[arg-type]
