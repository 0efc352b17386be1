"""CoreStore: one elastic-memory store (a :class:`MemoryCore`, SQLite file or PostgreSQL schema) as a tier."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from ..core import MemoryCore
from ..errors import StorageError, UsageError
from ..loop.attach import open_core
from ..types import Hit, MemoryId, MemoryRecord, PrunePolicy, PruneReport
from ..user_core import user_core
from .protocol import Entry, TierHealth

__all__ = ["CoreStore", "own_rows_only", "serving_user", "touching"]

#: Whether searches made in this context record an access (``None``: the store's
#: :class:`RecallConfig`). The federation sets it for ``explain()`` and for plans.
touching: ContextVar[bool | None] = ContextVar("elastic_memory_touching", default=None)
#: The user of the agent a federated call serves (``None``: the agent itself): the private tier
#: then reads and writes that user's rows only; pools and the global tier are the agent's team's.
serving_user: ContextVar[str | None] = ContextVar("elastic_memory_serving_user", default=None)
#: Whether the private tier's searches keep to the served owner's own rows (the agent's plans:
#: its users' rows never crowd the agent's own out of a plan's candidates).
own_rows_only: ContextVar[bool] = ContextVar("elastic_memory_own_rows_only", default=False)


class CoreStore:
    """One elastic-memory store (a SQLite file or a PostgreSQL schema, embedding included) as a federation tier.

    Open one with :meth:`open` (it takes :meth:`Memory.open`'s keyword arguments), or wrap
    an open core. ``owns`` says whether :meth:`aclose` closes the core.

    >>> import asyncio
    >>> from elastic_memory.testing import FakeEmbedder
    >>> async def main():
    ...     store = await CoreStore.open(":memory:", embedder=FakeEmbedder())
    ...     await store.write([Entry.create("Standup is at 10:00.", now=0.0, default_agent="ana")])
    ...     hits = await store.search("standup")
    ...     await store.aclose()
    ...     return [h.content for h in hits]
    >>> asyncio.run(main())
    ['Standup is at 10:00.']
    """

    def __init__(self, core: MemoryCore, *, name: str | None = None, owns: bool = True) -> None:
        self.core = core
        self.name = name or core.store.path
        self._owns = owns
        #: Where a corrupt file at this path was moved when it was opened (set by build_federation).
        self.quarantined_file: Path | None = None

    def __repr__(self) -> str:
        return f"CoreStore({self.core.store.path!r})"

    @classmethod
    async def open(cls, path: str | Path, *, name: str | None = None, **options: Any) -> CoreStore:
        """Open (creating and migrating) the file or PostgreSQL URL ``path``; see :meth:`AsyncMemory.open`."""
        return cls(await open_core(path, **options), name=name)

    @property
    def path(self) -> str:
        """The database: the file, or the PostgreSQL URL with its schema."""
        return self.core.store.path

    @contextlib.contextmanager
    def _serving(self) -> Iterator[None]:
        """A call that meets this store closed (say, a pool removed and closed mid-read) fails as a backend error.

        A closed store is an unavailable tier, not the caller's mistake: a federation drops it
        from the read (or degrades the write) instead of raising the store's :class:`UsageError`.
        """
        try:
            yield
        except UsageError as e:
            if not self.core.store.closed:
                raise
            msg = f"the {self.name} store was closed: {e}"
            raise StorageError(msg) from e

    def _served(self) -> MemoryCore:
        """The core a call of this context reads and writes: the private tier's user's, else the store's."""
        user = serving_user.get()
        return self.core if user is None or self.name != "private" else user_core(self.core, user)

    async def search(
        self, query: str = "", *, k: int = 10, mode: str = "hybrid", filters: Mapping[str, Any] | None = None
    ) -> list[Hit]:
        """:meth:`Memory.recall` on this store (recording access unless :data:`touching` says not to)."""
        core = self._served()
        given = None if filters is None else dict(filters)
        if self.name == "private" and own_rows_only.get() and core.user_id is None:
            given = {**(given or {}), "agent_id": core.agent_id, "user_id": None}
        with self._serving():
            return await core.recall(query, k=k, mode=mode, filters=given, touch=touching.get())

    async def write(self, entries: Sequence[Entry]) -> list[MemoryId]:
        """Write ``entries`` in one transaction (their ids kept); all or nothing."""
        if any(not isinstance(e, Entry) for e in entries):
            msg = "write() takes Entry values; build them with Entry.create(content, ...)"
            raise UsageError(msg)
        with self._serving():
            return await self._served().write_entries(entries)

    async def get(self, ids: Sequence[str]) -> list[MemoryRecord]:
        """The records among ``ids`` (hidden ones too), in the order given."""
        with self._serving():
            return await self._served().get_many(list(ids))

    async def delete(self, ids: Sequence[str], *, hard: bool = False) -> int:
        """Soft-delete (or, with ``hard``, erase) ``ids``; returns how many changed."""
        with self._serving():
            return await self._served().forget(list(ids), hard=hard)

    async def touch(self, ids: Sequence[str]) -> None:
        """Record an access on ``ids`` (a federation touches only the hits it returns)."""
        await self.core.store.touch_ids(list(ids))

    async def update(self, id: str, **changes: Any) -> MemoryRecord:
        """:meth:`Memory.update` on this store."""
        return await self._served().update(id, **changes)

    async def restore(self, ids: Sequence[str]) -> int:
        """:meth:`Memory.restore` on this store."""
        return await self._served().restore(list(ids))

    async def archive(self, ids: Sequence[str], *, archived: bool = True) -> int:
        """:meth:`Memory.archive` on this store."""
        return await self._served().archive(list(ids), archived=archived)

    async def purge(self, older_than: float = 0.0, *, ids: Sequence[str] | None = None) -> int:
        """:meth:`Memory.purge` on this store."""
        return await self.core.purge(older_than, ids=ids)

    async def stats(self) -> dict[str, Any]:
        """:meth:`Memory.stats` on this store."""
        return await self.core.stats()

    async def prune(self, policy: PrunePolicy) -> PruneReport:
        """:meth:`Memory.prune` on this store."""
        return await self.core.prune(policy)

    async def health_check(self) -> TierHealth:
        """Whether the store answers a read; never raises."""
        detail: dict[str, Any] = {"path": self.core.store.path}
        if self.quarantined_file is not None:
            detail["quarantined_file"] = str(self.quarantined_file)
        if self.core.store.closed:
            return TierHealth(self.name, False, "the store is closed", detail)
        try:
            await self.core.store.check()
        except Exception as e:  # noqa: BLE001 - health never raises
            return TierHealth(self.name, False, f"{type(e).__name__}: {e}", detail)
        return TierHealth(self.name, True, None, detail)

    async def aclose(self) -> None:
        """Close the core if this store owns it (idempotent)."""
        if self._owns:
            await self.core.close()
