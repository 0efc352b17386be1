"""BM25 statistics per agent (schema v6): what keeping one FTS5 table per agent costs and saves.

Run from the repository root::

    python benchmarks/keyword_partitions.py                  # 100k memories, 100 queries, ~3 min
    python benchmarks/keyword_partitions.py --size 20000     # a quick look

Keyword-only stores (no embedder), so the FTS5 work is the whole write; the corpus and the
queries are ``ingest_recall.py``'s. Two files get the same rows, interleaved batch by batch:
"one agent" (every row agent ``a``: no agent table, today's path) and "split" (half the
rows agent ``a``, the rest spread over the other agents: every row also goes into its
agent's table). Then, query by query in rotating order: the library's keyword recall pinned
to an agent and unfiltered, and the same searches as raw SQL, including how a pinned query
ran before v6 (the file-wide table joined to the rows, filtered by agent) and the query
side of the alternative design (BM25 recomputed in Python from per-agent statistics kept at
write time, over FTS5's postings of the query's terms). Last, the cost of the write that
splits a one-agent file (it copies that agent's rows into its new table).
"""

from __future__ import annotations

import argparse
import math
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _common import environment, median, percentile, section, table
from elastic_memory import Memory
from elastic_memory.filters import Filters
from elastic_memory.storage import queries as q
from elastic_memory.storage.sqlite import partition_queries as pq
from elastic_memory.storage.sqlite.fts import match_expression
from ingest_recall import K, make_corpus, raw_connect

BIG = "a"


def agent_of(i: int, agents: int) -> str:
    """Half the rows are the big agent's, the rest round-robin over the others."""
    return BIG if i % 2 == 0 else f"agent-{(i // 2) % (agents - 1):02d}"


def python_bm25(conn: Any, terms: Sequence[str], rows: set[int], lengths: dict[int, int], avgdl: float) -> list[int]:
    """Alternative (b), query side: BM25 over ``rows`` (one agent) from FTS5's postings, in Python.

    The agent's row set, row lengths and average length are given (kept at write time in
    that design); the term frequencies per row and column come from ``fts5vocab``.
    """
    n = len(rows)
    scores: dict[int, float] = defaultdict(float)
    for term in terms:
        freq: dict[int, float] = defaultdict(float)
        for doc, col, count in conn.execute(
            "SELECT doc, col, count(*) FROM temp.bench_instance WHERE term = ? GROUP BY doc, col", (term,)
        ):
            if doc in rows:
                freq[doc] += count * (1.0 if col == "content" else 0.5)
        idf = max(math.log((n - len(freq) + 0.5) / (len(freq) + 0.5)), 1e-6)
        for doc, f in freq.items():
            scores[doc] += idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * lengths[doc] / avgdl))
    return sorted(scores, key=lambda d: -scores[d])[:K]


