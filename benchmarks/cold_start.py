"""Cold start: what a new process pays before memory answers, each figure from a fresh Python process.

Run from the repository root (needs the ``mcp`` extra for the MCP rows)::

    python benchmarks/cold_start.py                  # 5 processes per measure, ~1.5 min on 2 vCPUs
    python benchmarks/cold_start.py --runs 9 --think 0,1,3
    git worktree add /tmp/before <commit>            # then: the same measures of that commit, interleaved
    python benchmarks/cold_start.py --baseline /tmp/before/packages/elastic-memory/src

**Processes.** Every measure starts its own Python process, so nothing is imported or loaded
beforehand; the model's files are in the OS page cache after the first run (a warm disk, a
cold process), as on a machine that has run the library before. The built-in model
(``embedder="auto"``) throughout. Each row is the median of ``--runs`` processes, with the
fastest and slowest beside it: the machines this runs on are small and shared. With
``--baseline SRC`` every measure also runs with ``SRC`` (another checkout's
``packages/elastic-memory/src``) first on ``PYTHONPATH``, process by process in turn with this
checkout's, so that both see the same moments of a noisy machine.

**Measures.**

- ``import elastic_memory``: the import alone, timed inside the process.
- *first remember*: from spawning ``python -c`` to the first ``Memory.remember`` returning on a
  new store (interpreter start, import, open, the model load, one embedding), timed by this
  script.
- *first turn*: ``Memory.open`` on a new file, then ``--think`` seconds of the host's own work
  (the user typing, the host's model answering), then ``build_context`` and ``record_turn``
  timed one after the other, then the first ``recall`` (which needs the model).
- *MCP*: from spawning ``elastic-memory mcp --db NEW`` to its answer to ``initialize``, then
  to ``tools/list``, over stdio with the SDK's ``ClientSession``; then, ``--mcp-idle`` seconds
  later (a client waits for its user's first message), the first ``recall`` tool call alone
  (it needs the model).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _common import environment, section, table

SERVER_CMD = shutil.which("elastic-memory") or os.path.join(os.path.dirname(sys.executable), "elastic-memory")

IMPORT = """
import time
started = time.perf_counter()
import elastic_memory
print(time.perf_counter() - started)
"""

FIRST_REMEMBER = """
import sys
from elastic_memory import Memory
with Memory.open(sys.argv[1]) as mem:
    mem.remember("The user's dog is called Biscuit.")
    print("remembered", flush=True)
"""

FIRST_TURN = """
import json, sys, time
from elastic_memory import Memory
path, think = sys.argv[1], float(sys.argv[2])
t0 = time.perf_counter()
mem = Memory.open(path)
t1 = time.perf_counter()
time.sleep(think)
t2 = time.perf_counter()
plan = mem.build_context("Where does my sister live?", session_id="s1")
t3 = time.perf_counter()
receipt = mem.record_turn("My sister Lena lives in Lisbon.", "Noted: Lena lives in Lisbon.", session_id="s1")
t4 = time.perf_counter()
mem.recall("which city is Lena in", k=5)
t5 = time.perf_counter()
assert receipt.ok, receipt.error
print(json.dumps({"open": t1 - t0, "build_context": t3 - t2, "record_turn": t4 - t3, "recall": t5 - t4}))
mem.close()
"""


#: The environment of a measured process: this checkout's, or with a baseline's sources first.
Env = dict[str, str]


def child(env: Env, script: str, *args: str) -> str:
    """Run ``script`` in a new interpreter; its stdout."""
    argv = [sys.executable, "-c", script, *args]
    done = subprocess.run(argv, capture_output=True, text=True, check=True, env=env)
    return done.stdout


def until_line(env: Env, script: str, *args: str) -> float:
    """Seconds from spawning ``script`` to its first line on stdout (the process's exit is not counted)."""
    started = time.perf_counter()
    argv = [sys.executable, "-c", script, *args]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env=env) as proc:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        elapsed = time.perf_counter() - started
        proc.communicate()
    if not line or proc.returncode:
        msg = f"the child failed (exit {proc.returncode})"
        raise RuntimeError(msg)
    return elapsed


