"""Faults of the file and its neighbours: read-only media, a held write lock, damage, a racing pin.

Read-only files are tested in a subprocess that cannot write them: in a user namespace as
uid 1000 when the tests run as root (root ignores permission bits), else as the current user. A read-only
filesystem is tested in a private mount namespace (``unshare``), skipped where that is
not allowed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from typer.testing import CliRunner

from elastic_memory import CorruptDatabaseError, LoopConfig, Memory, UsageError, repair
from elastic_memory.cli import app
from elastic_memory.testing import FakeEmbedder

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions and processes")

#: What the reader subprocess does; prints one JSON object.
_READER = textwrap.dedent(
    """
    import json, logging, sys
    from elastic_memory import Memory
    from elastic_memory.testing import FakeEmbedder

    warnings = []
    class Keep(logging.Handler):
        def emit(self, record):
            warnings.append(record.getMessage())
    logging.getLogger("elastic_memory").addHandler(Keep())
    out = {}
    try:
        with Memory.open(sys.argv[1], embedder=FakeEmbedder(), timeout=float(sys.argv[2])) as mem:
            out["hits"] = [h.content for h in mem.recall("apples", k=3, mode="keyword")]
            out["again"] = len(mem.recall("apples", k=3, mode="keyword"))
            out["read_only"] = mem.stats()["read_only"]
            try:
                mem.remember("a new memory")
                out["remember"] = "ok"
            except Exception as e:
                out["remember"] = f"{type(e).__name__}: {e}"
    except Exception as e:
        out["error"] = f"{type(e).__name__}: {e}"
    out["warnings"] = warnings
    print(json.dumps(out))
    """
)


def _as_other_user() -> list[str]:
    """A command prefix that drops root: a user namespace where this process is uid 1000.

    Files owned by root then have owner 1000 there, so their permission bits apply and no
    capability overrides them. Not root: no prefix (the bits already apply).
    """
    if os.geteuid() != 0:
        return []
    unshare = shutil.which("unshare")
    prefix = [unshare or "unshare", "--user", "--map-user=1000", "--map-group=1000"]
    if unshare is None or subprocess.run([*prefix, "true"], check=False).returncode != 0:
        pytest.skip("running as root without user namespaces: permission bits cannot be tested")
    return prefix


def _read_as_other(db: Path, *, timeout: float = 5.0) -> dict[str, Any]:
    """Run :data:`_READER` on ``db`` as a user the permission bits apply to."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [*_as_other_user(), sys.executable, "-c", _READER, str(db), str(timeout)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A fresh folder every user can reach (pytest's tmp_path is private to its user)."""
    folder = Path(tempfile.mkdtemp(prefix="em-hostile-"))
    folder.chmod(0o755)
    yield folder
    for p in [folder, *folder.iterdir()]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    shutil.rmtree(folder)


def _apples(db: Path) -> None:
    with Memory.open(db, embedder=FakeEmbedder()) as mem:
        mem.remember_many([f"fact number {i} about apples" for i in range(5)])


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ------------------------------------------------------------------ read-only (5)
def test_recall_on_a_read_only_file_returns_its_hits(shared_dir: Path) -> None:
    db = shared_dir / "m.db"
    _apples(db)
    db.chmod(0o444)
    out = _read_as_other(db)
    assert "error" not in out, out
    assert len(out["hits"]) == 3 and out["again"] == 3
    assert out["read_only"] == "the file is not writable"


def test_access_tracking_on_a_read_only_file_warns_once(shared_dir: Path) -> None:
    db = shared_dir / "m.db"
    _apples(db)
    db.chmod(0o444)
    out = _read_as_other(db)
    tracking = [w for w in out["warnings"] if "access tracking skipped" in w]
    assert len(tracking) == 1, out["warnings"]


def test_a_write_to_a_read_only_file_says_it_is_read_only(shared_dir: Path) -> None:
    db = shared_dir / "m.db"
    _apples(db)
    db.chmod(0o444)
    before = _digest(db)
    out = _read_as_other(db)
    assert out["remember"].startswith("StorageError") and "read-only" in out["remember"], out
    assert _digest(db) == before


def test_a_store_in_a_read_only_folder_opens_for_reading(shared_dir: Path) -> None:
    """No -wal or -shm beside the file after a clean close, and none can be created."""
    db = shared_dir / "m.db"
    _apples(db)
    assert not Path(f"{db}-wal").exists()
    shared_dir.chmod(0o555)
    out = _read_as_other(db)
    assert "error" not in out, out
    assert len(out["hits"]) == 3
    assert out["read_only"] == "its folder is not writable"
    assert "read-only" in out["remember"]


