"""Haystack filters and bulk writes: ElasticMemoryDocumentStore beside InMemoryDocumentStore.

Run from the repository root (with elastic-memory and elastic-memory-haystack installed)::

    python benchmarks/haystack_filters.py                 # 3,000 documents, ~1 min
    python benchmarks/haystack_filters.py --docs 10000 --repeats 9

**Corpus.** ``--docs`` documents of 12-30 pseudo-words from a 2,000-word vocabulary (seeded),
each with metadata ``category`` (one of 20 strings), ``year`` (2000-2024), ``price`` (a float)
and ``date`` (an ISO date string), and a random 384-dimension embedding (MiniLM's width; the
stores compare vectors, they never embed here).

**Operations**, each run on both stores in the same round, the order alternating between rounds;
the figure is the median over ``--repeats`` rounds (after one warm-up round):

* ``bm25+filter``: ``bm25_retrieval(query, filters, top_k=10)``;
* ``embedding+filter``: ``embedding_retrieval(vector, filters, top_k=10)``;
* ``filter_documents``: every document matching the filter (about 10% of them);
* ``filter_documents (dates)``: a filter comparing ISO date strings as dates, which SQL cannot
  express exactly: the store narrows in SQL and checks the candidates in Python;
* ``filter_documents (no embeddings)``: the filter on a copy of the corpus without embeddings
  (the exact embedding a document note keeps in its metadata is most of the row SQL reads);
* ``write (embeddings)``: ``write_documents`` of all documents into an empty store (a new
  SQLite file in a temporary folder for elastic-memory, a new ``InMemoryDocumentStore``).

**Engine floors**, printed below the table: what SQLite itself takes for the same work, with
nothing of either library, on the same data in the same run (the elastic-memory column of these
rows is the floor, its ratio the floor over InMemory's time):

* ``filter floor``: the filter as two ``json_extract`` tests in one ``SELECT seq, metadata`` over
  the store's own file (the fewest JSON lookups any store filtering JSON in SQL can make);
* ``write floor``: the documents inserted in one transaction into a plain table (id, text, JSON
  metadata), an FTS5 table and a sqlite-vec ``vec0`` table, in a new file.

The filter: ``category in [3 of 20] AND year >= 2012`` (about 8% of the documents).
A ratio above 1 means elastic-memory is slower.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import environment, median, table

FILTER: dict[str, Any] = {
    "operator": "AND",
    "conditions": [
        {"field": "meta.category", "operator": "in", "value": ["cat-3", "cat-7", "cat-11"]},
        {"field": "meta.year", "operator": ">=", "value": 2012},
    ],
}
DATE_FILTER: dict[str, Any] = {
    "operator": "AND",
    "conditions": [
        {"field": "meta.category", "operator": "==", "value": "cat-5"},
        {"field": "meta.date", "operator": ">=", "value": "2015-01-01"},
    ],
}
DIM = 384


def make_documents(count: int, seed: int = 7) -> list[Any]:
    """``count`` documents with text, metadata and a unit embedding (deterministic)."""
    from haystack import Document

    rng = random.Random(seed)
    vocab = [f"w{n}{''.join(rng.choices('aeioustrnl', k=4))}" for n in range(2000)]
    vectors = np.random.default_rng(seed).standard_normal((count, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    docs = []
    for i in range(count):
        year = 2000 + rng.randrange(25)
        docs.append(
            Document(
                id=f"doc-{i}",
                content=" ".join(rng.choices(vocab, k=rng.randint(12, 30))),
                meta={
                    "category": f"cat-{rng.randrange(20)}",
                    "year": year,
                    "price": round(rng.uniform(1, 500), 2),
                    "date": f"{year}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                },
                embedding=vectors[i].tolist(),
            )
        )
    return docs


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return (time.perf_counter() - start) * 1000, out


def filter_floor(path: Path, repeats: int) -> float:
    """Median ms of :data:`FILTER` as two ``json_extract`` tests over the store's file, nothing else."""
    from elastic_memory.storage.sqlite.driver import driver

    conn = driver().connect(str(path), timeout=5.0)
    doc = '\'$."_hs_doc"."meta".'
    sql = (
        f'SELECT seq, metadata FROM memories WHERE json_extract(metadata, {doc}"category"\') IN (?, ?, ?)'
        f' AND json_extract(metadata, {doc}"year"\') >= ?'
    )
    args = (*FILTER["conditions"][0]["value"], FILTER["conditions"][1]["value"])
    times = [timed(lambda: conn.execute(sql, args).fetchall())[0] for _ in range(repeats + 1)][1:]
    conn.close()
    return median(times)


