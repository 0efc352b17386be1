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
the same rounds, interleaved start by start with a rotating order: the library's own
``WITH RECURSIVE`` query alone on the raw connection, and two raw floors given the start's id
(the library resolves the name first and fetches names and paths after): ``SELECT dst ... UNION
SELECT src ... LIMIT 100`` (SQLite builds a compound UNION in full before the LIMIT, so a hub's
every neighbour is read) and ``SELECT DISTINCT`` over ``UNION ALL`` (stops at the limit); two
hops take the first 100 neighbours, then theirs, nearest first.

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
import math
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
from elastic_memory.connectors import MarkdownFolder, WikilinkEdgeExtractor
from elastic_memory.graph import canonical
from elastic_memory.graph.queries import TRAVERSE
from elastic_memory.ingest import ingest_folder
from elastic_memory.storage.sqlite.driver import driver
from locomo_recall import CATEGORIES, CATEGORY_NAMES, DEFAULT_DATA, MemoEmbedder, load

AGENT = "default"
SEED = 20261130
MS = 1_000.0

# ------------------------------------------------------------------ part 1: traversal at scale
ZIPF_S = 0.9
STARTS = 200
HUB_STARTS = 50
WARMUP = 20
LIMIT = 100
RELATION_TYPES = ("mentioned_with", "works_with", "part_of", "related_to")
RELATION_P = (0.6, 0.15, 0.15, 0.1)
ENTITY_TYPES = ("person", "organization", "place", "concept")
BATCH_ROWS = 100_000

