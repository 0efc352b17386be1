"""The background worker: foreground wins, hung and failing llm calls, shedding, crashes, drain."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from elastic_memory import AsyncMemory, LoopConfig, Memory
from elastic_memory.governor import Admission
from elastic_memory.loop.attach import loop_of
from elastic_memory.loop.worker import ForegroundCalls, ForegroundGate, Job, Worker
from elastic_memory.testing import FakeEmbedder


class RecordingLLM:
    """Answers every prompt with ``answer`` and notes when it was called."""

    def __init__(self, answer: str = "{}") -> None:
        self.answer = answer
        self.calls: list[float] = []

    def __call__(self, prompt: str) -> str:
        self.calls.append(time.monotonic())
        return self.answer


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set at teardown, so a deliberately hung llm thread ends with the test."""
    event = threading.Event()
    yield event
    event.set()


def _open(db_path: Path, llm: Any, **config: Any) -> Memory:
    return Memory.open(db_path, embedder=FakeEmbedder(), llm=llm, loop=LoopConfig(tier="full", **config))


def test_background_llm_calls_wait_for_the_foreground(db_path: Path) -> None:
    llm = RecordingLLM()
    with _open(db_path, llm) as mem:
        with mem.foreground():
            mem.record_turn("My favourite colour is green.", "Lovely.", session_id="s1")
            time.sleep(0.3)
            assert llm.calls == []
            left = time.monotonic()
        mem.drain()
    assert llm.calls and llm.calls[0] >= left


def test_a_hung_llm_call_is_abandoned_and_the_foreground_gets_the_model(
    db_path: Path, release: threading.Event
) -> None:
    def hangs(prompt: str) -> str:
        release.wait(30)
        return "{}"

    with _open(db_path, hangs, llm_timeout=0.2) as mem:
        mem.record_turn("By the way, remember that I take my coffee black.", "Sure.", session_id="s1")
        mem.drain()
        started = time.monotonic()
        with mem.foreground():
            waited = time.monotonic() - started
        health = mem.health()
        hits = mem.recall("coffee black", mode="keyword", filters={"kind": "preference"})
    assert waited < 1.0
    assert health["llm"]["failures"] == 1 and not health["llm"]["available"]
    assert hits, "the heuristic extraction stands in for the hung llm"


def test_an_llm_that_raises_is_reported_and_the_heuristic_stands_in(db_path: Path) -> None:
    def fails(prompt: str) -> str:
        raise ConnectionError("model server down")

    with _open(db_path, fails) as mem:
        receipt = mem.record_turn("By the way, remember that I take my coffee black.", "Sure.", session_id="s1")
        mem.drain()
        health = mem.health()
        hits = mem.recall("coffee black", mode="keyword", filters={"kind": "preference"})
    assert receipt.ok
    assert "model server down" in health["llm"]["last_error"]
    assert hits


def test_an_llm_taking_max_tokens_gets_the_worker_cap(db_path: Path) -> None:
    seen: list[int] = []

    def capped(prompt: str, max_tokens: int = 0) -> str:
        seen.append(max_tokens)
        return "{}"

    with _open(db_path, capped) as mem:
        mem.record_turn("My favourite colour is green.", "Lovely.", session_id="s1")
        mem.drain()
        cap = mem.tick().worker_max_tokens
    assert seen and set(seen) == {cap}


def test_a_failing_job_is_counted_and_the_worker_goes_on(db_path: Path) -> None:
    async def main() -> dict[str, Any]:
        async with await AsyncMemory.open(db_path, embedder=None, loop=LoopConfig(tier="standard")) as mem:
            loop = loop_of(mem._core)

            async def broken() -> None:
                raise RuntimeError("job bug")

            await asyncio.wrap_future(
                asyncio.run_coroutine_threadsafe(_submit(loop, "consolidate", broken), _library_loop())
            )
            await mem.record_turn("My name is Alice.", "Hi Alice.", session_id="s1")
            await mem.drain()
            return await mem.health()

    health = asyncio.run(main())
    assert health["jobs_failed"] == {"consolidate": 1}
    assert "job bug" in health["last_error"]
    assert health["jobs_done"].get("embed") == 1, "the jobs after the failed one still ran"


async def _submit(loop: Any, kind: str, run: Any) -> None:
    loop.submit(kind, kind, run, critical=True)


def _library_loop() -> asyncio.AbstractEventLoop:
    from elastic_memory import _runner

    return _runner.event_loop()


def test_a_crashed_worker_task_is_restarted(db_path: Path) -> None:
    with Memory.open(db_path, embedder=None, loop=LoopConfig(tier="standard")) as mem:
        mem.record_turn("Hello.", "Hi.", session_id="s1")
        mem.drain()
        worker = loop_of(mem._core).worker
        asyncio.run_coroutine_threadsafe(_cancel(worker), _library_loop()).result()
        receipt = mem.record_turn("My name is Alice.", "Hi Alice.", session_id="s1")
        mem.drain()
        health = mem.health()
    assert receipt.ok
    assert health["worker_restarts"] == 1 and health["turns_pending_extraction"] == 0


