"""The embedding backlog under a busy host: how many memories have a vector once drain() returns.

Run from the repository root::

    python benchmarks/embed_backlog.py                     # 3,000 turns, both cores kept busy, ~2-4 min on 2 vCPUs
    python benchmarks/embed_backlog.py --turns 500 --burners 0   # a quick look on an idle machine
    python benchmarks/embed_backlog.py --fake-embedder     # the 16-d hashing FakeEmbedder instead of MiniLM

**What it does.** ``--burners`` processes (default: one per core) spin in a busy loop for
the whole run, as a host whose own work keeps every core busy. A new SQLite file is filled
through ``Memory.record_turn`` (the built-in embedder, ``embedder="auto"``; default
``LoopConfig``: the background worker embeds the chunks while the host goes on), turns back
to back, 20 per session, each a short user message and reply. Then ``drain()`` is called
once and timed, and the file is read directly (SQL, so the script runs against any release):
the live memories, and how many of them have a vector. Issue 40 reported 512 of 3,119.

**Reading the output.** "embedded / active": live memories with a vector over live
memories, right after ``drain()`` returned; "jobs shed": ``health()["jobs_shed"]`` (jobs load
shedding refused; since the fix a refused embed job is deferred, not dropped). Run it
against an older checkout with ``PYTHONPATH=<checkout>/packages/elastic-memory/src``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _common import environment, section
from elastic_memory import Memory
from elastic_memory.storage.sqlite.driver import driver
from elastic_memory.testing import FakeEmbedder

TURNS_PER_SESSION = 20
_SUBJECTS = ("the garden", "my sister", "the boiler", "our trip", "the invoice", "the dog", "my manager", "the car")
_VERBS = ("needs", "mentioned", "booked", "fixed", "moved", "forgot", "asked about", "paid for")
_OBJECTS = ("a new roof", "the Lisbon flights", "the blue binder", "a dentist visit", "the spare key", "the report")


def turn_texts(i: int) -> tuple[str, str]:
    """A short, English, varied exchange (the model's cost per text is that of a chat message)."""
    subject, verb, obj = _SUBJECTS[i % 8], _VERBS[(i // 8) % 8], _OBJECTS[(i // 64) % 6]
    user = f"Turn {i}: {subject} {verb} {obj} on day {i % 31 + 1}, remember that."
    reply = f"Noted: {subject} {verb} {obj}; I will bring it up when it matters."
    return user, reply


def burn() -> None:
    """Keep one core busy until killed."""
    while True:
        pass


def counts(path: Path) -> tuple[int, int]:
    """``(live memories, live memories with a vector)`` read straight from the file."""
    conn = driver().module.connect(str(path))
    try:
        row = conn.execute(
            "SELECT count(*), coalesce(sum(has_vector), 0) FROM memories WHERE deleted_at IS NULL AND archived = 0 "
            "AND (expires_at IS NULL OR expires_at > ?)",
            [time.time()],
        ).fetchone()
    finally:
        conn.close()
    return int(row[0]), int(row[1])


def run(turns: int, burners: int, fake: bool, folder: Path) -> dict[str, Any]:
    path = folder / "backlog.db"
    spin = [multiprocessing.Process(target=burn, daemon=True) for _ in range(burners)]
    for process in spin:
        process.start()
    try:
        with Memory.open(path, embedder=FakeEmbedder() if fake else "auto") as mem:
            mem.recall("warm the model up", k=1)  # resolves the embedder: the model loads before the clock starts
            started = time.perf_counter()
            for i in range(turns):
                user, reply = turn_texts(i)
                mem.record_turn(user, reply, session_id=f"s{i // TURNS_PER_SESSION}")
            fill = time.perf_counter() - started
            started = time.perf_counter()
            mem.drain()
            drained = time.perf_counter() - started
            active, embedded = counts(path)
            health = mem.health()
            stats = mem.stats()
    finally:
        for process in spin:
            process.kill()
            process.join()
    return {
        "turns": turns,
        "burners": burners,
        "embedder": "FakeEmbedder" if fake else "auto (MiniLM)",
        "fill_s": round(fill, 1),
        "drain_s": round(drained, 1),
        "active": active,
        "embedded": embedded,
        "jobs_shed": dict(health.get("jobs_shed", {})),
        "jobs_deferred": dict(health.get("jobs_deferred", {})),
        "vectors_pending": stats.get("vectors_pending"),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=3_000, help="turns recorded back to back")
    parser.add_argument("--burners", type=int, default=os.cpu_count() or 2, help="busy-loop processes (0: none)")
    parser.add_argument("--fake-embedder", action="store_true", help="the hashing FakeEmbedder instead of MiniLM")
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    if args.turns < 1 or args.burners < 0:
        parser.error("--turns must be at least 1 and --burners at least 0")
    header = environment()
    print("\n".join(header))
    section(f"{args.turns:,} turns, {args.burners} busy-loop processes")
    folder = Path(tempfile.mkdtemp(prefix="em-embed-backlog-"))
    try:
        result = run(args.turns, args.burners, args.fake_embedder, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(
        f"embedded / active after drain(): {result['embedded']:,} / {result['active']:,}"
        f"  (fill {result['fill_s']} s, drain {result['drain_s']} s)"
    )
    shed, deferred, pending = result["jobs_shed"], result["jobs_deferred"], result["vectors_pending"]
    print(f"jobs shed {shed}, deferred now {deferred}, vectors_pending {pending}")
    if args.json is not None:
        options = vars(args) | {"json": str(args.json)}
        args.json.write_text(json.dumps({"environment": header, "args": options, **result}, indent=2))
        print(f"figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
