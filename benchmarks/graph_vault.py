"""The knowledge graph and the Markdown connector: traversal at scale, vault scan and ingest, LoCoMo nudge.

Run from the repository root::

    python benchmarks/graph_vault.py                       # 100k entities / 1M relations, 10k notes, LoCoMo
    python benchmarks/graph_vault.py --entities 10000 --relations 100000 --notes 1000 --skip-locomo  # quick

**Traversal.** A store is created through ``Memory.open(path, embedder=None)``, then N entities
and M relations are bulk-loaded straight into its tables (``entities``, ``entity_keys`` with each
entity's canonical key, ``relations``, some ``entity_mentions``) with ``executemany`` through a
second connection made with the library's driver and pragmas. Degrees follow a power law
(endpoints drawn with probability proportional to rank^-0.9 over a shuffled order, fixed seed):
a few hubs with tens of thousands of relations, a median node with a handful. After reopening,
``mem.graph.traverse(name, hops=1)`` and ``hops=2`` (default limit 100) run from 200 start
entities (hubs: drawn from the 1% with the highest degree; others: drawn from the rest), and in
the same rounds, interleaved start by start with a rotating order, the raw floor: hand-written
SQL on the raw connection, given the start's id (the library resolves the name first and
returns names and paths).

**Vault.** A synthetic vault of N notes (nested folders, YAML frontmatter, hashtags, ~3
wikilinks per note in every form, ~10% dangling, a few names shared by two folders) in a temp
folder. Timed: ``MarkdownFolder(root).notes()`` first and unchanged re-scan (which re-parses
nothing), ``WikilinkEdgeExtractor(folder).scan()``, and ``ingest_folder`` into a store with
``embedder=None`` (first run, then an unchanged re-run on a new ``MarkdownFolder``, i.e. what
``elastic-memory ingest`` does twice). Target: 10k notes in under 60 s without embeddings.

**LoCoMo.** As ``locomo_recall.py`` (one store per conversation, one memory per dialogue turn,
gold = evidence turns, recall@10 through ``mem.explain``), but every turn goes through
``mem.record_turn(turn_text, "", session_id=..., metadata={"dia_id": ...})`` at
``LoopConfig(tier="standard", background=False)`` then ``drain()``, so the graph exists
(entities, co-mention relations, mentions of the turns' chunks). Each store is ingested once
and opened twice, with ``RecallConfig(graph_boost=0.15)`` (the default) and ``graph_boost=0``;
keyword and hybrid recall run on both, the four methods taking turns question by question.
The built-in MiniLM behind ``locomo_recall.MemoEmbedder`` embeds each text once.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from _common import environment, median, percentile, section, table
from elastic_memory import LoopConfig, Memory, MiniLMEmbedder, RecallConfig
from elastic_memory._cli_ingest import ingest_folder
from elastic_memory.connectors import MarkdownFolder, WikilinkEdgeExtractor
from elastic_memory.graph import canonical
from elastic_memory.storage.driver import driver
from locomo_recall import CATEGORIES, CATEGORY_NAMES, DEFAULT_DATA, MemoEmbedder, load

AGENT = "default"
SEED = 20261130
MS = 1_000.0

# ------------------------------------------------------------------ part 1: traversal at scale
ZIPF_S = 0.9
STARTS = 200
HUB_STARTS = 50
WARMUP = 20
RELATION_TYPES = ("mentioned_with", "works_with", "part_of", "related_to")
RELATION_P = (0.6, 0.15, 0.15, 0.1)
ENTITY_TYPES = ("person", "organization", "place", "concept")
BATCH_ROWS = 100_000

# The floor, given the start's id. One hop: the brief's form. Two hops: the neighbours, then
# theirs; both capped like the library's walk (its CTE LIMIT bounds the rows).
RAW_ONE_HOP = "SELECT dst FROM relations WHERE src = ?1 UNION SELECT src FROM relations WHERE dst = ?1 LIMIT ?2"
RAW_TWO_HOP = """
WITH one(id) AS (
    SELECT dst FROM relations WHERE src = ?1 UNION SELECT src FROM relations WHERE dst = ?1 LIMIT ?2
)
SELECT id FROM one
UNION SELECT r.dst FROM one JOIN relations AS r ON r.src = one.id
UNION SELECT r.src FROM one JOIN relations AS r ON r.dst = one.id
LIMIT ?2
"""


def raw_connect(path: Path) -> Any:
    """A second connection with the library's driver and pragmas (autocommit; explicit BEGIN)."""
    conn = driver().module.connect(str(path), isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


@dataclass
class Graph:
    """The generated graph: ``n`` entity ids ``1..n`` and unique ``(src, dst, type)`` relations."""

    names: list[str]
    src: npt.NDArray[np.int64]
    dst: npt.NDArray[np.int64]
    kind: npt.NDArray[np.int64]
    degree: npt.NDArray[np.int64]


def make_graph(n: int, m: int, seed: int) -> Graph:
    """Power-law endpoints over a shuffled order; self-loops and repeated triples dropped, topped up to ``m``."""
    rng = np.random.default_rng(seed)
    weights = np.arange(1, n + 1, dtype=np.float64) ** -ZIPF_S
    weights /= weights.sum()
    order = rng.permutation(n)
    triples = np.zeros((0, 3), dtype=np.int64)
    while len(triples) < m:
        draw = int((m - len(triples)) * 1.3) + 1_000
        src = order[rng.choice(n, size=draw, p=weights)]
        dst = order[rng.choice(n, size=draw, p=weights)]
        kind = rng.choice(len(RELATION_TYPES), size=draw, p=RELATION_P)
        fresh = np.stack([src, dst, kind], axis=1)[src != dst]
        both = np.concatenate([triples, fresh])
        _, first = np.unique(both, axis=0, return_index=True)
        triples = both[np.sort(first)]  # keeps the generation order
    triples = triples[:m]
    src, dst, kind = (triples[:, i] + (1 if i < 2 else 0) for i in range(3))  # ids from 1
    degree = np.bincount(src, minlength=n + 1) + np.bincount(dst, minlength=n + 1)
    names = [f"Node {i:06d}" for i in range(n + 1)]  # index 0 unused
    return Graph(names, src, dst, kind, degree)


def load_graph(conn: Any, graph: Graph, seed: int) -> dict[str, float]:
    """Insert entities, keys, relations and mentions with executemany, one transaction; returns timings."""
    rng = np.random.default_rng(seed + 1)
    n = len(graph.names) - 1
    now = time.time()
    times: dict[str, float] = {}
    entity_rows = [
        (
            i,
            AGENT,
            canonical(graph.names[i]),
            graph.names[i],
            ENTITY_TYPES[i % len(ENTITY_TYPES)],
            "[]",
            0.5,
            1 + min(int(graph.degree[i]) // 10, 50),
            now,
            now,
        )
        for i in range(1, n + 1)
    ]
    key_rows = [(AGENT, row[2], row[0]) for row in entity_rows]
    # Mentions: every entity in one memory, the top 1% by degree in ten.
    hubs = set(np.argsort(-graph.degree[1:])[: max(1, n // 100)] + 1)
    mention_rows = [
        (i, str(uuid.UUID(int=int(rng.integers(0, 2**63)) << 64 | i)))
        for i in range(1, n + 1)
        for _ in range(10 if i in hubs else 1)
    ]
    confidence = np.round(rng.uniform(0.25, 0.9, size=len(graph.src)), 3)
    counts = rng.geometric(0.6, size=len(graph.src))
    relation_rows = [
        (AGENT, int(s), int(d), RELATION_TYPES[int(k)], float(c), int(mc), "heuristic", now, now)
        for s, d, k, c, mc in zip(graph.src, graph.dst, graph.kind, confidence, counts, strict=True)
    ]
    started = time.perf_counter()
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany(
        "INSERT INTO entities (id, agent_id, key, name, type, aliases, confidence, mention_count, created_at, "
        "reinforced_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        entity_rows,
    )
    conn.executemany("INSERT INTO entity_keys (agent_id, key, entity_id) VALUES (?, ?, ?)", key_rows)
    conn.executemany("INSERT INTO entity_mentions (entity_id, memory_id) VALUES (?, ?)", mention_rows)
    conn.execute("COMMIT")
    times["entities"] = time.perf_counter() - started
    t = time.perf_counter()
    for start in range(0, len(relation_rows), BATCH_ROWS):
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(
            "INSERT INTO relations (agent_id, src, dst, type, confidence, mention_count, provenance, created_at, "
            "reinforced_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            relation_rows[start : start + BATCH_ROWS],
        )
        conn.execute("COMMIT")
    times["relations"] = time.perf_counter() - t
    t = time.perf_counter()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    times["checkpoint"] = time.perf_counter() - t
    times["total"] = time.perf_counter() - started
    times["mentions"] = float(len(mention_rows))
    return times


def file_mb(path: Path) -> float:
    """The database plus its WAL, in MB."""
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists()) / 1e6


def bench_traversal(workdir: Path, n: int, m: int) -> None:
    """Part 1: bulk-load, then library traversal beside the raw SQL floor."""
    section(f"Traversal at scale: {n:,} entities, {m:,} relations")
    path = workdir / "graph.db"
    with Memory.open(path, embedder=None):
        pass  # creates the schema (v3 and up)
    t = time.perf_counter()
    graph = make_graph(n, m, SEED)
    generate_s = time.perf_counter() - t
    deg = graph.degree[1:]
    print(
        f"generated in {generate_s:.1f} s: degree max {int(deg.max()):,}, p99 {percentile(deg, 99):.0f}, "
        f"p90 {percentile(deg, 90):.0f}, median {median(deg):.0f}, isolated {int((deg == 0).sum()):,}; "
        f"top 5 {[int(d) for d in np.sort(deg)[-5:][::-1]]}"
    )
    raw = raw_connect(path)
    times = load_graph(raw, graph, SEED)
    print(
        f"bulk load {times['total']:.1f} s: entities + keys + {int(times['mentions']):,} mentions "
        f"{times['entities']:.1f} s, relations {times['relations']:.1f} s "
        f"({m / max(times['relations'], 1e-9):,.0f} rows/s, batches of {BATCH_ROWS:,}), "
        f"checkpoint {times['checkpoint']:.1f} s; file {file_mb(path):,.0f} MB"
    )

    mem = Memory.open(path, embedder=None)
    try:
        stats = mem.graph.stats()
        print(f"mem.graph.stats(): {stats}")
        if stats["entities"] != n or stats["relations"] != m:
            raise SystemExit(f"loaded graph does not match: {stats}")
        rng = np.random.default_rng(SEED + 2)
        by_degree = np.argsort(-deg) + 1
        top = by_degree[: max(HUB_STARTS, n // 100)]
        rest = by_degree[max(HUB_STARTS, n // 100) :]
        starts = [("hub", int(i)) for i in rng.choice(top, size=HUB_STARTS, replace=False)]
        starts += [("other", int(i)) for i in rng.choice(rest, size=STARTS - HUB_STARTS, replace=False)]
        order = rng.permutation(len(starts))
        starts = [starts[i] for i in order]
        check = mem.graph.entity(graph.names[starts[0][1]])
        assert check is not None and check.id == starts[0][1], "entity lookup by name must find the loaded id"
        for i in rng.choice(rest, size=WARMUP, replace=False):
            mem.graph.traverse(graph.names[int(i)], hops=2)
            raw.execute(RAW_TWO_HOP, (int(i), 100)).fetchall()

        ops: dict[str, Callable[[int], int]] = {
            "lib 1": lambda i: len(mem.graph.traverse(graph.names[i], hops=1)),
            "raw 1": lambda i: len(raw.execute(RAW_ONE_HOP, (i, 100)).fetchall()),
            "lib 2": lambda i: len(mem.graph.traverse(graph.names[i], hops=2)),
            "raw 2": lambda i: len(raw.execute(RAW_TWO_HOP, (i, 100)).fetchall()),
        }
        names = list(ops)
        lat: dict[tuple[str, str], list[float]] = defaultdict(list)
        rows: dict[tuple[str, str], list[int]] = defaultdict(list)
        for turn, (group, entity) in enumerate(starts):
            shift = turn % len(names)
            for op in names[shift:] + names[:shift]:
                t = time.perf_counter()
                got = ops[op](entity)
                elapsed = time.perf_counter() - t
                for g in (group, "all"):
                    lat[(g, op)].append(elapsed)
                    rows[(g, op)].append(got)
    finally:
        mem.close()
        raw.close()

    labels = {
        "lib 1": "mem.graph.traverse(hops=1)",
        "raw 1": "  raw SQL one hop (UNION, LIMIT 100)",
        "lib 2": "mem.graph.traverse(hops=2)",
        "raw 2": "  raw SQL two hops (UNION, LIMIT 100)",
    }
    out = []
    for group, count in (("hub", HUB_STARTS), ("other", STARTS - HUB_STARTS), ("all", STARTS)):
        for op in names:
            floor = f"raw {op[-1]}"
            ratio = median(lat[(group, op)]) / median(lat[(group, floor)])
            out.append(
                [
                    f"{group} ({count}): {labels[op]}",
                    median(lat[(group, op)]) * MS,
                    percentile(lat[(group, op)], 95) * MS,
                    float(np.mean(rows[(group, op)])),
                    "-" if op == floor else f"{ratio:.2f}",
                ]
            )
    print()
    print(
        table(
            "graph traversal (ms; rows = entities returned; ratio = p50 / the raw floor's p50, same rounds)",
            ["start entities: operation", "p50", "p95", "rows", "ratio"],
            out,
        )
    )


# ---------------------------------------------------------------------------------- main
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--entities", type=int, default=100_000)
    parser.add_argument("--relations", type=int, default=1_000_000)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help=f"LoCoMo JSON (default {DEFAULT_DATA})")
    parser.add_argument("--skip-traversal", action="store_true")
    parser.add_argument("--skip-vault", action="store_true")
    parser.add_argument("--skip-locomo", action="store_true")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    print("elastic-memory benchmark: knowledge graph traversal, Markdown vault scan and ingest, LoCoMo graph nudge")
    for line in environment():
        print(line)
    workdir = Path(tempfile.mkdtemp(prefix="em-graph-"))
    try:
        if not args.skip_traversal:
            bench_traversal(workdir, args.entities, args.relations)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"total run time {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
