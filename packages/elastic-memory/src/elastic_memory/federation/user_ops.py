"""UserFederatedOps: one user of a federated agent (``Memory.for_agent(...).for_user(user_id)``).

A user's memory is private to the user: it lives in the agent's private tier as that user's
partition (see :mod:`elastic_memory.users`), is written there directly and never promoted,
shared or made global. Reads merge the user's private rows with the agent's pools and global
tier (the team's knowledge), never another user's. Every change by id reaches the user's
own memories only.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any, TypeVar

from ..core import MemoryCore
from ..errors import AccessDeniedError, UsageError
from ..types import MemoryId, MemoryRecord
from ..user_core import MAX_HANDLES, user_core
from ..users import check_user, split_owner
from .federation import MemoryFederation
from .ops import FederatedOps

__all__ = ["UserFederatedOps", "federated_user"]

T = TypeVar("T")
_LOCK = threading.Lock()


def federated_user(ops: Any, user_id: Any, *, owns: bool = False) -> Any:
    """``ops``'s handle for ``user_id`` (``ops`` itself for ``None``), made once and kept; see :func:`user_core`.

    ``ops`` is a :class:`FederatedOps`; ``owns``: the handle closes the federation when it closes.
    """
    user = check_user(user_id)
    if isinstance(ops, UserFederatedOps):  # a user's handle is that user's only: it hands out no other
        if user != ops.user_id:
            msg = (
                f"this handle serves user {ops.user_id!r} of agent {ops.agent_name!r}; take other users' handles "
                "from the agent's own handle (Memory.for_agent)"
            )
            raise AccessDeniedError(msg)
        return ops
    if user is None:
        return ops
    if owns:
        return UserFederatedOps(ops.federation, ops.core, user, owns=True)
    with _LOCK:
        handles = ops.user_ops
        handle = handles.pop(user, None) or UserFederatedOps(ops.federation, ops.core, user)
        handles[user] = handle
        while len(handles) > MAX_HANDLES:
            handles.pop(next(iter(handles)), None)
        return handle


class UserFederatedOps(FederatedOps):
    """:class:`FederatedOps` for one user of the agent: private writes only, reads of the team's tiers."""

    def __init__(self, federation: MemoryFederation, agent: MemoryCore, user_id: str, *, owns: bool = False) -> None:
        super().__init__(federation, user_core(agent, user_id))
        self.user_id = user_id
        self.serving = user_id  # every tier read of this handle: the private tier is the user's rows
        self._owns = owns

    @property
    def agent_name(self) -> str:
        """The agent this user's handle belongs to."""
        return split_owner(self.core.agent_id)[0]

    async def _write(self, rows: list[dict[str, Any]], per_row: list[bool], dedupe: bool) -> list[MemoryId]:
        """Write the user's ``rows`` to the private tier: private ones only, under ids no tier holds for another."""
        if any(row["scope"] != "private" or row["pool"] is not None for row in rows):
            msg = (
                "a user's memories are private to the user: shared and global memories are written "
                "from the agent's own handle (Memory.for_agent without for_user)"
            )
            raise UsageError(msg)
        ids = [str(row["id"]) for row in rows]
        found = await self.federation.copies(ids)  # every tier's copy: a team memory's id is not the user's to take
        mine = {r.id for _, r in found if (r.agent_id, r.user_id) == (self.agent_name, self.user_id)}
        taken = sorted({r.id for _, r in found if r.id not in mine})  # the user's own row: an upsert
        if taken:
            msg = f"the id(s) {taken} belong to memories that are not this user's: use other ids. Nothing was written."
            raise AccessDeniedError(msg)
        return await self.core.write_rows(rows, dedupe=per_row, flag=dedupe)

    # ------------------------------------------------------------------- writes
    async def remember(self, content: Any, *, dedupe: bool = True, **fields: Any) -> MemoryId:
        """Store one of the user's memories in the private tier (never promoted)."""
        if not isinstance(dedupe, bool):
            msg = f"dedupe must be True or False, got {dedupe!r}"
            raise UsageError(msg)
        row = self.core.make_row(content, fields)
        return (await self._write([row], [dedupe and fields.get("id") is None], dedupe))[0]

    async def remember_many(self, items: Iterable[Any], *, dedupe: bool = True, vectors: Any = None) -> list[MemoryId]:
        """Store many of the user's memories in the private tier, in one transaction."""
        if vectors is not None:
            msg = "vectors= is not available on a federation (Memory.for_agent): each tier embeds with its own model"
            raise UsageError(msg)
        if not isinstance(dedupe, bool):
            msg = f"dedupe must be True or False, got {dedupe!r}"
            raise UsageError(msg)
        rows, per_row = self.core.rows_of(items, dedupe)
        return await self._write(rows, per_row, dedupe)

    async def update(self, id: Any, **changes: Any) -> MemoryRecord:
        """Change one of the user's memories (never promoted)."""
        if "scope" in changes or "pool" in changes:
            msg = "a user's memories stay private: update() cannot move one to another tier"
            raise UsageError(msg)
        return await self.core.update(id, **changes)

    async def forget(self, ids: Any, *, hard: bool = False) -> int:
        """Forget the user's memories among ``ids`` (the team's tiers are the agent's to change)."""
        return await self.core.forget(ids, hard=hard)

    async def restore(self, ids: Any) -> int:
        """Restore the user's memories among ``ids``."""
        return await self.core.restore(ids)

    async def archive(self, ids: Any, *, archived: bool = True) -> int:
        """Archive (or unarchive) the user's memories among ``ids``."""
        return await self.core.archive(ids, archived=archived)

    # -------------------------------------------------------------------- reads
    async def vectors(self, ids: Any) -> dict[str, list[float]]:
        """The stored vectors of the user's memories among ``ids``."""
        return await self.core.vectors(ids)

    async def tags(self, *, filters: Any = None, prefix: Any = None) -> dict[str, int]:
        """Tag counts over the user's private memories."""
        return await self.core.tags(filters=filters, prefix=prefix)

    async def stats(self) -> dict[str, Any]:
        """The user's counts (see :meth:`UserCore.stats`)."""
        return await self.core.stats()

    async def close(self) -> None:
        """Close the federation if this handle opened it; a handle taken with ``for_user`` leaves it open."""
        if self._owns:
            await super().close()
