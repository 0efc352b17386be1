"""The store a class serves one user of its agent from: ``path=`` or ``memory=``, and ``user_id=``.

Every class of the package that takes ``user_id=`` opens its store through :func:`open_for_user`:
a file at ``path`` opens as that user's handle (``Memory.open(..., user_id=...)``, closed with
the class), and an open ``memory=`` becomes ``memory.for_user(user_id)``. A handle that already
serves a user is kept as it is; naming another user on it is refused, so a class never widens
what the handle it was given may read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from elastic_memory import AsyncMemory, Memory, UsageError
from elastic_memory.adapters import Opened, open_memory

__all__ = ["open_for_user", "user_handle"]


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
    if memory is None and user_id is not None:
        kwargs["user_id"] = user_id
    return open_memory(path, memory, **kwargs)
