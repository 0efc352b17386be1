"""Vector scans use one BLAS thread while they run, and give the process's setting back after.

threadpoolctl lets one Python thread set OpenBLAS's (process-wide) thread count: the first
that limits it. The library's scans run on its event loop's thread, so the checks run there.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from elastic_memory import Memory
from elastic_memory.storage.vectors.blas import one_thread
from elastic_memory.testing import FakeEmbedder


def _blas_threads() -> set[int]:
    return {int(i["num_threads"]) for i in threadpool_info() if i["user_api"] == "blas"}


_CHECK = """
import json
import numpy as np
from threadpoolctl import threadpool_info
from elastic_memory import _runner
from elastic_memory.storage.vectors.blas import one_thread

def threads():
    return sorted({int(i["num_threads"]) for i in threadpool_info() if i["user_api"] == "blas"})

async def check():
    before = threads()
    with one_thread():
        with one_thread():
            inner = threads()
        outer = threads()
    return {"before": before, "inner": inner, "outer": outer, "after": threads()}

np.ones((2, 2), dtype=np.float32) @ np.ones(2, dtype=np.float32)
print(json.dumps(_runner.run(check(), "a scan-thread check")))
"""


def _checked_in_a_fresh_process() -> dict[str, list[int]]:
    """The check on the library's loop thread of a new process (the first thread to set the limit)."""
    done = subprocess.run([sys.executable, "-c", _CHECK], capture_output=True, text=True, timeout=60, check=True)
    result: dict[str, list[int]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_blas_runs_on_one_thread_inside_the_block_and_as_before_after_it() -> None:
    seen = _checked_in_a_fresh_process()
    assert set(seen["inner"]) <= {1}
    assert seen["after"] == seen["before"]


def test_nested_blocks_restore_only_when_the_outer_one_ends() -> None:
    seen = _checked_in_a_fresh_process()
    assert set(seen["outer"]) <= {1}
    assert seen["after"] == seen["before"]


def test_a_semantic_recall_leaves_the_blas_setting_as_it_was(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "m.db", embedder=FakeEmbedder(), vector_index="ram") as mem:
        mem.remember_many([f"note number {i}" for i in range(50)])
        before = _blas_threads()
        assert mem.recall("note number 7", mode="semantic", k=3)
    assert _blas_threads() == before


def test_without_threadpoolctl_scans_run_as_they_are(monkeypatch: pytest.MonkeyPatch) -> None:
    from elastic_memory.storage.vectors import blas

    monkeypatch.setattr(blas, "_controller", None)
    monkeypatch.setitem(sys.modules, "threadpoolctl", None)  # the import fails
    with one_thread():
        product = np.ones((3, 2), dtype=np.float32) @ np.ones(2, dtype=np.float32)
    assert product.tolist() == [2.0, 2.0, 2.0]
    assert blas._controller is False
