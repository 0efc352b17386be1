"""The float16 shadow of the RAM matrix: the same top-k as the float32 scan, kept in step with every change."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elastic_memory import Memory
from elastic_memory.storage.vectors import ann as ann_index
from elastic_memory.storage.vectors import half as half_scan
from elastic_memory.storage.vectors import leg as vectors
from elastic_memory.storage.vectors import ram as ram_index
from elastic_memory.storage.vectors.half import HalfScan
from elastic_memory.storage.vectors.ram import HalfJob, RamIndex, ScanReport

F32 = npt.NDArray[np.float32]

pytestmark = pytest.mark.skipif(not ann_index.available(), reason="faiss (the 'ann' extra) is not installed")


def _unit(matrix: npt.ArrayLike) -> F32:
    array = np.asarray(matrix, dtype=np.float64)
    out: F32 = (array / np.linalg.norm(array, axis=-1, keepdims=True)).astype(np.float32)
    return out


def _float32_top(index: RamIndex, query: F32, k: int, mask: npt.NDArray[np.bool_] | None = None) -> list[int]:
    """What the float32 scan alone answers (the shadow switched off for one search)."""
    half, index._half = index._half, None
    try:
        return [s for s, _ in index.search(query, k, mask=mask)]
    finally:
        index._half = half


def _with_shadow(index: RamIndex) -> RamIndex:
    """Run the shadow job the store would run in a worker thread, when one is due."""
    job = index.half_builder()
    if job is not None:
        index.attach_half(job.build(), job.token)
    return index


def _loaded(matrix: F32, *, half_from: int = 1) -> RamIndex:
    index = RamIndex(matrix.shape[1], half_from=half_from)
    index.bulk_load(
        list(range(len(matrix))), matrix.copy(), {"agent_id": ["a" if i % 3 else "b" for i in range(len(matrix))]}
    )
    return _with_shadow(index)


def _shadow_of(matrix: F32) -> HalfScan:
    half = HalfScan(matrix.shape[1], capacity=len(matrix))
    half.put(slice(0, len(matrix)), matrix)
    half.resize(len(matrix))
    return half


def test_the_margin_bounds_every_rounding_error() -> None:
    """The shadow's score of a row never differs from its float32 score by more than the margin."""
    rng = np.random.default_rng(0)
    matrix = _unit(rng.standard_normal((5000, 384)))
    half = _shadow_of(matrix)
    for seed in range(5):
        query = _unit(np.random.default_rng(seed + 1).standard_normal(384))
        positions, approx = half.top(query, len(matrix))
        exact = matrix[positions] @ query
        assert np.abs(exact - approx).max() <= half.margin(query)


def test_the_margin_is_not_loose_against_the_worst_query() -> None:
    """A query along a row's own rounding error gets most of the margin, and never more."""
    rng = np.random.default_rng(10)
    matrix = _unit(rng.standard_normal((50, 384)))
    half = _shadow_of(matrix)
    errors = []
    for row in range(len(matrix)):
        residual = matrix[row].astype(np.float64) - matrix[row].astype(np.float16).astype(np.float64)
        query = _unit(residual)
        positions, approx = half.top(query, len(matrix))
        at = int(np.flatnonzero(positions == row)[0])
        errors.append(abs(float(matrix[row] @ query) - float(approx[at])) / half.margin(query))
    assert max(errors) <= 1.0
    assert max(errors) >= 0.2  # a bound ten times too wide would widen lists for nothing


def test_clustered_queries_match_the_float32_scan() -> None:
    """Near neighbours in a tight cluster (scores 1e-4 apart) come back exactly as the float32 scan ranks them."""
    rng = np.random.default_rng(1)
    centre = _unit(rng.standard_normal(64))
    matrix = _unit(centre + 0.01 * rng.standard_normal((20_000, 64)))
    index = _loaded(matrix)
    for seed in range(20):
        query = _unit(centre + 0.01 * np.random.default_rng(100 + seed).standard_normal(64))
        report = ScanReport()
        got = [s for s, _ in index.search(query, 10, report=report)]
        assert report.scan == "float16"
        assert got == _float32_top(index, query, 10)