# The floors, given the start's id (the library resolves the name first and fetches names after).
# "union": the plain form; a compound UNION is built in full before its LIMIT applies, so a hub's
# every neighbour is read. "stream": DISTINCT over UNION ALL, which stops at the LIMIT. Two hops:
# the first 100 neighbours, then theirs, nearest first, the start excluded.
RAW_ONE_HOP = "SELECT dst FROM relations WHERE src = ?1 UNION SELECT src FROM relations WHERE dst = ?1 LIMIT ?2"
RAW_TWO_HOP = """
WITH one(id) AS (SELECT dst FROM relations WHERE src = ?1 UNION SELECT src FROM relations WHERE dst = ?1 LIMIT ?2)
SELECT id FROM one
UNION SELECT r.dst FROM one CROSS JOIN relations AS r ON r.src = one.id WHERE r.dst <> ?1
UNION SELECT r.src FROM one CROSS JOIN relations AS r ON r.dst = one.id WHERE r.src <> ?1
LIMIT ?2
"""
STREAM_ONE_HOP = (
    "SELECT DISTINCT id FROM (SELECT dst AS id FROM relations WHERE src = ?1 "
    "UNION ALL SELECT src FROM relations WHERE dst = ?1) LIMIT ?2"
)
STREAM_TWO_HOP = f"""
WITH one(id) AS MATERIALIZED ({STREAM_ONE_HOP})
SELECT DISTINCT id FROM (
    SELECT id FROM one
    UNION ALL SELECT r.dst FROM one CROSS JOIN relations AS r ON r.src = one.id
    UNION ALL SELECT r.src FROM one CROSS JOIN relations AS r ON r.dst = one.id
) WHERE id <> ?1 LIMIT ?2
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
        for group in ("hub", "other"):
            d = [int(graph.degree[i]) for g, i in starts if g == group]
            print(f"{group} starts: {len(d)}, degree min {min(d):,}, median {median(d):,.0f}, max {max(d):,}")
        check = mem.graph.entity(graph.names[starts[0][1]])
        assert check is not None and check.id == starts[0][1], "entity lookup by name must find the loaded id"

        def lib(hops: int) -> Callable[[int], int]:
            return lambda i: len(mem.graph.traverse(graph.names[i], hops=hops))

        def sql(query: str, *params: Any) -> Callable[[int], int]:
            return lambda i: len(raw.execute(query, [p if p is not None else i for p in params]).fetchall())

        def cte(hops: int) -> Callable[[int], int]:  # the library's own query; the seed row is not an answer
            return lambda i: len(
                raw.execute(*TRAVERSE["sqlite"]([i], None, max(8, LIMIT // 4), hops, LIMIT)).fetchall()
            )

        ops: dict[str, tuple[str, Callable[[int], int]]] = {
            "lib 1": ("mem.graph.traverse(name, hops=1)", lib(1)),
            "cte 1": ("  its WITH RECURSIVE query alone, raw", cte(1)),
            "union 1": ("  raw SQL one hop, UNION ... LIMIT 100", sql(RAW_ONE_HOP, None, LIMIT)),
            "stream 1": ("  raw SQL one hop, DISTINCT/UNION ALL", sql(STREAM_ONE_HOP, None, LIMIT)),
            "lib 2": ("mem.graph.traverse(name, hops=2)", lib(2)),
            "cte 2": ("  its WITH RECURSIVE query alone, raw", cte(2)),
            "union 2": ("  raw SQL two hops, UNION ... LIMIT 100", sql(RAW_TWO_HOP, None, LIMIT)),
            "stream 2": ("  raw SQL two hops, DISTINCT/UNION ALL", sql(STREAM_TWO_HOP, None, LIMIT)),
        }
        for i in rng.choice(rest, size=WARMUP, replace=False):
            for _, run in ops.values():
                run(int(i))
        names = list(ops)
        lat: dict[tuple[str, str], list[float]] = defaultdict(list)
        rows: dict[tuple[str, str], list[int]] = defaultdict(list)
        started = time.perf_counter()
        for turn, (group, entity) in enumerate(starts):
            shift = turn % len(names)
            for op in names[shift:] + names[:shift]:
                t = time.perf_counter()
                got = ops[op][1](entity)
                elapsed = time.perf_counter() - t
                for g in (group, "all"):
                    lat[(g, op)].append(elapsed)
                    rows[(g, op)].append(got - (op.startswith("cte")))
        print(
            f"{len(starts)} start entities x {len(names)} operations, interleaved: "
            f"{time.perf_counter() - started:.0f} s"
        )
    finally:
        mem.close()
        raw.close()

    out = []
    for group, count in (("hub", HUB_STARTS), ("other", STARTS - HUB_STARTS), ("all", STARTS)):
        for op in names:
            hops = op[-1]
            p50 = median(lat[(group, op)])
            out.append(
                [
                    f"{group} ({count}): {ops[op][0]}",
                    p50 * MS,
                    percentile(lat[(group, op)], 95) * MS,
                    float(np.mean(rows[(group, op)])),
                    "-" if op.startswith("union") else f"{p50 / median(lat[(group, f'union {hops}')]):.2f}",
                    "-" if op.startswith("stream") else f"{p50 / median(lat[(group, f'stream {hops}')]):.2f}",
                ]
            )
    print()
    print(
        table(
            f"graph traversal, limit {LIMIT} (ms; rows = entities returned, mean; "
            "vs = p50 / that floor's p50, same rounds)",
            ["start entities: operation", "p50", "p95", "rows", "vs union", "vs stream"],
            out,
        )
    )


# ---------------------------------------------------------------------- part 2: vault scan and ingest
AREAS = ("Projects", "Areas", "Resources", "Archive", "Journal", "People", "Reading", "Work", "Home", "Ideas")
SUBFOLDERS = 8
NOTE_TYPES = ("semantic", "episodic", "procedural")
DANGLING = 0.10
DUPLICATE_NAMES = 0.01
BROKEN_FRONTMATTER = 0.005
VAULT_TARGET_S = 60.0


def make_vault(root: Path, n: int, seed: int) -> dict[str, int]:
    """``n`` notes under ``root``: nested folders, frontmatter, hashtags, ~3 wikilinks each; returns counts."""
    from ingest_recall import make_corpus

    rng = np.random.default_rng(seed)
    corpus = make_corpus(n * 6, 0, seed=seed)
    words = [w for w in corpus.words[200:2_200] if w.isalpha()]
    folders = [""]
    for area in AREAS:
        folders.append(area)
        for j in range(SUBFOLDERS):
            sub = f"{area}/{words[int(rng.integers(len(words)))].capitalize()} {j}"
            folders.append(sub)
            if j % 3 == 0:
                folders.append(f"{sub}/{words[int(rng.integers(len(words)))].capitalize()}")
    names = [
        f"{words[int(rng.integers(len(words)))].capitalize()} {words[int(rng.integers(len(words)))]} {i}"
        for i in range(n)
    ]
    for i in rng.choice(n, size=int(n * DUPLICATE_NAMES), replace=False):  # the same name in another folder
        names[int(i)] = names[int(rng.integers(n))]
    where = [folders[int(f)] for f in rng.integers(len(folders), size=n)]
    paths = [f"{w}/{name}.md" if w else f"{name}.md" for w, name in zip(where, names, strict=True)]
    used: set[str] = set()
    for i, path in enumerate(paths):  # a duplicate that landed in the same folder moves to the root
        if path.casefold() in used:
            paths[i] = f"{names[i]} (copy {i}).md"
        used.add(paths[i].casefold())
    counts = {"notes": n, "folders": len(folders), "links": 0, "dangling": 0, "bytes": 0}
    sentence = iter(corpus.texts)
    for i in range(n):
        parts: list[str] = []
        if rng.random() < BROKEN_FRONTMATTER:
            parts.append("---\ntags: [unclosed\n---\n")
        elif rng.random() < 0.8:
            tags = ", ".join(f"topic-{int(t)}" for t in rng.integers(0, 50, size=int(rng.integers(1, 4))))
            parts.append(
                f"---\ntitle: {names[i]}\ntags: [{tags}]\ntype: {NOTE_TYPES[i % 3]}\n"
                f"importance: {rng.uniform(0.2, 0.9):.2f}\ncreated: 2026-{1 + i % 12:02d}-{1 + i % 28:02d}\n"
                f"aliases: [{names[i].split()[0]}]\n---\n"
            )
        parts.append(f"# {names[i]}\n\n")
        links = []
        for _ in range(int(rng.poisson(3))):
            counts["links"] += 1
            if rng.random() < DANGLING:
                counts["dangling"] += 1
                links.append(f"[[Missing {words[int(rng.integers(len(words)))]} {int(rng.integers(10**6))}]]")
                continue
            j = int(rng.integers(n))
            form = rng.random()
            target = paths[j][:-3] if form < 0.15 else names[j]  # a path or a bare name
            if form < 0.55:
                links.append(f"[[{target}]]")
            elif form < 0.75:
                links.append(f"[[{target}|{words[int(rng.integers(len(words)))]}]]")
            elif form < 0.9:
                links.append(f"[[{target}#Notes]]")
            else:
                links.append(f"![[{target}]]")
        body = [next(sentence) for _ in range(6)]
        for k, link in enumerate(links):
            body[k % len(body)] += f" See {link}."
        body[-1] += f" #{words[int(rng.integers(len(words)))]} #area/{where[i].split('/')[0].lower() or 'root'}"
        parts.append(" ".join(body[:3]) + "\n\n## Notes\n\n" + " ".join(body[3:]) + "\n")
        if i % 50 == 0:
            parts.append("\n```\n[[not a link]] #not-a-tag\n```\n")
        path = root / paths[i]
        path.parent.mkdir(parents=True, exist_ok=True)
        text = "".join(parts)
        path.write_text(text, encoding="utf-8")
        counts["bytes"] += len(text.encode())
    return counts


def bench_vault(workdir: Path, n: int) -> None:
    """Part 2: generate a vault, time the scans, the wikilink extraction and the ingest."""
    section(f"Vault scan and ingest: {n:,} notes, no embeddings")
    root = workdir / "vault"
    root.mkdir()
    t = time.perf_counter()
    made = make_vault(root, n, SEED)
    print(
        f"generated in {time.perf_counter() - t:.1f} s: {made['notes']:,} notes in {made['folders']} folders, "
        f"{made['bytes'] / 1e6:.1f} MB, {made['links']:,} wikilinks written ({made['dangling']:,} to missing notes); "
        "the files are in the page cache (just written)"
    )
    out: list[list[object]] = []

    def timed(label: str, work: Callable[[], Any], detail: Callable[[Any], str]) -> Any:
        t = time.perf_counter()
        result = work()
        elapsed = time.perf_counter() - t
        out.append([label, elapsed, round(n / elapsed), detail(result)])
        return result

    folder = MarkdownFolder(root)
    notes = timed("MarkdownFolder(root).notes(), first scan", folder.notes, lambda r: f"{len(r):,} notes")
    report = folder.scan_report
    timed("  notes() again, nothing changed", folder.notes, lambda r: f"{len(r):,} notes")
    _, links = timed(
        "WikilinkEdgeExtractor(folder).scan()",
        WikilinkEdgeExtractor(folder).scan,
        lambda r: f"{len(r[0]):,} edges",
    )
    db = workdir / "vault.db"
    with Memory.open(db, embedder=None) as mem:
        first = timed(
            "ingest_folder(mem, MarkdownFolder(root)), first run",
            lambda: ingest_folder(mem, MarkdownFolder(root)),
            lambda r: f"{r.new:,} new, {r.links:,} link edges",
        )
        stats = mem.stats()
    with Memory.open(db, embedder=None) as mem:  # a second `elastic-memory ingest`: new store handle, new folder
        again = timed(
            "  ingest_folder again, nothing changed",
            lambda: ingest_folder(mem, MarkdownFolder(root)),
            lambda r: f"{r.unchanged:,} unchanged, {r.new + r.updated} written",
        )
        graph = mem.graph.stats()
    print(
        f"scan report: {report.scanned:,} scanned, {report.parsed:,} parsed, {report.bad_frontmatter} with bad "
        f"frontmatter; links: {links.links_found:,} found, {links.resolved:,} resolved, {links.dangling:,} dangling, "
        f"{links.ambiguous:,} ambiguous, {links.self_links:,} self"
    )
    print(
        f"ingest: {first.scanned:,} scanned, {first.new:,} new, {first.skipped} skipped; re-run {again.unchanged:,} "
        f"unchanged; store {stats['total_memories']:,} memories, {graph['memory_edges']:,} memory edges, "
        f"file {stats['db_size_bytes'] / 1e6:.1f} MB"
    )
    assert len(notes) == n and first.new == n and again.unchanged == n, "every note must be read and ingested once"
    print()
    print(
        table("vault (seconds; notes/s = notes in the vault / seconds)", ["operation", "s", "notes/s", "result"], out)
    )
    total = float(out[3][1])
    verdict = "met" if total < VAULT_TARGET_S * n / 10_000 else "NOT met"
    print(
        f"target: 10k notes ingested in under {VAULT_TARGET_S:.0f} s without embeddings: "
        f"{total:.1f} s for {n:,}: {verdict}"
    )


# ------------------------------------------------------------- part 3: LoCoMo with and without the nudge
K = 10
LOOP = LoopConfig(tier="standard", background=False)
GRAPH_BOOST = 0.15


@dataclass(frozen=True)
class Method:
    """One evaluated row: a recall mode on the store opened with one graph boost."""

    label: str
    mode: str
    boost: float


METHODS = (
    Method("keyword, graph nudge 0.15 (default)", "keyword", GRAPH_BOOST),
    Method("keyword, graph nudge off", "keyword", 0.0),
    Method("hybrid, graph nudge 0.15 (default)", "hybrid", GRAPH_BOOST),
    Method("hybrid, graph nudge off", "hybrid", 0.0),
)


@dataclass
class Scores:
    """Per-question recall by category, top-10 ids, latencies and the nudge's explain details."""

    recall: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    hit: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    per_question: list[float] = field(default_factory=list)
    top: list[list[str]] = field(default_factory=list)
    latency: list[float] = field(default_factory=list)
    graph: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))

    def mean(self, cats: Sequence[int], what: str = "recall") -> float:
        source = self.recall if what == "recall" else self.hit
        values = [v for c in cats for v in source.get(c, [])]
        return float(np.mean(values)) if values else math.nan


