"""The memory block's injected plan carries no chat-template control token, however it was stored."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from llama_index.core.base.llms.types import MessageRole

from elastic_memory import LoopConfig
from elastic_memory import Memory as CoreMemory
from elastic_memory.testing import CONTROL_TOKENS, control_tokens_in
from llama_index.memory.elastic_memory import ElasticMemoryBlock

from .test_memory_block import memory_with, user

STUFFED = " ".join(token for tokens in CONTROL_TOKENS.values() for token in tokens)


@pytest.fixture
def mem() -> Iterator[CoreMemory]:
    """A fresh store whose turn carries every family's tokens in its reply, replayed though flagged."""
    memory = CoreMemory.open(
        ":memory:", embedder=None, loop=LoopConfig(tier="standard", background=False, replay_flagged=True)
    )
    assert memory.record_turn("What tea does Ada like?", f"Ada likes green tea {STUFFED}.", session_id="s1").ok
    yield memory
    memory.close()


async def test_the_system_message_carries_no_control_token(mem: CoreMemory) -> None:
    memory = memory_with(ElasticMemoryBlock(memory=mem))
    await memory.aput(user("What green tea does Ada like?"))
    system, _ = await memory.aget()
    text = system.content or ""
    assert system.role == MessageRole.SYSTEM
    assert "Ada likes green tea" in text  # the memory is there, defused
    assert control_tokens_in(text) == []