def test_exact_duplicates_are_resolved_by_widening() -> None:
    """With 200 identical rows the bound cannot separate them: the list widens, the answer stays exact."""
    rng = np.random.default_rng(2)
    matrix = _unit(rng.standard_normal((4000, 32)))
    matrix[:200] = matrix[0]
    index = _loaded(matrix)
    report = ScanReport()
    got = index.search(matrix[0], 10, report=report)
    assert report.scan == "float16" and report.candidates >= 200  # the range pass took them all
    assert {s for s, _ in got} <= set(range(200))
    assert [score for _, score in got] == pytest.approx([float(matrix[0] @ matrix[0])] * 10, abs=1e-6)


def test_a_broad_mask_uses_the_shadow_and_keeps_to_the_mask() -> None:
    rng = np.random.default_rng(3)
    matrix = _unit(rng.standard_normal((6000, 48)))
    index = _loaded(matrix)
    mask = index.mask({"agent_id": ("a",)})
    assert mask is not None and mask.sum() * 4 >= len(index)
    query = _unit(rng.standard_normal(48))
    report = ScanReport()
    got = [s for s, _ in index.search(query, 10, mask=mask, report=report)]
    assert report.scan == "float16"
    assert got == _float32_top(index, query, 10, mask)
    assert all(s % 3 for s in got)  # agent "a" only


def test_a_selective_mask_scans_its_rows_in_float32() -> None:
    rng = np.random.default_rng(4)
    matrix = _unit(rng.standard_normal((6000, 16)))
    index = _loaded(matrix)
    allowed = np.arange(0, 6000, 100, dtype=np.int64)
    report = ScanReport()
    got = index.search(_unit(rng.standard_normal(16)), 5, allowed=allowed, report=report)
    assert report.scan == "float32"
    assert {s for s, _ in got} <= set(allowed.tolist())


def test_each_search_reports_its_own_scan() -> None:
    """A report is filled by its call alone: a later search (another thread's, say) does not relabel it."""
    rng = np.random.default_rng(5)
    index = _loaded(_unit(rng.standard_normal((6000, 16))))
    broad, selective = ScanReport(), ScanReport()
    index.search(_unit(rng.standard_normal(16)), 5, report=broad)
    index.search(_unit(rng.standard_normal(16)), 5, allowed=np.arange(0, 6000, 100, dtype=np.int64), report=selective)
    assert (broad.scan, selective.scan) == ("float16", "float32")
    assert broad.candidates >= 5 and selective.candidates == 0


def test_a_large_k_falls_back_to_the_float32_scan() -> None:
    """Past a quarter of the rows as candidates the float32 scan is the cheaper way."""
    rng = np.random.default_rng(5)
    matrix = _unit(rng.standard_normal((2000, 16)))
    index = _loaded(matrix)
    query = _unit(rng.standard_normal(16))
    report = ScanReport()
    got = index.search(query, 600, report=report)
    assert report.scan == "float32" and len(got) == 600


def test_no_shadow_below_half_from() -> None:
    rng = np.random.default_rng(6)
    index = _loaded(_unit(rng.standard_normal((100, 8))), half_from=101)
    assert not index.half and index.half_builder() is None
    before = index.nbytes
    index.upsert(1000, _unit(rng.standard_normal(8)), {})
    assert _with_shadow(index).half  # the 101st row makes a job due
    assert index.nbytes - before >= len(index) * 8 * 2  # two bytes a dimension a row (and spare capacity)


ops = st.lists(
    st.tuples(st.sampled_from(["upsert"] * 4 + ["many", "remove"]), st.integers(0, 5000), st.integers(0, 2**31)),
    min_size=450,
    max_size=600,
)


