"""The driver interface the conformance suite is written against, and the core's drivers.

A driver maps one way of using elastic-memory (the async facade, the sync facade, later
each framework adapter) onto a small async contract. Adapters add their drivers here;
``capabilities`` gates the tests a driver cannot express.
"""

from __future__ import annotations

import abc
import asyncio
import enum
import json
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from elastic_memory import (
    AsyncMemory,
    ContextPlan,
    Embedder,
    Entity,
    Explanation,
    Fact,
    Hit,
    Memory,
    MemoryRecord,
    MemoryType,
    Relation,
    Scope,
    Source,
    TurnReceipt,
)


class Capability(enum.Enum):
    KEYWORD = "keyword"
    SEMANTIC = "semantic"
    HYBRID = "hybrid"
    FILTERS = "filters"
    SOFT_DELETE = "soft_delete"
    UPDATE = "update"
    TTL = "ttl"
    LOOP = "loop"
    #: One store written under several agent ids (a federation speaks for its one agent only).
    MULTI_AGENT = "multi_agent"


ALL = frozenset(Capability)


class MemoryDriver(abc.ABC):
    """One way to drive a store; every method is async."""

    name: ClassVar[str]
    capabilities: ClassVar[frozenset[Capability]] = ALL
    #: A framework adapter's driver (run by that adapter's test session, marked ``adapter``).
    adapter: ClassVar[bool] = False

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

    @abc.abstractmethod
    async def get_many(self, ids: Sequence[str]) -> list[MemoryRecord]: ...

    @abc.abstractmethod
    async def explain(
        self, query: str, *, k: int = 10, mode: str = "hybrid", filters: dict[str, Any] | None = None
    ) -> Explanation: ...

    @abc.abstractmethod
    async def tags(self, *, filters: dict[str, Any] | None = None, prefix: str | None = None) -> dict[str, int]: ...

    @abc.abstractmethod
    async def export(self) -> list[dict[str, Any]]:
        """Every memory ``export_jsonl`` writes, as the parsed JSON lines."""

    # The memory loop (Capability.LOOP): drivers without it never get these calls.
    async def record_turn(self, user: Any, reply: Any, *, session_id: Any = None, **kw: Any) -> TurnReceipt:
        raise NotImplementedError

    async def build_context(self, user_input: Any, *, session_id: Any = None) -> ContextPlan:
        raise NotImplementedError

    async def drain(self) -> None:
        raise NotImplementedError

    async def set_fact(self, key: str, value: Any, **kw: Any) -> Fact:
        raise NotImplementedError

    async def get_fact(self, key: str, **kw: Any) -> Fact | None:
        raise NotImplementedError

    async def fact_history(self, key: str) -> list[Fact]:
        raise NotImplementedError

    async def forget_fact(self, key: str) -> bool:
        raise NotImplementedError

    async def add_lesson(self, text: str) -> str:
        raise NotImplementedError

    async def report_evictions(self, session_id: Any, messages: Any) -> int:
        raise NotImplementedError

    async def health(self) -> dict[str, Any]:
        raise NotImplementedError

    async def list_facts(self) -> list[Fact]:
        raise NotImplementedError

    async def graph_entities(self) -> list[Entity]:
        raise NotImplementedError

    async def graph_relations(self) -> list[Relation]:
        raise NotImplementedError


def _read_export(path: Path) -> list[dict[str, Any]]:
    """The memory records of an export (format 2 lines also hold the loop's and the graph's rows)."""
    with path.open(encoding="utf-8") as f:
        lines = [json.loads(line) for line in f if line.strip()]
    return [line for line in lines if line.get("record", "memory") == "memory"]


