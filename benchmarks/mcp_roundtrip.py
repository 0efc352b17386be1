"""What MCP adds to a memory call: a tool call's round trip over stdio beside the direct Python call.

Run from the repository root (needs the ``mcp`` extra)::

    python benchmarks/mcp_roundtrip.py                        # 2,000 memories, 200 recalls, keyword-only
    python benchmarks/mcp_roundtrip.py --embedder auto        # the built-in model: hybrid recall

**Store.** A SQLite file filled with ``--memories`` short synthetic notes (one transaction).

**Paths.** ``direct``: ``Memory.recall(query, k=10)`` in this process. ``mcp stdio``: the
``recall`` tool (``k=10``) through the SDK's ``ClientSession`` to an ``elastic-memory mcp``
subprocess on the same file (JSON-RPC over pipes, argument validation, the structured result
serialised and parsed). The two run interleaved query by query, ``--queries`` of each, after
20 warm-up calls; the spawn-to-initialized time of the server is reported once.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

from _common import environment, percentile, section, table
from elastic_memory import Memory

SERVER_CMD = shutil.which("elastic-memory") or os.path.join(os.path.dirname(sys.executable), "elastic-memory")
TOPICS = ("kayak", "garden", "invoice", "violin", "tax", "birthday", "server", "recipe", "flight", "dentist")
WORDS = ("blue", "Tuesday", "Lisbon", "budget", "river", "coffee", "deadline", "sister", "train", "window")
WARM_UP = 20


def notes(n: int, rng: random.Random) -> list[str]:
    return [
        f"Note {i}: the {rng.choice(TOPICS)} plan mentions {rng.choice(WORDS)} and {rng.choice(WORDS)}."
        for i in range(n)
    ]


def queries(n: int, rng: random.Random) -> list[str]:
    return [f"{rng.choice(TOPICS)} {rng.choice(WORDS)}" for _ in range(n)]


async def measure(db: Path, embedder: str, asked: list[str]) -> tuple[float, list[float], list[float]]:
    """Startup seconds, then per-call seconds of the direct path and of the MCP path, interleaved."""
    spec = None if embedder == "none" else "auto"
    params = StdioServerParameters(command=SERVER_CMD, args=["mcp", "--db", str(db), "--embedder", embedder])
    direct: list[float] = []
    over_mcp: list[float] = []
    with Memory.open(db, embedder=spec) as mem:
        started = time.perf_counter()
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            startup = time.perf_counter() - started
            for i, query in enumerate(asked):
                t0 = time.perf_counter()
                mem.recall(query, k=10)
                t1 = time.perf_counter()
                result = await session.call_tool("recall", {"query": query, "k": 10})
                t2 = time.perf_counter()
                if result.is_error:
                    raise RuntimeError(str(result.content))
                if i >= WARM_UP:
                    direct.append(t1 - t0)
                    over_mcp.append(t2 - t1)
    return startup, direct, over_mcp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=2_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--embedder", choices=("none", "auto"), default="none")
    args = parser.parse_args()
    rng = random.Random(7)
    print("\n".join(environment()))
    folder = Path(tempfile.mkdtemp(prefix="mcp-bench-"))
    try:
        db = folder / "memory.db"
        with Memory.open(db, embedder=None if args.embedder == "none" else "auto") as mem:
            mem.remember_many(notes(args.memories, rng))
        asked = queries(args.queries + WARM_UP, rng)
        startup, direct, over_mcp = anyio.run(measure, db, args.embedder, asked)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    ms = 1000.0
    rows = [
        ["direct Memory.recall", percentile(direct, 50) * ms, percentile(direct, 95) * ms],
        ["mcp stdio recall tool", percentile(over_mcp, 50) * ms, percentile(over_mcp, 95) * ms],
        [
            "added by MCP",
            (percentile(over_mcp, 50) - percentile(direct, 50)) * ms,
            (percentile(over_mcp, 95) - percentile(direct, 95)) * ms,
        ],
    ]
    section(f"recall k=10 on {args.memories:,} memories, embedder {args.embedder}, {args.queries} calls each")
    print(table("round trip (ms)", ["path", "p50", "p95"], rows))
    print(f"server spawn to initialized: {startup * ms:,.0f} ms")


if __name__ == "__main__":
    main()