def ingest_locomo(conv: Any, path: Path, embedder: MemoEmbedder) -> dict[str, Any]:
    """Every dialogue turn through record_turn (empty reply), then drain; returns counts."""
    t = time.perf_counter()
    with Memory.open(path, embedder=embedder, loop=LOOP) as mem:
        for item in conv.items:
            receipt = mem.record_turn(item["content"], "", session_id=item["session_id"], metadata=item["metadata"])
            if not receipt.ok:
                raise SystemExit(f"record_turn failed: {receipt.error}")
        recorded = time.perf_counter() - t
        mem.drain()
        stats, graph, health = mem.stats(), mem.graph.stats(), mem.health()
    return {
        "record_s": recorded,
        "drain_s": time.perf_counter() - t - recorded,
        "memories": stats["total_memories"],
        "vectors": stats["vectors"],
        "entities": graph["entities"],
        "relations": graph["relations"],
        "jobs": health["jobs_done"],
        "errors": health["errors"],
    }


def evaluate_locomo(convs: Sequence[Any], paths: dict[str, Path], embedder: MemoEmbedder) -> dict[str, Scores]:
    """The four methods take turns question by question (rotating order) on two handles of each store."""
    scores = {m.label: Scores() for m in METHODS}
    turn = 0
    for conv in convs:
        handles = {
            boost: Memory.open(
                paths[conv.sample_id], embedder=embedder, loop=LOOP, recall=RecallConfig(graph_boost=boost)
            )
            for boost in (GRAPH_BOOST, 0.0)
        }
        try:
            for question, category, gold in conv.questions:
                turn += 1
                shift = turn % len(METHODS)
                for method in METHODS[shift:] + METHODS[:shift]:
                    t = time.perf_counter()
                    ex = handles[method.boost].explain(question, k=K, mode=method.mode)
                    elapsed = (time.perf_counter() - t) * MS
                    if ex.effective_mode.value != method.mode:
                        raise SystemExit(f"{method.label}: recall degraded: {ex.details.get('degraded')}")
                    s = scores[method.label]
                    found = {h.metadata.get("dia_id") for h in ex.hits[:K]}
                    s.recall[category].append(len(found & gold) / len(gold))
                    s.hit[category].append(1.0 if found & gold else 0.0)
                    s.per_question.append(s.recall[category][-1])
                    s.top.append([h.id for h in ex.hits[:K]])
                    s.latency.append(elapsed - ex.details.get("embed_ms", 0.0))  # total_ms leaves the nudge out
                    graph = ex.details.get("graph")
                    s.graph["applied"].append(1.0 if graph else 0.0)
                    for key in ("reached", "nudged", "surfaced"):
                        s.graph[key].append(float(graph[key]) if graph else 0.0)
                    s.graph["seeds"].append(float(len(graph["seeds"])) if graph else 0.0)
                    if graph:
                        s.graph["ms"].append(float(graph["ms"]))
        finally:
            for mem in handles.values():
                mem.close()
    return scores


