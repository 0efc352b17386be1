"""A store that was never closed: the interpreter exits quietly and the file keeps what was written.

Each check runs a small program in a fresh interpreter (exit is what is tested).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from elastic_memory.storage.sqlite.driver import driver

ASYNC_DROPPED = """
import asyncio, gc, sys
from elastic_memory import AsyncMemory
from elastic_memory.testing import FakeEmbedder

async def main():
    mem = await AsyncMemory.open(sys.argv[1], embedder=FakeEmbedder())
    await mem.record_turn("My dog is called Rex", "Noted!")
    await mem.build_context("what is my dog called")

asyncio.run(main())
gc.collect()
print("done")
"""

SYNC_BUSY = """
import sys
from elastic_memory import Memory
from elastic_memory.testing import FakeEmbedder

mem = Memory.open(sys.argv[1], embedder=FakeEmbedder())
for i in range(20):
    mem.record_turn(f"turn {i}: I moved to Lisbon and like green tea", "Noted!")
print("done")
"""

CLOSED_AT_EXIT = """
import atexit, sys
from elastic_memory import Memory
from elastic_memory.testing import FakeEmbedder

mem = Memory.open(sys.argv[1], embedder=FakeEmbedder())
atexit.register(mem.close)
for i in range(20):
    mem.record_turn(f"turn {i}: I moved to Lisbon and like green tea", "Noted!")
print("done")
"""

THREAD_OUTLIVES_MAIN = """
import sys, threading, time
from elastic_memory import Memory
from elastic_memory.testing import FakeEmbedder

def work():
    time.sleep(0.3)  # the main thread has finished by now: thread pools refuse new work
    mem = Memory.open(sys.argv[1], embedder=FakeEmbedder())
    for i in range(5):
        mem.record_turn(f"turn {i}: my sister Ana lives in Porto", "Noted!")
    mem.close()
    print("closed", flush=True)

threading.Thread(target=work).start()
print("done", flush=True)
"""

USED_AFTER_MAIN = """
import sys, threading, time
from elastic_memory import Memory
from elastic_memory.testing import FakeEmbedder

mem = Memory.open(sys.argv[1], embedder=FakeEmbedder())

def work():
    time.sleep(0.3)
    for i in range(5):
        mem.record_turn(f"turn {i}: my sister Ana lives in Porto", "Noted!")
    mem.close()
    print("closed", flush=True)

threading.Thread(target=work).start()
print("done", flush=True)
"""

LOADING_AT_EXIT = """
import sys, time
from elastic_memory import Memory

mem = Memory.open(sys.argv[1])  # the built-in model starts loading on its own thread
model = mem._core._preload.embedder
while model._tokenizer is None:  # set just before onnxruntime builds its session: exit inside that
    time.sleep(0.001)
print("done")
"""


def _run(program: str, db: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(program), str(db)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_an_async_store_dropped_unclosed_exits_without_a_pending_task_warning(tmp_path: Path) -> None:
    """If this fails with "Task was destroyed but it is pending", check ``_runner.keep`` and ``_end_at_exit``."""
    done = _run(ASYNC_DROPPED, tmp_path / "m.db")
    assert (done.returncode, done.stdout.strip(), done.stderr) == (0, "done", "")


def test_a_busy_sync_store_left_open_exits_quietly_and_keeps_its_turns(tmp_path: Path) -> None:
    """Background jobs still queued at exit are cancelled; every turn was committed before."""
    db = tmp_path / "m.db"
    done = _run(SYNC_BUSY, db)
    assert (done.returncode, done.stdout.strip(), done.stderr) == (0, "done", "")
    conn = driver().module.connect(str(db))
    try:
        assert conn.execute("SELECT count(*) FROM turns").fetchone()[0] == 20
    finally:
        conn.close()


def test_a_store_closed_by_an_atexit_handler_exits_without_hanging(tmp_path: Path) -> None:
    """If this times out, ``Worker.drain`` waits for a worker that stopped at exit: see ``_runner.exiting``."""
    db = tmp_path / "m.db"
    done = _run(CLOSED_AT_EXIT, db)
    assert (done.returncode, done.stdout.strip(), done.stderr) == (0, "done", "")
    conn = driver().module.connect(str(db))
    try:
        assert conn.execute("SELECT count(*) FROM turns").fetchone()[0] == 20
    finally:
        conn.close()


@pytest.mark.parametrize("program", [THREAD_OUTLIVES_MAIN, USED_AFTER_MAIN], ids=["opened-late", "opened-in-main"])
def test_a_thread_that_outlives_the_main_thread_can_still_write_and_close(tmp_path: Path, program: str) -> None:
    """If this times out, the worker stopped when the main thread ended instead of at ``atexit``."""
    db = tmp_path / "m.db"
    done = _run(program, db)
    assert (done.returncode, done.stdout.split(), done.stderr) == (0, ["done", "closed"], "")
    conn = driver().module.connect(str(db))
    try:
        assert conn.execute("SELECT count(*) FROM turns").fetchone()[0] == 5
    finally:
        conn.close()


@pytest.mark.model
def test_exiting_while_the_model_loads_waits_for_the_load_and_stays_quiet(tmp_path: Path) -> None:
    """If this dies with "terminate called without an active exception", the loading thread is a daemon.

    onnxruntime aborts the process when the interpreter tears it down under a load in progress:
    exit must wait for the thread started at open (``embedders/preload.py``).
    """
    done = _run(LOADING_AT_EXIT, tmp_path / "m.db")
    assert (done.returncode, done.stdout.strip(), done.stderr) == (0, "done", "")
