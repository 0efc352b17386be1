"""Memory and AsyncMemory: same names, same signatures; the loop guard; the public API."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path

import pytest

import elastic_memory
from elastic_memory import AsyncMemory, Memory, UsageError, _runner

#: The bridges between the facades (``Memory.as_async``, ``AsyncMemory.as_sync``): each exists on one side only.
BRIDGES = {"as_async", "as_sync"}


def _public(cls: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(getattr(cls, name))
        for name in dir(cls)
        if not name.startswith("_") and name not in BRIDGES and callable(getattr(cls, name))
    }


def test_sync_and_async_facades_have_the_same_methods() -> None:
    assert _public(Memory).keys() == _public(AsyncMemory).keys()


#: Context managers: ``with mem.foreground():`` and ``async with amem.foreground():``.
CONTEXT_MANAGERS = {"foreground"}
#: Plain methods that return another handle on the same store, with no I/O (``mem.for_user("alice")``).
HANDLES = {"for_user"}


def _same(sync: str, asyn: str) -> bool:
    return sync.replace("AsyncMemory", "Memory") == asyn.replace("AsyncMemory", "Memory").replace(
        "AsyncIterator", "Iterator"
    )


@pytest.mark.parametrize("name", sorted(_public(Memory)))
def test_sync_and_async_signatures_match(name: str) -> None:
    sync, asyn = _public(Memory)[name], _public(AsyncMemory)[name]
    assert list(sync.parameters.values()) == list(asyn.parameters.values())
    assert _same(str(sync.return_annotation), str(asyn.return_annotation))


def test_async_methods_are_coroutines() -> None:
    for name in _public(AsyncMemory).keys() - CONTEXT_MANAGERS - HANDLES:
        assert inspect.iscoroutinefunction(getattr(AsyncMemory, name)), name


def test_the_async_foreground_is_an_async_context_manager() -> None:
    assert inspect.isasyncgenfunction(AsyncMemory.foreground.__wrapped__)  # type: ignore[attr-defined]
    assert inspect.isgeneratorfunction(Memory.foreground.__wrapped__)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("view", "aview"), [("Facts", "AsyncFacts"), ("Lessons", "AsyncLessons"), ("Graph", "AsyncGraph")]
)
def test_facts_and_lessons_views_match_too(view: str, aview: str) -> None:
    sync, asyn = _public(getattr(elastic_memory, view)), _public(getattr(elastic_memory, aview))
    assert sync.keys() == asyn.keys()
    for name in sync:
        assert list(sync[name].parameters.values()) == list(asyn[name].parameters.values()), name
        assert inspect.iscoroutinefunction(getattr(getattr(elastic_memory, aview), name)), name


def test_sync_call_on_the_library_loop_names_the_async_method(db_path: Path) -> None:
    mem = Memory.open(db_path, embedder=None)

    async def inside() -> None:
        mem.recall("x")

    future = asyncio.run_coroutine_threadsafe(inside(), _runner.event_loop())
    with pytest.raises(UsageError, match=r"await AsyncMemory\.recall"):
        future.result()
    mem.close()


def test_async_memory_works_from_different_event_loops(db_path: Path) -> None:
    async def open_and_write() -> AsyncMemory:
        amem = await AsyncMemory.open(db_path, embedder=None)
        await amem.remember("from loop one")
        return amem

    amem = asyncio.run(open_and_write())

    async def read_and_close() -> list[str]:
        hits = await amem.recall("loop", mode="keyword")
        await amem.close()
        return [h.content for h in hits]

    assert asyncio.run(read_and_close()) == ["from loop one"]


def test_closed_store_raises_usage_error(db_path: Path) -> None:
    mem = Memory.open(db_path, embedder=None)
    mem.close()
    mem.close()  # idempotent
    with pytest.raises(UsageError, match="closed"):
        mem.remember("too late")


def test_all_is_sorted_and_importable() -> None:
    names = [n for n in elastic_memory.__all__ if n != "__version__"]
    assert names == sorted(names, key=lambda n: (not n.isupper(), n))
    for name in elastic_memory.__all__:
        assert hasattr(elastic_memory, name)


def test_public_classes_report_the_public_module() -> None:
    assert Memory.__module__ == "elastic_memory"
    assert repr(elastic_memory.Hit).startswith("<class 'elastic_memory.Hit")


def test_a_cancelled_async_call_still_finishes_its_transaction(db_path: Path) -> None:
    """Timing out an awaited write leaves no open transaction: it commits, the index follows."""
    import time

    from elastic_memory.storage.sqlite.driver import driver

    blocker = driver().connect(str(db_path), timeout=5)

    async def scenario() -> tuple[int, int]:
        async with await AsyncMemory.open(db_path, embedder=None, timeout=5) as amem:
            await amem.remember("before")
            blocker.execute("BEGIN IMMEDIATE")  # another writer holds the lock
            try:
                # asyncio.TimeoutError: the builtin TimeoutError from 3.11, asyncio's own class on 3.10
                with pytest.raises(asyncio.TimeoutError):
                    await asyncio.wait_for(amem.remember("while locked"), 0.2)
            finally:
                time.sleep(0.3)
                blocker.execute("ROLLBACK")
            for _ in range(50):  # the shielded write completes once the lock is free
                if (await amem.stats())["total_memories"] == 2:
                    break
                await asyncio.sleep(0.05)
            await amem.remember("after")
            stats = await amem.stats()
            return stats["total_memories"], len(await amem.recall("while locked", mode="keyword"))

    try:
        assert asyncio.run(scenario()) == (3, 1)
    finally:
        blocker.close()
