"""An embedder's model loaded on a thread of its own while the host does other work.

An embedder whose model loads on first use may offer ``load()``: load now; idempotent and
thread-safe, with ``embed`` waiting for a load in progress (the built-in ones do). A store
opened with the memory loop's background worker starts it through :func:`preload`, so the
host's first call finds the model loaded or loading instead of paying the whole load. The
first call that needs the model waits for this load (:meth:`Preload.wait`): there is never a
second one, and a failed load is reported as if that call had loaded the model itself.

The thread runs nothing but ``load()`` and ends with it. Closing a store never waits for it;
the interpreter's exit does, as it waits for any thread that is not a daemon: a native
runtime torn down under a load in progress aborts the process (onnxruntime: "terminate
called without an active exception").
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable

from .base import Embedder

__all__ = ["THREAD_NAME", "Preload", "preload"]

#: The name of the loading thread (one per embedder instance, ended when its load returns).
THREAD_NAME = "elastic-memory-model-load"
#: The load started for each embedder instance (by id; the load holds the instance): however
#: many stores share one instance (a federation's tiers), its model loads once.
_started: weakref.WeakValueDictionary[int, Preload] = weakref.WeakValueDictionary()
#: The embedder instances whose load succeeded (by id, a weak reference to check the id's owner):
#: a store opened later on one of them starts no thread (opening a file per request stays cheap).
_loaded: dict[int, weakref.ref[Embedder]] = {}
_lock = threading.Lock()


class Preload:
    """``embedder.load()`` on a thread of its own, and its outcome once it ends."""

    def __init__(self, embedder: Embedder, load: Callable[[], object] | None) -> None:
        self.embedder = embedder
        self._load: Callable[[], object] | None = load
        self._ended = threading.Event()
        self._error: Exception | None = None
        self.thread = threading.Thread(target=self._run, name=THREAD_NAME, daemon=False)
        if load is None:  # already loaded: nothing to run
            self._ended.set()

    def __repr__(self) -> str:
        state = "failed" if self._error is not None else "loaded" if self.done else "loading"
        return f"Preload({self.embedder.model_id!r}, {state})"

    def _run(self) -> None:
        try:
            if self._load is not None:
                self._load()
            _remember_loaded(self.embedder)
        except Exception as e:  # noqa: BLE001 - raised again by wait(), to the first call that needs the model
            self._error = e
        finally:
            self._load = None
            self._ended.set()

    @property
    def done(self) -> bool:
        """Whether the load has ended (loaded or failed)."""
        return self._ended.is_set()

    @property
    def failed(self) -> bool:
        """Whether the load has ended in an error."""
        return self._error is not None

    def wait(self) -> None:
        """Block until the load has ended; raise its error if it failed.

        Call it off the event loop (from ``asyncio.to_thread``): a load takes seconds.
        """
        self._ended.wait()
        if self._error is not None:
            raise self._error


def preload(embedder: Embedder) -> Preload | None:
    """Start loading ``embedder``'s model on a thread of its own; ``None`` when it has no ``load()``.

    One load per instance: while one runs, or after one succeeded, it is returned again; after
    a failure, a new one starts (a later store may find the model repaired). ``None`` too when
    no thread can start (the interpreter is exiting): the first call loads the model then.

    >>> from elastic_memory.testing import FakeEmbedder
    >>> preload(FakeEmbedder()) is None
    True
    """
    load = getattr(embedder, "load", None)
    if not callable(load):
        return None
    with _lock:
        known = _loaded.get(id(embedder))
        if known is not None and known() is embedder:
            return Preload(embedder, None)
        started = _started.get(id(embedder))
        if started is not None and started.embedder is embedder and not started.failed:
            return started
        job = Preload(embedder, load)
        try:
            job.thread.start()
        except RuntimeError:  # "can't create new thread at interpreter shutdown"
            return None
        _started[id(embedder)] = job
        return job


def _remember_loaded(embedder: Embedder) -> None:
    """Note that ``embedder``'s model is loaded, until the instance is gone (objects without weak references: never).

    No lock: the weak reference's callback may run inside a garbage collection on any thread,
    even one holding ``_lock``; single dict operations are atomic.
    """
    key = id(embedder)

    def forget(ref: weakref.ref[Embedder]) -> None:
        if _loaded.get(key) is ref:  # the instance died before its id could be reused
            _loaded.pop(key, None)

    try:
        _loaded[key] = weakref.ref(embedder, forget)
    except TypeError:  # no weak references to it: every store starts its (instant) load
        return