@settings(max_examples=30, deadline=None)
@given(ops, st.integers(0, 2**31), st.integers(1, 20))
def test_writes_keep_the_shadow_in_step(seq_ops: list[tuple[str, int, int]], qseed: int, k: int) -> None:
    """Upserts (one, or a batch of new and stored rows), replacements, swap-removals and growth: as the float32 scan."""
    index = RamIndex(12, capacity=4, half_from=16)
    rows_then = 0
    for i, (op, seq, seed) in enumerate(seq_ops):
        if i == 100:
            rows_then = len(_with_shadow(index))  # from here on every write goes to the shadow too
        if op == "upsert":  # seq in the seed: two seqs rarely share a vector (ties)
            index.upsert(seq, _unit(np.random.default_rng([seed, seq]).standard_normal(12)), {"agent_id": "a"})
        elif op == "many":
            seqs = [seq, seq + 1, seq + 2, seq]  # a seq twice: the last row wins
            rows = _unit(np.random.default_rng([seed, seq]).standard_normal((len(seqs), 12)))
            index.upsert_many(seqs, rows, [{"agent_id": "a"}] * len(seqs))
        else:
            index.remove(seq)
    query = _unit(np.random.default_rng(qseed).standard_normal(12))
    report = ScanReport()
    got = index.search(query, k, report=report)
    if index.half and len(index) >= 16 * 16:  # candidates within a quarter of the rows: the shadow answers
        assert report.scan == "float16"
    half, index._half = index._half, None
    expected = index.search(query, k)
    index._half = half
    # Rows written from one seed tie: compare the scores, and that each seq really has its score.
    assert [score for _, score in got] == pytest.approx([score for _, score in expected], abs=1e-6)
    for seq, score in got:
        vector = index.vector(seq)
        assert vector is not None and float(vector @ query) == pytest.approx(score, abs=1e-6)
    n = len(index)
    assert index.half == (rows_then >= 16)
    if index._half is not None:  # row for row, the float16 rounding of the matrix, and no more rows
        assert len(index._half) == n
        assert np.array_equal(index._half._rows[:n], index._mat[:n].astype(np.float16))


def _store(path: Path, n: int, dim: int = 16, **kwargs: Any) -> tuple[Memory, F32]:
    matrix = _unit(np.random.default_rng(7).standard_normal((n, dim)))
    mem = Memory.open(path, embedder=None, **kwargs)
    mem.remember_many([{"content": f"memory {i}", "id": f"m{i}"} for i in range(n)], vectors=list(matrix))
    return mem, matrix


def test_explain_says_the_float16_scan_served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vectors, "HALF_FROM", 100)
    mem, matrix = _store(tmp_path / "m.db", 1000, vector_index="ram")
    try:
        mem.load_index()  # waits for the shadow's job
        query = matrix[5]
        details = mem.explain(vector=query, k=5, mode="semantic").details
        assert details["vector_index"] == "ram"
        assert details["ram_scan"] == "float16" and details["ram_candidates"] >= 5
        assert mem.recall(vector=query, k=5, mode="semantic", touch=False)[0].id == "m5"
        stats = mem.stats()
        assert stats["vector_index_half"] is True
        assert stats["vector_index_bytes"] >= 1000 * 16 * 6
    finally:
        mem.close()


