"""The background worker: one task on the library loop, one bounded queue, foreground wins.

The host brackets its own model call with ``with mem.foreground():``. That takes
:class:`ForegroundGate`, a real lock which the worker holds for the whole of every ``llm``
call it makes and touches before starting any job, so background work never overlaps
the host's generation. A hung ``llm`` call is abandoned after ``llm_timeout`` seconds:
the gate is released on its behalf and background LLM use pauses for ``llm_cooldown``.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import math
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from .. import _runner
from ..governor import Admission

__all__ = ["ForegroundBusy", "ForegroundCalls", "ForegroundGate", "Job", "LLMCaller", "Worker", "describe"]

log = logging.getLogger("elastic_memory")


class ForegroundGate:
    """The foreground-wins lock shared by the host's model calls and the worker's."""

    def __init__(self, timeout: float) -> None:
        self._lock = threading.Lock()
        self.timeout = timeout

    def acquire(self) -> bool:
        """Wait for the gate (at most ``timeout`` seconds); ``False`` if it stayed taken."""
        return self._lock.acquire(timeout=self.timeout)

    async def acquire_async(self) -> bool:
        """:meth:`acquire` without blocking the event loop; cancellation never leaks the lock."""
        task = asyncio.ensure_future(asyncio.to_thread(self.acquire))
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            task.add_done_callback(lambda t: self.release() if not t.cancelled() and t.result() else None)
            raise

    def release(self) -> None:
        """Release the gate (from any thread)."""
        with contextlib.suppress(RuntimeError):
            self._lock.release()

    def wait_free(self) -> None:
        """Block until nobody holds the gate (or ``timeout`` passed)."""
        if self._lock.acquire(timeout=self.timeout):
            self._lock.release()

    @property
    def held(self) -> bool:
        """True while the host or an llm call holds the gate."""
        return self._lock.locked()


class ForegroundCalls:
    """The host's memory calls in flight (``build_context``, ``record_turn``): background work waits them out.

    The worker starts a job, and long jobs their next batch, only when no such call has run
    for ``settle`` seconds (the host finishes its turn after ``record_turn`` returns: a
    framework's bookkeeping, then the model call); after ``patience`` seconds of calls back
    to back, in any gap between them (so a busy host never starves it). A host waiting for
    the background (``drain``) skips the settling. Lives on the library loop.
    """

    def __init__(self, patience: float = 1.0, settle: float = 0.05) -> None:
        self.patience = patience
        self.settle = settle
        self.active = 0
        self._ended_at = -math.inf
        self._quiet = asyncio.Event()
        self._quiet.set()
        self._hurried = 0
        self._hurry = asyncio.Event()

    @contextlib.asynccontextmanager
    async def call(self) -> AsyncIterator[None]:
        """Bracket one foreground call."""
        self.active += 1
        self._quiet.clear()
        try:
            yield
        finally:
            self.active -= 1
            if self.active == 0:
                self._ended_at = time.monotonic()
                self._quiet.set()

    @contextlib.asynccontextmanager
    async def hurried(self) -> AsyncIterator[None]:
        """Bracket the host waiting for background work: jobs start without settling."""
        self._hurried += 1
        self._hurry.set()
        try:
            yield
        finally:
            self._hurried -= 1
            if not self._hurried:
                self._hurry.clear()

    async def quiet(self) -> None:
        """Return once no foreground call has run for ``settle`` seconds.

        After ``patience`` seconds any gap between calls will do; a host whose calls never
        stop gets the job alongside after twice that.
        """
        started = time.monotonic()
        settle_by, barge_at = started + self.patience, started + 2 * self.patience
        while True:
            now = time.monotonic()
            if self.active:
                if now >= barge_at:
                    return
                with contextlib.suppress(asyncio.TimeoutError):  # not the builtin TimeoutError before 3.11
                    await asyncio.wait_for(self._quiet.wait(), barge_at - now)
                continue
            calm = now - self._ended_at
            if calm >= self.settle or self._hurried or now >= settle_by:
                return
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._hurry.wait(), min(self.settle - calm, settle_by - now))


class ForegroundBusy(TimeoutError):
    """The host kept the model (``foreground()``) longer than the gate's timeout: try later."""


class LLMCaller:
    """Calls the host's ``llm`` under the gate, with a timeout, a token cap and a cool-down.

    Each call runs on its own daemon thread, so a call that never returns occupies only
    that thread: no shared pool fills up and interpreter exit is never blocked. The
    timeout starts once the gate is held (waiting for the host's model is not a hang);
    while an abandoned call is still running, the llm counts as unavailable.
    """

    def __init__(self, llm: Callable[..., str], gate: ForegroundGate, *, timeout: float, cooldown: float) -> None:
        self._llm = llm
        self._gate = gate
        self.timeout = timeout
        self.cooldown = cooldown
        self._paused_until = 0.0
        self._hung = 0
        self._hung_lock = threading.Lock()
        self.calls = 0
        self.failures = 0
        self.last_error: str | None = None
        try:
            params = inspect.signature(llm).parameters
            self._takes_max_tokens = "max_tokens" in params or any(
                p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()
            )
        except (TypeError, ValueError):
            self._takes_max_tokens = False

    @property
    def available(self) -> bool:
        """False while cooling down after a hang or repeated failures, or while a hung call still runs."""
        return self._hung == 0 and time.monotonic() >= self._paused_until

    async def __call__(self, prompt: str, max_tokens: int) -> str:
        """The completion of ``prompt``.

        Raises :class:`ForegroundBusy` when the gate stayed taken (nothing was called),
        ``TimeoutError`` on a hang, and whatever the llm raised or ``TypeError`` for a
        non-string answer.
        """
        loop = asyncio.get_running_loop()
        started: asyncio.Future[bool] = loop.create_future()
        answer: asyncio.Future[Any] = loop.create_future()
        state = {"s": "waiting"}
        mutex = threading.Lock()

        def settle(future: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
            if future.done():
                return
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(value)

        def run() -> None:
            if not self._gate.acquire():
                with contextlib.suppress(RuntimeError):  # the loop may be closed by now
                    loop.call_soon_threadsafe(settle, started, False, None)
                return
            with mutex:
                if state["s"] == "abandoned":
                    self._gate.release()
                    return
                state["s"] = "calling"
            try:
                loop.call_soon_threadsafe(settle, started, True, None)
            except RuntimeError:  # nobody is waiting any more: give the model back
                with mutex:
                    state["s"] = "abandoned"
                self._gate.release()
                return
            value: Any = None
            error: BaseException | None = None
            try:
                value = self._llm(prompt, max_tokens=max_tokens) if self._takes_max_tokens else self._llm(prompt)
            except BaseException as e:  # noqa: BLE001 - handed to the awaiting coroutine
                error = e
            with mutex:
                if state["s"] == "calling":
                    state["s"] = "done"
                    self._gate.release()
                elif state["s"] == "hung":  # abandoned mid-call: the gate was released for it
                    with self._hung_lock:
                        self._hung -= 1
            with contextlib.suppress(RuntimeError):  # the loop may be closed by now
                loop.call_soon_threadsafe(settle, answer, value, error)

        threading.Thread(target=run, name="elastic-memory-llm", daemon=True).start()
        try:
            got_gate = await asyncio.wait_for(asyncio.shield(started), self._gate.timeout + 1.0)
        except (TimeoutError, asyncio.TimeoutError):  # distinct classes before Python 3.11
            got_gate = False
        if not got_gate:
            with mutex:
                if state["s"] == "waiting":
                    state["s"] = "abandoned"
            if state["s"] == "abandoned":
                msg = "the host held the model (foreground) for too long; the call is left for later"
                raise ForegroundBusy(msg)
        self.calls += 1
        try:
            out = await asyncio.wait_for(asyncio.shield(answer), self.timeout)
        except (TimeoutError, asyncio.TimeoutError, asyncio.CancelledError) as stop:
            # asyncio.TimeoutError is a distinct class before Python 3.11. A cancelled wait is a
            # hang too: the call goes on without us, so the gate is released on its behalf.
            with mutex:
                if state["s"] == "calling":
                    state["s"] = "hung"
                    with self._hung_lock:
                        self._hung += 1
                    self._gate.release()  # released on behalf of the hung call
            answer.add_done_callback(_consume)
            if isinstance(stop, asyncio.CancelledError):
                raise
            self._fail(f"llm did not answer within {self.timeout:g} s", pause=True)
            raise
        except Exception as e:
            self._fail(f"llm raised {type(e).__name__}: {describe(e)}", pause=self.failures >= 2)
            raise
        if not isinstance(out, str):
            self._fail(f"llm returned {type(out).__name__}, not str", pause=False)
            msg = "llm returned a non-string"
            raise TypeError(msg)
        return out

    def _fail(self, message: str, *, pause: bool) -> None:
        self.failures += 1
        self.last_error = message
        log.warning("elastic-memory background llm call failed: %s", message)
        if pause:
            self._paused_until = time.monotonic() + self.cooldown


def describe(error: BaseException) -> str:
    """``str(error)``, or its type name when even that fails (hostile exceptions)."""
    try:
        return str(error)
    except Exception:  # noqa: BLE001 - describing an error must not raise
        return f"<{type(error).__name__} that cannot be printed>"


def _consume(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


@dataclass
class Job:
    """One unit of background work. ``key`` coalesces duplicates (one per key queued).

    A ``deferrable`` job that load shedding refuses is kept aside, not dropped: it asks
    again once the queue has run dry (or at the next :meth:`Worker.drain`).
    """

    kind: str
    run: Callable[[], Awaitable[None]]
    key: str
    critical: bool = False
    deferrable: bool = False
    enqueued_at: float = field(default_factory=time.monotonic)
    estimate: float = 0.0


class Worker:
    """One queue drained by one task on the library loop; errors are counted, never raised."""

    def __init__(
        self,
        gate: ForegroundGate,
        admission: Admission,
        *,
        background: bool = True,
        calls: ForegroundCalls | None = None,
    ) -> None:
        self.gate = gate
        #: The host's memory calls in flight: a background job starts after them.
        self.calls = calls or ForegroundCalls()
        self.background = background
        self.admission = admission
        self._queue: deque[Job] = deque()
        # Running totals, so admitting a job costs O(1) however long the queue is.
        self._queued_seconds = 0.0
        self._queued_kinds: deque[str] = deque()
        self._keys: set[str] = set()
        # Deferrable jobs shedding refused, by key, with the limits they were refused under.
        self._deferred: dict[str, tuple[Job, int, float]] = {}
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._task: asyncio.Task[None] | None = None
        self._running: Job | None = None
        self._stopping = False
        self.errors: dict[str, int] = {}
        self.done: dict[str, int] = {}
        self.last_error: str | None = None
        self.restarts = 0

    # ------------------------------------------------------------------ control
    def start(self) -> None:
        """Start (or restart after a crash) the worker task on the running loop."""
        if self._stopping or not self.background:
            return
        if self._task is not None and not self._task.done():
            return
        if self._task is not None:
            self.restarts += 1
        self._task = asyncio.get_running_loop().create_task(self._main(), name="elastic-memory-worker")
        _runner.keep(self._task)

    @property
    def alive(self) -> bool:
        """True while the worker task runs."""
        return self._task is not None and not self._task.done()

    @property
    def depth(self) -> int:
        """Jobs waiting (not counting the one running)."""
        return len(self._queue)

    @property
    def deferred(self) -> dict[str, int]:
        """Deferrable jobs shedding refused that wait for the queue to run dry, by kind."""
        out: dict[str, int] = {}
        for job, _, _ in self._deferred.values():
            out[job.kind] = out.get(job.kind, 0) + 1
        return out

    def submit(self, job: Job, *, queue_max: int, headroom_seconds: float) -> bool:
        """Queue ``job`` unless the same key is queued or load shedding refuses it (a deferrable job then waits)."""
        if self._stopping:
            return False
        if job.key in self._keys:
            return True
        running = self.admission.estimate(self._running.kind) if self._running else 0.0
        depth = self._queued_seconds + running
        admitted = self.admission.admit(
            job.kind,
            queue=self._queued_kinds,
            critical=job.critical,
            headroom_seconds=headroom_seconds,
            queue_max=queue_max,
            depth_seconds=depth if (self._queue or self._running) else None,
        )
        if not admitted:
            if job.deferrable:
                self._deferred[job.key] = (job, queue_max, headroom_seconds)
            return False
        self._deferred.pop(job.key, None)
        job.estimate = self.admission.estimate(job.kind)
        self._queue.append(job)
        self._keys.add(job.key)
        self._queued_seconds += job.estimate
        self._queued_kinds.append(job.kind)
        if self.background:
            self._idle.clear()
            self._wake.set()
            self.start()
        return True

    def _readmit(self) -> bool:
        """The queue ran dry: each deferred job asks admission again; whether any was queued.

        Nothing waits ahead of them now, so only a tier that admits no background work at
        all (``queue_max`` 0) keeps them aside.
        """
        deferred, self._deferred = self._deferred, {}
        queued = False
        for job, queue_max, headroom in deferred.values():
            if queue_max == 0:
                self._deferred[job.key] = (job, queue_max, headroom)
                continue
            job.enqueued_at = time.monotonic()
            queued = self.submit(job, queue_max=queue_max, headroom_seconds=headroom) or queued
        return queued

    async def drain(self) -> None:
        """Wait until every queued job, and every deferred one, has run (run them here when not in the background)."""
        if not self.background:
            while not self._stopping and (self._queue or self._readmit()):
                await self._run_one(self._queue.popleft())
            return
        async with self.calls.hurried():
            # At interpreter exit the worker stops and what is queued is left (nothing committed is lost).
            while (self._queue or self._running is not None) and not _runner.exiting():
                self.start()
                await self._idle.wait()

    async def stop(self) -> None:
        """Drain, then stop the task."""
        await self.drain()
        self._stopping = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def yield_to_host(self) -> None:
        """Before a job and between the steps of a long one: let the host's memory calls finish first.

        Only in the background: jobs run inline (``background=False``) run when the host asks.
        """
        if self.background:
            await self.calls.quiet()

    # --------------------------------------------------------------------- loop
    async def _main(self) -> None:
        try:
            while not _runner.exiting():  # at interpreter exit the queue is left: nothing committed is lost
                if not self._queue and not self._readmit():
                    self._idle.set()
                    self._wake.clear()
                    await self._wake.wait()
                    continue
                await self._run_one(self._queue.popleft())
        finally:
            self._idle.set()  # nobody waits forever for a worker that has ended

    async def _run_one(self, job: Job) -> None:
        self._keys.discard(job.key)
        self._queued_seconds = max(0.0, self._queued_seconds - job.estimate)
        self._queued_kinds.popleft()
        self._running = job
        try:
            if self.gate.held:  # foreground wins: the host's model call
                await asyncio.to_thread(self.gate.wait_free)
            await self.yield_to_host()  # and its memory calls
            started = time.monotonic()
            await job.run()
            self.admission.record(job.kind, time.monotonic() - started)
            self.done[job.kind] = self.done.get(job.kind, 0) + 1
        except asyncio.CancelledError:
            raise
        except Exception as e:
            self.errors[job.kind] = self.errors.get(job.kind, 0) + 1
            self.last_error = f"{job.kind}: {type(e).__name__}: {e}"
            if _runner.shutting_down():  # the interpreter is exiting: thread pools refuse work, not a failure
                log.debug("elastic-memory background job %s stopped at exit: %s", job.kind, e)
            else:
                log.warning("elastic-memory background job %s failed: %s", job.kind, e, exc_info=e)
        finally:
            self._running = None
