"""The middleware's injected memory carries no chat-template control token, however it was stored."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, SystemMessage

from elastic_memory import LoopConfig, Memory
from elastic_memory.testing import CONTROL_TOKENS, control_tokens_in
from langchain_elastic_memory import ElasticMemoryMiddleware

from .test_middleware import scripted, thread

STUFFED = " ".join(token for tokens in CONTROL_TOKENS.values() for token in tokens)


@pytest.fixture
def mem() -> Iterator[Memory]:
    """A fresh store whose turn carries every family's tokens in its reply, replayed though flagged."""
    with Memory.open(
        ":memory:", embedder=None, loop=LoopConfig(tier="standard", background=False, replay_flagged=True)
    ) as memory:
        assert memory.record_turn("What tea does Ada like?", f"Ada likes green tea {STUFFED}.", session_id="s1").ok
        yield memory


def test_the_system_message_carries_no_control_token(mem: Memory) -> None:
    model = scripted("Green tea.")
    agent = create_agent(model, system_prompt="You are kind.", middleware=[ElasticMemoryMiddleware(memory=mem)])
    agent.invoke({"messages": [HumanMessage("What green tea does Ada like?")]}, thread("t1"))
    system = model.received[0][0]
    assert isinstance(system, SystemMessage)
    assert "Ada likes green tea" in system.text  # the memory is there, defused
    assert control_tokens_in(system.text) == []
