"""Conformance: two collections (agent ids) in one store never see each other's rows.

Every adapter's "collection" is a core ``agent_id``, and one file (or schema) holds many.
Here two collections whose names are adversarial pairs (prefixes of each other, LIKE/GLOB
wildcards, ``.``, a Cyrillic look-alike, case variants, quotes) share a store, each with
rows matching the same queries, and every read path pinned to one of them (filters with its
``agent_id``, or a store opened as that agent for the memory loop) must return its own rows
and none of the other's. A last group checks that the other collection's rows do not even
move the scores: writing many rows into B leaves A's ranking and scores where they were.

Single-store semantics: ``agent_id`` is a column, so an *unfiltered* recall of a store sees
every collection by design; ``get``/``get_many``/``export`` address the whole file. There the
assertion is that no row is re-labelled (each keeps exactly the name it was written under).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from elastic_memory import LoopConfig, UsageError
from elastic_memory.testing import LOOKALIKE_NAMES, FakeEmbedder

from .drivers import Capability, FederatedDriver, MemoryDriver

MODES = ["keyword", "semantic", "hybrid"]
pytestmark = pytest.mark.requires(Capability.FILTERS)

#: Collection names that a sloppy comparison would conflate: (a, b).
PAIRS = [pytest.param(a, b, id=name) for name, a, b in LOOKALIKE_NAMES]

#: A word only each side's rows carry: its presence anywhere in the other side's output is a leak.
MARK = {"a": "zephyrmark", "b": "quokkamark"}
QUERY = "harbour lantern"
#: Filters combined with the agent filter (each must keep the collection).
EXTRA_FILTERS: list[dict[str, Any]] = [
    {},
    {"tags": ["common"]},
    {"tags_all": ["common", "shared-tag"]},
    {"session_id": "s1"},
    {"type": ["episodic", "semantic"]},
    {"metadata": {"n": {"$lt": 100}}},
    {"metadata": {"$or": [{"n": 0}, {"n": {"$gte": 1}}]}},
]


def _items(name: str, side: str, count: int = 6) -> list[dict[str, Any]]:
    return [
        {
            "content": f"{QUERY} note {i} {MARK[side]}",
            "agent_id": name,
            "tags": ["common", "shared-tag", f"only-{side}"],
            "metadata": {"n": i, "side": side},
            "session_id": "s1",
            "type": "episodic" if i % 2 else "semantic",
        }
        for i in range(count)
    ]


async def _seed(driver: MemoryDriver, a: str, b: str) -> dict[str, set[str]]:
    """Six rows in each collection, all matching :data:`QUERY`; side -> ids."""
    ids_a = await driver.remember_many(_items(a, "a"))
    ids_b = await driver.remember_many(_items(b, "b"))
    assert len(set(ids_a) | set(ids_b)) == 12, "twelve distinct rows were written"
    return {"a": set(ids_a), "b": set(ids_b)}


def _sides(a: str, b: str) -> list[tuple[str, str, str]]:
    """(reader side, its name, the other side)."""
    return [("a", a, "b"), ("b", b, "a")]


@pytest.mark.requires(Capability.MULTI_AGENT)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("a", "b"), PAIRS)
async def test_recall_pinned_to_a_collection_returns_exactly_its_rows(
    driver: MemoryDriver, mode: str, a: str, b: str
) -> None:
    """``filters={"agent_id": name}`` returns all of that collection's matching rows and none of the other's.

    If a row of the other collection comes back, the agent condition is not an exact
    comparison: check queries.live_filter (``agent_id IN (?)``, never LIKE/GLOB/lower()),
    the RAM index's agent codes (ram_index.ATTRS) and vec0's ``agent_id`` partition key. If
    rows of its own are missing, the same places compare too strictly (a normalised name).
    """
    ids = await _seed(driver, a, b)
    for side, name, _ in _sides(a, b):
        hits = await driver.recall(QUERY, k=50, mode=mode, filters={"agent_id": name})
        assert {h.id for h in hits} == ids[side], (name, mode)
        assert {h.agent_id for h in hits} == {name}


@pytest.mark.requires(Capability.MULTI_AGENT)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("a", "b"), PAIRS)
async def test_the_agent_filter_holds_combined_with_other_filters(
    driver: MemoryDriver, mode: str, a: str, b: str
) -> None:
    """The agent filter with tags, tags_all, session, type or metadata filters still returns one collection.

    If a combination leaks, the filter compiler drops or ORs the agent condition when
    another condition is present (filters.Filters.parse, queries.live_filter, and the
    vector leg's row check after a tag/metadata filter sends it to the exact scan).
    """
    ids = await _seed(driver, a, b)
    for extra in EXTRA_FILTERS:
        for side, name, _ in _sides(a, b):
            for agent in (name, [name]):
                filters = {**extra, "agent_id": agent}
                hits = await driver.recall(QUERY, k=50, mode=mode, filters=filters)
                assert {h.id for h in hits} == ids[side], filters


@pytest.mark.requires(Capability.MULTI_AGENT)
@pytest.mark.parametrize(("a", "b"), PAIRS)
async def test_listing_pinned_to_a_collection_returns_exactly_its_rows(driver: MemoryDriver, a: str, b: str) -> None:
    """An empty query (the listing path: pinned, important, newest) with an agent filter lists one collection.

    If it leaks, check the browse query (RecordReads.browse / queries.browse): it has its own
    WHERE clause, separate from the keyword and vector legs.
    """
    ids = await _seed(driver, a, b)
    for side, name, _ in _sides(a, b):
        hits = await driver.recall("", k=50, filters={"agent_id": name})
        assert {h.id for h in hits} == ids[side], name


@pytest.mark.requires(Capability.MULTI_AGENT)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("a", "b"), PAIRS)
async def test_explain_pinned_to_a_collection_names_no_row_of_the_other(
    driver: MemoryDriver, mode: str, a: str, b: str
) -> None:
    """explain() with an agent filter: its hits are one collection's, its details name no row of the other.

    If the hits leak, see the recall test. If only the details do (candidate counts, graph
    paths naming memory ids), check what MemoryCore.explain and the graph nudge put in
    ``details``: the nudge surfaces rows through records_matching(extra, filters).
    """
    ids = await _seed(driver, a, b)
    for side, name, other in _sides(a, b):
        explanation = await driver.explain(QUERY, k=50, mode=mode, filters={"agent_id": name})
        assert {h.id for h in explanation.hits} == ids[side]
        shown = repr(explanation.details)
        assert MARK[other] not in shown
        assert not [i for i in ids[other] if i in shown]


@pytest.mark.requires(Capability.MULTI_AGENT)
@pytest.mark.parametrize(("a", "b"), PAIRS)
async def test_get_many_returns_each_row_under_the_name_it_was_written_with(
    driver: MemoryDriver, a: str, b: str
) -> None:
    """get/get_many address rows by id; each comes back with exactly its own collection's name.

    If a name comes back changed (case-folded, NFKC-normalised, unquoted), check
    _validate.build_row and the store's row decoding (RecordReads.get).
    """
    ids = await _seed(driver, a, b)
    both = sorted(ids["a"] | ids["b"])
    records = await driver.get_many(both)
    assert {r.id: r.agent_id for r in records} == {i: a if i in ids["a"] else b for i in both}
    for side, name, _ in _sides(a, b):
        for mid in ids[side]:
            record = await driver.get(mid)
            assert record is not None and record.agent_id == name and MARK[side] in record.content


@pytest.mark.requires(Capability.MULTI_AGENT)
@pytest.mark.parametrize(("a", "b"), PAIRS)
async def test_identical_content_in_two_collections_stays_two_rows(driver: MemoryDriver, a: str, b: str) -> None:
    """Deduplication is per collection: the same text written in both is two rows, each found only in its own.

    If B's write returns A's id, dedupe looks up the content hash without the agent (the
    write plan's duplicate query must compare agent_id exactly): B would then read and
    update A's row.
    """
    first = await driver.remember("the exact same sentence about the harbour lantern", agent_id=a)
    second = await driver.remember("the exact same sentence about the harbour lantern", agent_id=b)
    assert first != second
    for mid, name in ((first, a), (second, b)):
        hits = await driver.recall("exact same sentence", mode="keyword", filters={"agent_id": name})
        assert [h.id for h in hits] == [mid]


@pytest.mark.requires(Capability.MULTI_AGENT)
@pytest.mark.parametrize(("a", "b"), PAIRS)
async def test_tags_pinned_to_a_collection_count_only_its_rows(driver: MemoryDriver, a: str, b: str) -> None:
    """tags(filters={"agent_id": name}) counts one collection's tags, with and without a prefix.

    If the other side's tag or counts show, check queries.tag_counts (the join on
    memory_tags keeps live_filter's agent condition).
    """
    await _seed(driver, a, b)
    for side, name, _ in _sides(a, b):
        assert await driver.tags(filters={"agent_id": name}) == {"common": 6, f"only-{side}": 6, "shared-tag": 6}
        assert await driver.tags(filters={"agent_id": name}, prefix="only-") == {f"only-{side}": 6}


@pytest.mark.requires(Capability.MULTI_AGENT)
@pytest.mark.parametrize(("a", "b"), PAIRS)
async def test_export_keeps_each_row_under_the_name_it_was_written_with(driver: MemoryDriver, a: str, b: str) -> None:
    """An export lists every row once, each under exactly its own collection's name.

    If names merge or change, check the export's row encoding (export_jsonl) for any
    normalisation of agent_id.
    """
    ids = await _seed(driver, a, b)
    lines = [line for line in await driver.export() if line["id"] in ids["a"] | ids["b"]]
    assert sorted(line["id"] for line in lines) == sorted(ids["a"] | ids["b"])
    for line in lines:
        side = "a" if line["id"] in ids["a"] else "b"
        assert line["agent_id"] == (a if side == "a" else b)
        assert MARK[side] in line["content"]


# ------------------------------------------------------------ two stores opened as the two agents


@pytest.fixture
async def pair(
    driver: MemoryDriver, location: str, backend: str, a: str, b: str
) -> AsyncIterator[tuple[MemoryDriver, MemoryDriver]]:
    """The driver's store opened twice on one location, as agent ``a`` and as agent ``b``."""
    if backend == "sqlite-memory":
        pytest.skip("two opens of ':memory:' are two stores: the sqlite-file cells cover this")
    cls = type(driver)
    options: dict[str, Any] = {"vector_index": "ann"} if backend == "sqlite-ann" else {}
    opened: list[MemoryDriver] = []
    try:
        for name in (a, b):
            try:
                d = await cls.open(location, FakeEmbedder(), loop=LoopConfig(tier="standard"), agent_id=name, **options)
            except UsageError as e:
                if cls is FederatedDriver:  # an agent id is a folder name there: path-safe names only
                    pytest.skip(f"for_agent refuses the agent id {name!r}: {e}")
                raise
            opened.append(d)
        yield opened[0], opened[1]
    finally:
        for d in opened:
            await d.close()


def _walk(value: Any) -> list[Any]:
    """Every key and leaf value of a nested dict/list."""
    if isinstance(value, dict):
        return [x for v in value.values() for x in _walk(v)] + list(value)
    if isinstance(value, list | tuple):
        return [x for v in value for x in _walk(v)]
    return [value]


@pytest.mark.parametrize(("a", "b"), PAIRS)
async def test_stats_of_one_agent_name_nothing_of_the_other(
    pair: tuple[MemoryDriver, MemoryDriver], a: str, b: str
) -> None:
    """stats() of the store opened as A reports A, and no value in it is B's name or one of B's rows.

    (Counts are the file's: agent_id is a column.) If B's name or content shows, stats grew
    a per-agent breakdown that ignores the opener.
    """
    mine, theirs = pair
    await mine.remember_many(_items(a, "a"))
    secret = await theirs.remember_many(_items(b, "b"))
    stats = await mine.stats()
    assert stats["agent_id"] == a
    assert b not in _walk(stats)
    shown = repr(stats)
    assert MARK["b"] not in shown
    assert not [i for i in secret if i in shown]


@pytest.mark.requires(Capability.LOOP)
@pytest.mark.parametrize(("a", "b"), PAIRS)
async def test_facts_of_one_agent_are_not_the_other_agents(pair: tuple[MemoryDriver, MemoryDriver]) -> None:
    """A fact set by agent A is not B's: get, history and list of B do not show it, and A still reads it.

    If B reads it, the facts queries (loop/queries: CURRENT_FACT, fact_history,
    current_facts) compare agent_id loosely or not at all.
    """
    mine, theirs = pair
    await mine.set_fact("user.secret_word", MARK["a"])
    assert await theirs.get_fact("user.secret_word") is None
    assert await theirs.fact_history("user.secret_word") == []
    assert MARK["a"] not in repr(await theirs.list_facts())
    fact = await mine.get_fact("user.secret_word")
    assert fact is not None and fact.value == MARK["a"]


@pytest.mark.requires(Capability.LOOP)
@pytest.mark.parametrize(("a", "b"), PAIRS)
async def test_graph_of_one_agent_is_not_the_other_agents(pair: tuple[MemoryDriver, MemoryDriver]) -> None:
    """Entities and relations extracted from A's turns are A's graph only.

    If B lists them, check storage/graph_tables.py (every query takes agent_id) and the
    entity_keys table's key (agent_id, key).
    """
    mine, theirs = pair
    receipt = await mine.record_turn(
        "My sister Zephyrina works at Quorvex in Lisbon with Pedro.", "Noted.", session_id="s1"
    )
    assert receipt.ok, receipt.error
    await mine.drain()
    assert "Zephyrina" in {e.name for e in await mine.graph_entities()}
    assert await theirs.graph_entities() == []
    assert await theirs.graph_relations() == []


@pytest.mark.requires(Capability.LOOP)
@pytest.mark.parametrize(("a", "b"), PAIRS)
async def test_build_context_of_one_agent_quotes_nothing_of_the_other(pair: tuple[MemoryDriver, MemoryDriver]) -> None:
    """B's plan (profile facts, past moments, lessons) quotes none of A's turns, facts or lessons; A's quotes them.

    If B's plan quotes A, check MemoryLoop.build_context: the past-moments recall adds an
    agent filter only when sole_agent() says other agents share the file, and the facts and
    lessons reads take the loop's agent id.
    """
    mine, theirs = pair
    await mine.record_turn(f"My name is Zephyrina and the {MARK['a']} harbour lantern is blue.", "Ok.", session_id="s1")
    await mine.add_lesson(f"Always mention {MARK['a']} lanterns.")
    await theirs.record_turn("I like the harbour at night.", "Nice.", session_id="t1")
    await mine.drain()
    await theirs.drain()
    question = f"What about the {MARK['a']} harbour lantern and Zephyrina?"
    assert MARK["a"] in (await mine.build_context(question, session_id="s2")).render()
    shown = (await theirs.build_context(question, session_id="t2")).render()
    assert MARK["a"] not in shown
    assert "Zephyrina" not in shown


# ------------------------------------------------------------------------------- score isolation

A_DOCS = [
    "harbour lantern",
    "harbour lantern harbour",
    "the old harbour lantern by the pier at dusk",
    "lantern",
    "a harbour without lights",
    "lantern oil and wicks for the harbour master",
    "ships and harbour fees",
    "paper lantern festival",
]


@pytest.mark.requires(Capability.MULTI_AGENT)
@pytest.mark.parametrize("mode", MODES)
async def test_another_collections_writes_leave_scores_unchanged(driver: MemoryDriver, mode: str) -> None:
    """300 rows written into collection B leave A's ranking and scores (agent filter on A) within 1e-6.

    A keyword failure on SQLite means a query pinned to one agent no longer ranks in that
    agent's own FTS5 table (schema v6, storage/keyword_partitions.py). A semantic failure
    means the vector leg's score depends on other rows (a quantised or approximate tier,
    or a normalisation over all candidates before the filter); a hybrid
    one, with keyword and semantic passing, means fusion normalises over unfiltered candidates.
    """
    await driver.remember_many([{"content": text, "agent_id": "ali"} for text in A_DOCS])
    pinned = {"agent_id": "ali"}
    before = [(h.id, h.score) for h in await driver.recall(QUERY, k=20, mode=mode, filters=pinned)]
    assert len(before) >= 3
    await driver.remember_many(
        [{"content": f"harbour {'lantern ' * (i % 3)}cargo manifest {i}", "agent_id": "alice"} for i in range(300)]
    )
    after = [(h.id, h.score) for h in await driver.recall(QUERY, k=20, mode=mode, filters=pinned)]
    assert [i for i, _ in after] == [i for i, _ in before]
    assert [s for _, s in after] == pytest.approx([s for _, s in before], abs=1e-6)
