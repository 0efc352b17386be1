"""LoCoMo evidence recall@10 through elastic-memory's public API, with the real built-in embedder.

Run from the repository root (the data lives outside the repo, CC BY-NC 4.0)::

    python benchmarks/locomo_recall.py                      # reads ../shared/data/locomo-dev.json
    python benchmarks/locomo_recall.py --data /path/to/locomo10.json

One store per conversation (a temp file), one memory per dialogue turn (``"<speaker>: <text>"``
plus ``" [shares <blip_caption>]"`` for an image), session_id ``"<sample>/session_N"``,
metadata ``{"dia_id": ...}``, inserted in conversation order with ``remember_many(dedupe=False)``.
Query = the question; gold = its evidence turns (questions without evidence are skipped,
evidence ids matching no turn dropped). recall@10 = mean fraction of gold turns among the top
10 hits; hit@10 = at least one. Recall goes through ``mem.explain`` (recall without access
tracking, plus timings); latency p50 excludes the query embedding.

The embedder is :class:`elastic_memory.MiniLMEmbedder` (what ``embedder="auto"`` resolves to),
one instance for every store, wrapped in an in-process memo so each text is embedded once per
run (the fusion variants reuse the question vectors). Nothing is cached on disk.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from _common import REPO, RESULTS, environment, median, run_block, section, table, write_json
from elastic_memory import Memory, MiniLMEmbedder, RecallConfig

DEFAULT_DATA = REPO.parent / "shared" / "data" / "locomo-dev.json"
K = 10
CATEGORIES = (1, 2, 3, 4, 5)
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


class MemoEmbedder:
    """The built-in model behind an in-process memo (same model_id, family and dimension)."""

    def __init__(self, inner: MiniLMEmbedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.family = inner.family
        self.dimension = inner.dimension
        self._memo: dict[str, npt.NDArray[np.float32]] = {}
        self.seconds = 0.0
        self.embedded = 0

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Vectors for ``texts``; only texts not seen before reach the model."""
        todo = list(dict.fromkeys(t for t in texts if t not in self._memo))
        if todo:
            t = time.perf_counter()
            vectors = self.inner.embed(todo)
            self.seconds += time.perf_counter() - t
            self.embedded += len(todo)
            self._memo.update(zip(todo, vectors, strict=True))
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self._memo[t] for t in texts])


@dataclass
class Conversation:
    """One LoCoMo sample as memories and scored questions."""

    sample_id: str
    items: list[dict[str, Any]]
    questions: list[tuple[str, int, frozenset[str]]]
    skipped_no_evidence: int
    skipped_no_valid_gold: int
    dropped_ids: int


def turn_text(turn: dict[str, Any]) -> str:
    """``"<speaker>: <text>"`` plus ``" [shares <caption>]"`` for a turn with an image."""
    text = f"{turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        text += f" [shares {turn['blip_caption']}]"
    return text


def load(path: Path) -> list[Conversation]:
    """Parse the LoCoMo JSON into conversations."""
    import json

    out = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        conv = sample["conversation"]
        sid = sample["sample_id"]
        keys = sorted((k for k in conv if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1]))
        items = [
            {"content": turn_text(t), "session_id": f"{sid}/{key}", "metadata": {"dia_id": t["dia_id"]}}
            for key in keys
            for t in conv[key]
        ]
        known = {i["metadata"]["dia_id"] for i in items}
        questions = []
        no_evidence = no_gold = dropped = 0
        for qa in sample["qa"]:
            evidence = qa.get("evidence") or []
            if not evidence:
                no_evidence += 1
                continue
            gold = frozenset(e for e in evidence if e in known)
            dropped += len(set(evidence) - gold)
            if not gold:
                no_gold += 1
                continue
            questions.append((str(qa["question"]), int(qa["category"]), gold))
        out.append(Conversation(sid, items, questions, no_evidence, no_gold, dropped))
    return out


@dataclass
class Method:
    """One evaluated row: a recall mode and the store's RecallConfig."""

    label: str
    mode: str
    config: RecallConfig


