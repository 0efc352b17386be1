"""The ANN tier: faiss IVF-SQ8 candidates re-scored exactly, with fallbacks, kept in step with every write."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from elastic_memory import AsyncMemory, EmbeddingMismatchError, Memory, UsageError
from elastic_memory.storage.sqlite.driver import driver
from elastic_memory.storage.vectors import ann as ann_index
from elastic_memory.storage.vectors.ann import AnnIndex, nlist_for

F32 = npt.NDArray[np.float32]

needs_faiss = pytest.mark.skipif(not ann_index.available(), reason="faiss (the 'ann' extra) is not installed")


def _unit(matrix: npt.ArrayLike) -> F32:
    array = np.asarray(matrix, dtype=np.float64)
    out: F32 = (array / np.linalg.norm(array, axis=-1, keepdims=True)).astype(np.float32)
    return out


def _mixture(n: int, d: int, *, clusters: int = 50, noise: float = 0.1, seed: int = 7) -> tuple[F32, F32]:
    """``n`` unit vectors from a mixture of ``clusters`` Gaussians, and the cluster centres."""
    rng = np.random.default_rng(seed)
    centres = _unit(rng.standard_normal((clusters, d)))
    points = _unit(centres[rng.integers(0, clusters, n)] + noise * rng.standard_normal((n, d)))
    return points, centres


def _queries(centres: F32, count: int, *, noise: float = 0.1, seed: int = 8) -> F32:
    """``count`` query vectors drawn from the same mixture."""
    rng = np.random.default_rng(seed)
    d = centres.shape[1]
    return _unit(centres[rng.integers(0, len(centres), count)] + noise * rng.standard_normal((count, d)))


def _item(i: int) -> dict[str, Any]:
    """Memory ``m{i}``: session ``s{i % 200}`` (0.5% of rows each), type alternating (50% each)."""
    return {
        "content": f"memory number {i}",
        "id": f"m{i}",
        "session_id": f"s{i % 200}",
        "type": "episodic" if i % 2 else "semantic",
    }


def _fill(mem: Memory, matrix: F32, items: Sequence[dict[str, Any]] | None = None) -> None:
    rows = list(items) if items is not None else [_item(i) for i in range(len(matrix))]
    mem.remember_many(rows, vectors=list(matrix))


def _exact(matrix: F32, query: F32, k: int, subset: npt.NDArray[np.intp] | None = None) -> list[str]:
    """The exact top-``k`` ids by cosine (among ``subset`` when given)."""
    rows = np.arange(len(matrix)) if subset is None else subset
    scores = matrix[rows] @ query
    return [f"m{rows[i]}" for i in np.argsort(-scores, kind="stable")[:k]]


def _ids(mem: Memory, query: F32, k: int = 10, filters: dict[str, Any] | None = None) -> list[str]:
    return [h.id for h in mem.recall(vector=query, k=k, mode="semantic", filters=filters, touch=False)]


def _details(mem: Memory, query: F32, k: int = 10, filters: dict[str, Any] | None = None) -> dict[str, Any]:
    return mem.explain(vector=query, k=k, mode="semantic", filters=filters).details


def _far_vector(matrix: F32, seed: int = 99) -> F32:
    """A unit vector far from every row of ``matrix`` (a fresh random direction, then its farthest sign)."""
    v = _unit(np.random.default_rng(seed).standard_normal(matrix.shape[1]))
    return v if float((matrix @ v).max()) < float((matrix @ -v).max()) else _unit(-v)


# ---------------------------------------------------------------- AnnIndex unit


@needs_faiss
def test_candidates_of_a_stored_vector_start_with_itself() -> None:
    matrix, _ = _mixture(2000, 32)
    index = AnnIndex.build(np.arange(100, 2100), matrix)
    assert len(index) == 2000
    for row in (0, 7, 1234, 1999):
        found = index.candidates(matrix[row], 10)
        assert found[0] == 100 + row
        assert len(found) == 10 and found.dtype == np.int64


@needs_faiss
def test_remove_drops_present_ids_and_counts_them() -> None:
    matrix, _ = _mixture(1000, 16)
    index = AnnIndex.build(np.arange(1000), matrix)
    assert index.remove(np.array([5, 6], dtype=np.int64)) == 2
    assert len(index) == 998
    assert 5 not in index.candidates(matrix[5], 50)
    assert index.remove(np.array([5, 10_000], dtype=np.int64)) == 0  # already gone, never there
    assert index.remove([]) == 0
    assert len(index) == 998


@needs_faiss
def test_add_after_remove_brings_an_id_back() -> None:
    matrix, _ = _mixture(1000, 16)
    index = AnnIndex.build(np.arange(1000), matrix)
    index.remove(np.array([42], dtype=np.int64))
    index.add(np.array([42], dtype=np.int64), matrix[42:43])
    assert len(index) == 1000
    assert index.candidates(matrix[42], 5)[0] == 42


@needs_faiss
def test_an_index_built_from_zero_rows_takes_adds_later() -> None:
    index = AnnIndex.build(np.empty(0, dtype=np.int64), np.empty((0, 8), dtype=np.float32))
    assert len(index) == 0 and index.nlist == 1
    assert len(index.candidates(_unit(np.ones(8)), 5)) == 0
    vectors = _unit(np.random.default_rng(0).standard_normal((20, 8)))
    index.add(np.arange(500, 520, dtype=np.int64), vectors)
    assert len(index) == 20
    assert sorted(index.candidates(vectors[3], 20).tolist()) == list(range(500, 520))


@needs_faiss
@pytest.mark.parametrize("trained_on", [0, 1], ids=["empty", "one-row"])
def test_an_index_built_from_almost_no_rows_ranks_later_adds(trained_on: int) -> None:
    """Below 1,000 rows the codes use the fixed [-1, 1] range: vectors added later keep distinct codes."""
    vectors = _unit(np.random.default_rng(0).standard_normal((60, 8)))
    index = AnnIndex.build(np.arange(trained_on), vectors[:trained_on])
    index.add(np.arange(trained_on, 60, dtype=np.int64), vectors[trained_on:])
    assert [int(index.candidates(vectors[i], 4)[0]) for i in range(60)] == list(range(60))


@needs_faiss
def test_index_properties_describe_the_ivf_layout() -> None:
    matrix, _ = _mixture(4000, 16)
    index = AnnIndex.build(np.arange(4000), matrix)
    assert index.nlist == nlist_for(4000)
    assert 1 <= index.nprobe <= index.nlist
    assert index.nbytes >= 4000 * 16  # at least one byte a dimension a vector
    assert index.candidates(matrix[0], 0).size == 0


@pytest.mark.parametrize(
    ("count", "lists"),
    [(0, 1), (1, 1), (39, 1), (79, 1), (80, 2), (500, 12), (10_000, 100), (100_000, 316), (1_000_000, 1000)],
)
def test_nlist_for_is_about_sqrt_with_enough_points_per_list(count: int, lists: int) -> None:
    assert nlist_for(count) == lists


def test_nlist_for_stays_within_its_bounds() -> None:
    for count in [*range(0, 2000, 7), 12_345, 250_000, 4_000_000]:
        lists = nlist_for(count)
        assert 1 <= lists <= max(1, count // 40)
        assert lists <= max(1, round(count**0.5))


# ------------------------------------------------------------- recall quality


@needs_faiss
def test_ann_recall_at_10_matches_exact_search_on_clustered_vectors(db_path: Path) -> None:
    """20k 64-d vectors from 50 Gaussians: mean recall@10 against numpy's exact top-10 is at least 0.99."""
    matrix, centres = _mixture(20_000, 64)
    queries = _queries(centres, 50)
    with Memory.open(db_path, embedder=None, vector_index="ann") as mem:
        _fill(mem, matrix)
        assert mem.load_index() == "ann"
        recalls = [len(set(_ids(mem, q)) & set(_exact(matrix, q, 10))) / 10 for q in queries]
        details = _details(mem, queries[0])
    assert float(np.mean(recalls)) >= 0.99
    assert details["vector_index"] == "ann"
    assert details["ann_candidates"] >= 10 and details["ann_nprobe"] >= 1
    assert "ann_fallback" not in details


