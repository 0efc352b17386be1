"""The library's own event loop, on a daemon thread: every store lives on it.

Loop-affine objects (the aiosqlite connection, locks) are created and used only on this
loop, so :class:`~elastic_memory.Memory` works from any thread and
:class:`~elastic_memory.AsyncMemory` from any event loop (the caller's, Jupyter's, or a
framework's worker loop).
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures.thread  # noqa: F401 - its exit hook (pools refuse work) registers before ours
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from .errors import UsageError

__all__ = ["EXIT_GRACE", "arun", "event_loop", "exiting", "keep", "run", "shutting_down"]

T = TypeVar("T")
#: At interpreter exit, how long the library event loop's tasks get to end once cancelled (seconds).
EXIT_GRACE = 2.0
_lock = threading.Lock()
_event_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None
#: Long-lived tasks on the library event loop (a store's worker): held here, so a store dropped
#: without ``close()`` never leaves a pending task to the garbage collector.
_kept: set[asyncio.Task[Any]] = set()
#: Set once the main thread has finished (threading's exit hooks, before non-daemon threads are
#: joined and before ``atexit``): thread pools refuse new work from then on, so a background job
#: failing for that reason is logged quietly. Work still goes on: a non-daemon thread or an
#: ``atexit`` handler may still use a store and close it.
_main_ended = threading.Event()
#: Set by the library's ``atexit`` handler, which then cancels what runs on the library event loop.
_exiting = threading.Event()


def event_loop() -> asyncio.AbstractEventLoop:
    """The library event loop, started on first use."""
    global _event_loop, _thread  # one event loop per process by design
    with _lock:
        if _event_loop is None or _event_loop.is_closed():
            if _event_loop is None:
                # Registered before any store exists, so a host's own ``atexit`` handler (say
                # ``mem.close``) runs before ours: atexit runs last registered first.
                atexit.register(_end_at_exit)
                # CPython's hook for "the main thread has finished" (private; atexit alone is later).
                at_threading_exit = getattr(threading, "_register_atexit", None)
                if at_threading_exit is not None:
                    try:
                        at_threading_exit(_main_ended.set)
                    except RuntimeError:  # first used from a thread that outlived the main thread
                        _main_ended.set()
            new = asyncio.new_event_loop()
            thread = threading.Thread(target=new.run_forever, name="elastic-memory-loop", daemon=True)
            thread.start()
            _event_loop, _thread = new, thread
        return _event_loop


def exiting() -> bool:
    """Whether the library's exit handler runs: background work stops, waiting for it ends."""
    return _exiting.is_set()


def shutting_down() -> bool:
    """Whether the main thread has finished: thread pools refuse work, failures are expected."""
    return _main_ended.is_set() or _exiting.is_set()


def keep(task: asyncio.Task[Any]) -> None:
    """Hold a long-lived library event loop task until it ends (at the latest, at interpreter exit)."""
    _kept.add(task)
    task.add_done_callback(_kept.discard)


def _end_at_exit() -> None:
    """At interpreter exit: cancel what still runs on the library event loop, then stop and close it, quietly.

    A store that was never closed leaves its worker waiting for work; without this it is
    destroyed pending at exit ("Task was destroyed but it is pending!"). Every write is its own
    transaction, so a cancelled background job loses nothing that was committed.
    """
    _exiting.set()
    ev_loop, thread = _event_loop, _thread
    if ev_loop is None or ev_loop.is_closed() or thread is None or not thread.is_alive():
        return
    with contextlib.suppress(Exception):  # exiting: nothing left to report to
        asyncio.run_coroutine_threadsafe(_cancel_all(), ev_loop).result(timeout=EXIT_GRACE + 1)
    ev_loop.call_soon_threadsafe(ev_loop.stop)
    thread.join(timeout=EXIT_GRACE)
    if not thread.is_alive():
        ev_loop.close()


async def _cancel_all() -> None:
    current = asyncio.current_task()
    tasks = [t for t in asyncio.all_tasks() if t is not current]
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks, timeout=EXIT_GRACE)


def _on_event_loop() -> bool:
    try:
        return asyncio.get_running_loop() is _event_loop
    except RuntimeError:
        return False


def run(coro: Coroutine[Any, Any, T], name: str) -> T:
    """Run ``coro`` on the library event loop and wait for it (sync facade)."""
    if _on_event_loop():
        coro.close()
        msg = (
            f"Memory.{name}() was called on elastic-memory's own event loop, where it would deadlock; "
            f"use `await AsyncMemory.{name}(...)` there instead"
        )
        raise UsageError(msg)
    return asyncio.run_coroutine_threadsafe(coro, event_loop()).result()


async def arun(coro: Coroutine[Any, Any, T]) -> T:
    """Await ``coro`` on the library event loop from any event loop (async facade).

    The work is shielded: cancelling the caller (a timeout, a cancelled task) stops the
    wait, never the store operation half-way, so a transaction always ends in a commit or
    a rollback.
    """
    if _on_event_loop():
        return await coro
    future = asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, event_loop()))
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        future.add_done_callback(_consume)
        raise


def _consume(future: asyncio.Future[Any]) -> None:
    """Retrieve the outcome of shielded work whose caller left, so nothing is logged as lost."""
    if not future.cancelled():
        future.exception()