METHODS = (
    Method("keyword (BM25 porter) - the anchor", "keyword", RecallConfig()),
    Method("semantic (MiniLM-L6 int8)", "semantic", RecallConfig()),
    Method("hybrid convex, session boost 0.5, neighbour boost 0.45 (default)", "hybrid", RecallConfig()),
    Method("hybrid convex, session boost 0 (before issue 26)", "hybrid", RecallConfig(session_boost=0)),
    Method("hybrid convex, neighbour boost 0", "hybrid", RecallConfig(neighbor_boost=0)),
    Method("hybrid weighted 0.7, neighbour boost 0.45", "hybrid", RecallConfig(fusion="weighted")),
    Method("hybrid weighted 0.7, neighbour boost 0", "hybrid", RecallConfig(fusion="weighted", neighbor_boost=0)),
    Method("hybrid rrf k=60, neighbour boost 0.45", "hybrid", RecallConfig(fusion="rrf")),
    Method("hybrid rrf k=60, neighbour boost 0", "hybrid", RecallConfig(fusion="rrf", neighbor_boost=0)),
)


@dataclass
class Scores:
    """Per-question recall and hit, by category, plus latencies."""

    recall: dict[int, list[float]]
    hit: dict[int, list[float]]
    latency: list[float]

    @classmethod
    def empty(cls) -> Scores:
        return cls(defaultdict(list), defaultdict(list), [])

    def mean(self, cats: Sequence[int], what: str = "recall") -> float:
        source = self.recall if what == "recall" else self.hit
        values = [v for c in cats for v in source.get(c, [])]
        return float(np.mean(values)) if values else float("nan")


def evaluate(convs: Sequence[Conversation], paths: dict[str, str], embedder: MemoEmbedder) -> dict[str, Scores]:
    """Every question through every method; the methods take turns question by question (rotating order)."""
    scores = {m.label: Scores.empty() for m in METHODS}
    turn = 0
    for conv in convs:
        mems: list[Memory] = [Memory.open(paths[conv.sample_id], embedder=embedder, recall=m.config) for m in METHODS]
        pairs = list(zip(METHODS, mems, strict=True))
        try:
            for question, category, gold in conv.questions:
                turn += 1
                shift = turn % len(pairs)
                for method, mem in pairs[shift:] + pairs[:shift]:
                    ex = mem.explain(question, k=K, mode=method.mode)
                    if ex.effective_mode.value != method.mode:
                        msg = f"{method.label}: recall degraded: {ex.details.get('degraded')}"
                        raise RuntimeError(msg)
                    found = {h.metadata.get("dia_id") for h in ex.hits[:K]}
                    s = scores[method.label]
                    s.recall[category].append(len(found & gold) / len(gold))
                    s.hit[category].append(1.0 if found & gold else 0.0)
                    s.latency.append(ex.details["total_ms"] - ex.details.get("embed_ms", 0.0))
        finally:
            for mem in mems:
                mem.close()
    return scores


def arguments(
    doc: str | None,
    results: str,
    argv: Sequence[str] | None,
    more: Callable[[argparse.ArgumentParser], object] | None = None,
) -> argparse.Namespace:
    """The LoCoMo scripts' options: ``--data`` and ``--json`` (``results``: the file charts.py reads).

    ``more(parser)`` adds a script's own options.
    """
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0] if doc else None)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help=f"LoCoMo JSON (default {DEFAULT_DATA})")
    parser.add_argument("--json", type=Path, help=f"also write the figures here (for charts.py: {RESULTS}/{results})")
    if more is not None:
        more(parser)
    return parser.parse_args(argv)


def start(title: str, data: Path) -> list[Conversation] | None:
    """Print the run's header and load the conversations; ``None`` (said on stderr) without the data."""
    print(f"elastic-memory benchmark: {title}")
    for line in environment():
        print(line)
    if not data.is_file():
        print(f"no LoCoMo data at {data}; pass --data (see /work/shared/data/README.md)", file=sys.stderr)
        return None
    return load(data)


