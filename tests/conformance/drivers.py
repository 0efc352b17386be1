"""The driver interface the conformance suite is written against, and the core's drivers.

A driver maps one way of using elastic-memory (the async facade, the sync facade, later
each framework adapter) onto a small async contract. Adapters add their drivers here;
``capabilities`` gates the tests a driver cannot express.
"""

from __future__ import annotations

import abc
import asyncio
import enum
from collections.abc import Sequence
from typing import Any, ClassVar

from elastic_memory import AsyncMemory, Embedder, Hit, Memory, MemoryRecord


class Capability(enum.Enum):
    KEYWORD = "keyword"
    SEMANTIC = "semantic"
    HYBRID = "hybrid"
    FILTERS = "filters"
    SOFT_DELETE = "soft_delete"
    UPDATE = "update"
    TTL = "ttl"


ALL = frozenset(Capability)


class MemoryDriver(abc.ABC):
    """One way to drive a store; every method is async."""

    name: ClassVar[str]
    capabilities: ClassVar[frozenset[Capability]] = ALL

    @classmethod
    @abc.abstractmethod
    async def open(cls, location: str, embedder: Embedder | None, **options: Any) -> MemoryDriver: ...

    @abc.abstractmethod
    async def close(self) -> None: ...

    @abc.abstractmethod
    async def remember(self, content: str, **fields: Any) -> str: ...

    @abc.abstractmethod
    async def remember_many(self, items: Sequence[str | dict[str, Any]]) -> list[str]: ...

    @abc.abstractmethod
    async def recall(
        self, query: str, *, k: int = 10, mode: str = "hybrid", filters: dict[str, Any] | None = None
    ) -> list[Hit]: ...

    @abc.abstractmethod
    async def get(self, id: str) -> MemoryRecord | None: ...

    @abc.abstractmethod
    async def forget(self, ids: str | Sequence[str], *, hard: bool = False) -> int: ...

    @abc.abstractmethod
    async def restore(self, ids: str | Sequence[str]) -> int: ...

    @abc.abstractmethod
    async def update(self, id: str, **changes: Any) -> MemoryRecord: ...

    @abc.abstractmethod
    async def stats(self) -> dict[str, Any]: ...


class CoreAsyncDriver(MemoryDriver):
    """``AsyncMemory``, awaited on the test's own event loop."""

    name = "core-async"

    def __init__(self, mem: AsyncMemory) -> None:
        self.mem = mem

    @classmethod
    async def open(cls, location: str, embedder: Embedder | None, **options: Any) -> CoreAsyncDriver:
        return cls(await AsyncMemory.open(location, embedder=embedder, **options))

    async def close(self) -> None:
        await self.mem.close()

    async def remember(self, content: str, **fields: Any) -> str:
        return await self.mem.remember(content, **fields)

    async def remember_many(self, items: Sequence[str | dict[str, Any]]) -> list[str]:
        return list(await self.mem.remember_many(items))

    async def recall(
        self, query: str, *, k: int = 10, mode: str = "hybrid", filters: dict[str, Any] | None = None
    ) -> list[Hit]:
        return await self.mem.recall(query, k=k, mode=mode, filters=filters)

    async def get(self, id: str) -> MemoryRecord | None:
        return await self.mem.get(id)

    async def forget(self, ids: str | Sequence[str], *, hard: bool = False) -> int:
        return await self.mem.forget(ids, hard=hard)

    async def restore(self, ids: str | Sequence[str]) -> int:
        return await self.mem.restore(ids)

    async def update(self, id: str, **changes: Any) -> MemoryRecord:
        return await self.mem.update(id, **changes)

    async def stats(self) -> dict[str, Any]:
        return await self.mem.stats()


class CoreSyncDriver(MemoryDriver):
    """``Memory`` (the sync facade), called from a worker thread like a sync host would."""

    name = "core-sync"

    def __init__(self, mem: Memory) -> None:
        self.mem = mem

    @classmethod
    async def open(cls, location: str, embedder: Embedder | None, **options: Any) -> CoreSyncDriver:
        return cls(await asyncio.to_thread(Memory.open, location, embedder=embedder, **options))

    async def close(self) -> None:
        await asyncio.to_thread(self.mem.close)

    async def remember(self, content: str, **fields: Any) -> str:
        return await asyncio.to_thread(self.mem.remember, content, **fields)

    async def remember_many(self, items: Sequence[str | dict[str, Any]]) -> list[str]:
        return list(await asyncio.to_thread(self.mem.remember_many, items))

    async def recall(
        self, query: str, *, k: int = 10, mode: str = "hybrid", filters: dict[str, Any] | None = None
    ) -> list[Hit]:
        return await asyncio.to_thread(self.mem.recall, query, k=k, mode=mode, filters=filters)

    async def get(self, id: str) -> MemoryRecord | None:
        return await asyncio.to_thread(self.mem.get, id)

    async def forget(self, ids: str | Sequence[str], *, hard: bool = False) -> int:
        return await asyncio.to_thread(self.mem.forget, ids, hard=hard)

    async def restore(self, ids: str | Sequence[str]) -> int:
        return await asyncio.to_thread(self.mem.restore, ids)

    async def update(self, id: str, **changes: Any) -> MemoryRecord:
        return await asyncio.to_thread(self.mem.update, id, **changes)

    async def stats(self) -> dict[str, Any]:
        return await asyncio.to_thread(self.mem.stats)


DRIVERS: list[type[MemoryDriver]] = [CoreAsyncDriver, CoreSyncDriver]
