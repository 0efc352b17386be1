"""ElasticMemoryStore: TTL with an injected clock, refreshes on read, sweeps and the sweeper thread."""

from __future__ import annotations

import gc
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from elastic_memory import Memory, UsageError
from langchain_elastic_memory import ElasticMemoryStore

from .support import Clock, keys


# ------------------------------------------------------------------ TTL
def test_the_store_supports_ttl(store: ElasticMemoryStore) -> None:
    assert store.supports_ttl is True


def test_an_item_expires_after_its_ttl(store: ElasticMemoryStore, clock: Clock) -> None:
    store.put(("t",), "k", {"v": 1}, ttl=1)
    clock.now += 59
    assert store.get(("t",), "k", refresh_ttl=False) is not None
    clock.now += 2
    assert store.get(("t",), "k") is None
    assert store.search(("t",)) == []
    assert store.list_namespaces() == []


def test_a_get_refreshes_the_ttl(store: ElasticMemoryStore, clock: Clock) -> None:
    store.put(("t",), "k", {"v": 1}, ttl=1)
    clock.now += 50
    assert store.get(("t",), "k") is not None
    clock.now += 50
    assert store.get(("t",), "k") is not None


def test_a_search_refreshes_the_ttl(store: ElasticMemoryStore, clock: Clock) -> None:
    store.put(("t",), "k", {"v": 1}, ttl=1)
    clock.now += 50
    assert keys(store.search(("t",))) == ["k"]
    clock.now += 50
    assert store.get(("t",), "k", refresh_ttl=False) is not None


def test_refresh_ttl_false_leaves_the_expiry(store: ElasticMemoryStore, clock: Clock) -> None:
    store.put(("t",), "k", {"v": 1}, ttl=1)
    clock.now += 50
    assert store.get(("t",), "k", refresh_ttl=False) is not None
    assert store.search(("t",), refresh_ttl=False) != []
    clock.now += 50
    assert store.get(("t",), "k") is None


def test_the_default_ttl_applies_to_puts(clock: Clock) -> None:
    with ElasticMemoryStore(path=":memory:", clock=clock, ttl={"default_ttl": 2}) as store:
        store.put(("t",), "k", {"v": 1})
        store.put(("t",), "forever", {"v": 1}, ttl=None)
        clock.now += 121
        assert store.get(("t",), "k") is None
        assert store.get(("t",), "forever") is not None


def test_refresh_on_read_off_in_the_config(clock: Clock) -> None:
    with ElasticMemoryStore(path=":memory:", clock=clock, ttl={"refresh_on_read": False}) as store:
        store.put(("t",), "k", {"v": 1}, ttl=1)
        clock.now += 50
        assert store.get(("t",), "k") is not None
        clock.now += 50
        assert store.get(("t",), "k") is None


def test_an_item_without_ttl_never_expires(store: ElasticMemoryStore, clock: Clock) -> None:
    store.put(("t",), "k", {"v": 1})
    clock.now += 10 * 365 * 86_400
    assert store.get(("t",), "k") is not None


def test_a_put_after_expiry_starts_a_new_item(store: ElasticMemoryStore, clock: Clock) -> None:
    store.put(("t",), "k", {"v": 1}, ttl=1)
    clock.now += 120
    store.put(("t",), "k", {"v": 2})
    item = store.get(("t",), "k")
    assert item is not None and item.value == {"v": 2}
    assert item.created_at == datetime.fromtimestamp(clock.now, tz=timezone.utc)


@pytest.mark.parametrize("ttl", [0, -1, float("nan")])
def test_a_ttl_must_be_positive(store: ElasticMemoryStore, ttl: float) -> None:
    with pytest.raises(ValueError, match="ttl"):
        store.put(("t",), "k", {"v": 1}, ttl=ttl)


# ------------------------------------------------------------------ TTL sweeps
def test_sweep_ttl_erases_the_expired_items_and_counts_them(store: ElasticMemoryStore, clock: Clock) -> None:
    store.put(("t",), "short", {"v": 1}, ttl=1)
    store.put(("t",), "shorter", {"v": 1}, ttl=0.5)
    store.put(("t",), "long", {"v": 1}, ttl=10)
    store.put(("t",), "forever", {"v": 1})
    clock.now += 61
    assert store.sweep_ttl() == 2
    assert store.memory.stats()["total_memories"] == 2
    assert sorted(keys(store.search(("t",)))) == ["forever", "long"]


def test_sweep_ttl_with_nothing_expired_erases_nothing(store: ElasticMemoryStore, clock: Clock) -> None:
    store.put(("t",), "k", {"v": 1}, ttl=1)
    clock.now += 30
    assert store.sweep_ttl() == 0
    assert store.get(("t",), "k", refresh_ttl=False) is not None


def test_sweep_ttl_spares_a_refreshed_item(store: ElasticMemoryStore, clock: Clock) -> None:
    store.put(("t",), "k", {"v": 1}, ttl=1)
    clock.now += 50
    assert store.get(("t",), "k") is not None
    clock.now += 50
    assert store.sweep_ttl() == 0


