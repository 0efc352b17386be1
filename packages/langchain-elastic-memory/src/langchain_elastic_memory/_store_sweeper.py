"""The TTL sweeper of :class:`~langchain_elastic_memory.ElasticMemoryStore`: a daemon thread per store."""

from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import logging
import math
import threading
import weakref
from typing import Any, Protocol

from elastic_memory import UsageError

__all__ = ["Sweepable", "Sweeper", "sweep_interval"]

#: The sweeper's interval when neither the call nor the TTL config gives one (SqliteStore's).
_SWEEP_MINUTES = 5.0
#: At interpreter exit, how long a running sweep gets to end (seconds).
_SWEEP_EXIT_GRACE = 2.0

log = logging.getLogger("langchain_elastic_memory")


class Sweepable(Protocol):
    """What a sweeper sweeps: a store that erases its expired items."""

    def sweep_ttl(self) -> int:
        """Erase the expired items; how many."""
        ...


class Sweeper:
    """A daemon thread sweeping one store every ``seconds``; it holds the store weakly."""

    def __init__(self, store: Sweepable, seconds: float) -> None:
        self.stop = threading.Event()
        self.future: concurrent.futures.Future[None] = concurrent.futures.Future()
        self.future.add_done_callback(lambda f: self.stop.set() if f.cancelled() else None)
        self.thread = threading.Thread(
            target=self._loop, args=(weakref.ref(store), seconds), name="elastic-memory-ttl-sweeper", daemon=True
        )
        _at_exit()
        _SWEEPERS.add(self)
        self.thread.start()

    def _loop(self, store_ref: weakref.ref[Sweepable], seconds: float) -> None:
        try:
            while not self.stop.wait(seconds):
                store = store_ref()
                if store is None:
                    break
                try:
                    swept = store.sweep_ttl()
                except UsageError:
                    break  # the store was closed under the sweeper
                except Exception:
                    if self.stop.is_set():
                        break
                    log.exception("store TTL sweep failed; the sweeper tries again in %s s", seconds)
                else:
                    if swept:
                        log.info("store TTL sweep erased %d expired items", swept)
                finally:
                    del store
        finally:
            self.stop.set()
            _SWEEPERS.discard(self)
            with contextlib.suppress(concurrent.futures.InvalidStateError):  # cancelled meanwhile
                self.future.set_result(None)

    def halt(self, timeout: float | None) -> bool:
        """Signal the thread and wait for it; whether it has ended."""
        self.stop.set()
        if self.thread is not threading.current_thread():
            self.thread.join(timeout)
        return not self.thread.is_alive()


#: The running sweepers, stopped at interpreter exit (before the library loop ends).
_SWEEPERS: weakref.WeakSet[Sweeper] = weakref.WeakSet()
_exit_hook: list[bool] = []


def _at_exit() -> None:
    """Register the exit hook once, after the library loop registered its own (so it runs first)."""
    if not _exit_hook:
        _exit_hook.append(True)
        atexit.register(_halt_sweepers)


def _halt_sweepers() -> None:
    for sweeper in list(_SWEEPERS):
        sweeper.halt(_SWEEP_EXIT_GRACE)


def sweep_interval(minutes: Any, configured: Any) -> float:
    """The sweep interval in minutes: the call's, else the config's, else 5; refused if not positive."""
    chosen = minutes if minutes is not None else configured if configured is not None else _SWEEP_MINUTES
    seconds_max = threading.TIMEOUT_MAX
    if (
        isinstance(chosen, bool)
        or not isinstance(chosen, int | float)
        or not 0 < chosen < math.inf
        or chosen * 60 > seconds_max
    ):
        msg = f"sweep_interval_minutes must be a positive number of minutes, got {chosen!r:.100}"
        raise UsageError(msg)
    return float(chosen)
