"""A failed write leaves nothing half-written; a crash mid-write never corrupts the file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from elastic_memory import EmbedderError, Memory, StorageError
from elastic_memory.storage.sqlite import writes as sqlite_writes
from elastic_memory.storage.sqlite.driver import driver
from elastic_memory.testing import FakeEmbedder


class FailsOnSecondCall(FakeEmbedder):
    def embed(self, texts):  # type: ignore[no-untyped-def]
        if self.calls >= 2:  # 1: gateway health check, 2: first write
            raise RuntimeError("embedder died")
        return super().embed(texts)


def test_embedder_failure_writes_nothing(db_path: Path) -> None:
    with Memory.open(db_path, embedder=FailsOnSecondCall()) as mem:
        mem.remember("written before the failure")
        with pytest.raises(EmbedderError, match="embedder died"):
            mem.remember_many(["a", "b", "c"])
        assert mem.stats()["total_memories"] == 1


def test_storage_failure_mid_batch_rolls_back_the_batch(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Memory.open(db_path, embedder=FakeEmbedder()) as mem:
        mem.remember("kept")
        original = sqlite_writes.write_vectors

        async def failing(*args, **kwargs):  # type: ignore[no-untyped-def]
            raise driver().module.OperationalError("disk I/O error")  # rows are written, vectors fail

        monkeypatch.setattr(sqlite_writes, "write_vectors", failing)
        with pytest.raises(StorageError, match="nothing was written"):
            mem.remember_many(["one", "two", "three", "four"])
        monkeypatch.setattr(sqlite_writes, "write_vectors", original)
        assert mem.stats()["total_memories"] == 1
        assert [h.content for h in mem.recall("one two three", mode="keyword")] == []
        assert mem.remember("one").status == "created"


WRITER = textwrap.dedent(
    """
    import sys
    from elastic_memory import Memory
    from elastic_memory.testing import FakeEmbedder
    with Memory.open(sys.argv[1], embedder=FakeEmbedder()) as mem:
        i = 0
        print("ready", flush=True)
        while True:
            mem.remember_many([f"crash test batch {i} item {j} " * 5 for j in range(50)])
            i += 1
    """
)


@pytest.mark.slow
def test_killed_writer_leaves_a_consistent_database(db_path: Path) -> None:
    """SIGKILL a process in the middle of batch writes: the file opens, passes
    integrity_check, and holds only whole batches."""
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(db_path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    time.sleep(1.5)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    conn = driver().connect(str(db_path), timeout=5)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('integrity-check')") is not None
        total = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
        vectors = conn.execute("SELECT count(*) FROM memories_vec").fetchone()[0]
    finally:
        conn.close()
    assert total > 0 and total % 50 == 0
    assert vectors == total
    with Memory.open(db_path, embedder=FakeEmbedder()) as mem:
        assert len(mem.recall("crash test batch", k=5, mode="hybrid")) == 5