def test_auto_skips_the_shadow_when_the_budget_fits_only_the_matrix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shadow costs half the matrix again; "auto" keeps the exact matrix alone when that is all that fits."""
    monkeypatch.setattr(vectors, "HALF_FROM", 100)
    matrix_bytes = 1000 * 16 * 4
    mem, matrix = _store(tmp_path / "m.db", 1000, ram_budget_bytes=matrix_bytes + 100)
    try:
        mem.load_index()
        details = mem.explain(vector=matrix[0], k=5, mode="semantic").details
        assert details["vector_index"] == "ram" and details["ram_scan"] == "float32"
        assert mem.stats()["vector_index_half"] is False
    finally:
        mem.close()


def test_a_write_after_load_is_found_by_the_shadow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vectors, "HALF_FROM", 100)
    mem, matrix = _store(tmp_path / "m.db", 500, vector_index="ram")
    try:
        mem.load_index()
        new = _unit(np.random.default_rng(11).standard_normal(16))
        mem.remember_many([{"content": "a new memory", "id": "new"}], vectors=[new])
        mem.forget("m3")
        assert mem.explain(vector=new, k=3, mode="semantic").details["ram_scan"] == "float16"
        hits = mem.recall(vector=new, k=3, mode="semantic", touch=False)
        assert hits[0].id == "new"
        assert "m3" not in [h.id for h in mem.recall(vector=matrix[3], k=3, mode="semantic", touch=False)]
    finally:
        mem.close()


def test_a_deferred_shadow_takes_the_writes_made_while_it_was_built() -> None:
    """A large load leaves the shadow to a worker thread; writes after the job copied the rows are re-applied."""
    rng = np.random.default_rng(12)
    matrix = _unit(rng.standard_normal((3000, 16)))
    index = RamIndex(16, half_from=1)
    index.bulk_load(list(range(3000)), matrix.copy(), {})
    assert not index.half
    job = index.half_builder()
    assert job is not None and index.half_builder() is None  # one job at a time
    half = job.build()  # the worker thread copies the rows as they are now
    index.upsert(5, _unit(rng.standard_normal(16)), {})  # in place, in the matrix the job read
    index.remove(7)  # the last row moves into position 7
    for seq in range(3000, 4000):  # grows the matrix past its capacity
        index.upsert(seq, _unit(rng.standard_normal(16)), {})
    index.upsert_many(list(range(4000, 6000)), _unit(rng.standard_normal((2000, 16))), [{}] * 2000)  # a batch
    report = ScanReport()
    assert index.search(matrix[0], 5, report=report) and report.scan == "float32"  # the float32 scan serves meanwhile
    index.attach_half(half, job.token)
    n = len(index)
    assert index._half is not None and len(index._half) == n == 5999
    assert np.array_equal(index._half._rows[:n], index._mat[:n].astype(np.float16))
    query = _unit(rng.standard_normal(16))
    got = [s for s, _ in index.search(query, 10, report=report)]
    assert report.scan == "float16"
    assert got == _float32_top(index, query, 10)


@pytest.mark.parametrize("overtaken_by", ["drop_half", "bulk_load"])
def test_a_job_overtaken_meanwhile_is_thrown_away(overtaken_by: str) -> None:
    rng = np.random.default_rng(13)
    matrix = _unit(rng.standard_normal((500, 8)))
    index = RamIndex(8, half_from=1)
    index.bulk_load(list(range(500)), matrix.copy(), {})
    job = index.half_builder()
    assert job is not None
    if overtaken_by == "drop_half":
        index.drop_half()
    else:  # a reload with other rows: the job's copy is of rows no longer there
        index.bulk_load(list(range(100, 400)), _unit(rng.standard_normal((300, 8))), {})
    index.attach_half(job.build(), job.token)
    assert not index.half


def test_a_failed_shadow_build_leaves_the_float32_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vectors, "HALF_FROM", 100)
    monkeypatch.setattr(vectors, "_THREAD_CELLS", 1000)  # this store's matrix counts as large: built in a thread

    def broken(self: RamIndex) -> Any:
        def build() -> HalfScan:
            raise MemoryError("no room for the copy")

        self._half_job, self._half_dirty = True, set()
        return HalfJob(self._half_token, build)

    monkeypatch.setattr(RamIndex, "half_builder", broken)
    mem, matrix = _store(tmp_path / "m.db", 500, vector_index="ram")
    try:
        mem.close()
        mem = Memory.open(tmp_path / "m.db", embedder=None, vector_index="ram")
        assert mem.load_index() == "ram"
        details = mem.explain(vector=matrix[2], k=3, mode="semantic").details
        assert details["ram_scan"] == "float32"
        assert mem.recall(vector=matrix[2], k=1, mode="semantic", touch=False)[0].id == "m2"
        assert mem.stats()["vector_index_half"] is False
    finally:
        mem.close()


def test_a_large_load_builds_its_shadow_in_the_background(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """load_index() waits for the shadow, as it waits for an ANN build."""
    monkeypatch.setattr(vectors, "HALF_FROM", 100)
    monkeypatch.setattr(vectors, "_THREAD_CELLS", 1000)
    attached: list[int] = []
    attach = RamIndex.attach_half

    def recording(self: RamIndex, half: HalfScan, token: int) -> None:
        attached.append(len(self))
        attach(self, half, token)

    monkeypatch.setattr(RamIndex, "attach_half", recording)
    mem, matrix = _store(tmp_path / "m.db", 800, vector_index="ram")
    mem.close()
    with Memory.open(tmp_path / "m.db", embedder=None, vector_index="ram") as mem:
        assert mem.load_index() == "ram"
        assert attached == [800]  # built by the worker-thread job, not in the load itself
        assert mem.stats()["vector_index_half"] is True
        assert mem.explain(vector=matrix[9], k=3, mode="semantic").details["ram_scan"] == "float16"


def test_a_forced_ram_tier_keeps_to_the_budget_for_the_shadow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Forcing "ram" loads the matrix whatever the budget; the shadow, an extra, still needs room."""
    monkeypatch.setattr(vectors, "HALF_FROM", 100)
    mem, matrix = _store(tmp_path / "m.db", 1000, vector_index="ram", ram_budget_bytes=1000)
    try:
        assert mem.explain(vector=matrix[1], k=3, mode="semantic").details["ram_scan"] == "float32"
        assert mem.stats()["vector_index_half"] is False
    finally:
        mem.close()


