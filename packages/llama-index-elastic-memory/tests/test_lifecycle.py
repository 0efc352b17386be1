"""Every adapter class of the package shares one lifecycle (``elastic_memory.adapters.StoreLifecycle``).

For each class: the facades, ``close``/``aclose`` (twice is safe), ``with``/``async with``,
which close a store the object opened (``path=``) and leave open a ``memory=`` it was given.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.embeddings import MockEmbedding
from pydantic import BaseModel

from elastic_memory import AsyncMemory, Memory, UsageError
from elastic_memory.adapters import StoreLifecycle
from llama_index.embeddings.elastic_memory import ElasticMemoryEmbedding
from llama_index.memory.elastic_memory import ElasticMemory, ElasticMemoryBlock
from llama_index.retrievers.elastic_memory import ElasticMemoryRetriever
from llama_index.storage.chat_store.elastic_memory import ElasticMemoryAsyncChatStore, ElasticMemoryChatStore
from llama_index.vector_stores.elastic_memory import ElasticMemoryVectorStore

MEMBERS = ("memory", "amemory", "close", "aclose", "__enter__", "__exit__", "__aenter__", "__aexit__")


def _memory(path: str | None = None, **where: Any) -> ElasticMemory:
    return ElasticMemory.from_defaults(path, session_id="s", embedder=None, **where)


def _retriever(**where: Any) -> ElasticMemoryRetriever:
    return ElasticMemoryRetriever(embed_model=None if "memory" in where else MockEmbedding(embed_dim=8), **where)


#: How to build each adapter class on ``path=`` or ``memory=`` (no model is loaded).
MAKERS: dict[type[Any], Callable[..., StoreLifecycle]] = {
    ElasticMemory: _memory,
    ElasticMemoryAsyncChatStore: ElasticMemoryAsyncChatStore,
    ElasticMemoryBlock: lambda **where: ElasticMemoryBlock(
        **where, **({} if "memory" in where else {"embedder": None})
    ),
    ElasticMemoryChatStore: ElasticMemoryChatStore,
    ElasticMemoryRetriever: _retriever,
    ElasticMemoryVectorStore: ElasticMemoryVectorStore,
}
#: The chat stores' earlier name of ``amemory``, kept.
ASYNC_MEMORY_ALIAS = [ElasticMemoryAsyncChatStore, ElasticMemoryChatStore]


def names(classes: Any) -> list[str]:
    return [c.__name__ for c in classes]


def is_open(memory: Memory) -> bool:
    try:
        memory.get("no-such-id")
    except UsageError as e:
        assert "closed" in str(e)
        return False
    return True


def test_every_adapter_class_is_covered() -> None:
    assert all(issubclass(cls, StoreLifecycle) for cls in MAKERS)
    assert not issubclass(ElasticMemoryEmbedding, StoreLifecycle)  # the one class that holds no store
    assert all(issubclass(cls, BaseModel) for cls in MAKERS if cls is not ElasticMemoryRetriever)


@pytest.mark.parametrize("cls", MAKERS, ids=names(MAKERS))
def test_the_lifecycle_members_exist(cls: type[Any], tmp_path: Path) -> None:
    with MAKERS[cls](path=str(tmp_path / "a.db")) as adapter:
        assert isinstance(adapter, StoreLifecycle)
        assert all(hasattr(adapter, member) for member in MEMBERS)
        assert isinstance(adapter.memory, Memory)
        assert isinstance(adapter.amemory, AsyncMemory)
        assert adapter.amemory.path == adapter.memory.path == str(tmp_path / "a.db")


@pytest.mark.parametrize("cls", ASYNC_MEMORY_ALIAS, ids=names(ASYNC_MEMORY_ALIAS))
def test_async_memory_is_amemory(cls: type[Any]) -> None:
    with MAKERS[cls](path=":memory:") as adapter:
        assert adapter.async_memory is adapter.amemory


@pytest.mark.parametrize("cls", MAKERS, ids=names(MAKERS))
def test_with_closes_a_store_it_opened_and_close_twice_is_safe(cls: type[Any], tmp_path: Path) -> None:
    with MAKERS[cls](path=str(tmp_path / "a.db")) as adapter:
        memory = adapter.memory
        assert is_open(memory)
    assert not is_open(memory)
    adapter.close()
    asyncio.run(adapter.aclose())
    assert not is_open(memory)


@pytest.mark.parametrize("cls", MAKERS, ids=names(MAKERS))
async def test_async_with_closes_a_store_it_opened_and_aclose_twice_is_safe(cls: type[Any], tmp_path: Path) -> None:
    async with MAKERS[cls](path=str(tmp_path / "a.db")) as adapter:
        memory = adapter.memory
        assert await adapter.amemory.get("no-such-id") is None
    assert not is_open(memory)
    await adapter.aclose()
    adapter.close()


@pytest.mark.parametrize("cls", MAKERS, ids=names(MAKERS))
@pytest.mark.parametrize("given", ["sync", "async"])
async def test_a_given_memory_stays_open(cls: type[Any], given: str) -> None:
    with Memory.open(":memory:", embedder=None) as memory:
        handle: Any = memory if given == "sync" else memory.as_async()
        with MAKERS[cls](memory=handle) as adapter:
            assert adapter.memory.path == memory.path
        adapter.close()
        async with MAKERS[cls](memory=handle) as again:
            assert again.amemory.path == memory.path
        await again.aclose()
        assert is_open(memory)


@pytest.mark.parametrize("cls", [c for c in MAKERS if issubclass(c, BaseModel)], ids=lambda c: c.__name__)
def test_a_pydantic_model_keeps_its_fields(cls: type[Any], tmp_path: Path) -> None:
    """The mixin adds no field and keeps the store private: pydantic models dump as before."""
    with MAKERS[cls](path=str(tmp_path / "a.db")) as adapter:
        dumped = adapter.model_dump()
        assert not {"memory", "amemory", "_opened"} & set(cls.model_fields)
        assert not {"memory", "amemory", "_opened"} & set(dumped)


def test_a_rebuilt_block_opens_its_store_on_first_use(tmp_path: Path) -> None:
    """``model_validate`` skips the constructor: the facades open the serialised path, close closes it."""
    with ElasticMemoryBlock(path=str(tmp_path / "a.db"), embedder=None) as block:
        dump = block.model_dump()
    rebuilt = ElasticMemoryBlock.model_validate(dump)
    rebuilt.close()  # nothing open yet: nothing to do
    memory = rebuilt.memory
    assert memory.path == str(tmp_path / "a.db")
    assert rebuilt.amemory.path == memory.path
    rebuilt.close()
    assert not is_open(memory)
