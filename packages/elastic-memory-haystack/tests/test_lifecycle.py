"""Every adapter class of the package shares one lifecycle (``elastic_memory.adapters.StoreLifecycle``).

For each class: the facades, ``close``/``aclose`` and Haystack's ``close_async`` (twice is safe),
``with``/``async with``, which close a store the object opened (``path=``) and leave open a
``memory=`` it was given.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from elastic_memory import AsyncMemory, Memory, UsageError
from elastic_memory.adapters import StoreLifecycle
from haystack_integrations.components.embedders.elastic_memory import (
    ElasticMemoryDocumentEmbedder,
    ElasticMemoryTextEmbedder,
)
from haystack_integrations.components.retrievers.elastic_memory import (
    ElasticMemoryBM25Retriever,
    ElasticMemoryEmbeddingRetriever,
    ElasticMemoryHybridRetriever,
    ElasticMemoryRetriever,
)
from haystack_integrations.document_stores.elastic_memory import ElasticMemoryDocumentStore
from haystack_integrations.memory_stores.elastic_memory import (
    ElasticMemoryChatMessageStore,
    ElasticMemoryRecallHook,
    ElasticMemoryRecordHook,
    ElasticMemoryStore,
)

MEMBERS = (
    "memory",
    "amemory",
    "close",
    "aclose",
    "close_async",
    "__enter__",
    "__exit__",
    "__aenter__",
    "__aexit__",
)


def _no_model(cls: type[Any]) -> Callable[..., StoreLifecycle]:
    return lambda **where: cls(**where, **({} if "memory" in where else {"embedder": None}))


#: How to build each adapter class on ``path=`` or ``memory=`` (no model is loaded).
MAKERS: dict[type[Any], Callable[..., StoreLifecycle]] = {
    ElasticMemoryChatMessageStore: _no_model(ElasticMemoryChatMessageStore),
    ElasticMemoryDocumentStore: ElasticMemoryDocumentStore,
    ElasticMemoryRecallHook: _no_model(ElasticMemoryRecallHook),
    ElasticMemoryRecordHook: _no_model(ElasticMemoryRecordHook),
    ElasticMemoryRetriever: _no_model(ElasticMemoryRetriever),
    ElasticMemoryStore: _no_model(ElasticMemoryStore),
}
#: The memory stores' and hooks' earlier name of ``amemory``, kept.
ASYNC_MEMORY_ALIAS = [
    ElasticMemoryChatMessageStore,
    ElasticMemoryRecallHook,
    ElasticMemoryRecordHook,
    ElasticMemoryStore,
]
#: Classes that hold no store of their own (the document retrievers are given a document store).
STORELESS = [
    ElasticMemoryBM25Retriever,
    ElasticMemoryDocumentEmbedder,
    ElasticMemoryEmbeddingRetriever,
    ElasticMemoryHybridRetriever,
    ElasticMemoryTextEmbedder,
]


def name(cls: type[Any]) -> str:
    return cls.__name__


def is_open(memory: Memory) -> bool:
    try:
        memory.get("no-such-id")
    except UsageError as e:
        assert "closed" in str(e)
        return False
    return True


def test_every_adapter_class_is_covered() -> None:
    assert all(issubclass(cls, StoreLifecycle) for cls in MAKERS)
    assert not any(issubclass(cls, StoreLifecycle) for cls in STORELESS)


@pytest.mark.parametrize("cls", MAKERS, ids=name)
def test_the_lifecycle_members_exist(cls: type[Any], tmp_path: Path) -> None:
    with MAKERS[cls](path=str(tmp_path / "a.db")) as adapter:
        assert isinstance(adapter, StoreLifecycle)
        assert all(hasattr(adapter, member) for member in MEMBERS)
        assert isinstance(adapter.memory, Memory)
        assert isinstance(adapter.amemory, AsyncMemory)
        assert adapter.amemory.path == adapter.memory.path == str(tmp_path / "a.db")


@pytest.mark.parametrize("cls", ASYNC_MEMORY_ALIAS, ids=name)
def test_async_memory_is_amemory(cls: type[Any]) -> None:
    with MAKERS[cls](path=":memory:") as adapter:
        assert adapter.async_memory is adapter.amemory


@pytest.mark.parametrize("cls", MAKERS, ids=name)
def test_with_closes_a_store_it_opened_and_close_twice_is_safe(cls: type[Any], tmp_path: Path) -> None:
    with MAKERS[cls](path=str(tmp_path / "a.db")) as adapter:
        memory = adapter.memory
        assert is_open(memory)
    assert not is_open(memory)
    adapter.close()
    asyncio.run(adapter.aclose())
    asyncio.run(adapter.close_async())
    assert not is_open(memory)


@pytest.mark.parametrize("cls", MAKERS, ids=name)
async def test_async_with_closes_a_store_it_opened_and_aclose_twice_is_safe(cls: type[Any], tmp_path: Path) -> None:
    async with MAKERS[cls](path=str(tmp_path / "a.db")) as adapter:
        memory = adapter.memory
        assert await adapter.amemory.get("no-such-id") is None
    assert not is_open(memory)
    await adapter.aclose()
    await adapter.close_async()
    adapter.close()


@pytest.mark.parametrize("cls", MAKERS, ids=name)
async def test_close_async_closes_a_store_it_opened(cls: type[Any], tmp_path: Path) -> None:
    """Haystack's name: ``Agent.close_async`` and ``DocumentWriter.close_async`` call it."""
    adapter = MAKERS[cls](path=str(tmp_path / "a.db"))
    memory = adapter.memory
    await adapter.close_async()
    assert not is_open(memory)


@pytest.mark.parametrize("cls", MAKERS, ids=name)
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
        await again.close_async()
        assert is_open(memory)
