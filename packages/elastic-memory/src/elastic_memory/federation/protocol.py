"""The store protocol: what every backend does, so a federation can stand where one store stands.

A backend is anything with these coroutines (structural typing, no base class):
:class:`~elastic_memory.federation.CoreStore` (one SQLite file or PostgreSQL schema), the Markdown
folder connector (read-only), :class:`~elastic_memory.federation.MemoryFederation` itself,
and later other databases. Writes take :class:`Entry` values, built and validated once by
:meth:`Entry.create`, so every tier of a fan-out receives the same id.

>>> entry = Entry.create("Standup moved to 10:00.", scope="shared", pool="team", now=0.0, default_agent="ana")
>>> entry.scope.value, entry.pool, entry.agent_id, len(entry.id)
('shared', 'team', 'ana', 36)
>>> entry.rescoped("global").scope.value, entry.rescoped("global").id == entry.id
('global', True)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from .._validate import build_row
from ..types import Hit, MemoryId, MemoryRecord, MemoryType, PrunePolicy, PruneReport, Scope, Source

__all__ = ["Entry", "MemoryStore", "PrunableStore", "TierHealth"]


@dataclass(frozen=True, kw_only=True)
class Entry:
    """One memory to write, validated, with its id already chosen.

    Build one with :meth:`create` (it validates like :meth:`Memory.remember` and picks a
    uuid4 when no ``id`` is given). ``dedupe`` asks the tier to return an existing memory's
    id when the same content is already stored for the same agent, scope and pool.
    """

    id: str
    content: str
    type: MemoryType = MemoryType.SEMANTIC
    importance: float = 0.5
    confidence: float = 1.0
    source: Source = Source.AGENT
    tags: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    agent_id: str = "default"
    scope: Scope = Scope.PRIVATE
    pool: str | None = None
    session_id: str | None = None
    pinned: bool = False
    expires_at: float | None = None
    kind: str = "note"
    dedupe: bool = True

    @classmethod
    def create(cls, content: Any, *, now: float, default_agent: str, dedupe: bool = True, **fields: Any) -> Entry:
        """Validate ``content`` and :meth:`Memory.remember`'s fields into an entry.

        Raises:
            UsageError: A field is wrong; the message names it.
        """
        row = build_row(content, now=now, default_agent=default_agent, **fields)
        return cls.from_row(row, dedupe=dedupe and fields.get("id") is None)

    @classmethod
    def from_row(cls, row: Mapping[str, Any], *, dedupe: bool = True) -> Entry:
        """An entry from a validated ``memories`` row (as :func:`~elastic_memory._validate.build_row` makes)."""
        return cls(
            id=row["id"],
            content=row["content"],
            type=MemoryType(row["type"]),
            importance=row["importance"],
            confidence=row["confidence"],
            source=Source(row["source"]),
            tags=tuple(json.loads(row["tags"])),
            metadata=json.loads(row["metadata"]),
            agent_id=row["agent_id"],
            scope=Scope(row["scope"]),
            pool=row["pool"],
            session_id=row["session_id"],
            pinned=bool(row["pinned"]),
            expires_at=row["expires_at"],
            kind=row["kind"],
            dedupe=dedupe,
        )

    def fields(self) -> dict[str, Any]:
        """The entry as :meth:`Memory.remember` keyword arguments (``content`` included)."""
        return {
            "content": self.content,
            "id": self.id,
            "type": self.type.value,
            "importance": self.importance,
            "confidence": self.confidence,
            "source": self.source.value,
            "tags": list(self.tags),
            "metadata": dict(self.metadata),
            "agent_id": self.agent_id,
            "scope": self.scope.value,
            "pool": self.pool,
            "session_id": self.session_id,
            "pinned": self.pinned,
            "expires_at": self.expires_at,
            "kind": self.kind,
        }

    def rescoped(self, scope: Scope | str, pool: str | None = None) -> Entry:
        """The same entry (same id) under another scope: how a promotion copy is made."""
        return replace(self, scope=Scope(scope), pool=pool if Scope(scope) is Scope.SHARED else None)


@dataclass(frozen=True)
class TierHealth:
    """A store's answer to :meth:`MemoryStore.health_check`.

    ``ok`` says whether it can serve reads now; ``reason`` says why not (or what is
    degraded); ``detail`` holds backend facts (path, breaker state, per-tier health).
    """

    name: str
    ok: bool
    reason: str | None = None
    detail: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class MemoryStore(Protocol):
    """What every memory backend does. All methods are coroutines.

    ``search`` takes :meth:`Memory.recall`'s arguments and returns hits best first;
    ``write`` returns one :class:`~elastic_memory.MemoryId` per entry (its ``status``
    says created, updated or duplicate) and writes all of them or none; ``get`` returns the
    records that exist among ``ids`` in the order given; ``delete`` soft-deletes (or, with
    ``hard``, erases) and returns how many changed; ``health_check`` never raises;
    ``aclose`` is idempotent. A read-only backend raises a :class:`~elastic_memory.UsageError`
    subclass from ``write`` and ``delete``.
    """

    name: str

    async def search(
        self, query: str = "", *, k: int = 10, mode: str = "hybrid", filters: Mapping[str, Any] | None = None
    ) -> list[Hit]:
        """The ``k`` best hits for ``query``, best first (filters as :meth:`Memory.recall`'s)."""
        ...

    async def write(self, entries: Sequence[Entry]) -> list[MemoryId]:
        """Write every entry or none; one id per entry."""
        ...

    async def get(self, ids: Sequence[str]) -> list[MemoryRecord]:
        """The records that exist among ``ids``, in the order given."""
        ...

    async def delete(self, ids: Sequence[str], *, hard: bool = False) -> int:
        """Soft-delete (or erase) ``ids``; how many changed."""
        ...

    async def health_check(self) -> TierHealth:
        """Whether the store can serve now; never raises."""
        ...

    async def aclose(self) -> None:
        """Release the store (idempotent)."""
        ...


@runtime_checkable
class PrunableStore(MemoryStore, Protocol):
    """A store that can prune by a :class:`~elastic_memory.PrunePolicy` (pinned memories untouched)."""

    async def prune(self, policy: PrunePolicy) -> PruneReport:
        """Archive or purge by ``policy``; pinned memories untouched."""
        ...
