"""Ingest rate and recall latency of elastic-memory at 10k and 100k memories, beside raw-engine floors.

Run from the repository root::

    python benchmarks/ingest_recall.py                      # sizes 10000,100000, 200 queries
    python benchmarks/ingest_recall.py --sizes 10000 --queries 100

Everything is synthetic and deterministic (fixed seed): Zipf-sampled English-like sentences and
a fast bag-of-word-vectors embedder (384-d), so 100k memories embed in seconds. Each figure
is measured side by side with its floor in the same run, the measurements interleaved query by
query, and reported as medians (p50) and p95 over the queries.

Floors: the same rows inserted straight into SQLite (a plain table + FTS5 external content
with triggers + the same vec0 table, one transaction per batch, executemany); an FTS5 bm25
top-10 with the same MATCH expression; a vec0 KNN; numpy exact ``M @ q`` + argpartition.
Recall latencies exclude the query embedding (``details['embed_ms']``).
"""

from __future__ import annotations

import argparse
import math
import re
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from _common import environment, median, percentile, section, table
from elastic_memory import Memory
from elastic_memory._validate import content_hash
from elastic_memory.storage.driver import driver
from elastic_memory.storage.fts import STOP_WORDS, match_expression
from elastic_memory.storage.queries import vec_create

F32 = npt.NDArray[np.float32]
DIM = 384
SEED = 20261129
N_TOPICS = 50
TOPIC_WORDS = 400
SESSION_SIZE = 100
K = 10

# ----------------------------------------------------------------------------- corpus

# The most frequent "words" are real English function words (dropped from queries by the
# library's stop list, as with real text); the rest are pronounceable pseudo-words.
_FUNCTION_WORDS = (
    "the of and to a in is was that for it with as on be at by this had not are but from or have an they "
    "which one you were her all she there would their we him been has when who will more no if out so said "
    "what up its about into than them can only other new some could time these two may then do first any my"
).split()
_ONSETS = "b c d f g h j k l m n p r s t v w br ch cl cr dr fl gr pl pr sh sl st str th tr".split()
_NUCLEI = "a e i o u ai ea ee oa ou y".split()
_CODAS = ["", "", "", *"n r s t l m nd ng st ck rt nt".split()]


def vocabulary(size: int, rng: np.random.Generator) -> list[str]:
    """Function words first, then distinct pseudo-words of 1-3 syllables (Zipf rank = position)."""
    words = list(dict.fromkeys(_FUNCTION_WORDS))
    seen = set(words) | set(STOP_WORDS)
    while len(words) < size:
        n = int(rng.choice((1, 2, 2, 3, 3)))
        w = "".join(
            str(rng.choice(_ONSETS)) + str(rng.choice(_NUCLEI)) + (str(rng.choice(_CODAS)) if i == n - 1 else "")
            for i in range(n)
        )
        if w not in seen:
            seen.add(w)
            words.append(w)
    return words


@dataclass
class Corpus:
    """Sentences with their session, tags and type; held-out query texts."""

    words: list[str]
    texts: list[str]
    topics: npt.NDArray[np.int64]
    queries: list[str]
    sessions: list[str] = field(default_factory=list)
    types: list[str] = field(default_factory=list)

    def item(self, i: int) -> dict[str, Any]:
        """The remember_many() dict of memory ``i``."""
        return {
            "content": self.texts[i],
            "session_id": self.sessions[i],
            "tags": [f"topic-{int(self.topics[i]):02d}"],
            "type": self.types[i],
        }


def _zipf(n: int, s: float = 1.0, shift: float = 2.7) -> npt.NDArray[np.float64]:
    p = 1.0 / (np.arange(n) + shift) ** s
    return p / p.sum()


