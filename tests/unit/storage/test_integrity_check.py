"""Damage noticed early: ``check()``, ``elastic-memory check``, and the check after an unclean shutdown.

A damaged file here is a real store with one leaf page of its ``memories`` table (found with
SQLite's ``dbstat``) overwritten; a plain ``sqlite3`` connection's ``integrity_check``
confirms the damage before the library is asked. An unclean shutdown is a process killed
while it holds the store open (or the row such a process leaves behind).
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from elastic_memory import CheckReport, CorruptDatabaseError, Memory, UsageError, backup
from elastic_memory import cli as cli_module
from elastic_memory.storage.sqlite import integrity
from elastic_memory.storage.sqlite.driver import driver

runner = CliRunner()

#: Holds a store open until killed (or until its stdin closes: then it closes the store cleanly).
HOLDER = """
import sys
from elastic_memory import Memory
mem = Memory.open(sys.argv[1], embedder=None)
mem.remember_many([f"memory {i} about topic {i % 7} " * 20 for i in range(300)])
print("ready", flush=True)
sys.stdin.read()
mem.close()
print("closed", flush=True)
"""


def _stored(db: Path) -> None:
    with Memory.open(db, embedder=None) as mem:
        mem.remember_many([f"memory {i} about topic {i % 7} " * 20 for i in range(300)])


def _plain(db: Path) -> sqlite3.Connection:
    return sqlite3.connect(db, isolation_level=None)


def _damage(db: Path) -> int:
    """Overwrite half a leaf page in the middle of the ``memories`` table (WAL checkpointed first); its number."""
    conn = _plain(db)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = int(conn.execute("PRAGMA page_size").fetchone()[0])
        pages = [
            int(r[0])
            for r in conn.execute(
                "SELECT pageno FROM dbstat WHERE name = 'memories' AND pagetype = 'leaf' ORDER BY pageno"
            )
        ]
    finally:
        conn.close()
    assert len(pages) > 10, pages
    page = pages[len(pages) // 2]
    with db.open("r+b") as f:  # the page's cells; its header stays, so SQLite names the page
        f.seek((page - 1) * size + size // 2)
        f.write(b"\xff" * (size // 2))
    conn = _plain(db)
    try:
        found = [str(r[0]) for r in conn.execute("PRAGMA integrity_check")]
    finally:
        conn.close()
    assert f"page {page}" in found[0], found
    return page


def _dead_pid() -> int:
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait(30)
    return done.pid


def _leave_row(db: Path, key: str) -> None:
    conn = _plain(db)
    try:
        conn.execute("INSERT INTO store_state (key, value) VALUES (?, 0)", [key])
    finally:
        conn.close()


def _open_rows(db: Path) -> list[str]:
    conn = _plain(db)
    try:
        return [str(r[0]) for r in conn.execute("SELECT key FROM store_state WHERE key LIKE 'open/%'")]
    finally:
        conn.close()


def _holder(db: Path, tmp: Path) -> subprocess.Popen[str]:
    script = tmp / "holder.py"
    script.write_text(HOLDER, encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, str(script), str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    return proc


def _kill(proc: subprocess.Popen[str]) -> None:
    proc.kill()
    proc.wait(30)  # reaped: its pid no longer answers
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            stream.close()


# ------------------------------------------------------------------ the command
def test_check_command_finds_a_damaged_page_and_says_to_repair(db_path: Path) -> None:
    _stored(db_path)
    _damage(db_path)
    result = runner.invoke(cli_module.app, ["check", "--db", str(db_path)])
    assert result.exit_code == 1, result.output
    assert "is damaged" in result.output
    assert "elastic-memory repair" in result.output


def test_check_command_passes_a_clean_file(db_path: Path) -> None:
    _stored(db_path)
    result = runner.invoke(cli_module.app, ["check", "--db", str(db_path), "--full"])
    assert result.exit_code == 0, result.output
    assert "no damage found (integrity check" in result.output


def test_check_command_json_lists_the_problems(db_path: Path) -> None:
    _stored(db_path)
    _damage(db_path)
    result = runner.invoke(cli_module.app, ["check", "--db", str(db_path), "--json"])
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert data["ok"] is False and data["problems"] and data["full"] is False


def test_check_command_on_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    result = runner.invoke(cli_module.app, ["check", "--db", str(tmp_path / "none.db")])
    assert result.exit_code == 2
    assert not (tmp_path / "none.db").exists()


def test_check_command_on_a_file_that_is_not_a_database_fails(db_path: Path) -> None:
    db_path.write_bytes(b"not a database at all " * 300)
    result = runner.invoke(cli_module.app, ["check", "--db", str(db_path)])
    assert result.exit_code == 1
    assert "elastic-memory repair" in result.output


def test_installed_command_exits_non_zero_on_a_damaged_page(db_path: Path) -> None:
    _stored(db_path)
    page = _damage(db_path)
    done = subprocess.run(
        [sys.executable, "-m", "elastic_memory.cli", "check", "--db", str(db_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"page {page}" in done.stdout, done.stdout


# --------------------------------------------------------------------- check()
def test_check_of_a_clean_store_is_ok(db_path: Path) -> None:
    _stored(db_path)
    with Memory.open(db_path, embedder=None) as mem:
        report = mem.check(full=True)
    assert (report.ok, report.problems, report.full, report.complete) == (True, (), True, True)


def test_check_of_an_in_memory_store_is_ok() -> None:
    with Memory.open(":memory:", embedder=None) as mem:
        mem.remember("a note")
        assert mem.check().ok


def test_check_that_finds_damage_makes_writes_refuse(db_path: Path) -> None:
    _stored(db_path)
    _damage(db_path)
    with Memory.open(db_path, embedder=None) as mem:
        report = mem.check()
        assert not report.ok and report.problems
        assert "quick_check found damage" in mem.health()["damaged"]
        with pytest.raises(CorruptDatabaseError, match="elastic-memory repair"):
            mem.remember("written after the damage was found")


def test_check_refuses_a_flag_that_is_not_a_bool(db_path: Path) -> None:
    with Memory.open(db_path, embedder=None) as mem, pytest.raises(UsageError, match="full must be"):
        mem.check(full="yes")  # type: ignore[arg-type]


# ---------------------------------------------------------- unclean shutdown
def test_a_killed_process_makes_the_next_open_check_the_file(db_path: Path, tmp_path: Path) -> None:
    _kill(_holder(db_path, tmp_path))
    with Memory.open(db_path, embedder=None) as mem:
        health = mem.health()
        assert health["unclean_shutdown"] is True
        assert health["open_check"]["ok"] is True and health["open_check"]["complete"] is True
        mem.remember("a write after a clean check")


def test_damage_found_after_a_killed_process_refuses_writes(db_path: Path, tmp_path: Path) -> None:
    _kill(_holder(db_path, tmp_path))
    _damage(db_path)  # checkpoints what the killed process left in the WAL first
    with Memory.open(db_path, embedder=None) as mem:
        assert mem.health()["open_check"]["ok"] is False
        with pytest.raises(CorruptDatabaseError, match="elastic-memory repair"):
            mem.remember("written after the damage was found")


def test_a_row_left_by_a_dead_process_triggers_the_check_and_is_removed(db_path: Path) -> None:
    _stored(db_path)
    key = f"open/{_dead_pid()}/abc123/{socket.gethostname()}"
    _leave_row(db_path, key)
    with Memory.open(db_path, embedder=None) as mem:
        assert mem.health()["unclean_shutdown"] is True
    assert _open_rows(db_path) == []


def test_a_clean_close_does_not_check_at_the_next_open(db_path: Path) -> None:
    _stored(db_path)
    with Memory.open(db_path, embedder=None) as mem:
        assert mem.health()["unclean_shutdown"] is False
        assert mem.health()["open_check"] is None
    assert _open_rows(db_path) == []


def test_a_store_held_open_by_another_process_is_not_taken_for_a_crash(db_path: Path, tmp_path: Path) -> None:
    holder = _holder(db_path, tmp_path)
    try:
        for _ in range(2):
            with Memory.open(db_path, embedder=None) as mem:
                assert mem.health()["unclean_shutdown"] is False
    finally:
        assert holder.stdin is not None and holder.stdout is not None
        holder.stdin.close()
        assert holder.stdout.readline().strip() == "closed"
        holder.wait(30)
        holder.stdout.close()
    with Memory.open(db_path, embedder=None) as mem:
        assert mem.health()["unclean_shutdown"] is False
    assert _open_rows(db_path) == []


def test_two_stores_on_one_file_in_one_process_do_not_check(db_path: Path) -> None:
    _stored(db_path)
    with Memory.open(db_path, embedder=None) as first, Memory.open(db_path, embedder=None) as second:
        assert first.health()["unclean_shutdown"] is False
        assert second.health()["unclean_shutdown"] is False
        assert len(_open_rows(db_path)) == 2


def test_a_row_of_another_host_is_left_alone(db_path: Path) -> None:
    _stored(db_path)
    key = f"open/{_dead_pid()}/abc123/some-other-host.example"
    _leave_row(db_path, key)
    with Memory.open(db_path, embedder=None) as mem:
        assert mem.health()["unclean_shutdown"] is False
    assert _open_rows(db_path) == [key]


def test_a_large_file_is_checked_in_the_background(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _stored(db_path)
    _damage(db_path)
    _leave_row(db_path, f"open/{_dead_pid()}/abc123/{socket.gethostname()}")
    monkeypatch.setattr(integrity, "BACKGROUND_BYTES", 0)
    with Memory.open(db_path, embedder=None) as mem:
        deadline = time.monotonic() + 30
        while mem.health()["open_check"] is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert mem.health()["open_check"]["ok"] is False
        with pytest.raises(CorruptDatabaseError, match="elastic-memory repair"):
            mem.remember("written after the damage was found")


def test_a_check_stopped_before_its_end_says_it_is_incomplete(db_path: Path) -> None:
    _stored(db_path)
    drv = driver()
    conn = drv.connect(str(db_path), timeout=5.0)
    stop = threading.Event()
    stop.set()
    try:
        report = integrity.check_connection(conn, drv, full=True, stop=stop)
    finally:
        conn.close()
    assert report.complete is False


def test_a_store_closed_before_its_check_ended_leaves_its_row_for_a_later_process(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _stored(db_path)
    _leave_row(db_path, f"open/{_dead_pid()}/abc123/{socket.gethostname()}")
    monkeypatch.setattr(integrity, "BACKGROUND_BYTES", 0)

    def never_done(conn: object, drv: object, *, full: bool, seconds: object = None, stop: Any = None) -> CheckReport:
        stop.wait(30)  # until the store closes
        return CheckReport(True, (), 0.0, full, complete=False)

    with monkeypatch.context() as patch:
        patch.setattr(integrity, "check_connection", never_done)
        Memory.open(db_path, embedder=None).close()
    # The closed store's own row: once this process ends, the next opener takes it for a crash.
    [row] = _open_rows(db_path)
    assert row.startswith(f"open/{os.getpid()}/")


def test_a_backup_does_not_carry_the_rows_of_the_stores_open_on_its_source(db_path: Path, tmp_path: Path) -> None:
    _stored(db_path)
    with Memory.open(db_path, embedder=None):
        backup(db_path, tmp_path / "copy.db")
    assert _open_rows(tmp_path / "copy.db") == []