def test_an_ann_index_takes_the_shadows_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store growing past the ANN threshold gets its ANN index and gives the shadow's RAM back."""
    monkeypatch.setattr(vectors, "HALF_FROM", 100)
    mem, _ = _store(tmp_path / "m.db", 1000, ann_threshold=1500)
    try:
        mem.load_index()
        assert mem.stats()["vector_index_half"] is True
        more = _unit(np.random.default_rng(8).standard_normal((1000, 16)))
        mem.remember_many([{"content": f"more {i}", "id": f"x{i}"} for i in range(1000)], vectors=list(more))
        mem.recall(vector=more[0], k=3, mode="semantic", touch=False)  # starts the ANN build
        assert mem.load_index() == "ann"
        assert mem.stats()["vector_index_half"] is False
    finally:
        mem.close()


def test_a_faiss_that_does_not_import_leaves_the_float32_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken() -> Any:
        raise ImportError("libgomp.so.1: cannot open shared object file")

    monkeypatch.setattr(vectors, "HALF_FROM", 100)
    monkeypatch.setattr(half_scan, "faiss_module", broken)
    mem, matrix = _store(tmp_path / "m.db", 500, vector_index="ram")
    with mem:
        assert mem.load_index() == "ram"
        assert mem.recall(vector=matrix[4], k=1, mode="semantic", touch=False)[0].id == "m4"
        assert mem.explain(vector=matrix[4], k=1, mode="semantic").details["ram_scan"] == "float32"
    assert "libgomp" in caplog.text  # the job's failure, said once in a warning