def write_floor(folder: Path, docs: list[Any], repeats: int) -> float:
    """Median ms of inserting ``docs`` into a table, FTS5 and vec0 in one transaction, in a new file."""
    import json

    from elastic_memory.storage.sqlite.driver import driver

    rows = [(d.id, d.content, json.dumps(d.meta)) for d in docs]
    vectors = [np.asarray(d.embedding, dtype=np.float32).tobytes() for d in docs]
    times = []
    for r in range(repeats):
        conn = driver().connect(str(folder / f"floor-{r}.db"), timeout=5.0)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE docs (seq INTEGER PRIMARY KEY, id TEXT UNIQUE, content TEXT, metadata TEXT)")
        conn.execute("CREATE VIRTUAL TABLE docs_fts USING fts5(content)")
        conn.execute(f"CREATE VIRTUAL TABLE docs_vec USING vec0(embedding float[{DIM}])")

        def write(conn: Any = conn) -> None:
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(
                "INSERT INTO docs (seq, id, content, metadata) VALUES (?, ?, ?, ?)",
                [(n + 1, *row) for n, row in enumerate(rows)],
            )
            conn.executemany(
                "INSERT INTO docs_fts (rowid, content) VALUES (?, ?)", [(n + 1, row[1]) for n, row in enumerate(rows)]
            )
            conn.executemany("INSERT INTO docs_vec (rowid, embedding) VALUES (?, ?)", list(enumerate(vectors, 1)))
            conn.execute("COMMIT")

        times.append(timed(write)[0])
        conn.close()
    return median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--write-repeats", type=int, default=3)
    args = parser.parse_args()

    from haystack.document_stores.in_memory import InMemoryDocumentStore

    from haystack_integrations.document_stores.elastic_memory import ElasticMemoryDocumentStore

    print("\n".join(environment()))
    docs = make_documents(args.docs)
    rng = random.Random(11)
    queries = [" ".join(rng.sample(docs[rng.randrange(len(docs))].content.split(), 3)) for _ in range(args.repeats + 1)]
    qvecs = [docs[rng.randrange(len(docs))].embedding for _ in range(args.repeats + 1)]

    folder = Path(tempfile.mkdtemp(prefix="hs-filters-"))
    ours = ElasticMemoryDocumentStore(path=str(folder / "docs.db"))
    ref = InMemoryDocumentStore()
    ours.write_documents(docs)
    ref.write_documents(docs)
    bare = [replace(d, embedding=None) for d in docs]
    ours_bare = ElasticMemoryDocumentStore(path=str(folder / "bare.db"))
    ref_bare = InMemoryDocumentStore()
    ours_bare.write_documents(bare)
    ref_bare.write_documents(bare)

    expected = {d.id for d in ref.filter_documents(FILTER)}
    got = {d.id for d in ours.filter_documents(FILTER)}
    assert got == expected, "the two stores disagree on the filter"
    assert {d.id for d in ours.filter_documents(DATE_FILTER)} == {d.id for d in ref.filter_documents(DATE_FILTER)}
    print(f"\n{args.docs:,} documents; the filter matches {len(expected):,}")

    ops: dict[str, Callable[[Any, int], Any]] = {
        "bm25+filter (top 10)": lambda s, r: s.bm25_retrieval(queries[r], filters=FILTER, top_k=10),
        "embedding+filter (top 10)": lambda s, r: s.embedding_retrieval(qvecs[r], filters=FILTER, top_k=10),
        "filter_documents": lambda s, r: s.filter_documents(FILTER),
        "filter_documents (dates)": lambda s, r: s.filter_documents(DATE_FILTER),
        "filter_documents (no embeddings)": lambda s, r: (ours_bare if s is ours else ref_bare).filter_documents(
            FILTER
        ),
    }
    rows: list[list[object]] = []
    for name, op in ops.items():
        times: dict[str, list[float]] = {"ours": [], "ref": []}
        for r in range(args.repeats + 1):
            order = [("ours", ours), ("ref", ref)] if r % 2 else [("ref", ref), ("ours", ours)]
            for label, store in order:
                ms, _ = timed(lambda store=store, op=op, r=r: op(store, r))
                if r:  # round 0 warms up
                    times[label].append(ms)
        a, b = median(times["ours"]), median(times["ref"])
        rows.append([name, a, b, a / b])

    writes: dict[str, list[float]] = {"ours": [], "ref": []}
    for r in range(args.write_repeats):
        target = ElasticMemoryDocumentStore(path=str(folder / f"write-{r}.db"))
        ms, _ = timed(lambda target=target: target.write_documents(docs))
        writes["ours"].append(ms)
        target.close()
        fresh = InMemoryDocumentStore()
        ms, _ = timed(lambda fresh=fresh: fresh.write_documents(docs))
        writes["ref"].append(ms)
    a, b = median(writes["ours"]), median(writes["ref"])
    rows.append([f"write {args.docs:,} (embeddings)", a, b, a / b])
    ours.close()
    ours_bare.close()
    floors = [
        ["filter floor (SQL alone)", filter_floor(folder / "docs.db", args.repeats), rows[2][2]],
        [f"write floor {args.docs:,} (SQL alone)", write_floor(folder, docs, args.write_repeats), b],
    ]
    rows += [[name, ms, ref, ms / ref] for name, ms, ref in floors]

    print()
    print(
        table(
            f"Haystack document stores, {args.docs:,} documents (median ms)",
            ["operation", "elastic-memory", "InMemory", "ratio"],
            rows,
        )
    )


if __name__ == "__main__":
    main()