def make_corpus(n: int, n_queries: int, seed: int = SEED, vocab_size: int = 20_000) -> Corpus:
    """``n`` memories of 12-40 words (a topic's words mixed into global Zipf text) + held-out queries."""
    rng = np.random.default_rng(seed)
    words = vocabulary(vocab_size, rng)
    global_p = _zipf(len(words))
    content = np.arange(len(_FUNCTION_WORDS) + 50, len(words))
    topic_words = np.stack([rng.choice(content, TOPIC_WORDS, replace=False) for _ in range(N_TOPICS)])
    topic_p = _zipf(TOPIC_WORDS)
    total = n + n_queries
    topics = rng.choice(N_TOPICS, size=total, p=_zipf(N_TOPICS, s=1.0, shift=1.0))
    lengths = rng.integers(12, 41, size=total)
    flat = rng.choice(len(words), size=int(lengths.sum()), p=global_p)
    from_topic = rng.random(len(flat)) < 0.35
    owner = np.repeat(topics, lengths)
    flat[from_topic] = topic_words[owner[from_topic], rng.choice(TOPIC_WORDS, size=int(from_topic.sum()), p=topic_p)]
    texts: list[str] = []
    start = 0
    for length in lengths:
        ws = [words[j] for j in flat[start : start + length]]
        start += length
        ws[0] = ws[0].capitalize()
        texts.append(" ".join(ws) + ".")
    # Queries: a window of 5-10 words out of a held-out sentence (question-sized).
    queries = []
    for text in texts[n:]:
        ws = text.rstrip(".").lower().split()
        size = int(rng.integers(5, 11))
        at = int(rng.integers(0, len(ws) - size + 1))
        queries.append(" ".join(ws[at : at + size]))
    types = rng.choice(["semantic", "episodic", "procedural"], size=n, p=[0.5, 0.3, 0.2]).tolist()
    sessions = [f"session-{i // SESSION_SIZE:05d}" for i in range(n)]
    return Corpus(words, texts[:n], topics[:n], queries, sessions, types)


# --------------------------------------------------------------------------- embedder

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


class WordVectorEmbedder:
    """Deterministic text-like embedder: the L2-normalised sum of fixed random word vectors.

    Frequent words are shared by many texts, so the vectors are anisotropic like real sentence
    embeddings (not isotropic noise), and texts sharing words are close. Unknown words hash
    to a vocabulary row. ``seconds`` accumulates the time spent embedding.
    """

    model_id = "bench-word-vectors-384"
    family = "bench-word-vectors"
    dimension = DIM

    def __init__(self, words: Sequence[str], seed: int = SEED) -> None:
        rng = np.random.default_rng(seed + 1)
        self._index = {w: i for i, w in enumerate(words)}
        self._table = rng.standard_normal((len(words), DIM), dtype=np.float32)
        self.seconds = 0.0

    def _ids(self, text: str) -> list[int]:
        index, size = self._index, len(self._index)
        return [index.get(w, hash(w) % size) for w in _TOKEN.findall(text.casefold())] or [0]

    def embed(self, texts: Sequence[str]) -> F32:
        """One unit float32 row per text."""
        t = time.perf_counter()
        out = np.empty((len(texts), DIM), dtype=np.float32)
        for lo in range(0, len(texts), 2048):
            chunk = [self._ids(x) for x in texts[lo : lo + 2048]]
            flat = np.fromiter((j for ids in chunk for j in ids), dtype=np.int64)
            starts = np.cumsum([0, *(len(ids) for ids in chunk[:-1])])
            out[lo : lo + len(chunk)] = np.add.reduceat(self._table[flat], starts, axis=0)
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        self.seconds += time.perf_counter() - t
        return out


# --------------------------------------------------------------------------- raw floor

RAW_SCHEMA = (
    "CREATE TABLE raw (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, agent_id TEXT NOT NULL, "
    "type TEXT NOT NULL, content TEXT NOT NULL, content_hash TEXT NOT NULL, tags TEXT NOT NULL, "
    "session_id TEXT, created_at REAL NOT NULL)",
    "CREATE VIRTUAL TABLE raw_fts USING fts5(content, tags, content='raw', content_rowid='seq', "
    "tokenize='porter unicode61')",
    "CREATE TRIGGER raw_ai AFTER INSERT ON raw BEGIN "
    "INSERT INTO raw_fts (rowid, content, tags) VALUES (new.seq, new.content, new.tags); END",
    "CREATE TRIGGER raw_ad AFTER DELETE ON raw BEGIN "
    "INSERT INTO raw_fts (raw_fts, rowid, content, tags) VALUES ('delete', old.seq, old.content, old.tags); END",
    vec_create(DIM).replace("memories_vec", "raw_vec"),
)
RAW_FTS_TOP10 = (
    "SELECT rowid, -bm25(raw_fts, 1.0, 0.5) FROM raw_fts WHERE raw_fts MATCH ? ORDER BY bm25(raw_fts, 1.0, 0.5) LIMIT ?"
)
RAW_VEC0_KNN = "SELECT rowid, distance FROM raw_vec WHERE embedding MATCH ? AND k = ?"