def test_a_shadow_that_cannot_be_made_never_fails_the_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The write that takes a loaded index past HALF_FROM commits, and recall scans in float32."""
    monkeypatch.setattr(vectors, "HALF_FROM", 100)
    mem, _ = _store(tmp_path / "m.db", 50, vector_index="ram")
    with mem:
        mem.load_index()

        class NoRoom:
            def __init__(self, *args: object, **kwargs: object) -> None:
                raise MemoryError("no room for the copy")

        monkeypatch.setattr(ram_index, "HalfScan", NoRoom)
        more = _unit(np.random.default_rng(9).standard_normal((100, 16)))
        ids = mem.remember_many([{"content": f"more {i}", "id": f"x{i}"} for i in range(100)], vectors=list(more))
        assert len(ids) == 100 and mem.stats()["active_memories"] == 150
        mem.load_index()  # the job the write started has failed by now
        assert mem.recall(vector=more[3], k=1, mode="semantic", touch=False)[0].id == "x3"
        assert mem.explain(vector=more[3], k=1, mode="semantic").details["ram_scan"] == "float32"
        assert "could not be built" in caplog.text


def test_no_shadow_where_an_ann_index_will_serve(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vectors, "HALF_FROM", 100)
    mem, _ = _store(tmp_path / "m.db", 600, vector_index="ann")
    with mem:
        assert mem.load_index() == "ann"
        assert mem.stats()["vector_index_half"] is False


def _assert_the_shadow_serves(mem: Memory, matrix: F32, row: int) -> None:
    """The exact tier (after its shadow's job, which ``load_index`` waits for) scans float16 and finds ``row``."""
    assert mem.load_index() == "ram"
    assert mem.stats()["vector_index_half"] is True
    assert mem.explain(vector=matrix[row], k=3, mode="semantic").details["ram_scan"] == "float16"
    assert mem.recall(vector=matrix[row], k=1, mode="semantic", touch=False)[0].id == f"m{row}"


def test_the_shadow_comes_back_when_ann_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ANN took the shadow's place; when ANN is refused, broad scans read float16 again."""
    monkeypatch.setattr(vectors, "HALF_FROM", 100)
    mem, matrix = _store(tmp_path / "m.db", 1000, ann_threshold=500)
    with mem:
        assert mem.load_index() == "ann" and mem.stats()["vector_index_half"] is False
        mem._ops.store.allow_ram_index(True, ann=False)  # a host (or a governor policy) refusing ANN
        mem.recall(vector=matrix[2], k=3, mode="semantic", touch=False)  # starts the shadow's job
        _assert_the_shadow_serves(mem, matrix, 2)


def test_the_shadow_comes_back_when_the_store_shrinks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Below half the ANN threshold the ANN index goes; the exact matrix gets its shadow back."""
    monkeypatch.setattr(vectors, "HALF_FROM", 100)
    mem, matrix = _store(tmp_path / "m.db", 2000, ann_threshold=2000)
    with mem:
        assert mem.load_index() == "ann"
        mem.forget([f"m{i}" for i in range(1500)], hard=True)  # 500 left: below 1000
        mem.recall(vector=matrix[1900], k=3, mode="semantic", touch=False)  # drops the ANN index
        _assert_the_shadow_serves(mem, matrix, 1900)


def test_no_shadow_is_built_while_an_ann_index_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ANN wanted again after the shadow came back: the RAM goes to the index, not to both at once."""
    import threading
    import time

    monkeypatch.setattr(vectors, "HALF_FROM", 100)
    mem, matrix = _store(tmp_path / "m.db", 1000, ann_threshold=500)
    with mem:
        assert mem.load_index() == "ann"
        store = mem._ops.store
        store.allow_ram_index(True, ann=False)  # the shadow may come back
        release = threading.Event()
        build = ann_index.AnnIndex.build

        def slow(*args: Any, **kwargs: Any) -> Any:
            release.wait(30)
            return build(*args, **kwargs)

        monkeypatch.setattr(ann_index.AnnIndex, "build", slow)
        store.allow_ram_index(True, ann=True)
        try:
            mem.recall(vector=matrix[2], k=3, mode="semantic", touch=False)  # starts the ANN build
            legs = store._vectors
            assert legs._build is not None
            time.sleep(0.5)  # ample for a shadow of 1000 x 16 to be made, had its job started
            assert legs._half_build is None and legs.ram is not None and not legs.ram.half
        finally:
            release.set()
        assert mem.load_index() == "ann"
        assert mem.stats()["vector_index_half"] is False


def test_the_shadow_serves_when_the_ann_build_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No shadow is made where ANN is expected; a failed ANN build must not leave the float32 scan alone."""

    def broken(*args: object, **kwargs: object) -> Any:
        raise RuntimeError("no room for the codes")

    monkeypatch.setattr(vectors, "HALF_FROM", 100)
    monkeypatch.setattr(ann_index.AnnIndex, "build", broken)
    mem, matrix = _store(tmp_path / "m.db", 1000, ann_threshold=500)
    with mem:
        mem.load_index()  # the ANN build starts and fails; the second look below starts the shadow's job
        _assert_the_shadow_serves(mem, matrix, 2)


def test_one_query_thread_is_restored_afterwards() -> None:
    """OpenMP's thread count belongs to the calling thread: a query must give it back for later builds."""
    faiss = ann_index.faiss_module()
    before = faiss.omp_get_max_threads()
    with ann_index.one_omp_thread():
        assert faiss.omp_get_max_threads() == 1
    assert faiss.omp_get_max_threads() == before
