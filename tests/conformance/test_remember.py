"""Conformance: writing memories and reading them back."""

from __future__ import annotations

import pytest

from elastic_memory import UsageError

from .drivers import Capability, MemoryDriver


async def test_remember_then_get_returns_the_same_content(driver: MemoryDriver) -> None:
    """A written memory reads back unchanged.

    If this fails, check that the write commits and that get() reads by id.
    """
    mid = await driver.remember("The user prefers metric units.")
    record = await driver.get(mid)
    assert record is not None
    assert record.content == "The user prefers metric units."


async def test_metadata_and_tags_round_trip_exactly(driver: MemoryDriver) -> None:
    """Metadata (nested, unicode, numbers, bools, null) and tags come back exactly as given.

    If this fails, check the JSON encoding of the metadata and tags columns.
    """
    metadata = {"source": "chat", "n": 3, "ratio": 0.25, "ok": True, "none": None, "nested": {"ü": ["a", 1]}}
    mid = await driver.remember("Metadata survives.", metadata=metadata, tags=["b", "a"])
    record = await driver.get(mid)
    assert record is not None
    assert record.metadata == metadata
    assert set(record.tags) == {"a", "b"}


async def test_exact_duplicate_returns_the_existing_id(driver: MemoryDriver) -> None:
    """The same content twice is stored once; the second write reports ``duplicate``.

    If this fails, check the content hash (normalised whitespace) and the duplicate lookup.
    """
    first = await driver.remember("My dog is called Biscuit.")
    second = await driver.remember("My  dog is called Biscuit. ")
    assert second == first
    assert getattr(second, "status", "duplicate") == "duplicate"
    assert (await driver.stats())["active_memories"] == 1


async def test_caller_id_upserts(driver: MemoryDriver) -> None:
    """Writing an existing caller-supplied id replaces that memory instead of adding one.

    If this fails, check the upsert path keyed by id.
    """
    await driver.remember("Version one.", id="fixed-id")
    await driver.remember("Version two.", id="fixed-id")
    record = await driver.get("fixed-id")
    assert record is not None and record.content == "Version two."
    assert (await driver.stats())["active_memories"] == 1


async def test_importance_and_confidence_are_clamped(driver: MemoryDriver) -> None:
    """Out-of-range importance/confidence are clamped into [0, 1], not refused.

    If this fails, check the clamping in row validation.
    """
    mid = await driver.remember("Clamp me.", importance=7, confidence=-2)
    record = await driver.get(mid)
    assert record is not None
    assert (record.importance, record.confidence) == (1.0, 0.0)


async def test_remember_many_returns_one_id_per_item(driver: MemoryDriver) -> None:
    """A batch returns ids in input order, each readable.

    If this fails, check that remember_many writes every item in order.
    """
    ids = await driver.remember_many(["one", {"content": "two", "type": "episodic"}, "three"])
    assert len(ids) == 3
    contents = [(await driver.get(i)).content for i in ids]  # type: ignore[union-attr]
    assert contents == ["one", "two", "three"]


async def test_bad_item_in_a_batch_writes_nothing(driver: MemoryDriver) -> None:
    """A batch with one invalid item is refused whole.

    If this fails, check that validation runs before the transaction starts.
    """
    with pytest.raises(UsageError, match=r"items\[1\]"):
        await driver.remember_many(["fine", {"content": ""}])
    assert (await driver.stats())["total_memories"] == 0


@pytest.mark.parametrize(
    ("fields", "match"),
    [
        ({"type": "dream"}, "type must be one of"),
        ({"scope": "shared"}, "pool="),
        ({"scope": "private", "pool": "team"}, "only applies"),
        ({"importance": "high"}, "importance must be a number"),
        ({"metadata": {"x": object()}}, "JSON-serialisable"),
        ({"tags": "prefs"}, "tags must be a list"),
        ({"ttl": -1}, "ttl must be a positive"),
    ],
)
async def test_invalid_fields_raise_usage_error(driver: MemoryDriver, fields: dict[str, object], match: str) -> None:
    """Each invalid field raises UsageError saying what to do, and nothing is written.

    If this fails, check the field validation in _validate.build_row.
    """
    with pytest.raises(UsageError, match=match):
        await driver.remember("Invalid.", **fields)
    assert (await driver.stats())["total_memories"] == 0


@pytest.mark.requires(Capability.UPDATE)
async def test_update_changes_content_and_keeps_the_id(driver: MemoryDriver) -> None:
    """update() changes content in place and the new content becomes searchable.

    If this fails, check that update re-hashes, re-indexes FTS and re-embeds.
    """
    mid = await driver.remember("The meeting is on Monday.")
    record = await driver.update(mid, content="The meeting moved to Thursday.", importance=0.9)
    assert record.id == mid and record.importance == 0.9
    hits = await driver.recall("thursday", mode="keyword")
    assert [h.id for h in hits] == [mid]
    assert await driver.recall("monday", mode="keyword") == []


async def test_content_with_a_lone_surrogate_is_refused(driver: MemoryDriver) -> None:
    """Text that is not valid Unicode is refused with UsageError, and nothing is written.

    If this fails, check check_content's UTF-8 encodability test.
    """
    with pytest.raises(UsageError, match="not valid Unicode"):
        await driver.remember("broken \ud800 text")
    assert (await driver.stats())["total_memories"] == 0


async def test_caller_id_is_kept_even_when_the_content_exists(driver: MemoryDriver) -> None:
    """A caller-supplied id is always stored under that id (upsert semantics win over dedup).

    If this fails, check that deduplication is skipped for rows with a caller id.
    """
    first = await driver.remember("same words")
    second = await driver.remember("same words", id="mine")
    assert (first != "mine", second) == (True, "mine")
    assert (await driver.get("mine")) is not None


@pytest.mark.requires(Capability.TTL)
async def test_hidden_duplicates_do_not_swallow_a_new_write(driver: MemoryDriver) -> None:
    """Text equal to an expired memory is stored as a new, visible memory.

    If this fails, check that queries.live_by_hash only returns visible memories.
    """
    import asyncio

    old = await driver.remember("ephemeral words", ttl=0.01)
    await asyncio.sleep(0.05)
    new = await driver.remember("ephemeral words")
    assert new != old
    assert [h.id for h in await driver.recall("ephemeral words", mode="keyword")] == [new]


async def test_a_batch_sees_its_own_earlier_rows(driver: MemoryDriver) -> None:
    """Within one batch: a repeated text is a duplicate of the first, a repeated id updates it.

    If this fails, check the in-batch bookkeeping of write_batch in storage/sqlite/writes.py.
    """
    ids = await driver.remember_many(
        ["twice said", "twice said", {"content": "v1", "id": "same"}, {"content": "v2", "id": "same"}]
    )
    assert ids[0] == ids[1]
    assert ids[2:] == ["same", "same"]
    assert (await driver.get("same")).content == "v2"  # type: ignore[union-attr]
    assert (await driver.stats())["active_memories"] == 2
    assert [h.content for h in await driver.recall("v2", mode="semantic", k=1)] == ["v2"]
