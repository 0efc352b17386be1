"""The window: what the LLM gets beside the memory block decides which of the session's turns the block repeats.

LlamaIndex's ``Memory`` keeps a token-limited short-term history and archives its oldest
messages when it overflows; it gives its blocks that history, which is what the LLM gets. The
block passes it to ``build_context(window=...)``, so a turn the history dropped comes back
through the block in the same session, and a turn the history still holds is not repeated.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import Memory
from llama_index.core.storage.chat_store.base_db import MessageStatus

from elastic_memory import LoopConfig
from elastic_memory import Memory as CoreMemory
from llama_index.memory.elastic_memory import ElasticMemory, ElasticMemoryBlock
from llama_index.storage.chat_store.elastic_memory import ElasticMemoryAsyncChatStore

BEAM = "The attic oak beam measures 4.2 metres."
QUESTION = "How long is the attic oak beam?"
CHAT = [(f"Tell me fun fact number {i} about otters.", f"Otters hold paws while asleep, fact {i}.") for i in range(14)]
#: A history of about 200 tokens (8 exchanges of the chat above), flushed 40 tokens at a time.
SMALL = {"token_limit": 400, "chat_history_token_ratio": 0.5, "token_flush_size": 40}


@pytest.fixture
def mem() -> Iterator[CoreMemory]:
    memory = CoreMemory.open(":memory:", embedder=None, loop=LoopConfig(tier="standard", background=False))
    yield memory
    memory.close()


async def converse(memory: Memory, chat: list[tuple[str, str]]) -> list[ChatMessage]:
    """The beam, then ``chat``, then the question, through a chat engine; what the LLM got for the question."""
    received: list[list[ChatMessage]] = []
    replies = iter(["Noted.", *(reply for _, reply in chat), "4.2 metres."])

    def respond(messages: list[ChatMessage], **kwargs: Any) -> ChatMessage:
        received.append([m.model_copy(deep=True) for m in messages])
        return ChatMessage(role=MessageRole.ASSISTANT, content=next(replies))

    engine = SimpleChatEngine.from_defaults(llm=MockFunctionCallingLLM(response_generator=respond), memory=memory)
    for text in [BEAM, *(said for said, _ in chat), QUESTION]:
        await engine.achat(text)
    return received[-1]


def block_text(sent: list[ChatMessage]) -> str:
    """The memory blocks LlamaIndex put into the system message ("" when none)."""
    return next((m.content or "" for m in sent if m.role == MessageRole.SYSTEM), "")


def history(sent: list[ChatMessage]) -> list[str]:
    return [m.content or "" for m in sent if m.role != MessageRole.SYSTEM]


async def test_a_fact_the_history_dropped_reaches_the_block_in_the_same_session(mem: CoreMemory) -> None:
    async with ElasticMemory.from_defaults(memory=mem, session_id="s", **SMALL) as memory:
        sent = await converse(memory, CHAT)
        assert await memory.sql_store.count_messages("s", status=MessageStatus.ARCHIVED) > 0
    assert BEAM not in history(sent)  # the token-limited history no longer holds it
    assert history(sent)[-1] == QUESTION
    assert "4.2" in block_text(sent)


async def test_without_the_window_the_plan_assumes_the_session_is_still_seen(mem: CoreMemory) -> None:
    """Why the window is passed: the core's default assumes the host keeps the session's last turns."""
    async with ElasticMemory.from_defaults(memory=mem, session_id="s", **SMALL) as memory:
        await converse(memory, CHAT)
    assert "4.2" not in mem.build_context(QUESTION, session_id="s").render()


async def test_a_turn_still_in_the_history_is_not_repeated(mem: CoreMemory) -> None:
    async with ElasticMemory.from_defaults(memory=mem, session_id="s", **SMALL) as memory:
        sent = await converse(memory, CHAT[:2])
    assert BEAM in history(sent)
    assert "4.2" not in block_text(sent)


async def test_another_session_recalls_the_turn_the_history_still_holds(mem: CoreMemory) -> None:
    async with ElasticMemory.from_defaults(memory=mem, session_id="s", **SMALL) as memory:
        await converse(memory, CHAT[:2])
    async with ElasticMemory.from_defaults(memory=mem, session_id="t", **SMALL) as later:
        (system,) = await later.aget(input=QUESTION)
    assert "4.2" in (system.content or "")


async def test_a_standalone_block_in_llamaindex_memory_gets_the_window(mem: CoreMemory) -> None:
    """A plain ``Memory`` with the block: the block records what the history flushes, and recalls it."""
    memory = Memory.from_defaults(
        session_id="s",
        memory_blocks=[ElasticMemoryBlock(memory=mem)],
        chat_store=ElasticMemoryAsyncChatStore(memory=mem),
        **SMALL,
    )
    sent = await converse(memory, CHAT)
    assert BEAM not in history(sent)
    assert "4.2" in block_text(sent)
