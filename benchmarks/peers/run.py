"""Side-by-side benchmark of agent-memory stores on one synthetic workload.

All peers run in ONE process and are interleaved: every ingest batch and every
query round visits the peers in a fresh random order, so drift on a busy
machine lands on all of them alike. Read medians and the ``x floor`` ratios
(paired per round against the sqlite-vec+fts5 engine floor), not lone times.
Peak RSS cannot be split per peer inside one process, so each peer is run
once more alone in a child process that only reports its peak RSS.

    python bench/run.py --sizes 10000 --out /tmp/peerbench-10k.json
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib.metadata
import json
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from data import batches, exact_top_k, make_workload
from peers import PEERS, Peer, sqlite_module

K = 10
FLOOR = "sqlite-vec+fts5"
WARMUP = 2
VERSIONED = [
    "numpy", "sqlite-vec", "pysqlite3-binary", "langgraph", "langgraph-checkpoint-sqlite",
    "aiosqlite", "langchain-core", "langchain-community", "chromadb", "lancedb", "pyarrow",
    "haystack-ai", "llama-index-core", "mem0ai", "qdrant-client", "elastic-memory", "faiss-cpu",
]  # fmt: skip


def main() -> None:
    args = parse_args()
    if args.probe:
        print(json.dumps(probe_rss(args.probe, args.sizes[0], args)))
        return
    report = {"meta": describe(args), "sizes": {}}
    for n in args.sizes:
        result = run_size(n, args)
        report["sizes"][str(n)] = result
        print(markdown(n, result), flush=True)
        if args.out:  # after every size, so a long run keeps what it has
            with open(args.out, "w") as f:
                json.dump(report, f, indent=1)
            print(f"wrote {args.out}")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sizes", type=int, nargs="+", default=[10_000])
    p.add_argument("--queries", type=int, default=200, help="query rounds per size")
    p.add_argument("--batch", type=int, default=500)
    p.add_argument(
        "--budget-s",
        type=float,
        default=30.0,
        help="per peer and phase: stop sending queries to a peer after this much",
    )
    p.add_argument("--peers", default=",".join(PEERS), help="comma-separated subset of: " + ", ".join(PEERS))
    p.add_argument(
        "--root",
        default="/dev/shm" if os.path.isdir("/dev/shm") else None,
        help="where peer files go (default tmpfs: measures CPU, not this disk's fsync)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-rss", action="store_true", help="skip the per-peer child processes")
    p.add_argument("--out", help="write the full results as JSON here")
    p.add_argument("--probe", help=argparse.SUPPRESS)
    return p.parse_args()


def describe(args) -> dict:
    versions = {}
    for pkg in VERSIONED:
        try:
            versions[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            versions[pkg] = None
    sqlite = sqlite_module()
    return {
        "command": " ".join([os.path.basename(sys.executable), *sys.argv]),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "sqlite_module": sqlite.__name__,
        "sqlite_version": sqlite.sqlite_version,
        "root": args.root or tempfile.gettempdir(),
        "k": K, "batch": args.batch, "queries": args.queries, "budget_s": args.budget_s,
        "seed": args.seed, "versions": versions,
    }  # fmt: skip


# --- one size, all peers interleaved ---------------------------------------


def run_size(n: int, args) -> dict:
    t0 = time.perf_counter()
    w = make_workload(n, args.queries, seed=args.seed)
    exact = exact_top_k(w.vectors, w.query_vectors, K)
    print(f"\n# n={n}: workload ready in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    root = tempfile.mkdtemp(prefix=f"peerbench-{n}-", dir=args.root)
    rng = random.Random(args.seed)
    peers: dict[str, Peer] = {}
    out: dict[str, dict] = {}
    for name in args.peers.split(","):
        out[name] = {}
        try:
            peer = PEERS[name]()
            os.mkdir(os.path.join(root, name))
            peer.setup(os.path.join(root, name))
            peers[name] = peer
            out[name].update(notes=peer.notes, add_s=0.0)
        except Exception as e:  # a peer that cannot run is reported, not fatal
            out[name]["error"] = f"setup: {type(e).__name__}: {e}".splitlines()[0]

    def guarded(name, step, *a):
        try:
            getattr(peers[name], step)(*a)
        except Exception as e:
            out[name]["error"] = f"{step}: {type(e).__name__}: {e}".splitlines()[0]
            drop(peers, name)

    for batch in batches(w, args.batch):
        for name in shuffled(peers, rng):
            t = time.perf_counter()
            guarded(name, "add", batch)
            out[name]["add_s"] += time.perf_counter() - t
    for name in shuffled(peers, rng):
        t = time.perf_counter()
        guarded(name, "finish")
        out[name]["finish_s"] = time.perf_counter() - t
    for name in peers:
        out[name]["ingest_per_s"] = n / (out[name]["add_s"] + out[name]["finish_s"])
    print(f"# n={n}: ingest done at {time.perf_counter() - t0:.0f}s", file=sys.stderr)

    text_peers = {k: p for k, p in peers.items() if p.supports_text}
    vec = query_rounds(
        peers,
        lambda p, i: p.search_vector(w.query_vectors[i], K),
        lambda p, i: p.search_vector(w.vectors[i], K),
        args,
        rng,
    )
    kw = query_rounds(
        text_peers,
        lambda p, i: p.search_text(w.query_texts[i], K),
        lambda p, i: p.search_text(" ".join(w.texts[i].split()[:3]), K),
        args,
        rng,
    )
    print(f"# n={n}: queries done at {time.perf_counter() - t0:.0f}s", file=sys.stderr)

    for name in list(peers):
        guarded(name, "close")
    for name, r in out.items():
        if "ingest_per_s" not in r:
            continue
        r["vector"] = summarise(vec.get(name), exact=exact)
        r["keyword"] = summarise(kw.get(name), targets=w.kw_targets)
        r["disk_bytes"] = disk_bytes(os.path.join(root, name))
        for phase in (vec, kw):
            if "error" in phase.get(name, {}):
                r.setdefault("error", phase[name]["error"])
    shutil.rmtree(root, ignore_errors=True)

    if not args.no_rss:
        for name, r in out.items():
            if "ingest_per_s" in r:
                r.update(run_probe(name, n, args))
        print(f"# n={n}: rss probes done at {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    return {"n": n, "peers": out, "elapsed_s": time.perf_counter() - t0}


def drop(peers: dict[str, Peer], name: str) -> None:
    """Take a failed peer out of the run, releasing what it can."""
    with contextlib.suppress(Exception):
        peers.pop(name).close()


def shuffled(peers: dict, rng: random.Random) -> list[str]:
    order = list(peers)
    rng.shuffle(order)
    return order


def query_rounds(peers: dict[str, Peer], query, warmup, args, rng) -> dict[str, dict]:
    """Round i sends query i to every peer, in a fresh order, until its budget is spent.

    Two warm-up calls per peer come first (index loads, caches); the first one
    is kept as ``first_ms``. A peer that raises is stopped and the error kept.
    """
    rec = {name: {"lat": {}, "ids": {}, "spent": 0.0} for name in peers}

    def timed(name, fn, i):
        r = rec[name]
        t = time.perf_counter()
        try:
            ids = fn(peers[name], i)
        except Exception as e:
            r["error"] = f"query: {type(e).__name__}: {e}".splitlines()[0]
            r["spent"] = float("inf")
            return None, 0.0
        return ids, time.perf_counter() - t

    for name in peers:
        for i in range(WARMUP):
            _, dt = timed(name, warmup, i)
            rec[name].setdefault("first_ms", dt * 1e3)
    for i in range(args.queries):
        for name in shuffled(peers, rng):
            r = rec[name]
            if r["spent"] > args.budget_s:
                continue
            ids, dt = timed(name, query, i)
            if ids is not None:
                r["spent"] += dt
                r["lat"][i], r["ids"][i] = dt, ids
    floor = rec.get(FLOOR, {}).get("lat", {})
    for r in rec.values():  # paired ratio against the floor, same round
        r["ratios"] = [r["lat"][i] / floor[i] for i in r["lat"] if i in floor]
    return rec


def summarise(rec: dict | None, exact=None, targets=None) -> dict | None:
    if not rec or not rec["lat"]:
        return None
    ms = sorted(v * 1e3 for v in rec["lat"].values())
    s = {
        "n_queries": len(ms),
        "p50_ms": statistics.median(ms),
        "p95_ms": ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))],
        "first_ms": rec.get("first_ms"),
        "x_floor": statistics.median(rec["ratios"]) if rec["ratios"] else None,
    }
    if exact is not None:
        hits = [len(set(ids[:K]) & set(exact[i].tolist())) / K for i, ids in rec["ids"].items()]
        s["recall_at_10"] = statistics.fmean(hits)
    if targets is not None:
        s["hit_at_10"] = statistics.fmean(targets[i] in ids[:K] for i, ids in rec["ids"].items())
    return s


def disk_bytes(path: str) -> int:
    total = 0
    for dirpath, _, files in os.walk(path):
        for f in files:
            total += os.stat(os.path.join(dirpath, f)).st_size
    return total


# --- peak RSS, one child process per peer -----------------------------------


def run_probe(name: str, n: int, args) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--probe", name, "--sizes", str(n),
           "--batch", str(args.batch), "--seed", str(args.seed)]  # fmt: skip
    if args.root:
        cmd += ["--root", args.root]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, check=True)
        return json.loads(done.stdout.strip().splitlines()[-1])
    except Exception as e:
        return {"rss_error": f"{type(e).__name__}: {e}".splitlines()[0]}


def rss_mb(field: str = "VmHWM") -> float:
    """This process's peak (``VmHWM``) or current (``VmRSS``) resident set.

    Linux carries ``ru_maxrss`` over fork+exec, so a child started by a big
    parent reports at least the parent's size; the /proc figures belong to
    the child's own address space. Fall back to getrusage elsewhere.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def reset_peak_rss() -> None:
    """Start the peak over from the current RSS (Linux), so the workload's
    own generation peak does not hide a small peer."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def probe_rss(name: str, n: int, args) -> dict:
    """Child side: workload, then ingest + 20 queries of one peer; report peak RSS."""
    w = make_workload(n, 20, seed=args.seed)
    gc.collect()
    reset_peak_rss()
    base = rss_mb("VmRSS")
    root = tempfile.mkdtemp(prefix=f"peerbench-rss-{n}-", dir=args.root)
    try:
        peer = PEERS[name]()
        peer.setup(root)
        for batch in batches(w, args.batch):
            peer.add(batch)
        peer.finish()
        for i in range(20):
            peer.search_vector(w.query_vectors[i], K)
            if peer.supports_text:
                peer.search_text(w.query_texts[i], K)
        peak = rss_mb("VmHWM")
        peer.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return {"peak_rss_mb": peak, "rss_over_workload_mb": peak - base}


# --- report ----------------------------------------------------------------


COLUMNS = [
    "peer", "ingest/s", "ingest x floor", "finish s",
    "vec p50 ms", "vec p95 ms", "vec x floor", "recall@10",
    "kw p50 ms", "kw p95 ms", "kw x floor", "kw hit@10",
    "disk MB", "peak RSS MB", "RSS over data MB", "queries vec/kw",
]  # fmt: skip


def markdown(n: int, result: dict) -> str:
    lines = [f"\n### n = {n:,}\n", "| " + " | ".join(COLUMNS) + " |", "|---" * len(COLUMNS) + "|"]
    floor_rate = result["peers"].get(FLOOR, {}).get("ingest_per_s")
    errors = []
    for name, r in result["peers"].items():
        if "ingest_per_s" not in r:
            errors.append(f"- {name}: {r.get('error', 'did not run')}")
            continue
        v, k = r.get("vector") or {}, r.get("keyword") or {}
        cells = [
            name,
            f"{r['ingest_per_s']:,.0f}",
            fmt(floor_rate / r["ingest_per_s"] if floor_rate else None, "{:.2f}"),
            fmt(r["finish_s"], "{:.2f}"),
            fmt(v.get("p50_ms")), fmt(v.get("p95_ms")), fmt(v.get("x_floor"), "{:.2f}"),
            fmt(v.get("recall_at_10"), "{:.3f}"),
            fmt(k.get("p50_ms")), fmt(k.get("p95_ms")), fmt(k.get("x_floor"), "{:.2f}"),
            fmt(k.get("hit_at_10"), "{:.2f}"),
            fmt(r.get("disk_bytes", 0) / 2**20, "{:.1f}"),
            fmt(r.get("peak_rss_mb"), "{:.0f}"), fmt(r.get("rss_over_workload_mb"), "{:.0f}"),
            f"{v.get('n_queries', 0)}/{k.get('n_queries', '-')}",
        ]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
        if "error" in r:
            errors.append(f"- {name}: stopped early: {r['error']}")
        if "rss_error" in r:
            errors.append(f"- {name}: RSS probe failed: {r['rss_error']}")
    return "\n".join(lines + (["", *errors] if errors else []))


def fmt(x, spec: str = "{:.3g}") -> str:
    if x is None:
        return "-"
    return spec.format(x) if spec != "{:.3g}" or x < 1000 else f"{x:,.0f}"


if __name__ == "__main__":
    main()
