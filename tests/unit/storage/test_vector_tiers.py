"""The vector leg: RAM and vec0 tiers agree, stay in step with writes, see other processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from elastic_memory import Memory
from elastic_memory.testing import FakeEmbedder

WORDS = "apple banana cherry delta echo falcon golf hotel india juliet kilo lima".split()


def _corpus(n: int) -> list[dict[str, object]]:
    return [
        {
            "content": f"{WORDS[i % 12]} {WORDS[(i * 7) % 12]} {WORDS[(i * 5) % 12]} item{i}",
            "tags": ["even" if i % 2 == 0 else "odd"],
            "session_id": f"s{i % 3}",
            "type": "episodic" if i % 4 == 0 else "semantic",
        }
        for i in range(n)
    ]


@pytest.mark.parametrize(
    "filters", [None, {"session_id": "s1"}, {"tags": ["odd"]}, {"type": "episodic", "tags": ["even"]}]
)
def test_ram_and_vec0_tiers_return_the_same_ranking(db_path: Path, filters: dict[str, object] | None) -> None:
    with Memory.open(db_path, embedder=FakeEmbedder(), vector_index="ram") as mem:
        mem.remember_many(_corpus(300))
        ram = [
            (h.id, round(h.score, 5)) for h in mem.recall("apple delta golf", k=15, mode="semantic", filters=filters)
        ]
        assert mem.explain("apple", mode="semantic").details["vector_index"] == "ram"
    with Memory.open(db_path, embedder=FakeEmbedder(), vector_index="vec0") as mem:
        vec0 = [
            (h.id, round(h.score, 5)) for h in mem.recall("apple delta golf", k=15, mode="semantic", filters=filters)
        ]
        assert mem.explain("apple", mode="semantic").details["vector_index"] == "vec0"
    assert [s for _, s in ram] == [s for _, s in vec0]
    assert len(ram) == 15


def test_auto_tier_falls_back_to_vec0_when_ram_budget_is_too_small(db_path: Path) -> None:
    with Memory.open(db_path, embedder=FakeEmbedder(), ram_budget_bytes=10) as mem:
        mem.remember_many(_corpus(20))
        assert mem.explain("apple", mode="semantic").details["vector_index"] == "vec0"
        assert mem.stats()["vector_index"] == "vec0"


def test_ram_index_follows_updates_and_deletes(mem: Memory) -> None:
    ids = mem.remember_many(_corpus(30))
    mem.recall("apple", mode="semantic")  # loads the RAM index
    mem.update(ids[0], content="zebra zulu unique words")
    mem.forget(ids[1], hard=True)
    mem.forget(ids[2])
    top = mem.recall("zebra zulu unique words", k=3, mode="semantic")
    assert top[0].id == ids[0] and top[0].vector_score == pytest.approx(1.0, abs=1e-5)
    found = {h.id for h in mem.recall("apple banana", k=30, mode="semantic")}
    assert ids[1] not in found and ids[2] not in found
    assert mem.stats()["vector_index_loaded"] == 28


def test_writes_by_another_connection_are_seen(db_path: Path) -> None:
    with Memory.open(db_path, embedder=FakeEmbedder()) as reader:
        reader.remember("first memory here")
        assert len(reader.recall("memory", mode="semantic")) == 1  # RAM index loaded
        with Memory.open(db_path, embedder=FakeEmbedder()) as writer:
            new = writer.remember("second memory written elsewhere")
            writer.forget(reader.recall("first", mode="keyword")[0].id, hard=True)
        hits = reader.recall("memory", mode="semantic")
        assert [h.id for h in hits] == [new]


def test_archived_memories_leave_the_vector_leg_and_come_back(mem: Memory) -> None:
    mid = mem.remember("archive target words")
    mem.recall("archive", mode="semantic")
    assert mem.archive(mid) == 1
    assert mem.recall("archive target words", mode="semantic") == []
    assert mem.archive(mid, archived=False) == 1
    assert [h.id for h in mem.recall("archive target words", k=1, mode="semantic")] == [mid]


def test_fast_index_load_equals_the_row_by_row_load(db_path: Path) -> None:
    """The chunk-table reader (sqlite-vec internals) yields exactly what vec0 returns."""
    from elastic_memory import _runner

    with Memory.open(db_path, embedder=FakeEmbedder()) as mem:
        ids = mem.remember_many([{**row, "agent_id": f"agent{i % 3}"} for i, row in enumerate(_corpus(2500))])
        mem.forget(ids[::7], hard=True)
        mem.forget(ids[1::11])
        store = mem._core.store
        seqs = [
            r[0] for r in _runner.run(store._all("SELECT seq FROM memories WHERE has_vector = 1 ORDER BY seq"), "t")
        ]
        fast = _runner.run(store._vectors._matrix_from_chunks(seqs, 16), "t")
        present, slow = _runner.run(store._vectors._matrix_from_rows(seqs, 16), "t")
    assert all(present)
    assert fast is not None
    assert fast.shape == slow.shape == (len(seqs), 16)
    assert (fast == slow).all()


def test_index_loads_through_vec0_when_the_fast_reader_declines(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from elastic_memory.storage.vectors.leg import VectorLeg

    async def decline(self, seqs, dimension):  # type: ignore[no-untyped-def]
        return None

    monkeypatch.setattr(VectorLeg, "_matrix_from_chunks", decline)
    with Memory.open(db_path, embedder=FakeEmbedder()) as mem:
        ids = mem.remember_many(_corpus(50))
        mem.close()
    with Memory.open(db_path, embedder=FakeEmbedder()) as mem:
        top = mem.recall(_corpus(50)[7]["content"], k=1, mode="semantic")
        assert top[0].id == ids[7] and mem.stats()["vector_index_loaded"] == 50


@pytest.mark.parametrize("filters", [None, {"tags": ["odd"]}, {"session_id": "s2"}])
def test_hybrid_ranking_is_the_same_on_both_tiers(db_path: Path, filters: dict[str, object] | None) -> None:
    results = []
    for tier in ("ram", "vec0"):
        with Memory.open(db_path, embedder=FakeEmbedder(), vector_index=tier) as mem:  # type: ignore[arg-type]
            if tier == "ram":
                mem.remember_many(_corpus(200))
            hits = mem.recall("apple delta golf item7", k=10, mode="hybrid", filters=filters, touch=False)
            results.append([(h.id, round(h.score, 5)) for h in hits])
    assert results[0] == results[1]
    assert len(results[0]) == 10
