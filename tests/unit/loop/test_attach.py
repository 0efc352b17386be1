"""Opening a core with its loop attached (``loop.attach``): the options split, checked once, in the same words."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from elastic_memory import LoopConfig, UsageError, _runner
from elastic_memory.core import MemoryCore
from elastic_memory.loop.attach import LOOP_OPTIONS, check_options, loop_of, open_core

ALL_OPTIONS = [
    "agent_id",
    "embedder",
    "recall",
    "vector_index",
    "ram_budget_bytes",
    "ann_threshold",
    "timeout",
    "clock",
    "llm",
    "context_tokens",
    "loop",
    "ram_probe",
]


def test_an_unknown_option_lists_every_option() -> None:
    """If this fails, check loop.attach.check_options: the core's options, then the loop's."""
    with pytest.raises(UsageError) as caught:
        check_options({"agent_id": "a", "not_an_option": 1})
    assert str(caught.value) == f"unknown option(s) ['not_an_option']; the options are {ALL_OPTIONS}"
    assert list(LOOP_OPTIONS) == ["llm", "context_tokens", "loop", "ram_probe"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"loop": {"tier": "full"}}, "loop must be a LoopConfig, got dict"),
        ({"llm": "gpt"}, "llm must be a callable"),
        ({"context_tokens": 0}, "context_tokens must be the model's context size"),
        ({"agent_id": "", "llm": "gpt"}, "agent_id"),  # the core's options are checked first
    ],
)
def test_the_loops_options_are_checked_with_the_core_s(options: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        check_options(options)
    check_options({"embedder": None, "loop": LoopConfig(), "llm": lambda p: p, "context_tokens": 100})


def test_open_core_refuses_a_bad_loop_option_before_it_opens_anything(tmp_path: Path) -> None:
    where = tmp_path / "memory.db"
    with pytest.raises(UsageError, match="llm must be a callable"):
        _runner.run(open_core(where, embedder=None, llm="gpt"), "open")
    assert not where.exists()


def test_a_core_opened_alone_has_no_loop() -> None:
    """``MemoryCore.open`` opens the store only: no part, no recall step; health shows the store's state."""
    core = _runner.run(MemoryCore.open(":memory:", embedder=None), "open")
    try:
        _runner.run(core.remember("The user prefers metric units."), "remember")
        assert len(_runner.run(core.recall("metric units"), "recall")) == 1
        assert core.parts == [] and core.recall_steps == []
        health = _runner.run(core.health(), "health")
        assert "tier" not in health and health["read_only"] is None
        with pytest.raises(LookupError, match="no memory loop is attached"):
            loop_of(core)
    finally:
        _runner.run(core.close(), "close")
