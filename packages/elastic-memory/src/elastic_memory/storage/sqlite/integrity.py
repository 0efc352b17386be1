"""Integrity checks of an SQLite file, and noticing that a process ended without closing it.

**Unclean shutdown.** Every writable open of a file adds a row to ``store_state`` naming
this host, this process and a random nonce (``open/<pid>/<nonce>/<host>``); a clean close
removes it. An opener that finds a row of its own host whose process no longer runs knows
that process ended with the store open (killed, crashed, the machine lost power): it
removes the row and checks the file. A row of a process that still runs (another process
serving the same file, or a second store in this one) is left alone, so processes that
share a file never take each other for a crash. Rows of other hosts are never judged (a
process id means nothing there). A reused process id hides a crash until that process
ends too; that costs a check skipped, never a false alarm.

**The check.** ``PRAGMA quick_check`` (or ``integrity_check``) on its own connection in a
worker thread, stopped at a deadline or when the store closes: SQLite's progress handler
interrupts it.
"""

from __future__ import annotations

import os
import secrets
import socket
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import aiosqlite

from ...errors import UsageError
from ...types import CheckReport
from .driver import Driver

__all__ = [
    "BACKGROUND_BYTES",
    "MARKERS",
    "OPEN_CHECK_SECONDS",
    "check_connection",
    "check_file",
    "clear_markers",
    "damage_note",
    "forget_open",
    "marker",
    "note_open",
    "problems_of",
    "process_alive",
    "stale",
]

#: The first key of ``store_state`` that can be an open-store row, and the first past them.
MARKERS = ("open/", "open0")
#: A file larger than this (with its ``-wal``) is checked at open in the background; a smaller one before open returns.
BACKGROUND_BYTES = 64 * 1024 * 1024
#: A check after an unclean shutdown stops after this long (it reports ``complete=False``).
OPEN_CHECK_SECONDS = 600.0
#: SQLite stops listing problems after this many.
MAX_PROBLEMS = 100
#: Virtual machine steps between two looks at the deadline and the stop flag.
_STEPS = 10_000


def marker() -> str:
    """This process's key for one open store: ``open/<pid>/<nonce>/<host>``."""
    return f"{MARKERS[0]}{os.getpid()}/{secrets.token_hex(6)}/{socket.gethostname()}"


def stale(keys: Sequence[str]) -> list[str]:
    """The keys among ``keys`` left by processes of this host that no longer run."""
    host = socket.gethostname()
    found = []
    for key in keys:
        if not key.startswith(MARKERS[0]):
            continue
        parts = key[len(MARKERS[0]) :].split("/", 2)
        if len(parts) != 3 or parts[2] != host:
            continue
        try:
            pid = int(parts[0])
        except ValueError:
            continue
        if not process_alive(pid):
            found.append(key)
    return found


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` runs on this host (when unsure: yes)."""
    if pid == os.getpid():
        return True
    if pid <= 0:
        return False
    if sys.platform == "win32":
        return _windows_alive(pid)
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it exists, as another user's
        return True
    return True


if sys.platform == "win32":
    import ctypes

    def _windows_alive(pid: int) -> bool:
        # os.kill on Windows terminates the process: ask the kernel instead.
        kernel32 = ctypes.windll.kernel32
        handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return bool(kernel32.GetLastError() == 5)  # ERROR_ACCESS_DENIED: it exists
        try:
            code = ctypes.c_ulong()
            if not kernel32.GetExitCodeProcess(handle, ctypes.byref(code)):
                return True
            return code.value == 259  # STILL_ACTIVE
        finally:
            kernel32.CloseHandle(handle)


async def note_open(conn: aiosqlite.Connection, key: str) -> list[str]:
    """Inside a write transaction: add this open's row ``key``; remove and return the rows of ended processes."""
    keys = await conn.execute_fetchall("SELECT key FROM store_state WHERE key >= ? AND key < ?", list(MARKERS))
    gone = stale([str(k[0]) for k in keys])
    for old in gone:
        await conn.execute("DELETE FROM store_state WHERE key = ?", [old])
    await conn.execute("INSERT INTO store_state (key, value) VALUES (?, ?)", [key, int(time.time())])
    return gone


async def forget_open(conn: aiosqlite.Connection, key: str) -> None:
    """Inside a write transaction: remove this open's row ``key`` (a clean close)."""
    await conn.execute("DELETE FROM store_state WHERE key = ?", [key])


def clear_markers(conn: Any) -> None:
    """Remove every open-store row from the file ``conn`` writes (a copy: its rows name the original's openers)."""
    conn.execute("DELETE FROM store_state WHERE key >= ? AND key < ?", list(MARKERS))


def problems_of(rows: Sequence[Sequence[Any]]) -> tuple[str, ...]:
    """SQLite's findings from a check's rows (a single ``ok`` row: none), one line each.

    SQLite puts a b-tree's findings in one row under a ``*** in database main ***`` line.
    """
    found = [line for r in rows for line in str(r[0]).splitlines() if line.strip() and not line.startswith("***")]
    return () if found == ["ok"] else tuple(found)


def damage_note(report: CheckReport) -> str:
    """What a store that found damage says (``damaged``): the check and its first findings."""
    what = "integrity_check" if report.full else "quick_check"
    shown = "; ".join(report.problems[:3])
    more = f" (and {len(report.problems) - 3} more)" if len(report.problems) > 3 else ""
    return f"PRAGMA {what} found damage: {shown}{more}"


def check_connection(
    conn: Any,
    drv: Driver,
    *,
    full: bool,
    seconds: float | None = None,
    stop: threading.Event | None = None,
) -> CheckReport:
    """Run the check on the open driver connection ``conn`` (in the calling thread).

    It stops after ``seconds`` or once ``stop`` is set (then ``complete`` is false). An
    error that says the file is damaged is reported as a problem; any other is raised.
    """
    started = time.monotonic()
    deadline = None if seconds is None else started + seconds

    def stopped() -> bool:
        return (stop is not None and stop.is_set()) or (deadline is not None and time.monotonic() > deadline)

    pragma = "integrity_check" if full else "quick_check"
    handler = hasattr(conn, "set_progress_handler") and (seconds is not None or stop is not None)
    if handler:
        conn.set_progress_handler(lambda: int(stopped()), _STEPS)
    try:
        rows = conn.execute(f"PRAGMA {pragma}({MAX_PROBLEMS})").fetchall()
    except drv.module.Error as e:
        text = str(e)
        if "interrupt" in text and stopped():
            return CheckReport(True, (), time.monotonic() - started, full, complete=False)
        if "malformed" not in text and "not a database" not in text and "corrupt" not in text:
            raise
        return CheckReport(False, (text,), time.monotonic() - started, full)
    finally:
        if handler:
            conn.set_progress_handler(None, 0)
    problems = problems_of(rows)
    return CheckReport(not problems, problems, time.monotonic() - started, full)


def check_file(path: str | Path, *, drv: Driver, full: bool = False) -> CheckReport:
    """Check the database file at ``path`` without opening it as a store (nothing is written to it).

    Raises:
        UsageError: There is no file at ``path``.
    """
    file = Path(path)
    if not file.is_file():
        msg = f"there is no database file at {str(path)!r}"
        raise UsageError(msg)
    try:
        conn = drv.connect(file.absolute().as_uri() + "?mode=ro", timeout=5.0, uri=True)
    except drv.module.Error as e:
        return CheckReport(False, (str(e),), 0.0, full)
    try:
        return check_connection(conn, drv, full=full)
    finally:
        conn.close()