@needs_faiss
def test_ann_hits_carry_exact_cosine_scores(db_path: Path) -> None:
    """Candidates are re-scored against the float32 matrix: quantisation never shows in a score."""
    matrix, centres = _mixture(3000, 32)
    query = _queries(centres, 1)[0]
    with Memory.open(db_path, embedder=None, vector_index="ann") as mem:
        _fill(mem, matrix)
        hits = mem.recall(vector=query, k=10, mode="semantic", touch=False)
        assert _details(mem, query)["vector_index"] == "ann"
    for hit in hits:
        assert hit.vector_score == pytest.approx(float(matrix[int(hit.id[1:])] @ query), abs=1e-6)
    assert [h.vector_score for h in hits] == sorted((h.vector_score for h in hits), reverse=True)


@needs_faiss
def test_a_forced_ann_store_that_grows_from_one_memory_ranks_correctly(db_path: Path) -> None:
    """The index is built when the store holds one vector; 59 more arrive and rank exactly."""
    matrix, _ = _mixture(60, 16, clusters=5)
    with Memory.open(db_path, embedder=None, vector_index="ann") as mem:
        _fill(mem, matrix[:1])
        assert mem.load_index() == "ann"
        mem.remember_many([_item(i) for i in range(1, 60)], vectors=list(matrix[1:]))
        assert _details(mem, matrix[5], k=1)["vector_index"] == "ann"
        top = [_ids(mem, matrix[i], k=1) for i in range(60)]
    assert top == [[f"m{i}"] for i in range(60)]


