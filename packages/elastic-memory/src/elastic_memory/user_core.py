r"""UserCore: one user's handle on an agent's store, every operation pinned to that user.

A user's handle shares everything heavy with the agent's core (the store, the embedder, the
background worker, the governor): opening a handle per request costs a dict lookup. What it
changes is whose rows it reads and writes (:mod:`elastic_memory.users`): its owner key is
``agent + "\x1f" + user``, recall and listing are filtered to it, an id of anyone else's
memory is "no memory" to it, and its memory loop (turns, sessions, facts, profile, lessons,
quarantine, graph) is the user's own.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from . import _validate as v
from .core import MemoryCore
from .errors import AccessDeniedError, UsageError
from .storage.sqlite.store import WriteMode
from .types import MemoryId, MemoryRecord, PrunePolicy, PruneReport
from .users import check_user, owner_key, scoped_filters, split_owner

__all__ = ["UserCore", "user_core"]

#: User handles kept per agent core (least recently used dropped): each keeps its loop's state.
MAX_HANDLES = 1_024
#: Guards every agent core's handle cache: hosts ask for handles from many threads at once.
_HANDLES_LOCK = threading.Lock()


def user_core(root: MemoryCore, user_id: Any, *, owns_root: bool = False) -> MemoryCore:
    """``root``'s handle for ``user_id`` (``root`` itself for ``None``), made once and kept.

    ``owns_root``: the handle closes the store when it closes (``Memory.open(..., user_id=...)``).
    """
    user = check_user(user_id)
    if isinstance(root, UserCore):  # a user's handle is that user's only: it hands out no other
        if user != root.user_id:
            agent, own = split_owner(root.agent_id)
            msg = (
                f"this handle serves user {own!r} of agent {agent!r}; take other users' handles from the agent's "
                "own handle (Memory.open without user_id)"
            )
            raise AccessDeniedError(msg)
        return root
    if user is None:
        return root
    if owns_root:
        return UserCore(root, user, owns_root=True)
    with _HANDLES_LOCK:
        handles = root.user_handles
        handle = handles.pop(user, None) or UserCore(root, user)
        handles[user] = handle  # the most recently used last
        while len(handles) > MAX_HANDLES:
            handles.pop(next(iter(handles)), None)
        return handle


class UserCore(MemoryCore):
    """:class:`MemoryCore`'s operations for one user of its agent; what it does not change is the root's."""

    def __init__(self, root: MemoryCore, user_id: str, *, owns_root: bool = False) -> None:
        # No super().__init__: the store, embedder and clock are the root's (read through __getattr__).
        self._root = root
        self._owns_root = owns_root
        self.agent_id = owner_key(root.agent_id, user_id)
        self.user_id = user_id
        self.parts = []
        for part in root.parts:  # the memory loop: this user's turns, sessions, facts and graph
            self.attach(part.for_owner(self))

    def __getattr__(self, name: str) -> Any:
        # Only called for what this handle does not hold itself: the root's shared state.
        if name.startswith("__") or name in ("_root", "parts"):
            raise AttributeError(name)
        return getattr(self._root, name)

    @property
    def root(self) -> MemoryCore:
        """The agent's own core."""
        return self._root

    async def close(self) -> None:
        """Nothing to close unless this handle opened the store (``Memory.open(..., user_id=...)``)."""
        if self._owns_root:
            await self._root.close()

    async def embedder(self, *, quiet: bool = False) -> Any:
        """The root's embedder (one model, resolved once, for every user)."""
        return await self._root.embedder(quiet=quiet)

    # ------------------------------------------------------------- ownership
    def owns(self, record: MemoryRecord) -> bool:
        """Whether ``record`` is this user's."""
        return owner_key(record.agent_id, record.user_id) == self.agent_id

    async def owned(self, ids: list[str]) -> list[str]:
        """Those of ``ids`` that are this user's memories."""
        found = await self.store.get(ids)
        return [i for i in ids if i in found and self.owns(found[i])]

    def scoped(self, filters: Any) -> Any:
        """Every read pinned to this user's rows."""
        return scoped_filters(filters, self.agent_id, pinned=True)

    def make_row(self, content: Any, fields: Mapping[str, Any], *, library: bool = False) -> dict[str, Any]:
        """A row of this user's; naming another agent or user is refused."""
        row = super().make_row(content, fields, library=library)
        if row["agent_id"] != self.agent_id:
            agent, user = split_owner(self.agent_id)
            msg = (
                f"this handle writes for user {user!r} of agent {agent!r} only; leave agent_id and user_id out, "
                "or write from the agent's own handle"
            )
            raise AccessDeniedError(msg)
        return row

    async def write_rows(
        self,
        rows: list[dict[str, Any]],
        *,
        dedupe: list[bool],
        flag: Any = True,
        mode: WriteMode = "upsert",
        vectors: list[Any] | None = None,
        pin: Any = None,
    ) -> list[MemoryId]:
        """Write this user's rows; an id held by anyone else's memory is refused (nothing is written).

        Ids are one namespace for the whole store: a ``remember(..., id=...)`` of another
        user's (or the agent's) id would otherwise update that memory and make it this user's.
        """
        ids = [str(row["id"]) for row in rows]
        found = await self.store.get(ids) if ids else {}
        taken = sorted({i for i in ids if i in found and not self.owns(found[i])})
        if taken:
            msg = f"the id(s) {taken} belong to memories that are not this user's: use other ids. Nothing was written."
            raise AccessDeniedError(msg)
        return await super().write_rows(rows, dedupe=dedupe, flag=flag, mode=mode, vectors=vectors, pin=pin)

    # ------------------------------------------------------------- reads by id
    async def get(self, id: Any) -> MemoryRecord | None:
        """This user's memory ``id``, or ``None`` (another user's is "none" too)."""
        record = await super().get(id)
        return record if record is not None and self.owns(record) else None

    async def get_many(self, ids: Any) -> list[MemoryRecord]:
        """This user's memories among ``ids``."""
        return [r for r in await super().get_many(ids) if self.owns(r)]

    async def vectors(self, ids: Any) -> dict[str, list[float]]:
        """The vectors of this user's memories among ``ids``."""
        return await super().vectors(await self.owned(v.check_ids(ids)))

    # ------------------------------------------------------------- writes by id
    async def update(self, id: Any, **changes: Any) -> MemoryRecord:
        """Change this user's memory ``id`` (another user's is "no memory")."""
        mid = v.check_id(id)
        if not await self.owned([mid]):
            msg = f"no memory with id {mid!r} (deleted memories can be restored with restore())"
            raise UsageError(msg)
        return await super().update(mid, **changes)

    async def forget(self, ids: Any, *, hard: bool = False) -> int:
        """Forget this user's memories among ``ids``."""
        return await super().forget(await self.owned(v.check_ids(ids)), hard=hard)

    async def restore(self, ids: Any) -> int:
        """Restore this user's memories among ``ids``."""
        return await super().restore(await self.owned(v.check_ids(ids)))

    async def archive(self, ids: Any, *, archived: bool = True) -> int:
        """Archive (or unarchive) this user's memories among ``ids``."""
        return await super().archive(await self.owned(v.check_ids(ids)), archived=archived)

    async def purge(self, older_than: float = 0.0, *, ids: Any = None) -> int:
        """Erase this user's deleted or expired memories among ``ids`` (the whole store: the agent's handle)."""
        if ids is None:
            msg = "a user's handle purges its own ids (purge(ids=[...])); purge the whole store from the agent's handle"
            raise UsageError(msg)
        return await super().purge(older_than, ids=await self.owned(v.check_ids(ids)))

    async def prune(self, policy: PrunePolicy | None = None, **kwargs: Any) -> PruneReport:
        """Refused: pruning sweeps the whole store (run it from the agent's handle)."""
        msg = "prune() sweeps every user's memories: run it from the agent's own handle (Memory.open without user_id)"
        raise UsageError(msg)

    # ------------------------------------------------------------- the store
    async def stats(self) -> dict[str, Any]:
        """This user's counts (turns, sessions, facts, quarantine), never the store's (the agent's handle has those)."""
        agent, user = split_owner(self.agent_id)
        out: dict[str, Any] = {"agent_id": agent, "user_id": user}
        resolved = self._root.embedder_in_use
        out["embedder"] = resolved.model_id if resolved is not None else None
        out["read_only"], out["damaged"] = self.store.read_only, self.store.damaged
        for part in self.parts:
            out.update(await part.stats())
        return out
