"""The recall hook's injected context message carries no chat-template control token, however it was stored."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from haystack.dataclasses import ChatMessage

from elastic_memory import LoopConfig, Memory
from elastic_memory.testing import CONTROL_TOKENS, control_tokens_in
from haystack_integrations.memory_stores.elastic_memory import CONTEXT_META_KEY, ElasticMemoryRecallHook

from .test_hooks import _state

STUFFED = " ".join(token for tokens in CONTROL_TOKENS.values() for token in tokens)


@pytest.fixture
def mem() -> Iterator[Memory]:
    """A fresh store whose turn carries every family's tokens in its reply, replayed though flagged."""
    with Memory.open(
        ":memory:", embedder=None, loop=LoopConfig(tier="standard", background=False, replay_flagged=True)
    ) as memory:
        assert memory.record_turn("What tea does Ada like?", f"Ada likes green tea {STUFFED}.", session_id="s1").ok
        yield memory


def test_the_context_message_carries_no_control_token(mem: Memory) -> None:
    state = _state([ChatMessage.from_user("What green tea does Ada like?")], session_id="s2")
    ElasticMemoryRecallHook(memory=mem).run(state)
    (context,) = [m for m in state.get("messages") if m.meta.get(CONTEXT_META_KEY) == "context"]
    text = context.text or ""
    assert "Ada likes green tea" in text  # the memory is there, defused
    assert control_tokens_in(text) == []
