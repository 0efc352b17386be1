"""The window the model really gets: a SummarizationMiddleware in front no longer hides the thread's own facts."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from elastic_memory import LoopConfig, Memory
from langchain_elastic_memory import ElasticMemoryMiddleware

from .test_middleware import ScriptedModel

BEAM = "The attic oak beam measures 4.2 metres."
QUESTION = "How long is the attic oak beam?"
CHAT = [f"Tell me fun fact number {i} about otters." for i in range(14)]


@pytest.fixture
def mem() -> Iterator[Memory]:
    memory = Memory.open(":memory:", embedder=None, loop=LoopConfig(tier="standard", background=False))
    yield memory
    memory.close()


def _summariser() -> SummarizationMiddleware:
    summaries = GenericFakeChatModel(messages=iter(["We talked about otters."] * 50))
    return SummarizationMiddleware(summaries, trigger=("messages", 8), keep=("messages", 4))


def _chat_then_ask(mem: Memory) -> ScriptedModel:
    """The beam, 14 turns of chat and the question in one thread, behind a summariser; the model's inputs."""
    model = ScriptedModel(messages=iter(["Noted."] * 15 + ["4.2 metres."]))
    agent = create_agent(
        model, middleware=[_summariser(), ElasticMemoryMiddleware(memory=mem)], checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "attic"}}
    for text in [BEAM, *CHAT, QUESTION]:
        agent.invoke({"messages": [HumanMessage(text)]}, config)
    return model


def test_the_summariser_dropped_the_fact_from_the_messages(mem: Memory) -> None:
    last = _chat_then_ask(mem).received[-1]
    assert not any("4.2" in str(m.text) for m in last[1:])  # the conversation the model sees


def test_the_fact_reaches_the_memory_block_in_the_same_thread(mem: Memory) -> None:
    system = _chat_then_ask(mem).received[-1][0]
    assert "4.2" in str(system.text)
