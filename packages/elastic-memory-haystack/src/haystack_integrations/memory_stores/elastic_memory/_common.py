"""What the memory store, the chat message store and the hooks share: opening the core and serialising it."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from elastic_memory import AsyncMemory, Memory, UsageError, resolve_location
from elastic_memory.adapters import Opened, StoreLifecycle, agent_handle, open_memory

__all__ = ["IN_MEMORY", "StoreOwner", "agent_suffix", "check_name", "open_shared"]

IN_MEMORY = ":memory:"
#: Stores opened with ``open_shared``: key -> [the store, how many leases are open].
_SHARED: dict[tuple[Any, ...], list[Any]] = {}
_LOCK = threading.Lock()


class _Lease(Opened):
    """One holder's share of a store opened once per process: the last holder to close closes it."""

    def __init__(self, key: tuple[Any, ...], memory: Memory) -> None:
        super().__init__(memory, owns=True)
        self._key = key
        self._released = False

    def _release(self) -> bool:
        """Give the lease back (once); ``True`` when it was the last one, so the store must close."""
        with _LOCK:
            if self._released:
                return False
            self._released = True
            entry = _SHARED.get(self._key)
            if entry is None or entry[0] is not self.sync:
                return True  # not the registered store any more: close ours
            entry[1] -= 1
            if entry[1] > 0:
                return False
            del _SHARED[self._key]
            return True

    def close(self) -> None:
        if self._release():
            self.sync.close()

    async def aclose(self) -> None:
        if self._release():
            await self.aio.close()


def open_shared(path: str | Path, embedder: Any, options: dict[str, Any]) -> Opened:
    """The store at ``path``, opened once per process for every holder asking with the same settings.

    A file (or server URL) opened with the same embedder choice (``"auto"``, ``None`` or a model
    name) and options is shared: one connection, one background worker, one model load. An
    in-memory store, an embedder object or options that are not plain values open a store of their own.
    """
    location = str(path)
    try:
        key = (_absolute(location), embedder, tuple(sorted(options.items())))
        hash(key)
    except TypeError:
        return open_memory(path, None, embedder=embedder, **options)
    if location == IN_MEMORY or not (embedder is None or isinstance(embedder, str)):
        return open_memory(path, None, embedder=embedder, **options)
    with _LOCK:
        entry = _SHARED.get(key)
        if entry is None:
            entry = [open_memory(path, None, embedder=embedder, **options).sync, 0]
            _SHARED[key] = entry
        entry[1] += 1
        return _Lease(key, entry[0])


def _absolute(path: str | Path) -> str:
    return resolve_location(path)


def check_name(name: str, value: Any, *, optional: bool = False) -> str | None:
    """``value`` if it is a non-empty string (or ``None`` where allowed), else :class:`UsageError`."""
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip():
        msg = f"{name} must be a non-empty string{' or None' if optional else ''}, got {value!r}"
        raise UsageError(msg)
    return value


def agent_suffix(opened: Opened, agent_id: str | None, suffix: str) -> str:
    """The dedicated agent id: ``agent_id`` as given, else ``"<store agent id><suffix>"``."""
    return check_name("agent_id", agent_id, optional=True) or f"{opened.sync.agent_id}{suffix}"


class StoreOwner(StoreLifecycle):
    """Holds the open store of one integration object: ``path=`` (opened and closed here) or ``memory=``."""

    _opened: Opened

    def __init__(
        self,
        *,
        path: str | Path | None,
        memory: Memory | AsyncMemory | None,
        embedder: Any,
        options: dict[str, Any],
        shared: bool = False,
    ) -> None:
        if shared and path is not None and memory is None:
            self._opened = open_shared(path, embedder, options)
        else:
            self._opened = open_memory(path, memory, embedder=embedder, **options)
        self._path = _absolute(path if path is not None else self._opened.sync.path)
        self._embedder = embedder
        self._options = options

    @property
    def async_memory(self) -> AsyncMemory:
        """:attr:`amemory`, under its earlier name."""
        return self.amemory

    @property
    def path(self) -> str:
        """The database file (absolute) or ``":memory:"``: what :meth:`to_dict` records."""
        return self._path

    @property
    def user_id(self) -> str | None:
        """The user the store handle serves (``memory=mem.for_user(...)`` or ``user_id=``), or ``None``: the agent."""
        return self.memory.user_id

    @property
    def owner_memory(self) -> Memory:
        """The agent's own handle: the one a store writes a dedicated agent id's rows through, for :attr:`user_id`."""
        return self.memory if self.user_id is None else agent_handle(self.memory)

    def owner_fields(self, agent_id: str) -> dict[str, Any]:
        """The owner of a dedicated agent id's rows: as a memory's fields, and as a recall filter."""
        return {"agent_id": agent_id} if self.user_id is None else {"agent_id": agent_id, "user_id": self.user_id}

    def serialise_like(self, other: StoreOwner) -> None:
        """Serialise as ``other`` does (its path and open options): for an object given ``other``'s store."""
        self._path, self._embedder, self._options = other._path, other._embedder, dict(other._options)

    def _store_params(self) -> dict[str, Any]:
        """``path``, the handle's user and, when they are plain data, the embedder choice and the open options."""
        params: dict[str, Any] = {"path": self._path}
        if self._embedder is None or isinstance(self._embedder, str):
            params["embedder"] = self._embedder
        params.update({k: v for k, v in self._options.items() if v is None or isinstance(v, str | int | float | bool)})
        if self.user_id is not None:
            params["user_id"] = self.user_id  # Memory.open(..., user_id=) reopens that user's handle
        return params

    async def close_async(self) -> None:
        """:meth:`aclose` under Haystack's name for it, which its ``Agent`` and ``DocumentWriter`` call."""
        await self.aclose()
