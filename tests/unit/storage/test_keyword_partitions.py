"""Keyword (BM25) statistics per agent: another collection's writes never move this one's scores."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from elastic_memory import AsyncMemory, Memory, StorageError
from elastic_memory.storage.sqlite import migrations
from elastic_memory.storage.sqlite.driver import driver
from elastic_memory.testing import FakeEmbedder, reference_bm25

QUERY = "otter river"
A = {"agent_id": "a"}
#: Scores must agree to this (the issue's criterion).
TOLERANCE = 1e-6


def _a_docs() -> list[dict[str, Any]]:
    """Collection A: the query's words in a few rows of different lengths, so BM25 tells them apart."""
    docs = [f"note {i} about the harbour, boats and the weather on day {i}" for i in range(40)]
    docs[3] = "an otter swam down the river"
    docs[11] = "the otter sleeps on a rock by the river bank after a long day of fishing and play"
    docs[17] = "river trip planned for Sunday"
    docs[25] = "otter otter otter"
    return [
        {"content": text, "id": f"a{i}", "agent_id": "a", "tags": ["river"] if i == 17 else []}
        for i, text in enumerate(docs)
    ]


def _b_docs(n: int = 300, prefix: str = "b") -> list[dict[str, Any]]:
    """Another collection full of the query's words: it would move A's IDF and average length."""
    return [
        {
            "content": f"otter {i} and the river otter river {'long ' * (i % 7)}text",
            "id": f"{prefix}{i}",
            "agent_id": "b",
        }
        for i in range(n)
    ]


def _scores(
    mem: Memory, filters: dict[str, Any] | None = None, mode: str = "keyword", k: int = 20
) -> list[tuple[str, float]]:
    hits = mem.recall(QUERY, k=k, mode=mode, filters=A if filters is None else filters)  # type: ignore[arg-type]
    return [(h.id, h.score if mode == "keyword" else h.keyword_score) for h in hits]  # type: ignore[misc]


def _assert_same(before: list[tuple[str, Any]], after: list[tuple[str, Any]]) -> None:
    assert [i for i, _ in after] == [i for i, _ in before]
    for (_, x), (_, y) in zip(before, after, strict=True):
        assert y == pytest.approx(x, abs=TOLERANCE, rel=0)


@pytest.fixture
def store(db_path: Path) -> Iterator[Memory]:
    """A file holding collection A only."""
    with Memory.open(db_path, embedder=None) as mem:
        mem.remember_many(_a_docs())
        yield mem


def test_300_writes_in_another_collection_leave_scores_and_order(store: Memory) -> None:
    """If this fails, check that a query pinned to one agent searches that agent's FTS5 table."""
    before = _scores(store)
    assert len(before) == 4 and before[0][1] > 0.5
    store.remember_many(_b_docs())
    _assert_same(before, _scores(store))


def test_scores_equal_those_of_a_file_holding_only_that_collection(store: Memory, tmp_path: Path) -> None:
    """If this fails, check that the agent's table holds all its rows and no other agent's."""
    store.remember_many(_b_docs())
    store.remember("otter river moved here from a", id="a40", agent_id="a")
    store.update("a40", agent_id="b")  # an upsert that moves a row out of A
    with Memory.open(tmp_path / "alone.db", embedder=None) as alone:
        alone.remember_many(_a_docs())
        _assert_same(_scores(alone), _scores(store))


def test_the_hybrid_keyword_leg_is_isolated_too(db_path: Path) -> None:
    """If this fails, check that hybrid recall passes the filters to the store's keyword search."""
    with Memory.open(db_path, embedder=FakeEmbedder()) as mem:
        mem.remember_many(_a_docs())
        before = _scores(mem, mode="hybrid")
        mem.remember_many(_b_docs())
        after = _scores(mem, mode="hybrid")
    keyword = [(i, s) for i, s in before if s is not None]
    assert len(keyword) == 4
    assert {i: s for i, s in after if s is not None} == pytest.approx(dict(keyword), abs=TOLERANCE, rel=0)


def test_hard_deletes_in_another_collection_leave_scores(store: Memory) -> None:
    store.remember_many(_b_docs())
    before = _scores(store)
    store.forget([f"b{i}" for i in range(0, 300, 2)], hard=True)
    _assert_same(before, _scores(store))


def test_updates_in_another_collection_leave_scores(store: Memory) -> None:
    store.remember_many(_b_docs())
    before = _scores(store)
    for i in range(20):
        store.update(f"b{i}", content="otter " * (i + 1))
    _assert_same(before, _scores(store))


def test_soft_deletes_and_restores_in_another_collection_leave_scores(store: Memory) -> None:
    store.remember_many(_b_docs())
    before = _scores(store)
    ids = [f"b{i}" for i in range(100)]
    store.forget(ids)
    _assert_same(before, _scores(store))
    store.restore(ids)
    _assert_same(before, _scores(store))


def test_writes_in_the_same_collection_do_move_its_scores(store: Memory) -> None:
    """The test above can fail: the collection's own rows are its statistics."""
    before = dict(_scores(store))
    store.remember_many([{"content": f"otter sighting {i}", "agent_id": "a"} for i in range(30)])
    assert dict(_scores(store))["a3"] < before["a3"] - 0.1


def test_a_single_agent_file_ranks_with_the_whole_index_and_has_no_agent_table(store: Memory, db_path: Path) -> None:
    """The common case keeps today's index: scores are the contract's BM25 over memories_fts."""
    got = _scores(store)
    conn = driver().module.connect(str(db_path))
    try:
        scores = reference_bm25(conn, QUERY)
        ids = dict(conn.execute("SELECT seq, id FROM memories").fetchall())
        tables = conn.execute("SELECT name FROM sqlite_master WHERE name LIKE 'memories_fts_a%'").fetchall()
    finally:
        conn.close()
    truth = sorted((-score, seq) for seq, score in scores.items())
    _assert_same([(str(ids[seq]), -negative) for negative, seq in truth], got)
    assert tables == []


