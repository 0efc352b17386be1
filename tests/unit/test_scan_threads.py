"""Vector scans use one BLAS thread while they run, and give the process's setting back after.

threadpoolctl lets one Python thread set OpenBLAS's (process-wide) thread count: the first
that limits it. The library's scans run on its event loop's thread, so the checks run there.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from elastic_memory import Memory, _runner
from elastic_memory.storage.blas import one_thread
from elastic_memory.testing import FakeEmbedder

T = TypeVar("T")


def _blas_threads() -> set[int]:
    return {int(i["num_threads"]) for i in threadpool_info() if i["user_api"] == "blas"}


def _on_library_loop(check: Callable[[], T]) -> T:
    async def run() -> T:
        return check()

    return _runner.run(run(), "a scan-thread check")


def test_blas_runs_on_one_thread_inside_the_block_and_as_before_after_it() -> None:
    np.ones((2, 2), dtype=np.float32) @ np.ones(2, dtype=np.float32)  # BLAS loaded
    before = _blas_threads()

    def inside() -> set[int]:
        with one_thread():
            return _blas_threads()

    assert _on_library_loop(inside) <= {1}
    assert _blas_threads() == before


def test_nested_blocks_restore_only_when_the_outer_one_ends() -> None:
    before = _blas_threads()

    def between() -> set[int]:
        with one_thread():
            with one_thread():
                pass
            return _blas_threads()

    assert _on_library_loop(between) <= {1}
    assert _blas_threads() == before


def test_a_semantic_recall_leaves_the_blas_setting_as_it_was(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "m.db", embedder=FakeEmbedder(), vector_index="ram") as mem:
        mem.remember_many([f"note number {i}" for i in range(50)])
        before = _blas_threads()
        assert mem.recall("note number 7", mode="semantic", k=3)
    assert _blas_threads() == before


def test_without_threadpoolctl_scans_run_as_they_are(monkeypatch: pytest.MonkeyPatch) -> None:
    from elastic_memory.storage import blas

    monkeypatch.setattr(blas, "_controller", None)
    monkeypatch.setitem(sys.modules, "threadpoolctl", None)  # the import fails
    with one_thread():
        product = np.ones((3, 2), dtype=np.float32) @ np.ones(2, dtype=np.float32)
    assert product.tolist() == [2.0, 2.0, 2.0]
    assert blas._controller is False