# ------------------------------------------------------------------- filters


@needs_faiss
def test_a_selective_filter_falls_back_to_the_exact_filtered_top_k(db_path: Path) -> None:
    """A session holding 0.5% of rows: the exact scan answers, equal to numpy on that subset."""
    n = 4000
    matrix, centres = _mixture(n, 32)
    queries = _queries(centres, 5)
    subset = np.flatnonzero(np.arange(n) % 200 == 3)
    with Memory.open(db_path, embedder=None, vector_index="ann") as mem:
        _fill(mem, matrix)
        mem.load_index()
        for q in queries:
            assert _ids(mem, q, filters={"session_id": "s3"}) == _exact(matrix, q, 10, subset)
        details = _details(mem, queries[0], filters={"session_id": "s3"})
    assert details["vector_index"] == "ram"
    assert "ann_fallback" in details and "20 of 4000" in details["ann_fallback"]


_HALF_SESSIONS = [f"s{i}" for i in range(100)]


@needs_faiss
@pytest.mark.parametrize(
    ("filters", "column", "allowed"),
    [
        ({"type": "episodic"}, "type", {"episodic"}),
        ({"session_id": _HALF_SESSIONS}, "session_id", set(_HALF_SESSIONS)),
    ],
    ids=["type", "sessions"],
)
def test_a_broad_filter_is_served_by_ann_and_every_hit_matches(
    db_path: Path, filters: dict[str, Any], column: str, allowed: set[str]
) -> None:
    """A filter matching half the rows: ANN answers, with k hits that all pass it (and near the exact ones)."""
    n = 4000
    matrix, centres = _mixture(n, 32)
    queries = _queries(centres, 10)
    with Memory.open(db_path, embedder=None, vector_index="ann") as mem:
        _fill(mem, matrix)
        mem.load_index()
        details = _details(mem, queries[0], filters=filters)
        found = [mem.recall(vector=q, k=10, mode="semantic", filters=filters, touch=False) for q in queries]
    assert details["vector_index"] == "ann" and "ann_fallback" not in details
    passing = np.array([i for i in range(n) if str(_item(i)[column]) in allowed])
    recalls = []
    for q, hits in zip(queries, found, strict=True):
        assert len(hits) == 10
        assert all(str(getattr(getattr(h, column), "value", getattr(h, column))) in allowed for h in hits)
        recalls.append(len({h.id for h in hits} & set(_exact(matrix, q, 10, passing))) / 10)
    assert float(np.mean(recalls)) >= 0.95


@needs_faiss
@pytest.mark.parametrize(
    "filters",
    [{"session_id": "rare"}, {"tags": ["rare"]}, {"metadata": {"rare": True}}, {"tags": ["rare"], "type": "semantic"}],
    ids=["session", "tags", "metadata", "tags+type"],
)
def test_a_filter_matching_three_rows_returns_all_three(db_path: Path, filters: dict[str, Any]) -> None:
    """Never fewer results than exist: k=10 with 3 matching rows gives exactly those 3, best first."""
    n = 3000
    matrix, centres = _mixture(n, 32)
    rare = [17, 1500, 2999]
    items = [
        {
            **_item(i),
            "type": "semantic",
            "session_id": "rare" if i in rare else f"s{i % 200}",
            "tags": ["rare" if i in rare else "common"],
            "metadata": {"rare": i in rare},
        }
        for i in range(n)
    ]
    query = _queries(centres, 1)[0]
    with Memory.open(db_path, embedder=None, vector_index="ann") as mem:
        _fill(mem, matrix, items)
        mem.load_index()
        got = _ids(mem, query, k=10, filters=filters)
    assert got == _exact(matrix, query, 10, np.array(rare))
    assert len(got) == 3


@needs_faiss
def test_expired_nearest_neighbours_are_skipped_and_k_hits_still_come_back(db_path: Path, clock: Any) -> None:
    """The 60 rows nearest the query expire: ANN fetches past them and returns the exact top-10 of the rest."""
    n = 3000
    matrix, centres = _mixture(n, 32)
    query = _queries(centres, 1)[0]
    nearest = set(np.argsort(-(matrix @ query))[:60].tolist())
    items = [{**_item(i), "ttl": 60} if i in nearest else _item(i) for i in range(n)]
    with Memory.open(db_path, embedder=None, vector_index="ann", clock=clock) as mem:
        _fill(mem, matrix, items)
        mem.load_index()
        clock.now += 120
        got = _ids(mem, query)
        details = _details(mem, query)
    rest = np.array(sorted(set(range(n)) - nearest))
    assert got == _exact(matrix, query, 10, rest)
    assert details["vector_index"] == "ann" and details["ann_candidates"] > 40