def hit_from_provenance(meta: dict[str, Any], content: str, score: float) -> Hit:
    """The hit an adapter's document describes: its metadata is ``elastic_memory.adapters.provenance``."""
    return Hit(
        id=meta["id"],
        content=content,
        score=score,
        type=MemoryType(meta["type"]),
        metadata=meta["metadata"],
        tags=tuple(meta["tags"]),
        agent_id=meta["agent_id"],
        scope=Scope(meta["scope"]),
        pool=meta["pool"],
        session_id=meta["session_id"],
        importance=meta["importance"],
        confidence=meta["confidence"],
        pinned=meta["pinned"],
        source=Source(meta["source"]),
        created_at=meta["created_at"],
        keyword_score=meta["keyword_score"],
        vector_score=meta["vector_score"],
        kind=meta["kind"],
        tier=meta["tier"],
    )


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

    async def get_many(self, ids: Sequence[str]) -> list[MemoryRecord]:
        return await self.mem.get_many(ids)

    async def explain(
        self, query: str, *, k: int = 10, mode: str = "hybrid", filters: dict[str, Any] | None = None
    ) -> Explanation:
        return await self.mem.explain(query, k=k, mode=mode, filters=filters)

    async def tags(self, *, filters: dict[str, Any] | None = None, prefix: str | None = None) -> dict[str, int]:
        return await self.mem.tags(filters=filters, prefix=prefix)

    async def export(self) -> list[dict[str, Any]]:
        with tempfile.TemporaryDirectory(prefix="em-export-") as folder:
            path = Path(folder) / "export.jsonl"
            await self.mem.export_jsonl(path)
            return _read_export(path)

    async def record_turn(self, user: Any, reply: Any, *, session_id: Any = None, **kw: Any) -> TurnReceipt:
        return await self.mem.record_turn(user, reply, session_id=session_id, **kw)

    async def build_context(self, user_input: Any, *, session_id: Any = None) -> ContextPlan:
        return await self.mem.build_context(user_input, session_id=session_id)

    async def drain(self) -> None:
        await self.mem.drain()

    async def set_fact(self, key: str, value: Any, **kw: Any) -> Fact:
        return await self.mem.facts.set(key, value, **kw)

    async def get_fact(self, key: str, **kw: Any) -> Fact | None:
        return await self.mem.facts.get(key, **kw)

    async def fact_history(self, key: str) -> list[Fact]:
        return await self.mem.facts.history(key)

    async def forget_fact(self, key: str) -> bool:
        return await self.mem.facts.forget(key)

    async def add_lesson(self, text: str) -> str:
        return await self.mem.lessons.add(text)

    async def report_evictions(self, session_id: Any, messages: Any) -> int:
        return await self.mem.report_evictions(session_id, messages)

    async def health(self) -> dict[str, Any]:
        return await self.mem.health()

    async def list_facts(self) -> list[Fact]:
        return await self.mem.facts.list()

    async def graph_entities(self) -> list[Entity]:
        return await self.mem.graph.entities()

    async def graph_relations(self) -> list[Relation]:
        return await self.mem.graph.relations()


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

    async def get_many(self, ids: Sequence[str]) -> list[MemoryRecord]:
        return await asyncio.to_thread(self.mem.get_many, ids)

    async def explain(
        self, query: str, *, k: int = 10, mode: str = "hybrid", filters: dict[str, Any] | None = None
    ) -> Explanation:
        return await asyncio.to_thread(self.mem.explain, query, k=k, mode=mode, filters=filters)

    async def tags(self, *, filters: dict[str, Any] | None = None, prefix: str | None = None) -> dict[str, int]:
        return await asyncio.to_thread(self.mem.tags, filters=filters, prefix=prefix)

    async def export(self) -> list[dict[str, Any]]:
        with tempfile.TemporaryDirectory(prefix="em-export-") as folder:
            path = Path(folder) / "export.jsonl"
            await asyncio.to_thread(self.mem.export_jsonl, path)
            return _read_export(path)

    async def record_turn(self, user: Any, reply: Any, *, session_id: Any = None, **kw: Any) -> TurnReceipt:
        return await asyncio.to_thread(self.mem.record_turn, user, reply, session_id=session_id, **kw)

    async def build_context(self, user_input: Any, *, session_id: Any = None) -> ContextPlan:
        return await asyncio.to_thread(self.mem.build_context, user_input, session_id=session_id)

    async def drain(self) -> None:
        await asyncio.to_thread(self.mem.drain)

    async def set_fact(self, key: str, value: Any, **kw: Any) -> Fact:
        return await asyncio.to_thread(self.mem.facts.set, key, value, **kw)

    async def get_fact(self, key: str, **kw: Any) -> Fact | None:
        return await asyncio.to_thread(self.mem.facts.get, key, **kw)

    async def fact_history(self, key: str) -> list[Fact]:
        return await asyncio.to_thread(self.mem.facts.history, key)

    async def forget_fact(self, key: str) -> bool:
        return await asyncio.to_thread(self.mem.facts.forget, key)

    async def add_lesson(self, text: str) -> str:
        return await asyncio.to_thread(self.mem.lessons.add, text)

    async def report_evictions(self, session_id: Any, messages: Any) -> int:
        return await asyncio.to_thread(self.mem.report_evictions, session_id, messages)

    async def health(self) -> dict[str, Any]:
        return await asyncio.to_thread(self.mem.health)

    async def list_facts(self) -> list[Fact]:
        return await asyncio.to_thread(self.mem.facts.list)

    async def graph_entities(self) -> list[Entity]:
        return await asyncio.to_thread(self.mem.graph.entities)

    async def graph_relations(self) -> list[Relation]:
        return await asyncio.to_thread(self.mem.graph.relations)


