"""The library's own event loop, on a daemon thread: every store lives on it.

Loop-affine objects (the aiosqlite connection, locks) are created and used only on this
loop, so :class:`~elastic_memory.Memory` works from any thread and
:class:`~elastic_memory.AsyncMemory` from any event loop (the caller's, Jupyter's, or a
framework's worker loop).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from .errors import UsageError

__all__ = ["arun", "loop", "run"]

T = TypeVar("T")
_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def loop() -> asyncio.AbstractEventLoop:
    """The library loop, started on first use."""
    global _loop  # noqa: PLW0603 - one loop per process by design
    with _lock:
        if _loop is None or _loop.is_closed():
            new = asyncio.new_event_loop()
            thread = threading.Thread(target=new.run_forever, name="elastic-memory-loop", daemon=True)
            thread.start()
            _loop = new
        return _loop


def _on_library_loop() -> bool:
    try:
        return asyncio.get_running_loop() is _loop
    except RuntimeError:
        return False


def run(coro: Coroutine[Any, Any, T], name: str) -> T:
    """Run ``coro`` on the library loop and wait for it (sync facade)."""
    if _on_library_loop():
        coro.close()
        msg = (
            f"Memory.{name}() was called on elastic-memory's own event loop, where it would deadlock; "
            f"use `await AsyncMemory.{name}(...)` there instead"
        )
        raise UsageError(msg)
    return asyncio.run_coroutine_threadsafe(coro, loop()).result()


async def arun(coro: Coroutine[Any, Any, T]) -> T:
    """Await ``coro`` on the library loop from any event loop (async facade).

    The work is shielded: cancelling the caller (a timeout, a cancelled task) stops the
    wait, never the store operation half-way, so a transaction always ends in a commit or
    a rollback.
    """
    if _on_library_loop():
        return await coro
    future = asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, loop()))
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        future.add_done_callback(_consume)
        raise


def _consume(future: asyncio.Future[Any]) -> None:
    """Retrieve the outcome of shielded work whose caller left, so nothing is logged as lost."""
    if not future.cancelled():
        future.exception()
