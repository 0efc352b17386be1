"""Prune, purge, access tracking and stats."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from elastic_memory import Memory, PrunePolicy, UsageError
from elastic_memory.testing import FakeEmbedder


@pytest.fixture
def timed(db_path: Path, clock: Any):  # type: ignore[no-untyped-def]
    with Memory.open(db_path, embedder=FakeEmbedder(), clock=clock) as mem:
        yield mem


def test_prune_by_importance_floor_archives_and_spares_pinned(timed: Memory) -> None:
    low = timed.remember("low value", importance=0.1)
    timed.remember("pinned low value", importance=0.1, pinned=True)
    timed.remember("high value", importance=0.9)
    report = timed.prune(min_importance=0.5)
    assert report.ids == (low,) and report.below_importance == 1
    assert timed.get(low).archived  # type: ignore[union-attr]
    assert {h.content for h in timed.recall("value", mode="keyword")} == {"pinned low value", "high value"}


def test_prune_cap_removes_least_important_then_least_recent(timed: Memory, clock: Any) -> None:
    ids = []
    for i, importance in enumerate([0.5, 0.2, 0.5, 0.9]):
        clock.now += 10
        ids.append(timed.remember(f"entry {i}", importance=importance))
    report = timed.prune(max_entries=2, action="purge")
    assert set(report.ids) == {ids[1], ids[0]}
    assert report.over_cap == 2
    assert timed.get(ids[0]) is None and timed.get(ids[2]) is not None


def test_prune_floor_and_cap_form_one_victim_set(timed: Memory) -> None:
    timed.remember_many([{"content": f"m{i}", "importance": i / 10} for i in range(10)])
    report = timed.prune(PrunePolicy(min_importance=0.3, max_entries=5))
    assert report.below_importance == 3 and report.over_cap == 2
    assert timed.stats()["active_memories"] == 5


def test_prune_dry_run_changes_nothing(timed: Memory) -> None:
    timed.remember("low", importance=0.0)
    report = timed.prune(min_importance=0.5, dry_run=True)
    assert report.count == 1 and report.dry_run
    assert timed.stats()["active_memories"] == 1


def test_prune_without_criteria_is_a_usage_error(timed: Memory) -> None:
    with pytest.raises(UsageError, match="min_importance, max_entries"):
        timed.prune()


def test_purge_erases_only_old_soft_deletes(timed: Memory, clock: Any) -> None:
    old, recent = timed.remember("old"), timed.remember("recent")
    timed.forget(old)
    clock.now += 100
    timed.forget(recent)
    clock.now += 10
    assert timed.purge(older_than=50) == 1
    assert timed.get(old) is None
    assert timed.get(recent) is not None


def test_recall_records_access_and_grows_retention(timed: Memory, clock: Any) -> None:
    mid = timed.remember("remember to touch")
    clock.now += 60
    timed.recall("touch", mode="keyword")
    record = timed.get(mid)
    assert record is not None
    assert (record.access_count, record.accessed_at) == (1, clock.now)
    assert record.retention_strength > 1.0


def test_explain_and_touch_false_record_no_access(timed: Memory) -> None:
    mid = timed.remember("no touching")
    timed.explain("touching")
    timed.recall("touching", touch=False)
    assert timed.get(mid).access_count == 0  # type: ignore[union-attr]


def test_get_is_a_pure_read(timed: Memory) -> None:
    mid = timed.remember("pure read")
    timed.get(mid)
    assert timed.get(mid).access_count == 0  # type: ignore[union-attr]


def test_stats_counts_states(timed: Memory, clock: Any) -> None:
    a, b, _ = timed.remember("a"), timed.remember("b", type="episodic"), timed.remember("c", ttl=5)
    timed.forget(a)
    timed.archive(b)
    clock.now += 10
    stats = timed.stats()
    assert (stats["total_memories"], stats["deleted_memories"], stats["archived_memories"]) == (3, 1, 1)
    assert stats["expired_memories"] == 1 and stats["active_memories"] == 0
    assert stats["vector_index"] in ("ram", "vec0") and stats["embedding_dimension"] == 16


def test_purge_erases_long_expired_memories(timed: Memory, clock: Any) -> None:
    gone = timed.remember("expires soon", ttl=10)
    kept = timed.remember("expires later", ttl=1000)
    clock.now += 100
    assert timed.purge(older_than=50) == 1
    assert timed.get(gone) is None
    assert timed.get(kept) is not None


@pytest.fixture(params=["sqlite", "postgres"])
def where(request: pytest.FixtureRequest, db_path: Path) -> str:
    """A new store on each backend."""
    if request.param == "sqlite":
        return str(db_path)
    return str(request.getfixturevalue("pg_location"))


def test_purge_ids_erases_only_the_listed_expired_or_deleted(where: str, clock: Any) -> None:
    with Memory.open(where, embedder=None, clock=clock) as mem:
        expired, deleted, live, unlisted = (
            mem.remember("expired", ttl=10),
            mem.remember("deleted"),
            mem.remember("live", ttl=1000),
            mem.remember("unlisted", ttl=10),
        )
        mem.forget(deleted)
        clock.now += 100
        assert mem.purge(ids=[expired, deleted, live, "no-such-id"]) == 2
        assert mem.get(expired) is None and mem.get(deleted) is None
        assert mem.get(live) is not None and mem.get(unlisted) is not None
        assert mem.purge(ids=unlisted) == 1


def test_purge_ids_keeps_a_memory_renewed_since_it_expired(where: str, clock: Any) -> None:
    with Memory.open(where, embedder=None, clock=clock) as mem:
        mid = mem.remember("renewed", ttl=10)
        clock.now += 100
        mem.update(mid, expires_at=clock.now + 100)
        assert mem.purge(ids=[mid]) == 0
        assert mem.get(mid) is not None


def test_purge_ids_respects_older_than_and_many_ids(timed: Memory, clock: Any) -> None:
    ids = timed.remember_many([{"content": f"m{i}", "ttl": 10} for i in range(1_000)], dedupe=False)
    clock.now += 30
    assert timed.purge(50, ids=ids) == 0
    clock.now += 100
    assert timed.purge(50, ids=[*ids, *ids]) == 1_000
    assert timed.stats()["total_memories"] == 0


def test_purge_with_no_ids_erases_nothing(timed: Memory, clock: Any) -> None:
    timed.remember("expired", ttl=10)
    clock.now += 100
    assert timed.purge(ids=[]) == 0
    assert timed.stats()["total_memories"] == 1


@pytest.mark.parametrize("ids", [3, b"id", {"a": 1}, [""], [None]])
def test_purge_refuses_bad_ids(timed: Memory, ids: Any) -> None:
    with pytest.raises(UsageError):
        timed.purge(ids=ids)
