"""A plan holds what is relevant: no past moments when the best is below LoopConfig.past_floor, never an echo."""

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


def _best(path: Path, question: str) -> float:
    with _open(path, 0.0) as mem:
        return max(h.relevance or 0.0 for h in mem.recall(question, k=5))


def test_without_a_floor_weak_matches_fill_the_plan(db_path: Path) -> None:
    _fill(db_path)
    with _open(db_path, 0.0) as mem:
        assert any("shed" in m for m in _moments(mem, "Is the shed door painted?"))


def test_an_input_about_nothing_stored_gets_no_past_moments(db_path: Path) -> None:
    _fill(db_path)
    unrelated = "Suggest a salsa recipe with the oak."
    with _open(db_path, _best(db_path, unrelated) + 0.01) as mem:
        assert _moments(mem, unrelated) == []


def test_an_input_whose_best_match_clears_the_floor_keeps_its_moments(db_path: Path) -> None:
    _fill(db_path)
    question = "How long is the attic oak beam?"
    with _open(db_path, _best(db_path, question) - 0.01) as mem:
        moments = _moments(mem, question)
    assert any("4.2" in m for m in moments)
    assert any("shed" in m for m in moments)  # a gate, not a per-moment cut: the weaker moment stays


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