async def _cancel(worker: Worker) -> None:
    assert worker._task is not None
    worker._task.cancel()
    await asyncio.sleep(0)


def test_close_finishes_the_queue(db_path: Path) -> None:
    with Memory.open(db_path, embedder=FakeEmbedder(), loop=LoopConfig(tier="standard")) as mem:
        receipt = mem.record_turn("The boiler was serviced in May.", "Noted.", session_id="s1")
    with Memory.open(db_path, embedder=FakeEmbedder()) as mem:
        record = mem.get(receipt.chunk_ids[0])
        pending = mem.health()["turns_pending_extraction"]
    assert record is not None and record.has_vector and pending == 0


def test_without_background_jobs_wait_for_drain(db_path: Path) -> None:
    with Memory.open(db_path, embedder=FakeEmbedder(), loop=LoopConfig(tier="standard", background=False)) as mem:
        receipt = mem.record_turn("The boiler was serviced in May.", "Noted.", session_id="s1")
        time.sleep(0.2)
        before = mem.get(receipt.chunk_ids[0])
        mem.drain()
        after = mem.get(receipt.chunk_ids[0])
    assert before is not None and not before.has_vector
    assert after is not None and after.has_vector


def test_the_write_path_never_embeds(db_path: Path) -> None:
    calls: list[int] = []

    class CountingEmbedder(FakeEmbedder):
        def embed(self, texts: list[str]) -> list[list[float]]:
            calls.append(len(texts))
            return super().embed(texts)

    with Memory.open(db_path, embedder=CountingEmbedder(), loop=LoopConfig(tier="standard", background=False)) as mem:
        mem.build_context("warm the embedder up")
        before = len(calls)
        mem.record_turn("My dog is called Biscuit.", "Nice name!", session_id="s1")
        during = len(calls)
        mem.drain()
    assert during == before and len(calls) > during


# ----------------------------------------------------------------- the worker alone
def _worker() -> Worker:
    return Worker(ForegroundGate(timeout=1.0), Admission(), background=False)


async def _noop() -> None:
    return None


async def test_a_full_queue_sheds_ordinary_jobs() -> None:
    worker = _worker()
    assert worker.submit(Job("embed", _noop, "a"), queue_max=1, headroom_seconds=60)
    assert not worker.submit(Job("embed", _noop, "b"), queue_max=1, headroom_seconds=60)
    assert worker.admission.shed == {"embed": 1}


async def test_critical_jobs_are_always_accepted() -> None:
    worker = _worker()
    worker.submit(Job("embed", _noop, "a"), queue_max=1, headroom_seconds=60)
    assert worker.submit(Job("session_summary", _noop, "b", critical=True), queue_max=1, headroom_seconds=60)
    assert worker.depth == 2


async def test_jobs_are_shed_when_the_queue_would_take_longer_than_the_headroom() -> None:
    worker = _worker()
    for _ in range(5):
        worker.admission.record("consolidate", 10.0)
    assert worker.submit(Job("consolidate", _noop, "a"), queue_max=10, headroom_seconds=10)
    assert not worker.submit(Job("extract", _noop, "b"), queue_max=10, headroom_seconds=10)


async def test_a_shed_deferrable_job_runs_once_the_queue_runs_dry() -> None:
    worker = _worker()
    ran: list[str] = []

    async def note(name: str) -> None:
        ran.append(name)

    worker.submit(Job("consolidate", lambda: note("first"), "a"), queue_max=1, headroom_seconds=60)
    assert not worker.submit(
        Job("embed", lambda: note("deferred"), "b", deferrable=True), queue_max=1, headroom_seconds=60
    )
    assert worker.deferred == {"embed": 1}
    await worker.drain()
    assert ran == ["first", "deferred"] and worker.deferred == {}


async def test_a_shed_ordinary_job_is_dropped() -> None:
    worker = _worker()
    ran: list[str] = []

    async def note() -> None:
        ran.append("x")

    worker.submit(Job("consolidate", _noop, "a"), queue_max=1, headroom_seconds=60)
    worker.submit(Job("extract", note, "b"), queue_max=1, headroom_seconds=60)
    await worker.drain()
    assert ran == [] and worker.deferred == {}


async def test_a_queued_key_is_not_queued_twice() -> None:
    worker = _worker()
    ran: list[str] = []

    async def note() -> None:
        ran.append("x")

    worker.submit(Job("embed", note, "same"), queue_max=5, headroom_seconds=60)
    worker.submit(Job("embed", note, "same"), queue_max=5, headroom_seconds=60)
    await worker.drain()
    assert ran == ["x"]


