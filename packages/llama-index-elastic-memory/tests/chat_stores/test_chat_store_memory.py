"""``ElasticMemoryAsyncChatStore`` under LlamaIndex's ``Memory`` (the FIFO it keeps its history in)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from llama_index.core.bridge.pydantic import Field
from llama_index.core.llms import ChatMessage
from llama_index.core.memory import BaseMemoryBlock, Memory
from llama_index.core.storage.chat_store.sql import SQLAlchemyChatStore

from elastic_memory import Memory as CoreMemory
from llama_index.storage.chat_store.elastic_memory import ElasticMemoryAsyncChatStore, ElasticMemoryChatStore

from .support import ACTIVE, ARCHIVED, bot, chatty, texts, user


# ---------------------------------------------------------- under the new Memory
class Recorder(BaseMemoryBlock[str]):
    """A block that keeps what the FIFO flushes to it."""

    name: str = "Recorder"
    seen: list[str] = Field(default_factory=list)

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        return ""

    async def _aput(self, messages: list[ChatMessage]) -> None:
        self.seen.extend(m.content or "" for m in messages)


async def test_memory_flushes_its_fifo_into_archived_messages(astore: ElasticMemoryAsyncChatStore) -> None:
    recorder = Recorder()
    memory = Memory.from_defaults(
        session_id="s1",
        chat_store=astore,
        token_limit=60,
        chat_history_token_ratio=0.5,
        token_flush_size=10,
        memory_blocks=[recorder],
    )
    for message in chatty(12):
        await memory.aput(message)
    archived = await memory.aget_all(status=ARCHIVED)
    active = await memory.aget_all(status=ACTIVE)
    assert archived and active
    assert texts(archived + active) == texts(chatty(12))
    assert recorder.seen == texts(archived)
    assert await astore.count_messages("s1", status=ARCHIVED) == len(archived)


async def test_memory_over_our_store_behaves_like_over_the_reference(
    astore: ElasticMemoryAsyncChatStore, reference: SQLAlchemyChatStore
) -> None:
    seen: list[tuple[list[Any], list[Any], list[Any]]] = []
    for chat_store in (reference, astore):
        memory = Memory.from_defaults(
            session_id="s1", chat_store=chat_store, token_limit=80, chat_history_token_ratio=0.5, token_flush_size=12
        )
        for message in chatty(9):
            await memory.aput(message)
        await memory.aput_messages(chatty(5))
        seen.append(
            (
                await memory.aget(),
                await memory.aget_all(status=ARCHIVED),
                await memory.aget_all(),
            )
        )
    assert seen[1] == seen[0]


async def test_memory_reset_clears_the_session(astore: ElasticMemoryAsyncChatStore) -> None:
    memory = Memory.from_defaults(session_id="s1", chat_store=astore, token_limit=60, chat_history_token_ratio=0.5)
    await memory.aput_messages(chatty(10))
    await memory.aput(user("other session stays"))
    other = Memory.from_defaults(session_id="s2", chat_store=astore)
    await other.aput(user("kept"))
    await memory.areset()
    assert await memory.aget_all() == []
    assert texts(await other.aget_all()) == ["kept"]


def test_memory_sync_api_and_initial_history_work(astore: ElasticMemoryAsyncChatStore) -> None:
    memory = Memory.from_defaults(session_id="s1", chat_store=astore, chat_history=[user("hello"), bot("hi")])
    memory.put(user("how are you?"))
    assert texts(memory.get_all()) == ["hello", "hi", "how are you?"]


async def test_memory_history_survives_a_restart(tmp_path: Path) -> None:
    async with ElasticMemoryAsyncChatStore(path=tmp_path / "chat.db") as first:
        memory = Memory.from_defaults(
            session_id="s1", chat_store=first, token_limit=60, chat_history_token_ratio=0.5, token_flush_size=10
        )
        for message in chatty(10):
            await memory.aput(message)
        before = (await memory.aget(), await memory.aget_all(status=None))
    async with ElasticMemoryAsyncChatStore(path=tmp_path / "chat.db") as second:
        memory = Memory.from_defaults(session_id="s1", chat_store=second, token_limit=60)
        assert (await memory.aget(), await memory.aget_all(status=None)) == before


async def test_classic_store_shows_the_whole_transcript_the_memory_kept(mem: CoreMemory) -> None:
    astore = ElasticMemoryAsyncChatStore(memory=mem)
    memory = Memory.from_defaults(
        session_id="s1", chat_store=astore, token_limit=60, chat_history_token_ratio=0.5, token_flush_size=10
    )
    for message in chatty(10):
        await memory.aput(message)
    assert await astore.count_messages("s1", status=ARCHIVED) > 0
    assert texts(await ElasticMemoryChatStore(memory=mem).aget_messages("s1")) == texts(chatty(10))
