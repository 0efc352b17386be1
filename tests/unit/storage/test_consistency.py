"""Consistency under concurrency: other connections, races, batch bookkeeping, seq reuse."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from elastic_memory import Memory
from elastic_memory.storage.sqlite.driver import driver
from elastic_memory.testing import FakeEmbedder


def test_a_pin_written_by_another_connection_enables_semantic_recall(db_path: Path) -> None:
    with Memory.open(db_path, embedder=FakeEmbedder()) as reader:
        with Memory.open(db_path, embedder=FakeEmbedder()) as writer:
            mid = writer.remember("written by the other process")
        explanation = reader.explain("written by the other process", mode="semantic")
    assert explanation.effective_mode.value == "semantic"
    assert [h.id for h in explanation.hits] == [mid]


def test_batch_upsert_that_changes_content_frees_the_old_text(mem: Memory) -> None:
    mem.remember("x is the old fact", id="a")
    ids = mem.remember_many([{"id": "a", "content": "y is the new fact"}, "x is the old fact"])
    assert (ids[0].status, ids[1].status) == ("updated", "created")
    assert mem.get(ids[1]).content == "x is the old fact"  # type: ignore[union-attr]


def test_update_does_not_resurrect_a_memory_forgotten_meanwhile(db_path: Path) -> None:
    """forget() runs while update() is embedding the new text: the memory stays forgotten."""
    holder: dict[str, Memory] = {}

    class ForgetsDuringEmbed(FakeEmbedder):
        def embed(self, texts):  # type: ignore[no-untyped-def]
            if "edited" in texts[0] and "mid" in holder:
                holder["mem"].forget(holder.pop("mid"))
            return super().embed(texts)

    with Memory.open(db_path, embedder=ForgetsDuringEmbed()) as mem:
        holder["mem"] = mem
        mid = mem.remember("original text")
        holder["mid"] = mid
        record = mem.update(mid, content="edited text")
        assert record.deleted_at is not None
        assert mem.recall("edited text", mode="hybrid") == []


def test_seqs_are_never_reused_after_a_hard_delete(mem: Memory) -> None:
    first = mem.remember("first")
    second = mem.remember("second")
    mem.forget(second, hard=True)
    third = mem.remember("third")
    conn = driver().connect(mem.path, timeout=5)
    try:
        seqs = dict(conn.execute("SELECT id, seq FROM memories").fetchall())
    finally:
        conn.close()
    assert seqs[third] > seqs[first] + 1


def test_access_tracking_elsewhere_keeps_the_ram_index(db_path: Path) -> None:
    with Memory.open(db_path, embedder=FakeEmbedder()) as a, Memory.open(db_path, embedder=FakeEmbedder()) as b:
        a.remember_many([f"note {i}" for i in range(20)])
        b.recall("note", mode="semantic")
        index = b._core.store._vectors.ram
        a.recall("note", mode="keyword")  # touches rows: a commit, but nothing recall sees
        b.recall("note", mode="semantic")
        assert b._core.store._vectors.ram is index
        a.remember("a new note")  # this one must be seen
        hits = b.recall("a new note", k=1, mode="semantic")
        assert hits[0].content == "a new note"


def test_update_embeds_a_memory_that_had_no_vector(db_path: Path) -> None:
    with Memory.open(db_path, embedder=None) as mem:
        mid = mem.remember("stored without a model")
    with Memory.open(db_path, embedder=FakeEmbedder()) as mem:
        mem.remember("another one")
        mem.update(mid, importance=0.9)
        assert mem.get(mid).has_vector  # type: ignore[union-attr]
        top = mem.recall("stored without a model", k=1, mode="semantic")[0]
        assert top.id == mid and np.isclose(top.vector_score, 1.0, atol=1e-5)  # type: ignore[arg-type]


def test_a_warm_vector_search_sees_a_commit_made_just_before_it(db_path: Path) -> None:
    """The data_version check overlaps the scan: a delete and an insert by another connection still count."""
    emb = FakeEmbedder()
    with Memory.open(db_path, embedder=emb) as a, Memory.open(db_path, embedder=emb) as b:
        a.remember_many([f"note {i}" for i in range(30)])
        target = "note 7"
        assert b.recall(target, k=1, mode="semantic")[0].content == target  # b's index is loaded and warm
        a.forget([h.id for h in a.recall(target, k=1, mode="keyword")])
        assert target not in [h.content for h in b.recall(target, k=3, mode="semantic")]
        a.remember("note 7 again")
        details = b.explain("note 7 again", k=1, mode="semantic")
        assert details.hits[0].content == "note 7 again"


def test_a_warm_search_scanned_in_a_worker_thread_sees_a_commit_too(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Large matrices scan off the event loop, with the data_version read queued before the candidate read."""
    from elastic_memory.storage.vectors import leg as vectors

    monkeypatch.setattr(vectors, "_THREAD_CELLS", 10)
    emb = FakeEmbedder()
    with Memory.open(db_path, embedder=emb) as a, Memory.open(db_path, embedder=emb) as b:
        a.remember_many([f"note {i}" for i in range(30)])
        assert b.recall("note 3", k=1, mode="semantic")[0].content == "note 3"
        a.remember("note 3 revisited")
        assert b.recall("note 3 revisited", k=1, mode="semantic")[0].content == "note 3 revisited"


def test_a_write_racing_another_connections_commit_drops_the_stale_index(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A commit landing between a write's state check and its transaction is not lost from the RAM index."""
    emb = FakeEmbedder()
    with Memory.open(db_path, embedder=emb) as a, Memory.open(db_path, embedder=emb) as b:
        a.remember_many([f"note {i}" for i in range(20)])
        b.recall("note", mode="semantic")  # b's RAM index is loaded
        a.remember("the racing note")
        store = b._core.store
        synced = store._sync_foreign

        async def missed(*args: object) -> None:  # as if a's commit came just after b looked
            return None

        monkeypatch.setattr(store, "_sync_foreign", missed)
        b.remember("b's own note")
        monkeypatch.setattr(store, "_sync_foreign", synced)
        assert b.recall("the racing note", k=1, mode="semantic")[0].content == "the racing note"