# ------------------------------------------------------------ keeping in step


@needs_faiss
def test_an_upserted_vector_is_found_by_its_new_direction(db_path: Path) -> None:
    matrix, _ = _mixture(3000, 32)
    new = _far_vector(matrix)
    with Memory.open(db_path, embedder=None, vector_index="ann") as mem:
        _fill(mem, matrix)
        assert mem.load_index() == "ann"
        [mid] = mem.remember_many([_item(5)], vectors=[new])
        assert mid.status == "updated"
        hits = mem.recall(vector=new, k=3, mode="semantic", touch=False)
        assert _details(mem, new)["vector_index"] == "ann"
        old_top = _ids(mem, matrix[5], k=3)
        assert mem.stats()["ann_vectors"] == 3000
    assert hits[0].id == "m5" and hits[0].vector_score == pytest.approx(1.0, abs=1e-5)
    assert "m5" not in old_top


@needs_faiss
@pytest.mark.parametrize("how", ["hard", "soft", "archive"])
def test_removed_memories_leave_the_ann_index(db_path: Path, how: str) -> None:
    """forget(hard=True), forget() and archive() take a memory out of ANN results at once."""
    matrix, _ = _mixture(3000, 32)
    with Memory.open(db_path, embedder=None, vector_index="ann") as mem:
        _fill(mem, matrix)
        mem.load_index()
        assert _ids(mem, matrix[11], k=1) == ["m11"]
        if how == "hard":
            assert mem.forget("m11", hard=True) == 1
        elif how == "soft":
            assert mem.forget("m11") == 1
        else:
            assert mem.archive("m11") == 1
        found = _ids(mem, matrix[11], k=10)
        details = _details(mem, matrix[11])
        stats = mem.stats()
    assert "m11" not in found and len(found) == 10
    assert details["vector_index"] == "ann"
    assert stats["ann_vectors"] == stats["vector_index_loaded"] == 2999


@needs_faiss
@pytest.mark.parametrize("how", ["restore", "unarchive"])
def test_restored_memories_come_back_to_the_ann_index(db_path: Path, how: str) -> None:
    matrix, _ = _mixture(3000, 32)
    with Memory.open(db_path, embedder=None, vector_index="ann") as mem:
        _fill(mem, matrix)
        mem.load_index()
        if how == "restore":
            mem.forget("m11")
            assert mem.restore("m11") == 1
        else:
            mem.archive("m11")
            assert mem.archive("m11", archived=False) == 1
        hits = mem.recall(vector=matrix[11], k=1, mode="semantic", touch=False)
        details = _details(mem, matrix[11])
        assert mem.stats()["ann_vectors"] == 3000
    assert [h.id for h in hits] == ["m11"] and hits[0].vector_score == pytest.approx(1.0, abs=1e-5)
    assert details["vector_index"] == "ann"


@needs_faiss
def test_an_update_of_an_indexed_attribute_refiles_the_memory(db_path: Path) -> None:
    """update(session_id=...) keeps the vector and moves the memory to the new session's filter."""
    matrix, _ = _mixture(3000, 32)
    wide = {"session_id": [f"s{i}" for i in range(100, 200)]}  # half the rows, not m5's session s5
    with Memory.open(db_path, embedder=None, vector_index="ann") as mem:
        _fill(mem, matrix)
        mem.load_index()
        assert "m5" not in _ids(mem, matrix[5], filters=wide)
        mem.update("m5", session_id="s150")
        assert _ids(mem, matrix[5], k=1, filters=wide) == ["m5"]
        assert _details(mem, matrix[5], filters=wide)["vector_index"] == "ann"
        assert "m5" not in _ids(mem, matrix[5], filters={"session_id": [f"s{i}" for i in range(100)]})


@needs_faiss
def test_an_update_of_the_content_without_an_embedder_drops_the_vector(db_path: Path) -> None:
    """New content, no embedder: the old vector no longer describes it, so the vector leg loses it."""
    matrix, _ = _mixture(3000, 32)
    with Memory.open(db_path, embedder=None, vector_index="ann") as mem:
        _fill(mem, matrix)
        mem.load_index()
        mem.update("m5", content="entirely different words now")
        assert "m5" not in _ids(mem, matrix[5])
        assert mem.stats()["ann_vectors"] == 2999