#: Ten minutes for every read and write of every tier, and a breaker that never opens.
_PATIENT_BUDGET = {
    "read_timeout_ms": 600_000,
    "semantic_timeout_ms": 600_000,
    "write_timeout_ms": 600_000,
    "fail_threshold": 1_000_000,
}
PATIENT = {"private": _PATIENT_BUDGET, "global": _PATIENT_BUDGET, "default_shared": _PATIENT_BUDGET}


class FederatedDriver(CoreAsyncDriver):
    """``AsyncMemory.for_agent``: a federation (private file, pool ``team``, global tier) underneath.

    The agent is ``agent_id`` when the options name one (``"default"`` otherwise). The home
    folder sits beside the test's database file, or in a temporary folder for
    the in-memory backend (removed on close).
    """

    name = "federated"
    capabilities = ALL - {Capability.MULTI_AGENT}

    def __init__(self, mem: AsyncMemory, scratch: str | None) -> None:
        super().__init__(mem)
        self.scratch = scratch

    @classmethod
    async def open(cls, location: str, embedder: Embedder | None, **options: Any) -> FederatedDriver:
        server = location if location.startswith("postgresql://") else None  # pool and global tiers on it
        scratch = tempfile.mkdtemp(prefix="em-federation-") if location == ":memory:" or server else None
        home = scratch or str(Path(location).parent / "home")
        if server is not None:
            options["server"] = server
        agent_id = options.pop("agent_id", "default")
        # Timeouts no loaded machine hits: these cells test what a federation returns, not when it
        # gives up (tests/unit/federation/test_federation_faults.py injects slow tiers for that).
        Path(home).mkdir(parents=True, exist_ok=True)
        (Path(home) / "resilience.json").write_text(json.dumps(PATIENT))
        mem = await AsyncMemory.for_agent(agent_id, home=home, pools=["team"], embedder=embedder, **options)
        return cls(mem, scratch)

    async def close(self) -> None:
        await super().close()
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)


DRIVERS: list[type[MemoryDriver]] = [CoreAsyncDriver, CoreSyncDriver, FederatedDriver]

# Adapter drivers join when their package is installed (each adapter's nox session installs it).
try:
    from .drivers_langchain import LANGCHAIN_DRIVERS
except ImportError:  # langchain-elastic-memory is not installed here
    LANGCHAIN_DRIVERS = []
try:
    from .drivers_llamaindex import LLAMAINDEX_DRIVERS
except ImportError:  # llama-index-elastic-memory is not installed here
    LLAMAINDEX_DRIVERS = []
try:
    from .drivers_haystack import HAYSTACK_DRIVERS
except ImportError:  # elastic-memory-haystack is not installed here
    HAYSTACK_DRIVERS = []
DRIVERS += LANGCHAIN_DRIVERS + LLAMAINDEX_DRIVERS + HAYSTACK_DRIVERS
