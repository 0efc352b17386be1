"""Conformance: filters apply on every recall path and never lose rows."""

from __future__ import annotations

import datetime as dt

import pytest

from elastic_memory import UsageError

from .drivers import Capability, MemoryDriver

MODES = ["keyword", "semantic", "hybrid"]
pytestmark = pytest.mark.requires(Capability.FILTERS)


async def _seed(driver: MemoryDriver) -> dict[str, str]:
    # A federation speaks for one agent: it writes a and b as itself (the agent filter case is skipped).
    agents = Capability.MULTI_AGENT in driver.capabilities
    ids = {}
    ids["a"] = await driver.remember(
        "note about apples", type="semantic", tags=["fruit"], **({"agent_id": "alice"} if agents else {})
    )
    ids["b"] = await driver.remember(
        "note about bananas",
        type="episodic",
        tags=["fruit", "yellow"],
        session_id="s1",
        **({"agent_id": "bob"} if agents else {}),
    )
    ids["c"] = await driver.remember(
        "note about cars", type="procedural", tags=["vehicle"], metadata={"wheels": 4, "lang": "en"}, confidence=0.4
    )
    ids["d"] = await driver.remember(
        "note about bikes", scope="shared", pool="team", metadata={"wheels": 2, "lang": "pt"}, pinned=True
    )
    return ids


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"type": "episodic"}, {"b"}),
        ({"type": ["semantic", "procedural"]}, {"a", "c", "d"}),
        ({"agent_id": "alice"}, {"a"}),
        ({"scope": "shared"}, {"d"}),
        ({"pool": "team"}, {"d"}),
        ({"session_id": "s1"}, {"b"}),
        ({"tags": ["yellow", "vehicle"]}, {"b", "c"}),
        ({"tags_all": ["fruit", "yellow"]}, {"b"}),
        ({"min_confidence": 0.5}, {"a", "b", "d"}),
        ({"pinned": True}, {"d"}),
        ({"metadata": {"lang": "en"}}, {"c"}),
        ({"metadata": {"wheels": {"$gt": 2}}}, {"c"}),
        ({"metadata": {"wheels": {"$lte": 2}}}, {"d"}),
        ({"metadata": {"lang": {"$in": ["pt", "es"]}}}, {"d"}),
        ({"metadata": {"lang": {"$ne": "en"}}}, {"a", "b", "d"}),
        ({"metadata": {"lang": {"$nin": ["en"]}}}, {"a", "b", "d"}),
        ({"metadata": {"wheels": {"$exists": True}}}, {"c", "d"}),
        ({"metadata": {"wheels": {"$exists": False}}}, {"a", "b"}),
    ],
)
async def test_filter_selects_exactly_the_matching_memories(
    driver: MemoryDriver, mode: str, filters: dict[str, object], expected: set[str]
) -> None:
    """Each filter returns exactly the memories it names, in every mode.

    If this fails, check queries.live_filter and the vector leg's filtering (RAM codes and
    the row check after it).
    """
    if "agent_id" in filters and Capability.MULTI_AGENT not in driver.capabilities:
        pytest.skip(f"{driver.name} writes as one agent only: no other agent to filter out")
    ids = await _seed(driver)
    hits = await driver.recall("note about", k=10, mode=mode, filters=filters)
    assert {h.id for h in hits} == {ids[key] for key in expected}


@pytest.mark.parametrize("mode", MODES)
async def test_time_range_filter(driver: MemoryDriver, mode: str) -> None:
    """``since``/``until`` bound created_at (numbers or datetimes).

    If this fails, check the created_at conditions.
    """
    mid = await driver.remember("timed note")
    created = (await driver.get(mid)).created_at  # type: ignore[union-attr]
    assert [h.id for h in await driver.recall("timed note", mode=mode, filters={"since": created - 1})] == [mid]
    until = dt.datetime.fromtimestamp(created - 1, tz=dt.timezone.utc)
    assert await driver.recall("timed note", mode=mode, filters={"until": until}) == []


@pytest.mark.parametrize("mode", MODES)
async def test_selective_filter_still_returns_k(driver: MemoryDriver, mode: str) -> None:
    """A filter matching few memories among many similar ones still fills k.

    If this fails, the vector leg filters after taking its top candidates: it must fetch more
    (or scan exactly) until k matching rows are found or none are left.
    """
    await driver.remember_many([{"content": f"shared words item {i}", "tags": ["common"]} for i in range(60)])
    await driver.remember_many([{"content": f"shared words rare {i}", "tags": ["rare"]} for i in range(5)])
    hits = await driver.recall("shared words item", k=5, mode=mode, filters={"tags": ["rare"]})
    assert len(hits) == 5
    assert all("rare" in h.tags for h in hits)


@pytest.mark.parametrize(
    "filters",
    [
        {"colour": "red"},
        {"type": "dream"},
        {"min_confidence": 2},
        {"metadata": {"x": {"$regex": "a"}}},
        {"metadata": {"bad key!": 1}},
        {"metadata": {"x": {"$in": 3}}},
        {"since": "yesterday"},
    ],
)
async def test_invalid_filters_raise_usage_error(driver: MemoryDriver, filters: dict[str, object]) -> None:
    """Bad filters are refused with a message naming the problem.

    If this fails, check Filters.parse.
    """
    with pytest.raises(UsageError):
        await driver.recall("anything", filters=filters)


@pytest.mark.parametrize("mode", MODES)
async def test_metadata_in_matches_types_exactly(driver: MemoryDriver, mode: str) -> None:
    """``$in`` matches like ``$eq``: True is not 1 and "1" is not 1; None matches a missing key.

    If this fails, check the typed $in branch of queries._metadata_condition.
    """
    ids = {
        "true": await driver.remember("typed value a", metadata={"v": True}),
        "one": await driver.remember("typed value b", metadata={"v": 1}),
        "text": await driver.remember("typed value c", metadata={"v": "1"}),
        "none": await driver.remember("typed value d"),
    }

    async def found(values: list[object]) -> set[str]:
        hits = await driver.recall("typed value", mode=mode, filters={"metadata": {"v": {"$in": values}}})
        return {name for name, mid in ids.items() if mid in {h.id for h in hits}}

    assert await found([True]) == {"true"}
    assert await found([1]) == {"one"}
    assert await found(["1", None]) == {"text", "none"}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.requires(Capability.UPDATE)
async def test_tag_filter_follows_updated_tags(driver: MemoryDriver, mode: str) -> None:
    """Changing a memory's tags moves it between tag filters at once.

    If this fails, check the memory_tags triggers (insert, update of tags, delete).
    """
    mid = await driver.remember("retagged note", tags=["old"])
    await driver.update(mid, tags=["new", "extra"])
    assert await driver.recall("retagged note", mode=mode, filters={"tags": ["old"]}) == []
    hits = await driver.recall("retagged note", mode=mode, filters={"tags_all": ["new", "extra"]})
    assert [h.id for h in hits] == [mid]
