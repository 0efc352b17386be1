"""The host's window: turns of the live session the model no longer sees come back into the plan."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from elastic_memory import LoopConfig, Memory
from elastic_memory.testing import FakeEmbedder

BEAM = "The attic oak beam measures 4.2 metres."
QUESTION = "How long is the attic oak beam?"
CHAT = [(f"Tell me fun fact number {i} about otters.", f"Otters hold paws while asleep, fact {i}.") for i in range(14)]


@pytest.fixture
def mem(db_path: Path) -> Iterator[Memory]:
    with Memory.open(db_path, embedder=FakeEmbedder(), loop=LoopConfig(tier="standard", background=False)) as m:
        m.record_turn(BEAM, "Noted.", session_id="s")
        for user, reply in CHAT:
            m.record_turn(user, reply, session_id="s")
        m.drain()
        yield m


def _summarised_window() -> list[object]:
    """What a summarising host sends: its summary, then the last two exchanges and the question."""
    last = [text for exchange in CHAT[-2:] for text in exchange]
    return ["Here is a summary of the conversation to date: we talked about otters.", *last, QUESTION]


def test_without_a_window_the_plan_assumes_the_host_keeps_the_session(mem: Memory) -> None:
    assert "4.2" not in mem.build_context(QUESTION, session_id="s").render()


def test_a_turn_that_fell_out_of_the_window_comes_back(mem: Memory) -> None:
    assert "4.2" in mem.build_context(QUESTION, session_id="s", window=_summarised_window()).render()


def test_a_turn_still_in_the_window_is_not_repeated(mem: Memory) -> None:
    window = [BEAM, "Noted.", *_summarised_window()]
    assert "4.2" not in mem.build_context(QUESTION, session_id="s", window=window).render()


def test_the_window_reads_chat_messages_and_dicts(mem: Memory) -> None:
    window = [
        SimpleNamespace(content="Here is a summary of the conversation to date."),
        {"role": "user", "content": CHAT[-1][0]},
        {"role": "assistant", "content": CHAT[-1][1]},
    ]
    assert "4.2" in mem.build_context(QUESTION, session_id="s", window=window).render()


def test_an_empty_window_shows_every_relevant_turn(mem: Memory) -> None:
    assert "4.2" in mem.build_context(QUESTION, session_id="s", window=[]).render()


@pytest.mark.parametrize("window", [object(), 42, [None, b"\xff", {"content": None}], "just one string"])
def test_a_strange_window_never_raises(mem: Memory, window: object) -> None:
    plan = mem.build_context(QUESTION, session_id="s", window=window)  # type: ignore[arg-type]
    assert mem.health()["errors"] == {}
    assert isinstance(plan.render(), str)


def test_other_sessions_are_unaffected_by_the_window(mem: Memory) -> None:
    assert "4.2" in mem.build_context(QUESTION, session_id="another", window=[QUESTION]).render()