def test_a_read_only_file_that_needs_a_migration_is_a_clear_error(shared_dir: Path) -> None:
    db = shared_dir / "m.db"
    _apples(db)
    import sqlite3

    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA user_version = 6")
    conn.close()
    db.chmod(0o444)
    out = _read_as_other(db)
    assert "needs its schema migrated from version 6" in out.get("error", ""), out


_RO_FS = textwrap.dedent(
    """
    set -e
    mount -t tmpfs -o size=16m tmpfs "$1"
    "$2" -c 'import sys; from elastic_memory import Memory; from elastic_memory.testing import FakeEmbedder
    with Memory.open(sys.argv[1] + "/m.db", embedder=FakeEmbedder()) as m:
        m.remember_many(["apples one", "apples two"])' "$1"
    mount -o remount,ro "$1"
    "$2" -c "$3" "$1/m.db" 5
    """
)


def test_recall_works_on_a_read_only_filesystem(shared_dir: Path) -> None:
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "-rm", "true"], check=False).returncode != 0:
        pytest.skip("no private mount namespace here (unshare -rm)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [unshare, "-rm", "sh", "-c", _RO_FS, "sh", str(shared_dir), sys.executable, _READER],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    if done.returncode != 0 and "mount" in done.stderr:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert sorted(out["hits"]) == ["apples one", "apples two"]
    assert out["read_only"] == "a read-only filesystem"
    assert "read-only" in out["remember"]


_HOLD_LOCK = textwrap.dedent(
    """
    import sqlite3, sys
    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    print("locked", flush=True)
    sys.stdin.read()
    conn.execute("ROLLBACK")
    """
)


def test_recall_while_another_process_holds_the_write_lock(db_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    _apples(db_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD_LOCK, str(db_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with Memory.open(db_path, embedder=FakeEmbedder(), timeout=0.2) as mem:
            hits = mem.recall("apples", k=3, mode="keyword")
            again = mem.recall("apples", k=3, mode="keyword")
    finally:
        assert holder.stdin is not None and holder.stdout is not None
        holder.stdin.close()
        holder.wait(30)
        holder.stdout.close()
    assert len(hits) == 3 and len(again) == 3
    assert len([r for r in caplog.records if "access tracking skipped" in r.getMessage()]) == 1


# ---------------------------------------------------------------------- damage (6)
def _damaged(db: Path) -> None:
    """300 memories, then one page of the memories table overwritten with 0xff."""
    with Memory.open(db, embedder=FakeEmbedder()) as mem:
        mem.remember_many([f"memory {i} about topic {i % 7} " * 20 for i in range(300)])
        mem.record_turn("My dog is called Biscuit.", "Nice dog.", session_id="s1")
        mem.drain()
    data = bytearray(db.read_bytes())
    page = 4096
    start = data.index(b"memory 150 about") // page * page
    data[start : start + page] = b"\xff" * page
    db.write_bytes(bytes(data))


def _hit_the_damage(mem: Memory, tmp: Path) -> None:
    with pytest.raises(CorruptDatabaseError):
        mem.export_jsonl(tmp / "export.jsonl")


def test_after_a_corrupt_read_writes_refuse_and_leave_the_file_alone(db_path: Path) -> None:
    _damaged(db_path)
    with Memory.open(db_path, embedder=FakeEmbedder()) as mem:
        _hit_the_damage(mem, db_path.parent)
        before = _digest(db_path)
        with pytest.raises(CorruptDatabaseError, match="elastic-memory repair"):
            mem.remember("written after the damage was seen")
        with pytest.raises(CorruptDatabaseError):
            mem.forget(mem.recall("memory 3", k=1, mode="keyword")[0].id)
        assert _digest(db_path) == before


def test_health_reports_the_damage(db_path: Path) -> None:
    """``stats()`` counts every row, so on this file it raises; ``health()`` never does."""
    _damaged(db_path)
    with Memory.open(db_path, embedder=FakeEmbedder()) as mem:
        assert mem.health()["damaged"] is None
        _hit_the_damage(mem, db_path.parent)
        assert "malformed" in mem.health()["damaged"]
        with pytest.raises(CorruptDatabaseError):
            mem.stats()


def test_stats_report_the_damage_when_the_counts_are_readable(db_path: Path) -> None:
    with Memory.open(db_path, embedder=FakeEmbedder()) as mem:
        mem.remember("apples")
        assert mem.stats()["damaged"] is None
        mem._core.store.damaged = "database disk image is malformed"  # as a damaged vector page would leave it
        assert mem.stats()["damaged"] == "database disk image is malformed"


def test_recall_on_a_damaged_store_still_answers(db_path: Path) -> None:
    _damaged(db_path)
    with Memory.open(db_path, embedder=FakeEmbedder()) as mem:
        _hit_the_damage(mem, db_path.parent)
        assert mem.recall("memory topic", k=5, mode="keyword")


def test_repair_copies_what_is_readable_and_counts_the_losses(db_path: Path, tmp_path: Path) -> None:
    _damaged(db_path)
    report = repair(db_path, tmp_path / "repaired.db")
    memories = report.table("memories")
    assert memories.lost > 0 and memories.read + memories.lost == 301
    assert report.table("vectors").read == memories.read
    assert report.table("facts").read == 1 and report.table("turns").read == 1
    with Memory.open(tmp_path / "repaired.db", embedder=FakeEmbedder()) as mem:
        stats = mem.stats()
        assert stats["total_memories"] == memories.read and stats["vectors"] == memories.read
        assert mem.recall("memory 151 about", k=1, mode="keyword")[0].content.startswith("memory 151 about")
        assert mem.facts.get("user.dog_name") is not None
        mem.remember("the repaired file takes writes")


def test_repair_keeps_tags_and_metadata(db_path: Path, tmp_path: Path) -> None:
    with Memory.open(db_path, embedder=FakeEmbedder()) as mem:
        mid = mem.remember("tagged apples", tags=["fruit"], metadata={"n": 1}, importance=0.9)
    report = repair(db_path, tmp_path / "repaired.db")
    assert report.lost == 0
    with Memory.open(tmp_path / "repaired.db", embedder=FakeEmbedder()) as mem:
        record = mem.get(mid)
        assert record is not None and record.tags == ("fruit",) and record.metadata == {"n": 1}
        assert mem.tags() == {"fruit": 1}


def test_repair_never_touches_the_source(db_path: Path, tmp_path: Path) -> None:
    _damaged(db_path)
    before = _digest(db_path)
    repair(db_path, tmp_path / "repaired.db")
    assert _digest(db_path) == before
    assert not Path(f"{db_path}-wal").exists() and not Path(f"{db_path}-shm").exists()


def test_repair_refuses_an_existing_destination(db_path: Path, tmp_path: Path) -> None:
    _apples(db_path)
    (tmp_path / "taken.db").write_text("mine")
    with pytest.raises(UsageError, match="exists"):
        repair(db_path, tmp_path / "taken.db")
    assert (tmp_path / "taken.db").read_text() == "mine"


def test_repair_of_a_file_that_is_not_a_database(db_path: Path, tmp_path: Path) -> None:
    db_path.write_bytes(b"not a database" * 1000)
    with pytest.raises(CorruptDatabaseError, match="nothing of"):
        repair(db_path, tmp_path / "repaired.db")
    assert not (tmp_path / "repaired.db").exists()


def test_cli_repair_prints_the_report(db_path: Path, tmp_path: Path) -> None:
    _damaged(db_path)
    result = CliRunner().invoke(app, ["repair", str(db_path), str(tmp_path / "repaired.db")])
    assert result.exit_code == 0, result.output
    assert "memories" in result.output and "could not be read" in result.output
    again = CliRunner().invoke(app, ["repair", str(db_path), str(tmp_path / "repaired.db"), "--json"])
    assert again.exit_code == 2


# ------------------------------------------------------------- racing pin (8)
class _PinsMeanwhile(FakeEmbedder):
    """Before embedding the loop's chunk, another connection pins the file to ``other``."""

    def __init__(self, db: Path, other: FakeEmbedder) -> None:
        super().__init__()
        self.db, self.other = db, other
        self.raced = threading.Event()

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if not self.raced.is_set() and any("Biscuit" in t for t in texts):
            self.raced.set()
            # Its worker off: it pins the file and leaves the chunk's backlog to the racing job.
            with Memory.open(self.db, embedder=self.other, loop=LoopConfig(background=False)) as other:
                other.remember("pinned by another connection")
        return super().embed(texts)


def _race(db: Path, other: FakeEmbedder) -> dict[str, Any]:
    embedder = _PinsMeanwhile(db, other)
    with Memory.open(db, embedder=embedder, loop=LoopConfig(tier="lite")) as mem:
        mem.record_turn("My dog is called Biscuit.", "Nice dog.", session_id="s1")
        mem.drain()
        assert embedder.raced.is_set()
        return {"health": mem.health(), "stats": mem.stats()}


def test_the_embedding_job_accepts_the_same_pin_written_meanwhile(db_path: Path) -> None:
    seen = _race(db_path, FakeEmbedder())
    assert not seen["health"]["jobs_failed"], seen["health"]["last_error"]
    assert seen["stats"]["vectors"] == seen["stats"]["total_memories"]


def test_the_embedding_job_refuses_another_model_pinned_meanwhile(db_path: Path) -> None:
    seen = _race(db_path, FakeEmbedder(model_id="other-model", family="other-family"))
    assert "EmbeddingMismatchError" in (seen["health"]["last_error"] or ""), seen["health"]
    assert "UNIQUE" not in seen["health"]["last_error"]
    assert seen["stats"]["vectors"] == 1, "only the other connection's memory has a vector"