def bench_locomo(workdir: Path, data: Path) -> None:
    """Part 3: LoCoMo dev recall@10, keyword and hybrid, with and without the graph nudge."""
    section("LoCoMo dev recall@10 with and without the graph nudge (record_turn ingest, STANDARD tier)")
    if not data.is_file():
        print(f"no LoCoMo data at {data}; pass --data (see /work/shared/data/README.md); part skipped")
        return
    convs = load(data)
    n_q = sum(len(c.questions) for c in convs)
    per_cat = {c: sum(1 for conv in convs for _, cat, _ in conv.questions if cat == c) for c in CATEGORIES}
    print(
        f"data: {data.name}, {len(convs)} conversations, {sum(len(c.items) for c in convs):,} turns, "
        f"{n_q} questions with evidence"
    )
    embedder = MemoEmbedder(MiniLMEmbedder())
    paths: dict[str, Path] = {}
    t = time.perf_counter()
    for conv in convs:
        paths[conv.sample_id] = workdir / f"locomo-{conv.sample_id}.db"
        info = ingest_locomo(conv, paths[conv.sample_id], embedder)
        print(
            f"{conv.sample_id}: {len(conv.items)} turns -> {info['memories']} memories ({info['vectors']} vectors), "
            f"{info['entities']} entities, {info['relations']} relations; record_turn {info['record_s']:.1f} s, "
            f"drain {info['drain_s']:.1f} s; jobs done {info['jobs']}, errors {info['errors'] or 'none'}"
        )
    print(
        f"ingest {time.perf_counter() - t:.0f} s (embedding {embedder.seconds:.0f} s for {embedder.embedded:,} texts)"
    )
    embedder.embed([q for conv in convs for q, _, _ in conv.questions])
    t = time.perf_counter()
    results = evaluate_locomo(convs, paths, embedder)
    print(
        f"{len(METHODS)} methods x {n_q} questions, interleaved question by question: {time.perf_counter() - t:.0f} s"
    )

    rows = []
    for method in METHODS:
        s = results[method.label]
        off = results[method.label.replace("0.15 (default)", "off")]
        rows.append(
            [
                method.label,
                *(s.mean([c]) for c in CATEGORIES),
                s.mean(CATEGORIES),
                s.mean((1, 2, 3, 4)),
                s.mean(CATEGORIES, "hit"),
                "-" if s is off else f"{s.mean(CATEGORIES) - off.mean(CATEGORIES):+.3f}",
                median(s.latency),
            ]
        )
    print()
    print(
        table(
            f"LoCoMo evidence recall@{K} ({data.name}, {n_q} questions); nudge = difference to the same mode "
            "with the nudge off; p50 ms = explain() wall time, the query embedding (memoised) excluded",
            ["method", *(f"cat {c}" for c in CATEGORIES), "all", "cat 1-4", f"hit@{K}", "nudge", "p50 ms"],
            rows,
            digits=3,
        )
    )
    print("categories: " + ", ".join(f"{c} {CATEGORY_NAMES[c]} (n={per_cat[c]})" for c in CATEGORIES))
    detail_rows = []
    for mode in ("keyword", "hybrid"):
        on = results[f"{mode}, graph nudge 0.15 (default)"]
        off = results[f"{mode}, graph nudge off"]
        changed = [len(set(a) - set(b)) for a, b in zip(on.top, off.top, strict=True)]
        reordered = [a != b for a, b in zip(on.top, off.top, strict=True)]
        diff = np.array(on.per_question) - np.array(off.per_question)
        detail_rows.append(
            [
                mode,
                float(np.mean(on.graph["applied"])),
                float(np.mean(on.graph["seeds"])),
                float(np.mean(on.graph["reached"])),
                float(np.mean(on.graph["nudged"])),
                float(np.mean(on.graph["surfaced"])),
                float(np.mean(reordered)),
                float(np.mean(changed)),
                int((diff > 0).sum()),
                int((diff < 0).sum()),
                median(on.graph["ms"]),
            ]
        )
    print()
    print(
        table(
            "the nudge per query (means over all questions, from explain().details['graph']; applied = share of "
            "queries with graph details; surfaced = memories added as candidates; reordered = share whose top 10 "
            "differs in order or content from the same mode without the nudge; new in top 10 = ids not in it; "
            "better/worse = questions whose recall@10 rose/fell; ms p50 = details['graph']['ms'] where applied)",
            [
                "mode",
                "applied",
                "seeds",
                "reached",
                "nudged",
                "surfaced",
                "reordered",
                "new in top 10",
                "better",
                "worse",
                "ms p50",
            ],
            detail_rows,
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
        if not args.skip_vault:
            bench_vault(workdir, args.notes)
        if not args.skip_locomo:
            bench_locomo(workdir, args.data)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"total run time {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
