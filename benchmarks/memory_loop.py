"""The memory loop: record_turn and build_context latency at 10k/100k turns, LoCoMo evidence in the plan.

Run from the repository root::

    python benchmarks/memory_loop.py                         # 10k and 100k turns + LoCoMo, ~40 min on 2 vCPUs
    python benchmarks/memory_loop.py --sizes 10000 --skip-locomo   # a quick look, ~3 min
    python benchmarks/memory_loop.py --no-postgres           # SQLite only

**Backends.** Each size fills a SQLite file and, beside it, a PostgreSQL store on a
throwaway server (``TemporaryPostgres``, fsync on), turn by turn, then queries both query by
query, taking turns going first: the ratios compare the two under the same load.
``--also-session-boost B`` adds a second SQLite file with ``RecallConfig(session_boost=B)``
the same way (and a LoCoMo run with it).

**record_turn.** A store is filled to N turns through ``Memory.record_turn`` itself (no llm:
rules and heuristic capture inline, which is the write path), 20 turns per session, user
and reply texts from the synthetic corpus of ``ingest_recall.py``. The latency of the last
2,000 turns is reported (p50/p95), and beside it, interleaved turn by turn, the raw floor:
the same two texts inserted with the driver the library picked into a plain table plus an
FTS5-indexed table (``porter unicode61``, kept by a trigger), one transaction per turn.

**build_context.** After the fill, the worker embeds every chunk in the background
(``drain``; its throughput is reported) with the benchmark's 384-d word-vector embedder,
then 200 held-out queries run ``build_context`` from a new session (p50/p95), interleaved
with ``recall(k=25)`` on the same store, the retrieval the plan is built on. The query
embedding of the real model (MiniLM int8) is measured alone and reported separately; add
it to the hybrid figures for a store using the built-in embedder.

**LoCoMo.** One store per conversation with the built-in embedder, each pair of
consecutive dialogue turns recorded as one exchange (``metadata={"dia_ids": [...]}``), a
plan built per question from a new session with a 1,800-token budget (mem0 reports 1,764
tokens per query). A question counts when every evidence turn's chunk is among the plan's
items ("all"), or at least one ("any"). The data stays outside the repository (CC BY-NC 4.0).
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _common import RESULTS, environment, median, percentile, run_block, section, table, write_json
from _statements import RoundTrips, Statements
from elastic_memory import LoopConfig, Memory, MiniLMEmbedder, RecallConfig
from elastic_memory.storage.sqlite.driver import driver
from ingest_recall import WordVectorEmbedder, make_corpus
from locomo_recall import DEFAULT_DATA, MemoEmbedder, turn_text

TURNS_PER_SESSION = 20
STATEMENTS = Statements()
ROUND_TRIPS = RoundTrips()
MEASURED = 2_000
QUERIES = 200
BUDGET = 1_800
RAW_SCHEMA = (
    "CREATE TABLE turns (seq INTEGER PRIMARY KEY, session_id TEXT, user_text TEXT, reply_text TEXT, created_at REAL)",
    "CREATE TABLE chunks (seq INTEGER PRIMARY KEY, session_id TEXT, content TEXT NOT NULL)",
    "CREATE VIRTUAL TABLE chunks_fts USING fts5(content, content='chunks', content_rowid='seq', "
    "tokenize='porter unicode61')",
    "CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN "
    "INSERT INTO chunks_fts (rowid, content) VALUES (new.seq, new.content); END",
)


def raw_connect(path: Path) -> Any:
    """The raw floor's connection: the library's driver and pragmas."""
    conn = driver().module.connect(str(path), isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    for statement in RAW_SCHEMA:
        conn.execute(statement)
    return conn


def raw_turn(conn: Any, session: str, user: str, reply: str) -> None:
    """One turn the raw way: transcript row + FTS-indexed chunk, one transaction."""
    conn.execute("BEGIN IMMEDIATE")
    conn.execute(
        "INSERT INTO turns (session_id, user_text, reply_text, created_at) VALUES (?, ?, ?, ?)",
        (session, user, reply, time.time()),
    )
    conn.execute(
        "INSERT INTO chunks (session_id, content) VALUES (?, ?)", (session, f"User: {user}\nAssistant: {reply}")
    )
    conn.execute("COMMIT")


def bench_size(
    n: int,
    workdir: Path,
    minilm: MiniLMEmbedder,
    pg_url: str | None,
    recall: RecallConfig,
    also: RecallConfig | None = None,
    figures: list[dict[str, Any]] | None = None,
) -> list[list[object]]:
    """Fill to ``n`` turns, then measure record_turn, background embedding and build_context.

    With ``pg_url`` a PostgreSQL store is filled and queried beside the SQLite file, turn by
    turn and query by query, so both see the same machine load; ``also`` adds a second SQLite
    file with that recall configuration, side by side in the same way. ``figures`` receives
    the SQLite file's per-turn figures (for ``--json``).
    """
    corpus = make_corpus(2 * n + QUERIES, QUERIES)
    embedder = WordVectorEmbedder(corpus.words)
    texts = corpus.texts
    config = LoopConfig(tier="standard", background=False)
    opened = {"embedder": embedder, "loop": config, "context_tokens": 32_768, "recall": recall}
    stores = {"SQLite": Memory.open(workdir / f"loop-{n}.db", **opened)}
    if also is not None:
        stores["SQLite, session boost " + str(also.session_boost)] = Memory.open(
            workdir / f"loop-{n}-also.db", **{**opened, "recall": also}
        )
    if pg_url is not None:
        stores["PostgreSQL"] = Memory.open(f"{pg_url}?schema=loop_{n}", **opened)
    raw = raw_connect(workdir / f"raw-{n}.db")
    lib_times: dict[str, list[float]] = {name: [] for name in stores}
    raw_times: list[float] = []
    fill: dict[str, float] = dict.fromkeys(stores, 0.0)
    for i in range(n):
        session = f"s{i // TURNS_PER_SESSION}"
        user, reply = texts[2 * i], texts[2 * i + 1]
        measured = i >= n - MEASURED
        if measured:
            t = time.perf_counter()
            raw_turn(raw, session, user, reply)
            raw_times.append(time.perf_counter() - t)
        for name, mem in stores.items():
            t = time.perf_counter()
            receipt = mem.record_turn(user, reply, session_id=session)
            took = time.perf_counter() - t
            fill[name] += took
            if measured:
                lib_times[name].append(took)
            if not receipt.ok:
                raise SystemExit(f"record_turn failed on {name}: {receipt.error}")
    for name, mem in stores.items():
        t = time.perf_counter()
        mem.drain()
        embed_seconds = time.perf_counter() - t
        health = mem.health()
        print(
            f"{name}, {n:,} turns: filled in {fill[name]:.0f} s ({n / fill[name]:,.0f} turns/s), background drain "
            f"{embed_seconds:.0f} s ({n / max(embed_seconds, 1e-9):,.0f} chunks/s incl. embedding), "
            f"jobs done {health['jobs_done']}"
        )
    queries = corpus.queries[:QUERIES]
    for name, mem in stores.items():
        # As a long-running store would be: its vector index loaded, or built where the size
        # calls for one (SQLite's ANN, PostgreSQL's HNSW from 50k vectors), before measuring.
        t = time.perf_counter()
        tier = mem.load_index()
        print(f"{name}, {n:,} turns: vector index {tier!r} ready in {time.perf_counter() - t:.0f} s")
        for q in queries[:10]:  # warm up
            mem.build_context(q, session_id="bench-query")
    plan_times: dict[str, list[float]] = {name: [] for name in stores}
    #: Statements (SQLite) or round trips (PostgreSQL) per build_context and per recall, by store.
    sent: dict[str, dict[str, list[int]]] = {name: {"build_context": [], "recall": []} for name in stores}
    recall_times: dict[str, list[float]] = {name: [] for name in stores}
    tokens: list[int] = []
    budget = 0
    order = list(stores.items())
    for i, q in enumerate(queries):
        for name, mem in order[i % len(order) :] + order[: i % len(order)]:  # the stores take turns going first
            before = STATEMENTS.count + ROUND_TRIPS.count
            t = time.perf_counter()
            mem.recall(q, k=25, touch=False)
            recall_times[name].append(time.perf_counter() - t)
            middle = STATEMENTS.count + ROUND_TRIPS.count
            t = time.perf_counter()
            plan = mem.build_context(q, session_id="bench-query")
            plan_times[name].append(time.perf_counter() - t)
            sent[name]["recall"].append(middle - before)
            sent[name]["build_context"].append(STATEMENTS.count + ROUND_TRIPS.count - middle)
            if name == "SQLite":
                tokens.append(plan.tokens)
                budget = plan.budget
    for mem in stores.values():
        mem.close()
    raw.close()
    for name, counts in sent.items():
        unit = "round trips" if name == "PostgreSQL" else "statements"
        print(
            f"note: {name}, {n:,} turns, {unit} (p50, top-level; the background worker idle): "
            f"build_context {median(counts['build_context']):.0f}, recall(k=25) {median(counts['recall']):.0f}"
        )
    embed_times = []
    for q in queries[:50]:
        t = time.perf_counter()
        minilm.embed([q])
        embed_times.append(time.perf_counter() - t)
    ms = 1_000.0
    base_turn, base_plan = median(lib_times["SQLite"]), median(plan_times["SQLite"])
    if figures is not None:
        for step, values in (("record_turn", lib_times["SQLite"]), ("build_context", plan_times["SQLite"])):
            figures.append({"step": step, "n": n, "p50_ms": median(values) * ms, "p95_ms": percentile(values, 95) * ms})
    rows: list[list[object]] = []
    for name in stores:
        turn, plan_ = lib_times[name], plan_times[name]
        rows += [
            [f"{name}: record_turn at {n:,}", median(turn) * ms, percentile(turn, 95) * ms, median(turn) / base_turn],
            [
                f"{name}: build_context at {n:,} (hybrid, {budget} tok)",
                median(plan_) * ms,
                percentile(plan_, 95) * ms,
                median(plan_) / base_plan,
            ],
            [
                f"  {name}: recall(k=25) hybrid, same store",
                median(recall_times[name]) * ms,
                percentile(recall_times[name], 95) * ms,
                median(recall_times[name]) / median(recall_times["SQLite"]),
            ],
        ]
    if "PostgreSQL" in stores:
        pg_turn, lite_turn = lib_times["PostgreSQL"], lib_times["SQLite"]
        rows.append(
            [
                "  PostgreSQL / SQLite record_turn p95",
                float("nan"),
                percentile(pg_turn, 95) / percentile(lite_turn, 95),
                float("nan"),
            ]
        )
    rows += [
        [
            "  raw floor (SQLite txn: turn + FTS chunk)",
            median(raw_times) * ms,
            percentile(raw_times, 95) * ms,
            median(raw_times) / base_turn,
        ],
        [
            "  + MiniLM query embedding (alone)",
            median(embed_times) * ms,
            percentile(embed_times, 95) * ms,
            float("nan"),
        ],
        [f"  plan tokens (mean of {len(tokens)})", sum(tokens) / len(tokens), max(tokens), float("nan")],
    ]
    return rows


def locomo(path: Path, workdir: Path, minilm: MiniLMEmbedder, recall: RecallConfig) -> dict[str, Any]:
    """Fraction of questions whose evidence chunks are in a 1,800-token plan, overall, by category and conversation."""
    import json

    embedder = MemoEmbedder(minilm)
    per_conversation: dict[str, float] = {}
    samples = json.loads(path.read_text(encoding="utf-8"))
    found_all: dict[int, list[float]] = defaultdict(list)
    found_any: dict[int, list[float]] = defaultdict(list)
    tokens: list[int] = []
    latency: list[float] = []
    config = LoopConfig(tier="standard", budget_tokens=BUDGET, background=False)
    for sample in samples:
        sid = sample["sample_id"]
        conv = sample["conversation"]
        keys = sorted((k for k in conv if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1]))
        held: list[float] = []
        db = workdir / f"locomo-{sid}-{recall.session_boost}.db"
        with Memory.open(db, embedder=embedder, loop=config, context_tokens=128_000, recall=recall) as mem:
            for key in keys:
                turns = conv[key]
                for i in range(0, len(turns), 2):
                    pair = turns[i : i + 2]
                    user = turn_text(pair[0])
                    reply = turn_text(pair[1]) if len(pair) > 1 else ""
                    mem.record_turn(
                        user, reply, session_id=f"{sid}/{key}", metadata={"dia_ids": [t["dia_id"] for t in pair]}
                    )
            mem.drain()
            for qa in sample["qa"]:
                evidence = set(qa.get("evidence") or [])
                if not evidence:
                    continue
                t = time.perf_counter()
                plan = mem.build_context(str(qa["question"]), session_id="question")
                latency.append(time.perf_counter() - t)
                tokens.append(plan.tokens)
                ids = [i.source_id for i in plan.items() if i.kind == "chunk" and i.source_id]
                shown = {d for r in mem.get_many(ids) for d in r.metadata.get("dia_ids", [])} if ids else set()
                category = int(qa["category"])
                found_all[category].append(float(evidence <= shown))
                held.append(float(evidence <= shown))
                found_any[category].append(float(bool(evidence & shown)))
        per_conversation[sid] = sum(held) / len(held)
    rows = []
    for category in sorted(found_all):
        rows.append(
            [
                f"category {category}",
                len(found_all[category]),
                sum(found_all[category]) / len(found_all[category]),
                sum(found_any[category]) / len(found_any[category]),
            ]
        )
    every = [v for c in found_all for v in found_all[c]]
    anyv = [v for c in found_any for v in found_any[c]]
    cat14 = [v for c in (1, 2, 3, 4) for v in found_all.get(c, [])]
    rows.append(["all questions", len(every), sum(every) / len(every), sum(anyv) / len(anyv)])
    rows.append(["categories 1-4", len(cat14), sum(cat14) / max(len(cat14), 1), float("nan")])
    print(
        table(
            f"LoCoMo dev: evidence chunks in a {BUDGET}-token plan (build_context, MiniLM int8, "
            f"session boost {recall.session_boost})",
            ["questions", "n", "all evidence", "any evidence"],
            rows,
            digits=3,
        )
    )
    print(
        f"plan tokens: mean {sum(tokens) / len(tokens):.0f}, max {max(tokens)} (budget {BUDGET}); "
        f"build_context p50 {median(latency) * 1000:.1f} ms, p95 {percentile(latency, 95) * 1000:.1f} ms "
        f"(incl. query embedding); embedded {embedder.embedded:,} texts in {embedder.seconds:.0f} s"
    )
    print("all evidence by conversation: " + ", ".join(f"{k} {v:.3f}" for k, v in per_conversation.items()))
    names = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
    return {
        "session_boost": recall.session_boost,
        "all": sum(every) / len(every),
        "any": sum(anyv) / len(anyv),
        "by_category": {names[c]: sum(v) / len(v) for c, v in sorted(found_all.items())},
        "by_conversation": per_conversation,
        "tokens_mean": sum(tokens) / len(tokens),
        "build_context_p50_ms": median(latency) * 1000,
        "build_context_p95_ms": percentile(latency, 95) * 1000,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000", help="turns per store, comma-separated")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo JSON")
    parser.add_argument("--skip-locomo", action="store_true")
    parser.add_argument(
        "--no-postgres", action="store_true", help="SQLite only (PostgreSQL needs the postgres-server extra)"
    )
    parser.add_argument(
        "--session-boost", type=float, default=RecallConfig().session_boost, help="RecallConfig.session_boost"
    )
    parser.add_argument(
        "--also-session-boost",
        type=float,
        help="also measure a second SQLite store (and LoCoMo) with this session boost, side by side",
    )
    parser.add_argument(
        "--json", type=Path, help=f"also write the figures here (for charts.py: {RESULTS}/memory_loop.json)"
    )
    args = parser.parse_args(argv)
    print("\n".join(environment()))
    recall = RecallConfig(session_boost=args.session_boost)
    also = None if args.also_session_boost is None else RecallConfig(session_boost=args.also_session_boost)
    per_turn: list[dict[str, Any]] = []
    plans: list[dict[str, Any]] = []
    minilm = MiniLMEmbedder()
    workdir = Path(tempfile.mkdtemp(prefix="em-loop-bench-"))
    server = None
    if not args.no_postgres:
        from elastic_memory.testing import TemporaryPostgres

        server = TemporaryPostgres(fsync=True)
        server.start()
    STATEMENTS.install()  # before any store opens: every connection is counted
    if server is not None:
        ROUND_TRIPS.install()
    try:
        rows: list[list[object]] = []
        for n in (int(s) for s in args.sizes.split(",") if s.strip()):
            if not rows:
                section("record_turn and build_context")
            rows += bench_size(n, workdir, minilm, None if server is None else server.url, recall, also, per_turn)
        if rows:
            title = "latency in ms (ratio: against SQLite's record_turn / build_context / recall, same rounds)"
            print(table(title, ["operation", "p50", "p95", "ratio"], rows))
        if not args.skip_locomo:
            if not args.data.exists():
                print(f"LoCoMo data not found at {args.data}; skipped")
            else:
                section("LoCoMo evidence in the plan")
                plans += [locomo(args.data, workdir, minilm, r) for r in (recall, also) if r is not None]
    finally:
        STATEMENTS.remove()
        ROUND_TRIPS.remove()
        shutil.rmtree(workdir, ignore_errors=True)
        if server is not None:
            server.remove()
    payload: dict[str, Any] = {"run": run_block(args), "per_turn": per_turn}
    if plans:
        payload["plan_holds_evidence"] = plans[0]
        payload["plan_holds_evidence_compared"] = plans[1:]
    write_json(args.json, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