def test_sweep_ttl_spares_an_item_renewed_just_before_the_delete(
    store: ElasticMemoryStore, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A put(ttl=...) from another thread landing between the sweep's check and its delete wins."""
    store.put(("t",), "renewed", {"v": 1}, ttl=1)
    store.put(("t",), "stale", {"v": 1}, ttl=1)
    clock.now += 61
    sweep = store._sweep

    def racing() -> Any:
        plan, reply = sweep(), None
        try:
            while True:
                name, args, kwargs = plan.send(reply)
                if name in ("forget", "purge"):  # the sweep's delete is about to reach the core
                    store.put(("t",), "renewed", {"v": 2}, ttl=60)
                reply = yield name, args, kwargs
        except StopIteration as done:
            return done.value

    monkeypatch.setattr(store, "_sweep", racing)
    assert store.sweep_ttl() == 1
    item = store.get(("t",), "renewed", refresh_ttl=False)
    assert item is not None and item.value == {"v": 2}
    assert store.get(("t",), "stale") is None


def test_sweep_ttl_keeps_to_its_collection(clock: Clock) -> None:
    with Memory.open(":memory:", embedder=None, clock=clock) as mem:
        mem.remember("a loop memory that expires", ttl=30)
        one = ElasticMemoryStore(memory=mem, collection="one")
        two = ElasticMemoryStore(memory=mem, collection="two")
        one.put(("t",), "k", {"v": 1}, ttl=1)
        two.put(("t",), "k", {"v": 1}, ttl=1)
        clock.now += 61
        assert one.sweep_ttl() == 1
        assert mem.stats()["total_memories"] == 2


async def test_asweep_ttl_erases_the_expired_items(clock: Clock) -> None:
    async with ElasticMemoryStore(path=":memory:", clock=clock) as store:
        await store.aput(("t",), "k", {"v": 1}, ttl=1)
        clock.now += 61
        assert await store.asweep_ttl() == 1
        assert await store.asweep_ttl() == 0


def _until(condition: Any, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return False


def test_the_sweeper_erases_expired_items_in_the_background(store: ElasticMemoryStore, clock: Clock) -> None:
    store.put(("t",), "k", {"v": 1}, ttl=1)
    clock.now += 61
    future = store.start_ttl_sweeper(sweep_interval_minutes=0.001)
    try:
        assert _until(lambda: store.memory.stats()["total_memories"] == 0)
        assert not future.done()
    finally:
        assert store.stop_ttl_sweeper(timeout=10) is True
    assert future.done() and future.result() is None


def test_the_sweeper_interval_comes_from_the_ttl_config(clock: Clock) -> None:
    ttl: Any = {"sweep_interval_minutes": 0.001}
    with ElasticMemoryStore(path=":memory:", clock=clock, ttl=ttl) as store:
        store.put(("t",), "k", {"v": 1}, ttl=1)
        clock.now += 61
        store.start_ttl_sweeper()
        assert _until(lambda: store.memory.stats()["total_memories"] == 0)


def test_starting_the_sweeper_twice_gives_the_running_one(store: ElasticMemoryStore) -> None:
    first = store.start_ttl_sweeper(60)
    assert store.start_ttl_sweeper(60) is first
    assert store.stop_ttl_sweeper(timeout=10) is True


def test_close_stops_the_sweeper(clock: Clock) -> None:
    store = ElasticMemoryStore(path=":memory:", clock=clock)
    future = store.start_ttl_sweeper(60)
    store.close()
    assert future.done()
    assert not [t for t in threading.enumerate() if t.name == "elastic-memory-ttl-sweeper" and t.is_alive()]


async def test_async_with_stops_the_sweeper(clock: Clock) -> None:
    async with ElasticMemoryStore(path=":memory:", clock=clock) as store:
        future = store.start_ttl_sweeper(60)
    assert future.done()


def test_cancelling_the_future_stops_the_sweeper(store: ElasticMemoryStore) -> None:
    future = store.start_ttl_sweeper(60)
    assert future.cancel()
    assert store.stop_ttl_sweeper(timeout=10) is True


def test_a_dropped_store_stops_its_sweeper(clock: Clock) -> None:
    mem = Memory.open(":memory:", embedder=None, clock=clock)
    try:
        store = ElasticMemoryStore(memory=mem)
        future = store.start_ttl_sweeper(0.001)
        del store
        gc.collect()
        assert _until(future.done)
    finally:
        mem.close()


_LEFT_OPEN = """
import sys, time
from langchain_elastic_memory import ElasticMemoryStore
store = ElasticMemoryStore(path=sys.argv[1])
store.put(("t",), "k", {"v": 1}, ttl=0.0001)
store.start_ttl_sweeper(0.0002)
time.sleep(0.3)
print("left open")
"""


def test_a_sweeper_left_running_ends_quietly_at_exit(tmp_path: Path) -> None:
    """A store never closed, its sweeper sweeping every 12 ms: the interpreter exits cleanly."""
    done = subprocess.run(
        [sys.executable, "-c", _LEFT_OPEN, str(tmp_path / "store.db")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "left open\n", "")


def test_stopping_without_a_sweeper_is_fine(store: ElasticMemoryStore) -> None:
    assert store.stop_ttl_sweeper() is True


@pytest.mark.parametrize("minutes", [0, -1, float("nan"), float("inf"), 1e300, "5", True])
def test_a_bad_sweep_interval_is_refused(store: ElasticMemoryStore, minutes: Any) -> None:
    with pytest.raises(UsageError, match="sweep_interval_minutes"):
        store.start_ttl_sweeper(minutes)
    assert store.stop_ttl_sweeper() is True


@pytest.mark.parametrize("timeout", [-1, float("nan"), "1", True])
def test_a_bad_stop_timeout_is_refused(store: ElasticMemoryStore, timeout: Any) -> None:
    with pytest.raises(UsageError, match="timeout"):
        store.stop_ttl_sweeper(timeout)


def test_each_backend_sweeps_the_expired_items(location: str, clock: Clock) -> None:
    """SQLite in memory, and PostgreSQL (conftest.py)."""
    with ElasticMemoryStore(path=location, clock=clock) as store:
        store.put(("t",), "short", {"v": 1}, ttl=1)
        store.put(("t",), "forever", {"v": 1})
        clock.now += 61
        assert store.sweep_ttl() == 1
        assert keys(store.search(("t",))) == ["forever"]