def raw_connect(path: str) -> Any:
    """A connection with the library's driver and pragmas (WAL, synchronous=NORMAL)."""
    conn = driver().connect(path, timeout=5)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


# --------------------------------------------------------------------------- probes


@dataclass
class Probe:
    """One measured operation: ``run(i)`` serves query ``i`` and returns named timings in ms."""

    name: str
    run: Callable[[int], dict[str, float]]
    samples: dict[str, list[float]] = field(default_factory=dict)

    def record(self, values: dict[str, float]) -> None:
        for key, value in values.items():
            self.samples.setdefault(key, []).append(value)

    def p(self, key: str = "ms", q: float = 50) -> float:
        return percentile(self.samples.get(key, []), q)


def run_probes(probes: Sequence[Probe], n: int, warmup: int) -> None:
    """Warm up, then serve queries 0..n-1 through every probe, rotating the order per query."""
    for i in range(min(warmup, n)):
        for probe in probes:
            probe.run(i)
    for i in range(n):
        shift = i % len(probes)
        for probe in [*probes[shift:], *probes[:shift]]:
            probe.record(probe.run(i))


def library_probe(
    name: str,
    mem: Memory,
    queries: Sequence[str],
    mode: str,
    filters: dict[str, Any] | None = None,
    tops: dict[int, list[str]] | None = None,
) -> Probe:
    """``mem.explain`` in ``mode``; ms = details total minus embed_ms; legs from details."""

    def run(i: int) -> dict[str, float]:
        t = time.perf_counter()
        ex = mem.explain(queries[i], k=K, mode=mode, filters=filters)
        wall = (time.perf_counter() - t) * 1000
        if ex.effective_mode.value != mode:
            msg = f"{name}: recall degraded to {ex.effective_mode.value}: {ex.details.get('degraded')}"
            raise RuntimeError(msg)
        d = ex.details
        embed = d.get("embed_ms", 0.0)
        if tops is not None:
            tops[i] = [h.id for h in ex.hits]
        return {
            "ms": d["total_ms"] - embed,
            "wall": wall - embed,
            "embed": embed if "embed_ms" in d else math.nan,
            "keyword": d.get("keyword_ms", math.nan),
            "vector": d.get("vector_ms", math.nan),
            "fusion": d.get("fusion_ms", math.nan),
            "hits": float(len(ex.hits)),
        }

    return Probe(name, run)


def timed(fn: Callable[[int], Any]) -> Callable[[int], dict[str, float]]:
    """Wrap ``fn(i)`` so it returns its wall time in ms."""

    def run(i: int) -> dict[str, float]:
        t = time.perf_counter()
        fn(i)
        return {"ms": (time.perf_counter() - t) * 1000}

    return run


@dataclass
class Writer:
    """One ingest path: rows, seconds (minus embedding) and per-batch rates."""

    label: str
    path: str
    rows: int = 0
    seconds: float = 0.0
    embed_s: float = 0.0
    rates: list[float] = field(default_factory=list)

    def add(self, rows: int, seconds: float, embed_s: float) -> None:
        self.rows += rows
        self.seconds += seconds - embed_s
        self.embed_s += embed_s
        self.rates.append(rows / (seconds - embed_s))

    @property
    def rate(self) -> float:
        return self.rows / self.seconds

    def row(self) -> list[object]:
        size = sum(Path(p).stat().st_size for p in (self.path, self.path + "-wal") if Path(p).exists()) / 1e6
        return [
            self.label,
            self.seconds,
            self.rate,
            median(self.rates),
            median(self.rates[:5]),
            median(self.rates[-5:]),
            size,
        ]


