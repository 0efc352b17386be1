"""Conformance: forgetting (soft, hard, restore) and expiry."""

from __future__ import annotations

import asyncio

import pytest

from .drivers import Capability, MemoryDriver

MODES = ["keyword", "semantic", "hybrid"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.requires(Capability.SOFT_DELETE)
async def test_soft_deleted_memory_is_hidden_but_kept(driver: MemoryDriver, mode: str) -> None:
    """A soft-deleted memory leaves recall but get() still returns it, marked deleted.

    If this fails, check the deleted_at condition and that the RAM index drops the row.
    """
    mid = await driver.remember("forget me softly")
    assert await driver.forget(mid) == 1
    assert await driver.recall("forget me softly", mode=mode) == []
    record = await driver.get(mid)
    assert record is not None and record.deleted_at is not None


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.requires(Capability.SOFT_DELETE)
async def test_restore_brings_a_soft_deleted_memory_back(driver: MemoryDriver, mode: str) -> None:
    """restore() undoes a soft delete in every mode.

    If this fails, check that restore re-adds the vector to the RAM index.
    """
    mid = await driver.remember("bring me back")
    await driver.recall("bring me back", mode=mode)
    await driver.forget(mid)
    assert await driver.restore(mid) == 1
    assert [h.id for h in await driver.recall("bring me back", mode=mode)] == [mid]


async def test_hard_delete_erases_the_memory(driver: MemoryDriver) -> None:
    """A hard delete removes row, FTS entry and vector; get() returns None.

    If this fails, check the delete trigger and the vec0 delete.
    """
    mid = await driver.remember("erase me")
    assert await driver.forget(mid, hard=True) == 1
    assert await driver.get(mid) is None
    for mode in MODES:
        assert await driver.recall("erase me", mode=mode) == []
    stats = await driver.stats()
    assert (stats["total_memories"], stats["vectors"]) == (0, 0)


async def test_forgetting_unknown_ids_is_not_an_error(driver: MemoryDriver) -> None:
    """Unknown ids are ignored and counted as 0.

    If this fails, check that forget counts only rows that changed.
    """
    assert await driver.forget(["nope", "never"]) == 0
    assert await driver.forget("nope", hard=True) == 0


async def test_content_can_be_written_again_after_a_soft_delete(driver: MemoryDriver) -> None:
    """Dedup ignores soft-deleted memories: the same text is stored anew.

    If this fails, check the duplicate lookup's deleted_at condition.
    """
    first = await driver.remember("say it again")
    await driver.forget(first)
    second = await driver.remember("say it again")
    assert second != first


@pytest.mark.requires(Capability.TTL)
async def test_expired_memory_is_hidden(driver: MemoryDriver) -> None:
    """A memory past its TTL leaves recall in every mode.

    If this fails, check the expires_at condition (the RAM index holds expired rows: the row
    check must drop them).
    """
    await driver.remember("short lived", ttl=0.05)
    await driver.remember("long lived note")
    await asyncio.sleep(0.1)
    for mode in MODES:
        assert [h.content for h in await driver.recall("lived", mode=mode)] == ["long lived note"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.requires(Capability.SOFT_DELETE)
async def test_hidden_memories_never_crowd_out_visible_ones(driver: MemoryDriver, mode: str) -> None:
    """Many better-matching deleted memories still leave k visible hits.

    If this fails, a leg takes its top candidates before dropping hidden rows without
    fetching more (see SQLiteStore.keyword and VectorLeg.search).
    """
    hidden = await driver.remember_many([f"alpha beta gamma strong match {i}" for i in range(40)])
    visible = await driver.remember_many([f"alpha weaker {i}" for i in range(6)])
    await driver.forget(hidden)
    hits = await driver.recall("alpha beta gamma strong match", k=5, mode=mode)
    assert len(hits) == 5
    assert {h.id for h in hits} <= set(visible)
