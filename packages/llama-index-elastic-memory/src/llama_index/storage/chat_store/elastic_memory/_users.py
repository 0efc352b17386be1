"""The store a class serves one user of its agent from: ``path=`` or ``memory=``, and ``user_id=``.

Every class of the package that takes ``user_id=`` opens its store through :func:`open_for_user`:
a file at ``path`` opens as that user's handle (``Memory.open(..., user_id=...)``, closed with
the class), and an open ``memory=`` becomes ``memory.for_user(user_id)``. A handle that already
serves a user is kept as it is; naming another user on it is refused, so a class never widens
what the handle it was given may read.

A file opened with ``path=`` is opened once per process and shared: every class of the package
that names the same file with the same settings (agent, embedder, ``Memory.open`` options) gets
a handle on one open store, so a request handler that builds ``ElasticMemory.from_defaults(path,
...)`` per request pays no open and no close per request, and one background worker serves
them all. The store closes when its last user closes (``":memory:"`` is never shared: each is
a database of its own).
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from pathlib import Path
from typing import Any

from elastic_memory import AsyncMemory, Memory, UsageError, resolve_location
from elastic_memory.adapters import Opened, open_memory
from llama_index.embeddings.elastic_memory.base import core_choice

__all__ = ["SharedOpened", "open_for_user", "open_shared", "user_handle"]

_IN_MEMORY = ":memory:"
#: The stores opened with ``path=`` in this process: settings -> [the agent's handle, users].
_shared: dict[Hashable, list[Any]] = {}
_shared_lock = threading.Lock()


class SharedOpened(Opened):
    """A handle on a store opened once per process: :meth:`close` closes it when its last user closes."""

    def __init__(self, memory: Memory, key: Hashable) -> None:
        super().__init__(memory, owns=False)
        self._key: Hashable | None = key

    def _release(self) -> Memory | None:
        """Stop using the store (idempotent); the store to close when this was its last user."""
        with _shared_lock:
            key, self._key = self._key, None
            entry = _shared.get(key) if key is not None else None
            if entry is None:
                return None
            entry[1] -= 1
            if entry[1] > 0:
                return None
            del _shared[key]
            root: Memory = entry[0]
            return root

    def close(self) -> None:
        """Leave the store; the last user closes it."""
        root = self._release()
        if root is not None:
            root.close()

    async def aclose(self) -> None:
        """:meth:`close` from async code."""
        root = self._release()
        if root is not None:
            await root.as_async().close()


def _settings_key(path: str | Path, embedder: Any, options: dict[str, Any]) -> Hashable | None:
    """What makes two opens of a file the same store; ``None`` when it cannot be shared."""
    if not isinstance(path, str | Path) or str(path) == _IN_MEMORY:
        return None
    try:
        where = resolve_location(path)
    except (OSError, ValueError):
        return None  # Memory.open reports it
    model = embedder if embedder is None or isinstance(embedder, str) else ("object", id(embedder))
    chosen = tuple(sorted((k, repr(v)) for k, v in options.items()))
    return (where, model, chosen)


def open_shared(path: str | Path, user_id: Any, *, embedder: Any = "auto", **options: Any) -> Opened:
    """The process's store for ``path`` and these settings (opened now if none is), as ``user_id``'s handle."""
    embedder = core_choice(embedder)
    key = _settings_key(path, embedder, options)
    if key is None:
        if user_id is not None:
            options["user_id"] = user_id
        return open_memory(path, None, embedder=embedder, **options)
    with _shared_lock:
        entry = _shared.get(key)
        if entry is None:
            root = open_memory(path, None, embedder=embedder, **options).sync
            entry = _shared[key] = [root, 0, embedder]  # the embedder is kept: its id is in the key
        entry[1] += 1
        root = entry[0]
    try:
        handle = root.for_user(user_id) if user_id is not None else root
    except BaseException:
        SharedOpened(root, key).close()
        raise
    return SharedOpened(handle, key)


def user_handle(memory: Memory | AsyncMemory, user_id: Any) -> Memory | AsyncMemory:
    """``memory``'s handle for ``user_id``: ``memory`` itself for ``None`` or the user it serves already.

    Raises:
        UsageError: ``memory`` serves another user (take the handle from the agent's own one).
    """
    if user_id is None or memory.user_id == user_id:
        return memory
    if memory.user_id is not None:
        msg = (
            f"memory= serves user {memory.user_id!r} and cannot serve user {user_id!r}; "
            "pass the agent's own handle (Memory.open without user_id) with user_id="
        )
        raise UsageError(msg)
    return memory.for_user(user_id)


def open_for_user(path: str | Path | None, memory: Memory | AsyncMemory | None, user_id: Any, **kwargs: Any) -> Opened:
    """``open_memory`` for ``user_id`` (``None``: the handle as given, or the agent's for a ``path``)."""
    if isinstance(memory, Memory | AsyncMemory):
        return open_memory(path, user_handle(memory, user_id), **kwargs)
    if memory is None and path is not None and "user_id" not in kwargs:
        kwargs.pop("embedder_arg", None)  # it only words the refusal of an open memory=
        return open_shared(path, user_id, **kwargs)
    if memory is None and user_id is not None:
        kwargs["user_id"] = user_id
    return open_memory(path, memory, **kwargs)