def overlap(a: dict[int, list[str]], b: dict[int, list[str]]) -> float:
    """Mean fraction of ``b``'s top-k found in ``a``'s top-k over the shared queries."""
    keys = [i for i in a if b.get(i)]
    if not keys:
        return math.nan
    return float(np.mean([len(set(a[i]) & set(b[i])) / len(b[i]) for i in keys]))


# --------------------------------------------------------------------------- one size


def bench_size(n: int, n_queries: int, batch: int, workdir: Path) -> dict[str, float]:
    """Run every measurement at ``n`` memories; print the tables; return the headline ratios."""
    section(f"{n:,} memories")
    t0 = time.perf_counter()
    corpus = make_corpus(n, n_queries)
    emb = WordVectorEmbedder(corpus.words)
    vectors = emb.embed(corpus.texts)
    embed_all_s = emb.seconds
    emb.seconds = 0.0
    mean_words = float(np.mean([len(t.split()) for t in corpus.texts]))
    print(
        f"corpus: {n:,} sentences (mean {mean_words:.1f} words), {len(set(corpus.sessions)):,} sessions, "
        f"{N_TOPICS} topic tags, {n_queries} held-out queries; built in {time.perf_counter() - t0:.1f} s; "
        f"embedder alone: {n / embed_all_s:,.0f} texts/s"
    )

    # ---------------------------------------------------------------- ingest, interleaved by batch
    lib_path = str(workdir / f"lib-{n}.db")
    raw_path = str(workdir / f"raw-{n}.db")
    nodedupe_path = str(workdir / f"lib-nodedupe-{n}.db")
    mem = Memory.open(lib_path, embedder=emb)
    mem_nd = Memory.open(nodedupe_path, embedder=emb)
    raw = raw_connect(raw_path)
    for statement in RAW_SCHEMA:
        raw.execute(statement)
    ids: list[str] = []
    writers = {
        "lib": Writer("library remember_many (default: dedupe on)", lib_path),
        "nodedupe": Writer("library remember_many(dedupe=False)", nodedupe_path),
        "raw": Writer("raw floor: executemany, FTS5 triggers + vec0", raw_path),
    }
    now = time.time()
    for b, lo in enumerate(range(0, n, batch)):
        hi = min(n, lo + batch)
        items = [corpus.item(i) for i in range(lo, hi)]
        rows = [
            (
                i + 1,
                str(uuid.uuid4()),
                "default",
                corpus.types[i],
                corpus.texts[i],
                content_hash(corpus.texts[i]),
                f'["topic-{int(corpus.topics[i]):02d}"]',
                corpus.sessions[i],
                now,
            )
            for i in range(lo, hi)
        ]
        vec_rows = [(i + 1, "default", vectors[i].tobytes(), "private", corpus.types[i]) for i in range(lo, hi)]

        def lib_batch(items: list[dict[str, Any]] = items) -> None:
            ids.extend(str(m) for m in mem.remember_many(items))

        def nodedupe_batch(items: list[dict[str, Any]] = items) -> None:
            mem_nd.remember_many(items, dedupe=False)

        def raw_batch(rows: list[tuple[Any, ...]] = rows, vec_rows: list[tuple[Any, ...]] = vec_rows) -> None:
            raw.execute("BEGIN IMMEDIATE")
            raw.executemany("INSERT INTO raw VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
            raw.executemany(
                "INSERT INTO raw_vec (rowid, agent_id, embedding, scope, type) VALUES (?, ?, ?, ?, ?)", vec_rows
            )
            raw.execute("COMMIT")

        order = [("lib", lib_batch), ("nodedupe", nodedupe_batch), ("raw", raw_batch)]
        shift = b % len(order)
        for key, fn in order[shift:] + order[:shift]:
            embed_before = emb.seconds
            t = time.perf_counter()
            fn()
            writers[key].add(hi - lo, time.perf_counter() - t, emb.seconds - embed_before)
    mem.close()
    mem_nd.close()
    raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw_w, lib_w, nd_w = writers["raw"], writers["lib"], writers["nodedupe"]
    print(
        table(
            f"Ingest: {n:,} rows, batches of {batch} (one transaction each), the three writers interleaved batch by "
            "batch; library rates exclude the embedder's time",
            ["writer", "total s", "rows/s", "batch p50 rows/s", "first 5 batches", "last 5 batches", "DB MB"],
            [w.row() for w in writers.values()],
            digits=1,
        )
    )
    ingest_ratio = raw_w.rate / lib_w.rate
    print(
        f"ratio raw floor / library rows/s: {ingest_ratio:.1f}x with dedupe (per-batch median "
        f"{median([r / x for r, x in zip(raw_w.rates, lib_w.rates, strict=True)]):.1f}x), "
        f"{raw_w.rate / nd_w.rate:.1f}x without; library embedding time {lib_w.embed_s:.1f} s "
        f"(excluded above)"
    )

    # ---------------------------------------------------------------- recall
    queries = corpus.queries
    qvecs = emb.embed(queries)
    matches = [match_expression(q) for q in queries]
    blobs = [v.tobytes() for v in qvecs]
    matrix = np.ascontiguousarray(vectors)
    seq_to_id = dict(enumerate(ids, start=1))

    t = time.perf_counter()
    mem = Memory.open(lib_path, embedder=emb)
    open_ms = (time.perf_counter() - t) * 1000
    t = time.perf_counter()
    first = mem.explain(queries[0], k=K, mode="semantic")
    first_wall = (time.perf_counter() - t) * 1000
    stats = mem.stats()
    print(
        f"reopen: Memory.open {open_ms:.1f} ms; first semantic query (loads the RAM index of "
        f"{stats['vector_index_loaded']:,} vectors, {stats['vector_index_bytes'] / 1e6:.0f} MB): "
        f"{first_wall:.0f} ms wall, vector leg {first.details['vector_ms']:.0f} ms"
    )
    vmem = Memory.open(lib_path, embedder=emb, vector_index="vec0")

    tops: dict[str, dict[int, list[str]]] = {k: {} for k in ("kw", "sem", "vec0", "fts", "np", "rawvec0")}

    # Row i has seq i + 1 in both stores, so raw rowids map to library ids and top-10 lists compare.
    def raw_fts(i: int) -> None:
        rows = raw.execute(RAW_FTS_TOP10, (matches[i], K)).fetchall() if matches[i] else []
        tops["fts"][i] = [seq_to_id[r[0]] for r in rows]

    def numpy_exact(i: int) -> None:
        scores = matrix @ qvecs[i]
        part = np.argpartition(-scores, K - 1)[:K]
        top = part[np.argsort(-scores[part])]
        tops["np"][i] = [seq_to_id[int(j) + 1] for j in top]

    def raw_vec0(i: int) -> None:
        rows = raw.execute(RAW_VEC0_KNN, (blobs[i], K)).fetchall()
        tops["rawvec0"][i] = [seq_to_id[r[0]] for r in rows]

    common_tag = "topic-00"
    counts = np.bincount(corpus.topics, minlength=N_TOPICS)
    rare_topic = int(np.argmin(np.where(counts > 0, counts, n + 1)))
    rare_tag = f"topic-{rare_topic:02d}"
    session = corpus.sessions[len(corpus.sessions) // 2]
    filters = {
        "session": ({"session_id": session}, SESSION_SIZE / n),
        "tag common": ({"tags": [common_tag]}, counts[0] / n),
        "tag rare": ({"tags": [rare_tag]}, counts[rare_topic] / n),
    }
    main = [
        library_probe("keyword", mem, queries, "keyword", tops=tops["kw"]),
        Probe("raw FTS5 bm25 top-10", timed(raw_fts)),
        library_probe("semantic", mem, queries, "semantic", tops=tops["sem"]),
        Probe("numpy exact M@q + argpartition", timed(numpy_exact)),
        library_probe("hybrid", mem, queries, "hybrid"),
        library_probe("semantic, vec0 tier", vmem, queries, "semantic", tops=tops["vec0"]),
        library_probe("hybrid, vec0 tier", vmem, queries, "hybrid"),
        Probe("raw vec0 KNN k=10", timed(raw_vec0)),
    ]
    filtered = [
        library_probe(f"{mode}, {label} ({share:.1%})", mem, queries, mode, filters=f)
        for label, (f, share) in filters.items()
        for mode in ("semantic", "hybrid")
    ]
    t = time.perf_counter()
    run_probes([*main, *filtered], n_queries, warmup=10)
    recall_s = time.perf_counter() - t

    rows_out = []
    for probe in [*main, *filtered]:
        rows_out.append(
            [
                probe.name,
                probe.p("ms"),
                probe.p("ms", 95),
                probe.p("wall"),
                probe.p("keyword"),
                probe.p("vector"),
                probe.p("fusion"),
                probe.p("hits"),
            ]
        )
    print(
        table(
            f"Recall latency at {n:,}, k={K}, {n_queries} queries, every operation interleaved query by query; ms. "
            "Library rows exclude the query embedding; 'call' = wall time around mem.explain minus embed_ms",
            ["operation", "p50", "p95", "call p50", "keyword p50", "vector p50", "fusion p50", "hits"],
            rows_out,
        )
    )
    by = {p.name: p for p in [*main, *filtered]}
    numpy_p50 = by["numpy exact M@q + argpartition"].p()
    fts_p50 = by["raw FTS5 bm25 top-10"].p()
    headline = {
        "semantic vector leg / numpy exact (target <= 2x at 100k)": by["semantic"].p("vector") / numpy_p50,
        "semantic total / numpy exact": by["semantic"].p() / numpy_p50,
        "hybrid p50 ms excl. query embedding (target <= 20 at 100k)": by["hybrid"].p(),
        "keyword total / raw FTS5 top-10": by["keyword"].p() / fts_p50,
        "keyword leg / raw FTS5 top-10": by["keyword"].p("keyword") / fts_p50,
        "vec0-tier semantic / raw vec0 KNN": by["semantic, vec0 tier"].p() / by["raw vec0 KNN k=10"].p(),
        "vec0-tier semantic / RAM-tier semantic": by["semantic, vec0 tier"].p() / by["semantic"].p(),
        **{
            f"hybrid filtered by {label} / unfiltered hybrid": by[f"hybrid, {label} ({share:.1%})"].p()
            / by["hybrid"].p()
            for label, (_, share) in filters.items()
        },
        "RAM index load on first semantic query, ms": float(first.details["vector_ms"]),
        "ingest rows/s: library, dedupe on (default)": lib_w.rate,
        "ingest rows/s: library, dedupe=False": nd_w.rate,
        "ingest rows/s: raw floor": raw_w.rate,
        "ingest raw floor / library (dedupe on)": ingest_ratio,
        "ingest raw floor / library (dedupe=False)": raw_w.rate / nd_w.rate,
    }
    print(table(f"Headline figures at {n:,} (ratios are p50 / p50)", ["figure", "value"], list(headline.items())))
    print(
        f"top-10 agreement: library semantic vs numpy exact {overlap(tops['sem'], tops['np']):.3f}, "
        f"vec0 tier vs numpy {overlap(tops['vec0'], tops['np']):.3f}, "
        f"raw vec0 vs numpy {overlap(tops['rawvec0'], tops['np']):.3f}, "
        f"library keyword vs raw FTS5 {overlap(tops['kw'], tops['fts']):.3f}"
    )
    print(f"recall measurements took {recall_s:.0f} s; this size took {time.perf_counter() - t0:.0f} s in all")
    mem.close()
    vmem.close()
    raw.close()
    return headline


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated memory counts (default 10000,100000)")
    parser.add_argument("--queries", type=int, default=200, help="measured queries per operation (default 200)")
    parser.add_argument("--batch", type=int, default=1000, help="rows per remember_many call (default 1000)")
    parser.add_argument("--keep", help="write the databases to this folder and keep them (default: a temp dir)")
    args = parser.parse_args(argv)
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    print("elastic-memory benchmark: ingest rate and recall latency")
    for line in environment():
        print(line)
    started = time.perf_counter()
    workdir = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="em-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        results = {n: bench_size(n, args.queries, args.batch, workdir) for n in sizes}
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    section("Summary")
    names = list(next(iter(results.values())))
    print(
        table(
            "Headline figures by size (ratios are p50 / p50)",
            ["figure", *(f"{n:,}" for n in sizes)],
            [[name, *(results[n].get(name, math.nan) for n in sizes)] for name in names],
        )
    )
    print(f"total run time {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
