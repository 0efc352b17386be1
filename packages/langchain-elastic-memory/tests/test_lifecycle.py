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
from langchain_core.embeddings import DeterministicFakeEmbedding
from pydantic import BaseModel

import langchain_elastic_memory
from elastic_memory import AsyncMemory, Memory, UsageError
from elastic_memory.adapters import StoreLifecycle
from langchain_elastic_memory import (
    ElasticMemoryChatMessageHistory,
    ElasticMemoryMiddleware,
    ElasticMemoryRetriever,
    ElasticMemoryStore,
    ElasticMemoryVectorStore,
)

#: The exported classes that hold no store.
STORELESS = {"ElasticMemoryEmbeddings", "LangChainEmbedder"}
MEMBERS = ("memory", "amemory", "close", "aclose", "__enter__", "__exit__", "__aenter__", "__aexit__")

#: How to build each adapter class on ``path=`` or ``memory=`` (no model is loaded).
MAKERS: dict[str, Callable[..., StoreLifecycle]] = {
    "ElasticMemoryChatMessageHistory": lambda **where: ElasticMemoryChatMessageHistory("s", embedder=None, **where),
    "ElasticMemoryMiddleware": lambda **where: ElasticMemoryMiddleware(embedder=None, **where),
    "ElasticMemoryRetriever": lambda **where: ElasticMemoryRetriever(
        embedding=None if "memory" in where else DeterministicFakeEmbedding(size=8), **where
    ),
    "ElasticMemoryStore": ElasticMemoryStore,
    "ElasticMemoryVectorStore": lambda **where: ElasticMemoryVectorStore(
        **where, **({} if "memory" in where else {"embedder": None})
    ),
}
PYDANTIC = sorted(name for name in MAKERS if issubclass(getattr(langchain_elastic_memory, name), BaseModel))


def is_open(memory: Memory) -> bool:
    try:
        memory.get("no-such-id")
    except UsageError as e:
        assert "closed" in str(e)
        return False
    return True


def test_every_adapter_class_is_covered() -> None:
    exported = {name for name in langchain_elastic_memory.__all__ if name != "__version__"}
    assert exported - STORELESS == set(MAKERS)
    assert all(issubclass(getattr(langchain_elastic_memory, name), StoreLifecycle) for name in MAKERS)
    assert PYDANTIC == ["ElasticMemoryRetriever"]


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_the_lifecycle_members_exist(name: str, tmp_path: Path) -> None:
    with MAKERS[name](path=str(tmp_path / "a.db")) as adapter:
        assert isinstance(adapter, StoreLifecycle)
        assert all(hasattr(adapter, member) for member in MEMBERS)
        assert isinstance(adapter.memory, Memory)
        assert isinstance(adapter.amemory, AsyncMemory)
        assert adapter.amemory.path == adapter.memory.path == str(tmp_path / "a.db")


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_with_closes_a_store_it_opened_and_close_twice_is_safe(name: str, tmp_path: Path) -> None:
    with MAKERS[name](path=str(tmp_path / "a.db")) as adapter:
        memory = adapter.memory
        assert is_open(memory)
    assert not is_open(memory)
    adapter.close()
    asyncio.run(adapter.aclose())
    assert not is_open(memory)


@pytest.mark.parametrize("name", sorted(MAKERS))
async def test_async_with_closes_a_store_it_opened_and_aclose_twice_is_safe(name: str, tmp_path: Path) -> None:
    async with MAKERS[name](path=str(tmp_path / "a.db")) as adapter:
        memory = adapter.memory
        assert await adapter.amemory.get("no-such-id") is None
    assert not is_open(memory)
    await adapter.aclose()
    adapter.close()


@pytest.mark.parametrize("name", sorted(MAKERS))
@pytest.mark.parametrize("given", ["sync", "async"])
async def test_a_given_memory_stays_open(name: str, given: str) -> None:
    with Memory.open(":memory:", embedder=None) as memory:
        handle: Any = memory if given == "sync" else memory.as_async()
        with MAKERS[name](memory=handle) as adapter:
            assert adapter.memory.path == memory.path
        adapter.close()
        async with MAKERS[name](memory=handle) as again:
            assert again.amemory.path == memory.path
        await again.aclose()
        assert is_open(memory)


@pytest.mark.parametrize("name", PYDANTIC)
def test_a_pydantic_model_keeps_its_fields(name: str, tmp_path: Path) -> None:
    """The mixin adds no field and keeps the store private: pydantic models dump as before."""
    with MAKERS[name](path=str(tmp_path / "a.db")) as adapter:
        assert isinstance(adapter, BaseModel)
        dumped = adapter.model_dump()
        assert not {"memory", "amemory", "_opened"} & set(type(adapter).model_fields)
        assert not {"memory", "amemory", "_opened"} & set(dumped)
        assert "_opened" in type(adapter).__private_attributes__
