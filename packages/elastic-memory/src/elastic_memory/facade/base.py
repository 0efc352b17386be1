"""What both facades share, and which class is the sync one.

:class:`Facade` holds the operations, the private store's core, the read-only properties and
the user handles.

:class:`~elastic_memory.AsyncMemory` (:mod:`.async_memory`) and :class:`~elastic_memory.Memory`
(:mod:`.memory`) derive from it. ``AsyncMemory.as_sync`` needs the sync class, which imports the
async one: the sync module registers its class here when it is imported (the package imports it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from ..config import RecallConfig
from ..federation.federation import MemoryFederation
from ..federation.user_ops import federated_user
from ..user_core import user_core
from ..users import split_owner
from .ops import MemoryOps

__all__ = ["Facade", "agent_handle", "register_sync", "sync_class"]

_F = TypeVar("_F", bound="Facade")
_SYNC: list[type[Facade]] = []


def register_sync(cls: type[Facade]) -> None:
    """Record ``cls`` as the sync facade (:mod:`.memory` calls it once, when it is imported)."""
    _SYNC[:] = [cls]


def sync_class() -> type[Facade]:
    """The sync facade's class (``Memory``)."""
    return _SYNC[0]


class Facade:
    """What both facades share: the operations, the private store's core, read-only properties."""

    def __init__(self, ops: MemoryOps) -> None:
        self._ops = ops
        self._core = ops.core

    @property
    def federation(self) -> MemoryFederation | None:
        """The federation underneath (from :meth:`for_agent`), or ``None`` for one store."""
        return self._ops.federation

    @property
    def path(self) -> str:
        """The database path (``":memory:"`` for an in-memory store)."""
        return self._core.store.path

    @property
    def agent_id(self) -> str:
        """The agent that writes default to."""
        return split_owner(self._core.agent_id)[0]

    @property
    def user_id(self) -> str | None:
        """The user this handle serves (see :meth:`for_user`), or ``None`` for the agent's own handle."""
        return split_owner(self._core.agent_id)[1]

    def for_user(self: _F, user_id: str | None) -> _F:
        """This agent's memory for one of its users: their own turns, memories, facts, profile and plans.

        One store, one model and one background worker serve every user; a handle is cheap
        (kept per user), so take one per request. Everything it reads and writes is that
        user's: recall and plans never show another user's rows, and an id of another user's
        memory is "no memory" to it. Lessons added on the agent's own handle reach every
        user's plans. ``None`` returns the agent's own handle. Closing a user's handle leaves
        the store open. See ``docs/memory-loop.md`` ("Many users").

        >>> from elastic_memory import Memory
        >>> from elastic_memory.testing import FakeEmbedder
        >>> with Memory.open(":memory:", agent_id="support-bot", embedder=FakeEmbedder()) as mem:
        ...     alice, bob = mem.for_user("alice"), mem.for_user("bob")
        ...     _ = alice.remember("My locker code is 4412.")
        ...     [h.content for h in alice.recall("locker code")], bob.recall("locker code")
        (['My locker code is 4412.'], [])
        """
        if self._ops is self._core:
            return type(self)(user_core(self._core, user_id))
        return type(self)(federated_user(self._ops, user_id))

    @property
    def clock(self) -> Callable[[], float]:
        """The store's clock (seconds since the epoch): what expiry and timestamps are measured by."""
        return self._core.clock

    @property
    def recall_config(self) -> RecallConfig:
        """How hybrid recall fuses its legs."""
        return self._core.recall_config

    def __repr__(self) -> str:
        if self.federation is not None:
            tiers = [t.name for t in self.federation.tiers]
            return f"{type(self).__name__}.for_agent({self.agent_id!r}, tiers={tiers})"
        user = "" if self.user_id is None else f", user_id={self.user_id!r}"
        return f"{type(self).__name__}({self.path!r}, agent_id={self.agent_id!r}{user})"


def agent_handle(memory: _F) -> _F:
    """The agent's own handle on ``memory``'s store, whichever user ``memory`` serves.

    For an adapter that keeps a collection of its own beside a user's memory (a chat store
    under its own agent id, keyed by the user): a user's handle hands out no other handle
    (``for_user`` refuses), so the adapter asks here, once, for the store it was given.
    ``elastic_memory.adapters`` re-exports it; a handle is not a boundary inside one process.
    """
    return type(memory)(memory._core.root)
