"""The three vector tiers on one store: open + first recall, ANN build, latency and recall@10, filters.

Run from the repository root (faiss installed: ``pip install -e "packages/elastic-memory[ann]"``)::

    python benchmarks/vector_tiers.py                  # 100k memories, ~4 min on 2 vCPUs
    python benchmarks/vector_tiers.py --size 20000     # a quick look, ~1 min

**Workload.** The peer harness's (``benchmarks/peers/data.py``, seed 0): 384-d unit vectors
from a mixture of 200 Gaussians, with texts; every memory also gets one of 100 agents'
sessions (``session_id`` ``s00``..``s99``, Zipf-sized: the largest holds ~19 %, the
smallest ~0.2 %) so filtered recall has selective and broad cases. Written once with
``remember_many(vectors=)`` into a temporary file.

**Open + first recall.** A fresh interpreter per tier and per repeat (5), on the same file
with a warm page cache: ``Memory.open`` then one ``recall(vector=..., mode="semantic")``,
timed together. ``auto`` answers that first query exactly while it builds the ANN index
in a worker thread; the build is timed separately (``load_index()`` after the first query).

**Queries.** In one process per tier, 200 query vectors from the same mixture, k = 10,
``touch=False``, after 10 warm-up queries: p50/p95 of the wall time around
``recall``; recall@10 against numpy's exact top-10 over the same vectors (filtered: over the
rows the filter keeps). Filters: the smallest session (~0.2 %), the largest (~19 %).
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
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "peers"))

from _common import RESULTS, environment, percentile, run_block, section, table, write_json
from data import make_workload

TIERS = ("vec0", "ram", "auto")
K = 10
SESSIONS = 100


def session_of(n: int, seed: int = 0) -> np.ndarray:
    """Zipf-sized sessions ``0..SESSIONS-1`` for ``n`` memories."""
    weights = 1.0 / np.arange(1, SESSIONS + 1)
    return np.random.default_rng(seed).choice(SESSIONS, size=n, p=weights / weights.sum())


def build(path: str, n: int) -> None:
    from elastic_memory import Memory

    w = make_workload(n, 1, seed=0)
    sessions = session_of(n)
    with Memory.open(path, embedder=None, vector_index="vec0") as mem:
        for start in range(0, n, 1000):
            stop = min(start + 1000, n)
            mem.remember_many(
                [
                    {"content": w.texts[i], "id": str(i), "session_id": f"s{s:02d}", "metadata": w.metadata[i]}
                    for i, s in zip(range(start, stop), sessions[start:stop], strict=True)
                ],
                vectors=list(w.vectors[start:stop]),
            )


def child_open(path: str, tier: str) -> dict[str, float]:
    """In a fresh process: open + first recall, then (auto) the ANN build."""
    t0 = time.perf_counter()
    from elastic_memory import Memory

    imported = time.perf_counter()
    query = make_workload(1000, 1, seed=1).query_vectors[0]
    t1 = time.perf_counter()
    mem = Memory.open(path, embedder=None, vector_index=tier)
    mem.recall(vector=query, k=K, mode="semantic", touch=False)
    first = time.perf_counter() - t1
    t2 = time.perf_counter()
    mem.load_index()
    build_s = time.perf_counter() - t2
    stats = mem.stats()
    mem.close()
    return {
        "import_s": imported - t0,
        "open_first_s": first,
        "build_s": build_s,
        "index": stats["vector_index"],
        "bytes": stats["vector_index_bytes"],
    }


def child_queries(path: str, tier: str, n: int, queries: int) -> dict[str, object]:
    """In one process: latency and recall@10, unfiltered and with two session filters."""
    from elastic_memory import Memory

    w = make_workload(n, queries, seed=0)
    sessions = session_of(n)
    counts = np.bincount(sessions, minlength=SESSIONS)
    smallest, largest = int(np.argmin(counts)), int(np.argmax(counts))
    out: dict[str, object] = {"share": {"small": counts[smallest] / n, "large": counts[largest] / n}}
    with Memory.open(path, embedder=None, vector_index=tier) as mem:
        mem.load_index()
        for label, session in (("none", None), ("small", smallest), ("large", largest)):
            keep = np.arange(n) if session is None else np.flatnonzero(sessions == session)
            filters = None if session is None else {"session_id": f"s{session:02d}"}
            sub = w.vectors[keep]
            for q in w.query_vectors[:10]:
                mem.recall(vector=q, k=K, mode="semantic", filters=filters, touch=False)
            times, recalls, served = [], [], set()
            for q in w.query_vectors:
                t = time.perf_counter()
                hits = mem.recall(vector=q, k=K, mode="semantic", filters=filters, touch=False)
                times.append((time.perf_counter() - t) * 1000)
                scores = sub @ q
                top = keep[np.argpartition(-scores, min(K, len(keep) - 1))[:K]]
                recalls.append(len({int(h.id) for h in hits} & set(top.tolist())) / min(K, len(keep)))
            how = mem.explain(vector=w.query_vectors[0], k=K, mode="semantic", filters=filters).details
            served.add(how["vector_index"] + (f"/{how['ram_scan']}" if "ram_scan" in how else ""))
            out[label] = {
                "p50": statistics.median(times),
                "p95": percentile(times, 95),
                "recall": float(np.mean(recalls)),
                "served": ",".join(sorted(served)),
            }
    return out


def run_child(*args: str) -> dict[str, object]:
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=100_000)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument(
        "--json", type=Path, help=f"also write the figures here (for charts.py: {RESULTS}/vector_tiers.json)"
    )
    p.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        kind, path, tier = args.child[:3]
        result = child_open(path, tier) if kind == "open" else child_queries(path, tier, args.size, args.queries)
        print(json.dumps(result))
        return
    print("\n".join(environment()))
    root = tempfile.mkdtemp(prefix="em-tiers-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    try:
        path = os.path.join(root, "memory.db")
        t = time.perf_counter()
        build(path, args.size)
        size = os.path.getsize(path)
        print(f"\nstore: {args.size:,} memories written in {time.perf_counter() - t:.1f} s; file {size / 1e6:.1f} MB")
        opens: dict[str, list[dict[str, float]]] = {tier: [] for tier in TIERS}
        for _ in range(args.repeats):  # rotate the tiers so drift lands on all of them
            for tier in TIERS:
                opens[tier].append(run_child("--child", "open", path, tier, "--size", str(args.size)))  # type: ignore[arg-type]
        section(f"open + first recall, {args.size:,} memories (fresh process, median of {args.repeats})")
        rows = []
        for tier in TIERS:
            runs = opens[tier]
            rows.append(
                [
                    tier,
                    statistics.median(r["open_first_s"] for r in runs),
                    statistics.median(r["build_s"] for r in runs),
                    str(runs[0]["index"]),
                    runs[0]["bytes"] / 1e6,
                    statistics.median(r["import_s"] for r in runs),
                ]
            )
        print(table("", ["tier", "open+first s", "then build s", "serves", "index MB", "import s"], rows, digits=3))
        results = {
            tier: run_child("--child", "q", path, tier, "--size", str(args.size), "--queries", str(args.queries))
            for tier in TIERS
        }
        share = results["ram"]["share"]  # type: ignore[index]
        section(
            f"recall(vector=, k=10), {args.queries} queries; filters: a session of {share['small']:.1%} "  # type: ignore[index]
            f"and one of {share['large']:.1%} of the rows"  # type: ignore[index]
        )
        rows = []
        for tier in TIERS:
            for label in ("none", "small", "large"):
                r = results[tier][label]  # type: ignore[index]
                rows.append([f"{tier} / {label}", r["p50"], r["p95"], r["recall"], r["served"]])
        print(table("", ["tier / filter", "p50 ms", "p95 ms", "recall@10", "served by"], rows, digits=3))
        names = {
            "none": "none",
            "small": f"a session of {share['small']:.1%}",
            "large": f"a session of {share['large']:.1%}",
        }  # type: ignore[index]
        write_json(
            args.json,
            {
                "run": run_block(args),
                "size": args.size,
                "open_first_recall": [
                    {
                        "tier": tier,
                        "seconds": statistics.median(r["open_first_s"] for r in opens[tier]),
                        "then_build_s": statistics.median(r["build_s"] for r in opens[tier]),
                        "index_mb": opens[tier][0]["bytes"] / 1e6,
                    }
                    for tier in TIERS
                ],
                "recall": [
                    {
                        "tier": tier,
                        "filter": names[label],
                        "p50_ms": results[tier][label]["p50"],  # type: ignore[index]
                        "p95_ms": results[tier][label]["p95"],  # type: ignore[index]
                        "recall@10": results[tier][label]["recall"],  # type: ignore[index]
                        "served_by": results[tier][label]["served"],  # type: ignore[index]
                    }
                    for tier in TIERS
                    for label in ("none", "small", "large")
                ],
            },
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