def test_queries_not_pinned_to_one_agent_rank_with_the_whole_file(store: Memory) -> None:
    """Unfiltered queries and lists of agents (``$in`` in the adapters) rank with the whole file's statistics."""
    alone = dict(_scores(store))
    store.remember_many(_b_docs())
    unfiltered = dict(_scores(store, filters={}, k=400))
    both = dict(_scores(store, filters={"agent_id": ["a", "b"]}, k=400))
    assert unfiltered["a3"] == pytest.approx(both["a3"], abs=TOLERANCE)
    assert unfiltered["a3"] != pytest.approx(alone["a3"], abs=0.1)


def test_an_agent_without_rows_in_a_split_file_finds_nothing(store: Memory) -> None:
    store.remember_many(_b_docs(5))
    assert store.recall(QUERY, mode="keyword", filters={"agent_id": "nobody"}) == []


def test_the_agent_tables_stay_in_step_with_fts5s_own_check(store: Memory, db_path: Path) -> None:
    """Inserts, rewrites, moves between agents and deletes keep every agent table consistent."""
    store.remember_many(_b_docs())
    store.update("b1", content="a different text entirely")
    store.update("a3", agent_id="b")
    store.forget(["b2", "a11"], hard=True)
    conn = driver().module.connect(str(db_path))
    try:
        names = [r[0] for r in conn.execute("SELECT 'memories_fts_a' || id FROM keyword_partitions ORDER BY agent_id")]
        for name in names:
            conn.execute(f'INSERT INTO "{name}" ("{name}", rank) VALUES (\'integrity-check\', 1)')
        counts = [conn.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0] for name in names]
    finally:
        conn.close()
    assert counts == [38, 300]  # a: 40 - a3 (moved) - a11 (deleted); b: 300 - b2 + a3


def test_a_failed_write_that_would_split_leaves_the_file_unsplit(store: Memory, db_path: Path) -> None:
    """A rollback forgets the registration it undid: the next write splits the file again, properly."""
    conn = driver().module.connect(str(db_path))
    conn.execute(
        "CREATE TRIGGER refuse BEFORE INSERT ON memories WHEN new.content = 'refused' "
        "BEGIN SELECT RAISE(ABORT, 'no'); END"
    )
    conn.commit()
    with pytest.raises(StorageError):
        store.remember_many([{"content": "otter", "agent_id": "b"}, {"content": "refused", "agent_id": "b"}])
    conn.execute("DROP TRIGGER refuse")
    conn.commit()
    conn.close()
    assert store.recall(QUERY, mode="keyword", filters={"agent_id": "b"}) == []
    store.remember_many(_b_docs(5))
    assert len(_scores(store, filters={"agent_id": "b"})) == 5


def _version_5_file(path: Path) -> None:
    """A schema-v5 file with collections a and b, written as v5's writer does (FTS5 first)."""
    conn = driver().module.connect(str(path))
    for migration in migrations.MIGRATIONS[:5]:
        for statement in migration.statements:
            conn.execute(statement)
    docs = _a_docs() + _b_docs()
    rows = [(d["id"], d["agent_id"], d["content"], json.dumps(d.get("tags", []))) for d in docs]
    for seq, (mid, agent, content, tags) in enumerate(rows, start=1):
        conn.execute("INSERT INTO memories_fts (rowid, content, tags) VALUES (?, ?, ?)", (seq, content, tags))
        conn.execute(
            "INSERT INTO memories (seq, id, agent_id, scope, type, content, content_hash, importance, confidence, "
            "source, tags, created_at, updated_at, accessed_at) VALUES (?, ?, ?, 'private', 'semantic', ?, "
            "'h-' || ?, 0.5, 1.0, 'agent', ?, 1, 1, 1)",
            (seq, mid, agent, content, mid, tags),
        )
    conn.execute("PRAGMA user_version = 5")
    conn.commit()
    conn.close()


def test_a_version_5_file_upgrades_to_isolated_scores(db_path: Path, tmp_path: Path) -> None:
    """The v6 upgrade builds each agent's table: hits stay, scores become the agent's own."""
    _version_5_file(db_path)
    with Memory.open(db_path, embedder=None) as mem, Memory.open(tmp_path / "alone.db", embedder=None) as alone:
        alone.remember_many(_a_docs())
        _assert_same(_scores(alone), _scores(mem))
        assert len(_scores(mem, filters={"agent_id": "b"})) == 20
        assert len(mem.recall("harbour boats", k=100, mode="keyword")) == 36
    conn = driver().module.connect(str(db_path))
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == migrations.LATEST
    finally:
        conn.close()


@pytest.mark.timeout(120)
async def test_postgres_scores_ignore_another_collections_writes(pg_location: str) -> None:
    """ts_rank(..., 1) reads only the row itself; if this fails, check pg_queries.keyword_search."""
    async with await AsyncMemory.open(pg_location, embedder=None) as mem:
        await mem.remember_many(_a_docs())
        before = [(h.id, h.score) for h in await mem.recall(QUERY, k=20, mode="keyword", filters=A)]
        await mem.remember_many(_b_docs())
        await mem.forget([f"b{i}" for i in range(0, 300, 3)], hard=True)
        await mem.update("b1", content="otter " * 9)
        after = [(h.id, h.score) for h in await mem.recall(QUERY, k=20, mode="keyword", filters=A)]
    assert len(before) == 4
    _assert_same(before, after)