def test_shed_extraction_is_caught_up_once_the_load_falls(db_path: Path) -> None:
    """A shed job loses nothing: its turn stays pending and a later sweep extracts it."""
    llm = RecordingLLM()
    with Memory.open(db_path, embedder=None, llm=llm, loop=LoopConfig(tier="full", background=False)) as mem:
        loop = loop_of(mem._core)
        for _ in range(20):
            loop.worker.admission.record("consolidate", 100.0)
        asyncio.run_coroutine_threadsafe(_submit(loop, "consolidate", _noop), _library_loop()).result()
        mem.record_turn("By the way, remember that I take my coffee black.", "Sure.", session_id="s1")
        shed = dict(loop.worker.admission.shed)
        mem.drain()
        pending_while_loaded = mem.health()["turns_pending_extraction"]
        loop.worker.admission = Admission()
        mem.consolidate()
        mem.drain()
        pending = mem.health()["turns_pending_extraction"]
    assert shed.get("extract") == 1
    assert (pending_while_loaded, pending) == (1, 0)
    assert len(llm.calls) == 1


# ------------------------------------------------------- the host's memory calls go first
async def test_quiet_waits_until_the_last_foreground_call_ends() -> None:
    calls = ForegroundCalls(patience=5.0)
    order: list[str] = []

    async def host() -> None:
        async with calls.call():
            await asyncio.sleep(0.05)
            order.append("host done")

    async def background() -> None:
        await asyncio.sleep(0.01)
        await calls.quiet()
        order.append("background starts")

    await asyncio.gather(host(), background())
    assert order == ["host done", "background starts"]


async def test_quiet_gives_up_after_its_patience_when_calls_never_stop() -> None:
    calls = ForegroundCalls(patience=0.05)
    async with calls.call():
        started = time.monotonic()
        await calls.quiet()
        waited = time.monotonic() - started
    assert 0.04 <= waited < 2.0


async def test_quiet_lets_the_host_finish_its_turn_after_the_call() -> None:
    """A job waits ``settle`` seconds after the host's last call (its framework, then its model, come next)."""
    calls = ForegroundCalls(patience=5.0, settle=0.1)
    async with calls.call():
        pass
    ended = time.monotonic()
    await calls.quiet()
    assert time.monotonic() - ended >= 0.09


async def test_a_host_draining_the_worker_does_not_wait_for_the_settling() -> None:
    calls = ForegroundCalls(patience=60.0, settle=30.0)  # waiting would take 30 s: no load comes near
    async with calls.call():
        pass
    started = time.monotonic()
    async with calls.hurried():
        await calls.quiet()
    assert time.monotonic() - started < 15.0


async def test_quiet_waits_nothing_when_the_host_has_been_quiet() -> None:
    calls = ForegroundCalls(patience=60.0, settle=30.0)  # a wait would be 30 s: no load comes near
    started = time.monotonic()
    await calls.quiet()
    assert time.monotonic() - started < 15.0


async def test_a_job_queued_during_a_foreground_call_starts_after_it() -> None:
    worker = Worker(ForegroundGate(timeout=1.0), Admission(), calls=ForegroundCalls(patience=5.0))
    started: list[float] = []

    async def job() -> None:
        started.append(time.monotonic())

    async with worker.calls.call():
        assert worker.submit(Job("embed", job, key="k"), queue_max=10, headroom_seconds=60)
        await asyncio.sleep(0.1)
        assert started == []
        left = time.monotonic()
    await worker.drain()
    await worker.stop()
    assert started and started[0] >= left


class _Twinned(FakeEmbedder):
    """A fake embedder whose background twin is a separate instance (counting its own calls)."""

    def __init__(self, twin_model: str = "fake-hash") -> None:
        super().__init__()
        self.twin = FakeEmbedder(model_id=twin_model)

    def for_background(self) -> FakeEmbedder:
        return self.twin


def test_background_embedding_goes_through_the_embedders_twin(db_path: Path) -> None:
    embedder = _Twinned()
    with Memory.open(db_path, embedder=embedder, loop=LoopConfig(tier="standard")) as mem:
        mem.recall("warm up", mode="semantic")  # the gateway's health check (an empty store embeds no query)
        opened = embedder.calls
        mem.record_turn("The boat is moored at pier nine.", "Noted.", session_id="s1")
        mem.drain()
        after_turn = embedder.calls
        mem.recall("where is the boat moored", mode="semantic")
    assert embedder.twin.calls > 0  # the turn's chunks
    assert after_turn == opened  # none through the host's instance
    assert embedder.calls == after_turn + 1  # the query


def test_a_twin_of_another_model_is_ignored(db_path: Path) -> None:
    embedder = _Twinned(twin_model="other-model")
    with Memory.open(db_path, embedder=embedder, loop=LoopConfig(tier="standard")) as mem:
        mem.record_turn("The boat is moored at pier nine.", "Noted.", session_id="s1")
        mem.drain()
    assert embedder.twin.calls == 0
    assert embedder.calls > 0
