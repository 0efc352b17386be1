"""Long CLI jobs (ingest, import) commit batch by batch: Ctrl-C stops within a batch and keeps what is done."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest

from elastic_memory import EmbedderError, Memory
from elastic_memory.connectors import MarkdownFolder
from elastic_memory.connectors.ingest import BATCH, ingest_folder
from elastic_memory.testing import FakeEmbedder

#: Notes in the interrupted vault: enough that the ingest is still running when the first batches are in.
NOTES = 8000


def _vault(root: Path, notes: int) -> Path:
    vault = root / "vault"
    vault.mkdir()
    for n in range(notes):
        (vault / f"n{n}.md").write_text(f"# Note {n}\nSome text about topic {n % 97}.\n", encoding="utf-8")
    return vault


def _count(db: Path) -> int:
    """The stored rows, or 0; never waits on the writer's locks, never creates the file."""
    if not db.exists():
        return 0
    try:
        with closing(sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True, timeout=0.05)) as conn:
            return int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])
    except sqlite3.Error:
        return 0


def test_a_failing_embedder_mid_ingest_keeps_the_finished_batches(tmp_path: Path) -> None:
    """Each batch of notes is one transaction: a failure in the third leaves the first two stored."""

    class Failing(FakeEmbedder):
        batches = 0

        def embed(self, texts: list[str]) -> np.ndarray:  # type: ignore[override]
            if len(texts) == BATCH:  # an ingest batch (the store's own probe embeds one text)
                self.batches += 1
                if self.batches == 3:
                    msg = "model crashed"
                    raise RuntimeError(msg)
            return super().embed(texts)

    vault = _vault(tmp_path, 5 * BATCH)
    with Memory.open(tmp_path / "m.db", embedder=Failing()) as mem:
        with pytest.raises(EmbedderError, match="model crashed"):
            ingest_folder(mem, MarkdownFolder(vault))
        assert mem.stats()["total_memories"] == 2 * BATCH


def test_ctrl_c_exits_130_soon_and_a_rerun_finishes(tmp_path: Path) -> None:
    """SIGINT during `elastic-memory ingest`: exit 130 within seconds, the stored notes kept; a re-run adds the rest.

    If the exit takes long, check that a batch is small (``BATCH``) and that the command
    does not catch KeyboardInterrupt before ``cli_common.interruptible``.
    """
    vault, db = _vault(tmp_path, NOTES), tmp_path / "m.db"
    command = [sys.executable, "-m", "elastic_memory.cli", "ingest", str(vault), "--db", str(db), "--embedder", "none"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    job = subprocess.Popen(  # SIGINT as a terminal sends it (the test runner may ignore it, and children inherit that)
        command,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509 - one call, no threads
    )
    deadline = time.monotonic() + 120
    while _count(db) < 2 * BATCH and job.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert job.poll() is None, "the ingest ended before it could be interrupted: make NOTES larger"
    job.send_signal(signal.SIGINT)
    start = time.monotonic()
    _, err = job.communicate(timeout=60)
    waited = time.monotonic() - start
    stored = _count(db)
    assert job.returncode == 130, err
    assert "Interrupted: at least" in err and waited < 10
    assert 0 < stored < NOTES
    rerun = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, check=True)
    assert f"{NOTES - stored} new" in rerun.stdout and f"{stored} unchanged" in rerun.stdout
    assert _count(db) == NOTES