async def mcp_once(env: Env, db: Path, idle: float) -> dict[str, float]:
    """``elastic-memory mcp`` on a new store: seconds to initialize, to tools/list; a first recall ``idle`` s later."""
    import anyio  # an mcp dependency
    from mcp import ClientSession, StdioServerParameters, stdio_client  # the mcp extra

    # The SDK passes the server only a few variables: PYTHONPATH is added (a baseline's sources).
    extra = {"PYTHONPATH": env["PYTHONPATH"]} if "PYTHONPATH" in env else None
    params = StdioServerParameters(command=SERVER_CMD, args=["mcp", "--db", str(db)], env=extra)
    started = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        t1 = time.perf_counter()
        tools = await session.list_tools()
        t2 = time.perf_counter()
        await anyio.sleep(idle)
        t3 = time.perf_counter()
        result = await session.call_tool("recall", {"query": "dog", "k": 5})
        t4 = time.perf_counter()
    if not tools.tools or result.is_error:
        msg = f"the MCP server failed: {result.content}"
        raise RuntimeError(msg)
    return {
        "start to initialize": t1 - started,
        "start to tools/list": t2 - started,
        f"{idle:g} s later, recall": t4 - t3,
    }


Measure = Callable[[Env, Path], dict[str, float]]


def repeat(runs: int, envs: dict[str, Env], measure: Measure) -> dict[str, dict[str, list[float]]]:
    """``measure`` in ``runs`` fresh processes per environment, in turn, each on a new store: by row, by environment."""
    out: dict[str, dict[str, list[float]]] = {}
    for _ in range(runs):
        for label, env in envs.items():
            folder = Path(tempfile.mkdtemp(prefix="cold-start-"))
            try:
                for name, seconds in measure(env, folder / "memory.db").items():
                    out.setdefault(name, {}).setdefault(label, []).append(seconds)
            finally:
                shutil.rmtree(folder, ignore_errors=True)
    return out


def rows(prefix: str, figures: dict[str, dict[str, list[float]]]) -> list[list[object]]:
    """Table rows: per measure, each environment's median, fastest and slowest (ms)."""
    ms = 1000.0
    out: list[list[object]] = []
    for name, by_env in figures.items():
        cells: list[object] = [f"{prefix}{name}"]
        for v in by_env.values():
            cells += [statistics.median(v) * ms, min(v) * ms, max(v) * ms]
        out.append(cells)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per measure")
    parser.add_argument("--think", default="0,1", help="seconds between open and the first turn, comma-separated")
    parser.add_argument("--skip-mcp", action="store_true", help="no elastic-memory mcp rows")
    parser.add_argument("--mcp-idle", type=float, default=2.0, help="seconds between tools/list and the first recall")
    parser.add_argument(
        "--baseline", type=Path, help="another checkout's packages/elastic-memory/src, measured in turn"
    )
    args = parser.parse_args()
    thinks = [float(t) for t in args.think.split(",")]
    print("\n".join(environment()))
    here = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    envs: dict[str, Env] = {}
    if args.baseline is not None:
        envs["baseline"] = {**here, "PYTHONPATH": str(args.baseline.resolve())}
        print(f"baseline  {args.baseline.resolve()}")
    envs["checkout"] = here
    repeat(1, envs, lambda env, db: {"warm-up": until_line(env, FIRST_REMEMBER, str(db))})  # page cache, model folder

    out: list[list[object]] = []
    out += rows("", repeat(args.runs, envs, lambda env, db: {"import elastic_memory": float(child(env, IMPORT))}))
    first = repeat(
        args.runs, envs, lambda env, db: {"start to first remember": until_line(env, FIRST_REMEMBER, str(db))}
    )
    out += rows("", first)
    for think in thinks:
        turn = repeat(
            args.runs, envs, lambda env, db, think=think: json.loads(child(env, FIRST_TURN, str(db), str(think)))
        )
        out += rows(f"think {think:g} s: ", turn)
    if not args.skip_mcp:
        import anyio  # an mcp dependency

        out += rows("mcp: ", repeat(args.runs, envs, lambda env, db: anyio.run(mcp_once, env, db, args.mcp_idle)))
    section(f"cold start, built-in model, {args.runs} fresh processes per row and checkout")
    headers = ["measure"] + [f"{label} {stat}" for label in envs for stat in ("p50", "min", "max")]
    print(table("milliseconds", headers, out, digits=0))


if __name__ == "__main__":
    main()
