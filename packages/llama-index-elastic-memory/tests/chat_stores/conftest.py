"""The chat store tests' stores: a fresh core store, both chat stores on it, and the reference."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from llama_index.core.storage.chat_store.sql import SQLAlchemyChatStore

from elastic_memory import LoopConfig
from elastic_memory import Memory as CoreMemory
from llama_index.storage.chat_store.elastic_memory import ElasticMemoryAsyncChatStore, ElasticMemoryChatStore


@pytest.fixture
def mem() -> Iterator[CoreMemory]:
    """A fresh in-memory core store without an embedder; background work only on drain."""
    memory = CoreMemory.open(":memory:", embedder=None, loop=LoopConfig(tier="standard", background=False))
    yield memory
    memory.close()


@pytest.fixture
def store(mem: CoreMemory) -> ElasticMemoryChatStore:
    return ElasticMemoryChatStore(memory=mem)


@pytest.fixture
def astore(mem: CoreMemory) -> ElasticMemoryAsyncChatStore:
    return ElasticMemoryAsyncChatStore(memory=mem)


@pytest.fixture
async def reference() -> AsyncIterator[SQLAlchemyChatStore]:
    """The reference AsyncDBChatStore (in-memory SQLite through aiosqlite)."""
    ref = SQLAlchemyChatStore(table_name="reference")
    yield ref
    if ref._async_engine is not None:
        await ref._async_engine.dispose()