@needs_faiss
def test_writes_by_another_connection_reach_the_ann_index(db_path: Path) -> None:
    matrix, _ = _mixture(3000, 32)
    new = _far_vector(matrix)
    with Memory.open(db_path, embedder=None, vector_index="ann") as reader:
        _fill(reader, matrix)
        assert reader.load_index() == "ann"
        assert _ids(reader, matrix[9], k=1) == ["m9"]
        with Memory.open(db_path, embedder=None, vector_index="ann") as writer:
            writer.remember_many([{"content": "written elsewhere", "id": "elsewhere"}], vectors=[new])
            writer.forget("m9", hard=True)
        hits = reader.recall(vector=new, k=1, mode="semantic", touch=False)
        gone = _ids(reader, matrix[9], k=10)
        details = _details(reader, new)
        stats = reader.stats()
    assert [h.id for h in hits] == ["elsewhere"] and hits[0].vector_score == pytest.approx(1.0, abs=1e-5)
    assert "m9" not in gone
    assert details["vector_index"] == "ann"
    assert stats["ann_vectors"] == 3000


# ------------------------------------------------------------------ auto tier


@needs_faiss
def test_auto_tier_builds_ann_above_the_threshold(db_path: Path) -> None:
    n, d = 1000, 16
    matrix, _ = _mixture(n, d)
    with Memory.open(db_path, embedder=None, ann_threshold=200) as mem:
        _fill(mem, matrix)
        mem.forget(["m1", "m2"])
        mem.archive("m3")
        first = _details(mem, matrix[0])  # loads the RAM matrix; the ANN build starts after this answer
        assert first["vector_index"] in ("ram", "ann")
        assert mem.load_index() == "ann"
        stats = mem.stats()
        later = _details(mem, matrix[0])
        assert _ids(mem, matrix[0], k=1) == ["m0"]
    assert stats["vector_index"] == "ann"
    assert stats["ann_vectors"] == stats["vector_index_loaded"] == n - 3
    assert isinstance(stats["ann_type"], str) and stats["ann_type"].startswith("IVF")
    assert stats["vector_index_bytes"] > n * d * 4
    assert stats["vector_index_dimension"] == d
    assert stats["ann_building"] is False and stats["ann_error"] is None and stats["ann_threshold"] == 200
    assert later["vector_index"] == "ann"


@needs_faiss
def test_auto_tier_stays_ram_below_the_threshold(db_path: Path) -> None:
    matrix, _ = _mixture(150, 16)
    with Memory.open(db_path, embedder=None, ann_threshold=200) as mem:
        _fill(mem, matrix)
        assert mem.load_index() == "ram"
        details = _details(mem, matrix[0])
        stats = mem.stats()
    assert details["vector_index"] == "ram" and "ann_fallback" not in details
    assert stats["vector_index"] == "ram" and stats["ann_vectors"] == 0 and stats["ann_type"] is None


@needs_faiss
@pytest.mark.parametrize(
    ("budget", "tier"),
    [(10, "vec0"), (80_000, "ram")],  # 1000 x 16-d: the matrix needs 64 kB, matrix + ANN about 104 kB
)
def test_auto_tier_with_a_small_ram_budget_builds_no_ann(db_path: Path, budget: int, tier: str) -> None:
    matrix, _ = _mixture(1000, 16)
    with Memory.open(db_path, embedder=None, ann_threshold=100, ram_budget_bytes=budget) as mem:
        _fill(mem, matrix)
        details = _details(mem, matrix[0])
        assert mem.load_index() == tier
        stats = mem.stats()
        assert _ids(mem, matrix[0], k=1) == ["m0"]
    assert details["vector_index"] == tier
    assert stats["vector_index"] == tier
    assert stats["ann_vectors"] == 0 and stats["ann_building"] is False