def main(argv: Sequence[str] | None = None) -> int:
    args = arguments(__doc__, "locomo_recall.json", argv)
    started = time.perf_counter()
    convs = start("LoCoMo evidence recall@10", args.data)
    if convs is None:
        return 2
    n_q = sum(len(c.questions) for c in convs)
    per_cat = {c: sum(1 for conv in convs for _, cat, _ in conv.questions if cat == c) for c in CATEGORIES}
    print(
        f"data      {args.data.name}: {len(convs)} conversations, {sum(len(c.items) for c in convs):,} turns, "
        f"{n_q} questions with evidence (by category {per_cat}); skipped {sum(c.skipped_no_evidence for c in convs)}"
        f" without evidence and {sum(c.skipped_no_valid_gold for c in convs)} whose evidence matches no turn; "
        f"dropped {sum(c.dropped_ids for c in convs)} evidence ids matching no turn"
    )

    embedder = MemoEmbedder(MiniLMEmbedder())
    workdir = Path(tempfile.mkdtemp(prefix="em-locomo-"))
    try:
        section("Ingest (one temp-file store per conversation, remember_many, dedupe=False)")
        paths: dict[str, str] = {}
        t = time.perf_counter()
        for conv in convs:
            paths[conv.sample_id] = str(workdir / f"{conv.sample_id}.db")
            with Memory.open(paths[conv.sample_id], embedder=embedder) as mem:
                ids = mem.remember_many(conv.items, dedupe=False)
                assert len({str(i) for i in ids}) == len(conv.items), "every turn must be its own memory"
                info = mem.stats()
            print(
                f"{conv.sample_id}: {len(conv.items)} turns, {len(conv.questions)} questions, "
                f"vectors {info['vectors']}, index {info['vector_index']}"
            )
        ingest_s = time.perf_counter() - t
        print(
            f"ingest {ingest_s:.1f} s for {sum(len(c.items) for c in convs):,} turns "
            f"(embedding {embedder.seconds:.1f} s, {embedder.embedded / max(embedder.seconds, 1e-9):.0f} texts/s)"
        )

        section("Recall")
        questions = [q for conv in convs for q, _, _ in conv.questions]
        single = []
        for q in questions[:100]:
            t = time.perf_counter()
            embedder.inner.embed([q])
            single.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        embedder.embed(questions)
        print(
            f"query embedding: one question at a time p50 {median(single):.1f} ms (100 questions); "
            f"all {len(questions)} questions in one call {time.perf_counter() - t:.1f} s (then memoised)"
        )
        t = time.perf_counter()
        results = evaluate(convs, paths, embedder)
        print(
            f"{len(METHODS)} methods x {n_q} questions, interleaved question by question: "
            f"{time.perf_counter() - t:.1f} s"
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    anchor = results[METHODS[0].label].mean(CATEGORIES)
    rows = []
    for method in METHODS:
        s = results[method.label]
        rows.append(
            [
                method.label,
                *(s.mean([c]) for c in CATEGORIES),
                s.mean(CATEGORIES),
                s.mean((1, 2, 3, 4)),
                s.mean(CATEGORIES, "hit"),
                f"{s.mean(CATEGORIES) - anchor:+.3f}",
                median(s.latency),
            ]
        )
    print()
    print(
        table(
            f"LoCoMo evidence recall@{K} ({args.data.name}, {n_q} questions), embedder {embedder.model_id}; "
            "p50 ms = recall latency excluding the query embedding",
            ["method", *(f"cat {c}" for c in CATEGORIES), "all", "cat 1-4", f"hit@{K}", "vs BM25", "p50 ms"],
            rows,
            digits=3,
        )
    )
    print("categories: " + ", ".join(f"{c} {CATEGORY_NAMES[c]} (n={per_cat[c]})" for c in CATEGORIES))
    print(f"total run time {time.perf_counter() - started:.0f} s")
    methods = [
        {
            "name": method.label,
            "recall@10": results[method.label].mean(CATEGORIES),
            "hit@10": results[method.label].mean(CATEGORIES, "hit"),
            "p50_ms": median(results[method.label].latency),
            "by_category": {CATEGORY_NAMES[c]: results[method.label].mean([c]) for c in CATEGORIES},
        }
        for method in METHODS
    ]
    write_json(args.json, {"run": run_block(args), "methods": methods})
    return 0


if __name__ == "__main__":
    sys.exit(main())