def stemmed(conn: Any, text: str) -> list[str]:
    """The query's terms as FTS5's porter tokenizer stores them."""
    conn.execute("DELETE FROM temp.bench_tok")
    conn.execute("INSERT INTO temp.bench_tok VALUES (?)", (text,))
    return [r[0] for r in conn.execute("SELECT term FROM temp.bench_tok_vocab")]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--agents", type=int, default=10, help="agents in the split file (default 10)")
    parser.add_argument("--batch", type=int, default=1000)
    args = parser.parse_args(argv)
    print("\n".join(environment()))
    n, agents = args.size, args.agents
    work = Path(tempfile.mkdtemp(prefix="em-kwpart-"))
    try:
        corpus = make_corpus(n, args.queries)
        section(f"{n:,} memories, {agents} agents in the split file ({BIG!r} holds half)")
        one = Memory.open(work / "one.db", embedder=None)
        split = Memory.open(work / "split.db", embedder=None)
        spent: dict[str, list[float]] = {"one agent": [], "split": []}
        for b, start in enumerate(range(0, n, args.batch)):
            idx = range(start, min(n, start + args.batch))
            jobs: list[tuple[str, Callable[[], Any]]] = [
                ("one agent", lambda idx=idx: one.remember_many([{**corpus.item(i), "agent_id": BIG} for i in idx])),
                (
                    "split",
                    lambda idx=idx: split.remember_many(
                        [{**corpus.item(i), "agent_id": agent_of(i, agents)} for i in idx]
                    ),
                ),
            ]
            for name, job in jobs[b % 2 :] + jobs[: b % 2]:
                t = time.perf_counter()
                job()
                spent[name].extend([(time.perf_counter() - t) / len(idx)] * len(idx))
        rows = [[name, len(s) / sum(s), 1 / median(s)] for name, s in spent.items()]
        title = "Ingest, keyword-only, interleaved batch by batch"
        print(table(title, ["file", "rows/s", "batch p50 rows/s"], rows, 0))
        ratio = median([a / b for a, b in zip(spent["split"], spent["one agent"], strict=True)])  # per row, = per batch
        print(f"split / one-agent time per row, per-batch median: {ratio:.3f}")

        raw = raw_connect(str(work / "split.db"))
        raw_one = raw_connect(str(work / "one.db"))
        big = pq.table(raw.execute("SELECT id FROM keyword_partitions WHERE agent_id = ?", (BIG,)).fetchone()[0])
        raw.execute(f"CREATE VIRTUAL TABLE temp.bench_instance USING fts5vocab(main, {q.quote_ident(big)}, instance)")
        raw.execute("CREATE VIRTUAL TABLE temp.bench_tok USING fts5(x, tokenize='porter unicode61')")
        raw.execute("CREATE VIRTUAL TABLE temp.bench_tok_vocab USING fts5vocab(temp, bench_tok, row)")
        a_rows = {int(r[0]) for r in raw.execute("SELECT seq FROM memories WHERE agent_id = ?", (BIG,))}
        lengths = {
            int(s): len(str(c).split()) + len(str(t).split(","))
            for s, c, t in raw.execute("SELECT seq, content, tags FROM memories WHERE agent_id = ?", (BIG,))
        }
        avgdl = sum(lengths.values()) / len(lengths)
        matches = [match_expression(text) for text in corpus.queries]
        terms = [stemmed(raw, text) for text in corpus.queries]
        small = agent_of(1, agents)
        pinned, pinned_small = Filters(agent_ids=(BIG,)), Filters(agent_ids=(small,))

        def lib(mem: Memory, filters: dict[str, Any] | None) -> Callable[[int], float]:
            def run(i: int) -> float:
                return float(mem.explain(corpus.queries[i], k=K, mode="keyword", filters=filters).details["keyword_ms"])

            return run

        def sql(conn: Any, prepared: Callable[[int], q.Prepared]) -> Callable[[int], float]:
            def run(i: int) -> float:
                t = time.perf_counter()
                conn.execute(*prepared(i)).fetchall()
                return (time.perf_counter() - t) * 1e3

            return run

        def alternative(i: int) -> float:
            t = time.perf_counter()
            python_bm25(raw, terms[i], a_rows, lengths, avgdl)
            return (time.perf_counter() - t) * 1e3

        now = time.time()
        probes: dict[str, Callable[[int], float]] = {
            f"library, split file, pinned to {BIG!r} (50%)": lib(split, {"agent_id": BIG}),
            f"library, split file, pinned to {small!r} ({50 / (agents - 1):.1f}%)": lib(split, {"agent_id": small}),
            "library, split file, unfiltered": lib(split, None),
            f"library, one-agent file, pinned to {BIG!r}": lib(one, {"agent_id": BIG}),
            "library, one-agent file, unfiltered": lib(one, None),
            f"SQL before v6: file-wide table joined, agent {BIG!r}": sql(
                raw, lambda i: q.keyword_search(matches[i], pinned, now=now, limit=K)
            ),
            f"SQL before v6: file-wide table joined, agent {small!r}": sql(
                raw, lambda i: q.keyword_search(matches[i], pinned_small, now=now, limit=K)
            ),
            f"SQL v6: {BIG!r}'s table ranked alone": sql(
                raw, lambda i: q.keyword_ranking(matches[i], limit=K + 16, table=big)
            ),
            "SQL: file-wide table ranked alone": sql(raw, lambda i: q.keyword_ranking(matches[i], limit=K + 16)),
            "SQL: one-agent file, table ranked alone": sql(
                raw_one, lambda i: q.keyword_ranking(matches[i], limit=K + 16)
            ),
            f"alternative (b): Python BM25 over {BIG!r}'s postings": alternative,
        }
        times: dict[str, list[float]] = {name: [] for name in probes}
        order = list(probes.items())
        for i in range(len(corpus.queries)):
            if matches[i] is None:
                continue
            for name, run in order[i % len(order) :] + order[: i % len(order)]:
                times[name].append(run(i))
        print()
        print(
            table(
                f"Keyword search at {n:,}, top-{K}, {len(times[order[0][0]])} queries interleaved; ms",
                ["search", "p50", "p95"],
                [[name, median(v), percentile(v, 95)] for name, v in times.items()],
            )
        )

        for mem in (one, split):
            mem.close()
        raw.close()
        raw_one.close()
        split_ms, plain_ms = [], []
        for r in range(3):
            path = work / f"grow{r}.db"
            shutil.copy(work / "one.db", path)
            with Memory.open(path, embedder=None) as mem:
                t = time.perf_counter()
                mem.remember("one row of agent a", agent_id=BIG)
                plain_ms.append((time.perf_counter() - t) * 1e3)
                t = time.perf_counter()
                mem.remember("the first row of another agent", agent_id="newcomer")
                split_ms.append((time.perf_counter() - t) * 1e3)
        print()
        print(
            f"the write that splits a {n:,}-row one-agent file: {median(split_ms):,.0f} ms "
            f"(a one-row write before it: {median(plain_ms):.1f} ms), medians of 3"
        )
        sizes = {name: (work / f"{name}.db").stat().st_size / 1e6 for name in ("one", "split")}
        print(f"file size: one agent {sizes['one']:.1f} MB, split {sizes['split']:.1f} MB")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