@needs_faiss
def test_writes_during_a_background_build_are_replayed_into_it(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Auto tier: the build is held until a write, an upsert, a delete and an archive have committed."""
    gate = threading.Event()
    real = AnnIndex.build

    def held(seqs: Any, matrix: Any, **kwargs: Any) -> AnnIndex:
        assert gate.wait(30)
        return real(seqs, matrix, **kwargs)

    monkeypatch.setattr(AnnIndex, "build", held)
    matrix, _ = _mixture(3000, 32)
    late, moved = _far_vector(matrix, seed=1), _far_vector(matrix, seed=2)
    with Memory.open(db_path, embedder=None, ann_threshold=200) as mem:
        _fill(mem, matrix)
        assert _details(mem, matrix[0])["vector_index"] == "ram"  # starts the build
        assert mem.stats()["ann_building"] is True
        mem.remember_many([{"content": "late arrival", "id": "late"}, _item(1)], vectors=[late, moved])
        mem.forget("m0", hard=True)
        mem.archive("m2")
        gate.set()
        assert mem.load_index() == "ann"
        stats = mem.stats()
        found = {
            "late": _ids(mem, late, k=1),
            "moved": _ids(mem, moved, k=1),
            "m0": _ids(mem, matrix[0], k=10),
            "m2": _ids(mem, matrix[2], k=10),
        }
        details = _details(mem, late)
    assert stats["ann_vectors"] == stats["vector_index_loaded"] == 3000 - 2 + 1
    assert found["late"] == ["late"] and found["moved"] == ["m1"]
    assert "m0" not in found["m0"] and "m2" not in found["m2"]
    assert details["vector_index"] == "ann"


@needs_faiss
def test_closing_while_an_ann_build_runs_waits_for_it(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gate = threading.Event()
    real = AnnIndex.build
    finished: list[bool] = []

    def held(seqs: Any, matrix: Any, **kwargs: Any) -> AnnIndex:
        assert gate.wait(30)
        out = real(seqs, matrix, **kwargs)
        finished.append(True)
        return out

    monkeypatch.setattr(AnnIndex, "build", held)
    matrix, _ = _mixture(1000, 16)
    mem = Memory.open(db_path, embedder=None, ann_threshold=200)
    _fill(mem, matrix)
    mem.recall(vector=matrix[0], k=1, mode="semantic")
    assert mem.stats()["ann_building"] is True
    threading.Timer(0.2, gate.set).start()
    mem.close()
    assert finished == [True]
    with Memory.open(db_path, embedder=None, ann_threshold=200) as again:
        assert _ids(again, matrix[0], k=1) == ["m0"]


def test_auto_tier_without_faiss_stays_ram(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ann_index, "available", lambda: False)
    matrix, _ = _mixture(500, 16)
    with Memory.open(db_path, embedder=None, ann_threshold=100) as mem:
        _fill(mem, matrix)
        assert mem.load_index() == "ram"
        assert mem.stats()["ann_vectors"] == 0


# ---------------------------------------------------------------- bad vectors


def _damage(path: Path, memory_id: str, blob: bytes) -> None:
    """Overwrite one stored vector behind the library's back."""
    conn = driver().connect(str(path), timeout=5)
    try:
        (seq,) = conn.execute("SELECT seq FROM memories WHERE id = ?", (memory_id,)).fetchone()
        conn.execute("UPDATE memories_vec SET embedding = ? WHERE rowid = ?", (blob, seq))
        (stored,) = conn.execute("SELECT embedding FROM memories_vec WHERE rowid = ?", (seq,)).fetchone()
        assert bytes(stored) == blob
    finally:
        conn.close()


@pytest.mark.parametrize("tier", [pytest.param("ann", marks=needs_faiss), "ram"])
@pytest.mark.parametrize("damage", [np.nan, np.inf, 5.0], ids=["nan", "inf", "not-unit"])
def test_a_damaged_stored_vector_is_skipped_at_index_load(db_path: Path, tier: str, damage: float) -> None:
    matrix, _ = _mixture(300, 16)
    with Memory.open(db_path, embedder=None, vector_index="ram") as mem:
        _fill(mem, matrix)
    _damage(db_path, "m7", np.full(16, damage, dtype="<f4").tobytes())
    with Memory.open(db_path, embedder=None, vector_index=tier) as mem:  # type: ignore[arg-type]
        assert mem.load_index() == tier
        near_damaged = _ids(mem, matrix[7], k=20)
        others = [_ids(mem, matrix[i], k=1) for i in (0, 6, 8, 299)]
        stats = mem.stats()
    assert "m7" not in near_damaged and len(near_damaged) == 20
    assert others == [["m0"], ["m6"], ["m8"], ["m299"]]
    assert stats["vector_index_skipped"] == 1
    assert stats["vector_index_loaded"] == 299
    assert stats["ann_vectors"] == (299 if tier == "ann" else 0)


@needs_faiss
def test_a_damaged_memory_comes_back_when_given_a_new_vector(db_path: Path) -> None:
    matrix, _ = _mixture(300, 16)
    with Memory.open(db_path, embedder=None, vector_index="ram") as mem:
        _fill(mem, matrix)
    _damage(db_path, "m7", np.full(16, np.nan, dtype="<f4").tobytes())
    with Memory.open(db_path, embedder=None, vector_index="ann") as mem:
        mem.load_index()
        mem.remember_many([_item(7)], vectors=[matrix[7]])
        hits = mem.recall(vector=matrix[7], k=1, mode="semantic", touch=False)
        assert mem.stats()["ann_vectors"] == 300
    assert [h.id for h in hits] == ["m7"] and hits[0].vector_score == pytest.approx(1.0, abs=1e-5)


_GOOD = [0.0, 1.0, 0.0, 0.0]
_BAD = {
    "nan": [1.0, float("nan"), 0.0, 0.0],
    "inf": [1.0, float("inf"), 0.0, 0.0],
    "zero": [0.0, 0.0, 0.0, 0.0],
    "narrow": [1.0, 0.0, 0.0],
    "wide": [1.0, 0.0, 0.0, 0.0, 0.0],
}


@pytest.mark.parametrize(
    ("vectors", "error"),
    [
        ([_GOOD, _BAD["nan"]], UsageError),
        ([_GOOD, _BAD["inf"]], UsageError),
        ([_GOOD, _BAD["zero"]], UsageError),
        ([_GOOD, _BAD["narrow"]], UsageError),  # two widths in one batch
        ([_BAD["narrow"], _BAD["narrow"]], EmbeddingMismatchError),  # one width, not the pinned one
        ([_BAD["wide"], _BAD["wide"]], EmbeddingMismatchError),
    ],
    ids=["nan", "inf", "zero", "mixed-widths", "narrow", "wide"],
)
@pytest.mark.parametrize("tier", [pytest.param("ann", marks=needs_faiss), "ram"])
def test_a_bad_write_vector_is_refused_and_nothing_is_written(
    db_path: Path, tier: str, vectors: list[list[float]], error: type[Exception]
) -> None:
    with Memory.open(db_path, embedder=None, vector_index=tier) as mem:  # type: ignore[arg-type]
        mem.remember_many([{"content": "first", "id": "a"}], vectors=[[1.0, 0.0, 0.0, 0.0]])  # pins 4-d
        mem.load_index()
        with pytest.raises(error):
            mem.remember_many([{"content": "one", "id": "b"}, {"content": "two", "id": "c"}], vectors=vectors)
        stats = mem.stats()
        hits = _ids(mem, _unit(_GOOD), k=5)
    assert stats["total_memories"] == 1
    assert stats["vector_index_loaded"] == 1
    assert hits == ["a"]


def test_a_batch_of_mixed_widths_is_refused_on_an_unpinned_store(db_path: Path) -> None:
    with Memory.open(db_path, embedder=None) as mem:
        with pytest.raises(UsageError, match="different widths"):
            mem.remember_many(["one", "two"], vectors=[[1.0, 0.0], [1.0, 0.0, 0.0]])
        stats = mem.stats()
    assert stats["total_memories"] == 0 and stats["embedding_dimension"] is None


@pytest.mark.parametrize(
    ("vector", "error"),
    [
        (_BAD["nan"], UsageError),
        (_BAD["inf"], UsageError),
        (_BAD["zero"], UsageError),
        (_BAD["narrow"], EmbeddingMismatchError),
        (_BAD["wide"], EmbeddingMismatchError),
    ],
    ids=["nan", "inf", "zero", "narrow", "wide"],
)
@pytest.mark.parametrize("tier", [pytest.param("ann", marks=needs_faiss), "ram"])
def test_a_bad_query_vector_is_refused(db_path: Path, tier: str, vector: list[float], error: type[Exception]) -> None:
    with Memory.open(db_path, embedder=None, vector_index=tier) as mem:  # type: ignore[arg-type]
        mem.remember_many([{"content": "first", "id": "a"}], vectors=[[1.0, 0.0, 0.0, 0.0]])
        mem.load_index()
        with pytest.raises(error):
            mem.recall(vector=vector, k=5, mode="semantic")
        with pytest.raises(error):
            mem.explain(vector=vector, k=5, mode="semantic")
        stats = mem.stats()
        assert _ids(mem, _unit([1.0, 0.0, 0.0, 0.0]), k=5) == ["a"]
    assert stats["total_memories"] == 1


# ----------------------------------------------------------- options, failures


@pytest.mark.parametrize(
    "options",
    [{"vector_index": "bogus"}, {"ann_threshold": -1}, {"ann_threshold": 1.5}, {"ann_threshold": True}],
    ids=["bogus-tier", "negative-threshold", "float-threshold", "bool-threshold"],
)
def test_bad_options_are_refused(db_path: Path, options: dict[str, Any]) -> None:
    with pytest.raises(UsageError):
        Memory.open(db_path, embedder=None, **options)
    assert not db_path.exists()


def test_forced_ann_without_faiss_is_refused(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """core.py asks ``ann_index.available()`` through the module, so patching the attribute reaches it."""
    monkeypatch.setattr(ann_index, "available", lambda: False)
    with pytest.raises(UsageError, match="faiss"):
        Memory.open(db_path, embedder=None, vector_index="ann")


@needs_faiss
def test_a_failing_ann_build_leaves_exact_search_serving(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> AnnIndex:
        raise RuntimeError("no room for the codes")

    monkeypatch.setattr(AnnIndex, "build", broken)
    matrix, centres = _mixture(2000, 16)
    query = _queries(centres, 1)[0]
    with Memory.open(db_path, embedder=None, vector_index="ann") as mem:  # the failure is logged, not raised
        _fill(mem, matrix)
        details = _details(mem, query)
        got = _ids(mem, query)
        assert mem.load_index() == "ram"  # what serves: the exact matrix
        stats = mem.stats()
    assert got == _exact(matrix, query, 10)
    assert details["vector_index"] == "ram"
    assert "could not be built" in details["ann_fallback"] and "no room for the codes" in details["ann_fallback"]
    assert stats["ann_error"] == "RuntimeError: no room for the codes"
    assert stats["ann_vectors"] == 0 and stats["ann_building"] is False
    assert stats["vector_index"] == "ram"


@needs_faiss
def test_an_auto_ann_index_stays_until_the_store_falls_to_half_the_threshold(db_path: Path) -> None:
    """Hysteresis: deleting a few rows just below the threshold does not drop and rebuild the index."""
    matrix, _ = _mixture(400, 16)
    with Memory.open(db_path, embedder=None, ann_threshold=400) as mem:
        _fill(mem, matrix)
        assert mem.load_index() == "ann"
        mem.forget([f"m{i}" for i in range(150)], hard=True)  # 250 left: below 400, above 200
        assert _details(mem, matrix[300])["vector_index"] == "ann"
        assert mem.stats()["vector_index"] == "ann"  # still there after the search that checks
        mem.forget([f"m{i}" for i in range(150, 250)], hard=True)  # 150 left: below half
        _details(mem, matrix[300])  # the search that notices
        assert mem.stats()["vector_index"] == "ram"
        assert _ids(mem, matrix[300], k=1) == ["m300"]


@needs_faiss
def test_writes_by_another_process_during_a_build_start_no_second_build(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each foreign write drops the index; a build of a dropped index runs out before the next one starts."""
    gate = threading.Event()
    running: list[int] = []
    most: list[int] = [0]
    real = AnnIndex.build

    def counted(seqs: Any, matrix: Any, **kwargs: Any) -> AnnIndex:
        running.append(1)
        most[0] = max(most[0], len(running))
        try:
            assert gate.wait(30)
            return real(seqs, matrix, **kwargs)
        finally:
            running.pop()

    monkeypatch.setattr(AnnIndex, "build", counted)
    matrix, _ = _mixture(1000, 16)
    with (
        Memory.open(db_path, embedder=None, ann_threshold=200) as reader,
        Memory.open(db_path, embedder=None, ann_threshold=200) as writer,
    ):
        _fill(writer, matrix)
        for i in range(5):
            writer.remember_many([{"content": f"new {i}", "id": f"n{i}"}], vectors=[matrix[i]])
            assert _ids(reader, matrix[500], k=1) == ["m500"]  # exact, while builds are held
        gate.set()
        assert reader.load_index() == "ann"
        stats = reader.stats()
    assert most[0] == 1
    assert stats["ann_vectors"] == 1005


@needs_faiss
async def test_close_during_a_search_leaves_no_build_running(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A search in flight when the store closes starts no ANN build after the close."""
    started: list[int] = []
    real = AnnIndex.build

    def counted(seqs: Any, matrix: Any, **kwargs: Any) -> AnnIndex:
        started.append(1)
        return real(seqs, matrix, **kwargs)

    monkeypatch.setattr(AnnIndex, "build", counted)
    matrix, _ = _mixture(1000, 16)
    mem = await AsyncMemory.open(db_path, embedder=None, ann_threshold=200)
    await mem.remember_many([_item(i) for i in range(1000)], vectors=list(matrix))
    search = asyncio.ensure_future(mem.recall(vector=matrix[0], k=5, mode="semantic", touch=False))
    await asyncio.sleep(0)
    await mem.close()
    await asyncio.gather(search, return_exceptions=True)
    before = len(started)
    await asyncio.sleep(0.2)
    assert len(started) == before <= 1


def test_nested_non_string_metadata_keys_are_stored_as_json_makes_them(db_path: Path) -> None:
    """Like json.dumps: nested int keys become strings (the store's metadata fast path falls back for them)."""
    with Memory.open(db_path, embedder=None) as mem:
        mid = mem.remember("a note", metadata={"a": {1: "x", "b": "y"}})
        record = mem.get(mid)
    assert record is not None and record.metadata == {"a": {"1": "x", "b": "y"}}
