"""LoCoMo recall@10 out of sample: each lever's setting chosen on four conversations, reported on the fifth.

Run from the repository root (the data lives outside the repo, CC BY-NC 4.0)::

    python benchmarks/locomo_cv.py                     # ~5 min on 2 vCPUs
    python benchmarks/locomo_cv.py --json benchmarks/results/locomo_cv.json

The protocol of ``locomo_recall.py`` (one store per conversation, one memory per dialogue
turn, the built-in MiniLM embedder, evidence recall@10 through ``Memory.explain``), with
leave-one-conversation-out cross-validation: for each lever, each fold picks the setting
with the best mean recall@10 on the other four conversations and reports it on the held-out
one. A row gives the held-out recall pooled over the five folds (every question is held out
once), by category, and the spread of the per-fold gain over the previous default (session
boost off), so a lever that helps only in sample shows as a spread around zero.

Levers in the library are set through :class:`~elastic_memory.RecallConfig`; the others are
written here on the public API (``explain`` with ``vector=``), to measure them before any
goes into the library:

- **session boost** (kept, ``RecallConfig.session_boost``): a hit from the session holding
  most of the best ten candidates' score gains up to ``beta``.
- **neighbour boost** (``RecallConfig.neighbor_boost``): the turn next to a strong match.
- **keyword feedback**: the query plus the ``t`` most distinctive words (tf-idf) of the
  first pass's ``m`` best hits, run again (the vector leg keeps the question's vector).
- **vector feedback** (Rocchio): the question's vector moved ``alpha`` toward the mean of
  the first pass's ``m`` best hits' vectors.
- **session diversity**: the top ten re-picked greedily, a hit's score times
  ``(1 - gamma)^n`` for ``n`` hits already taken from its session.
- **speaker match**: a hit spoken by a person the question names (a capitalised word of the
  question equal to the ``"<speaker>:"`` the turn starts with) gets its score times ``1 + beta``.
- **context vectors**: each turn also embedded together with the ``b`` turns before it in
  its session (a second vector per memory); the hybrid's top 50 and the 50 nearest context
  vectors re-scored as hybrid score + ``lambda`` x the context vector's cosine relevance.

Beside the levers, the ceiling of re-ranking: the recall@10 a perfect re-ranker of the
hybrid's first 50 / 100 candidates would reach (what a cross-encoder or an llm re-ranker
could at most add without finding new candidates).

**Re-ranking** (``--reranker minilm`` or ``--reranker e5``, see ``_rescorers.py``): one more
lever, ``RecallConfig(reranker=EmbedderReranker(...), rerank_candidates=N, rerank_weight=w)``
over a grid of ``N`` and ``w``, its setting chosen per fold like the others, and the re-scorer's cost per query with
nothing memoised. ``--only-rerank`` measures the anchor, the defaults and that lever alone.
"""

from __future__ import annotations

import math
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from _common import run_block, section, table, write_json
from _rescorers import cold_cost, rescorer
from elastic_memory import Hit, Memory, MiniLMEmbedder, RecallConfig
from locomo_recall import CATEGORIES, CATEGORY_NAMES, Conversation, K, MemoEmbedder, arguments, start

#: Words left out of keyword feedback (function words carry no topic).
STOP = frozenset(
    "a an the and or but of to in on at for with by from is are was were be been being do does did has have "
    "had i you he she it we they me him her us them my your his its our their this that these those what which "
    "who whom when where why how not no yes so as if than then there here about into over after before up down "
    "out just also very can could would should will shall may might must really too like get got going go".split()
)
PREVIOUS = RecallConfig(session_boost=0.0)  # the default before this lever

#: Ask(mem, question, vector, context) -> the dia_ids of the top ten, best first
Ask = Callable[[Memory, str, list[float], "Context"], Sequence[str]]
CONTEXT_BEFORE = (2, 3)
#: Candidates a reranker reads, the grid of the re-ranking lever.
RERANK_CANDIDATES = (20, 50)
#: The reranker's share of the final order, the lever's other axis.
RERANK_WEIGHTS = (0.1, 0.25, 0.5)


@dataclass
class Context:
    """Per-conversation statistics the feedback levers need."""

    doc_freq: Counter[str]
    turns: int
    vectors: dict[str, np.ndarray]
    dia_ids: list[str]
    #: turns before -> one context vector per turn (rows in ``dia_ids`` order)
    context: dict[int, np.ndarray]


@dataclass
class Lever:
    """One lever: a name and its settings, each a (label, RecallConfig, ask)."""

    name: str
    settings: list[tuple[str, RecallConfig, Ask]]
    kept: bool = False
    scores: dict[str, dict[str, list[tuple[int, float, float]]]] = field(default_factory=dict)


def words(text: str) -> list[str]:
    """Lower-case content words of ``text``."""
    return [w for w in re.findall(r"[a-z0-9']+", text.lower()) if len(w) > 2 and w not in STOP]


def unit(v: np.ndarray) -> np.ndarray:
    return v / (float(np.linalg.norm(v)) or 1.0)


def ids(hits: Sequence[Hit]) -> list[str]:
    return [str(h.metadata.get("dia_id")) for h in hits]


def plain(mode: str = "hybrid") -> Ask:
    """A recall as the library makes it."""
    return lambda mem, q, vec, ctx: ids(mem.explain(q, k=K, mode=mode).hits)


def keyword_feedback(terms: int, docs: int) -> Ask:
    """The first pass's most distinctive words added to the keyword query."""

    def ask(mem: Memory, q: str, vec: list[float], ctx: Context) -> Sequence[str]:
        first = mem.explain(q, k=docs, mode="hybrid").hits
        asked = set(words(q))
        weight: Counter[str] = Counter()
        for hit in first:
            for w in set(words(hit.content)) - asked:
                weight[w] += math.log(ctx.turns / (1 + ctx.doc_freq[w]))
        extra = " ".join(w for w, _ in weight.most_common(terms))
        return ids(mem.explain(f"{q} {extra}", k=K, mode="hybrid", vector=vec).hits)

    return ask


def vector_feedback(alpha: float, docs: int) -> Ask:
    """The question's vector moved toward the first pass's best hits (Rocchio)."""

    def ask(mem: Memory, q: str, vec: list[float], ctx: Context) -> Sequence[str]:
        first = mem.explain(q, k=docs, mode="hybrid").hits
        near = [ctx.vectors[h.content] for h in first if h.content in ctx.vectors]
        if not near:
            return ids(mem.explain(q, k=K, mode="hybrid").hits)
        moved = unit(np.asarray(vec) + alpha * np.mean(near, axis=0))
        return ids(mem.explain(q, k=K, mode="hybrid", vector=moved.tolist()).hits)

    return ask


def session_diversity(gamma: float) -> Ask:
    """The top ten re-picked with a penalty for each hit already taken from the same session."""

    def ask(mem: Memory, q: str, vec: list[float], ctx: Context) -> Sequence[str]:
        pool = list(mem.explain(q, k=5 * K, mode="hybrid").hits)
        taken: Counter[str | None] = Counter()
        out: list[Hit] = []
        while pool and len(out) < K:
            best = max(pool, key=lambda h: h.score * (1 - gamma) ** taken[h.session_id])
            out.append(best)
            taken[best.session_id] += 1
            pool.remove(best)
        return ids(out)

    return ask


def speaker_match(beta: float) -> Ask:
    """Hits spoken by a person the question names, lifted."""

    def ask(mem: Memory, q: str, vec: list[float], ctx: Context) -> Sequence[str]:
        named = set(re.findall(r"\b([A-Z][a-z]+)(?:'s)?\b", q))
        hits = mem.explain(q, k=5 * K, mode="hybrid").hits
        lifted = sorted(hits, key=lambda h: -h.score * (1 + beta if h.content.split(":", 1)[0] in named else 1))
        return ids(lifted)

    return ask


def context_vectors(before: int, lam: float) -> Ask:
    """The hybrid's candidates and the nearest context vectors, re-scored with the context vector's cosine."""

    def ask(mem: Memory, q: str, vec: list[float], ctx: Context) -> Sequence[str]:
        fused = {str(h.metadata.get("dia_id")): h.score for h in mem.explain(q, k=5 * K, mode="hybrid").hits}
        cosine = ctx.context[before] @ np.asarray(vec, dtype=np.float32)
        relevance = dict(zip(ctx.dia_ids, np.clip((cosine - 0.3) / 0.7, 0.0, 1.0).tolist(), strict=True))
        nearest = [ctx.dia_ids[i] for i in np.argsort(-cosine)[: 5 * K]]
        pool = set(fused) | set(nearest)
        return sorted(pool, key=lambda d: -(fused.get(d, 0.0) + lam * relevance[d]))[:K]

    return ask


def context_texts(conv: Conversation, before: int) -> list[str]:
    """Each turn with the ``before`` turns preceding it in its session, in ``conv.items`` order."""
    out: list[str] = []
    session: list[str] = []
    current = None
    for item in conv.items:
        if item["session_id"] != current:
            current, session = item["session_id"], []
        session.append(item["content"])
        out.append(" ".join(session[-(before + 1) :]))
    return out


def levers(reranker: Any = None, *, only_rerank: bool = False) -> list[Lever]:
    """Every lever measured, with its grid (the first setting of each is the previous default's).

    ``reranker``: add the re-ranking lever (its first setting is today's default, no reranker);
    ``only_rerank``: the anchor, the two defaults and that lever alone.
    """
    default = plain()
    anchors = [
        Lever("keyword (BM25), the anchor", [("-", RecallConfig(), plain("keyword"))]),
        Lever("hybrid, previous default (no session boost)", [("-", PREVIOUS, default)]),
        Lever(
            "session boost beta (kept)",
            [(f"{b}", RecallConfig(session_boost=b), default) for b in (0.0, 0.25, 0.5, 0.75, 1.0)],
            kept=True,
        ),
    ]
    rerank = []
    if reranker is not None:
        grid = [
            (f"N={n} w={w}", RecallConfig(reranker=reranker, rerank_candidates=n, rerank_weight=w), default)
            for n in RERANK_CANDIDATES
            for w in RERANK_WEIGHTS
        ]
        rerank = [Lever(f"re-rank top N by {reranker.model_id}", [("off", RecallConfig(), default), *grid])]
    if only_rerank:
        return anchors + rerank
    return [
        *anchors,
        Lever(
            "neighbour boost (with session boost 0.5)",
            [(f"{b}", RecallConfig(neighbor_boost=b), default) for b in (0.45, 0.0, 0.25, 0.65)],
            kept=True,
        ),
        Lever(
            "keyword feedback t words from m hits",
            [("off", PREVIOUS, default)]
            + [(f"t={t} m={m}", PREVIOUS, keyword_feedback(t, m)) for t in (3, 6) for m in (3, 5)],
        ),
        Lever(
            "vector feedback alpha from m hits",
            [("off", PREVIOUS, default)]
            + [(f"a={a} m={m}", PREVIOUS, vector_feedback(a, m)) for a in (0.3, 0.6) for m in (3, 10)],
        ),
        Lever(
            "session diversity gamma",
            [("off", PREVIOUS, default)] + [(f"{g}", PREVIOUS, session_diversity(g)) for g in (0.1, 0.2)],
        ),
        Lever(
            "speaker match beta",
            [("off", PREVIOUS, default)] + [(f"{b}", PREVIOUS, speaker_match(b)) for b in (0.1, 0.2, 0.4)],
        ),
        Lever(
            "context vectors b turns before, lambda",
            [("off", PREVIOUS, default)]
            + [(f"b={b} l={lam}", PREVIOUS, context_vectors(b, lam)) for b in CONTEXT_BEFORE for lam in (0.2, 0.4)],
        ),
        *rerank,
    ]


def measure(
    convs: Sequence[Conversation], paths: dict[str, str], embedder: MemoEmbedder, all_levers: list[Lever]
) -> dict[int, list[float]]:
    """Every question through every setting of every lever (fills ``lever.scores[setting][conv]``).

    Returns the re-ranking ceilings: candidates -> per-question recall@10 of a perfect order.
    """
    ceiling: dict[int, list[float]] = {50: [], 100: []}
    for conv in convs:
        contents = [item["content"] for item in conv.items]
        ctx = Context(
            doc_freq=Counter(w for text in contents for w in set(words(text))),
            turns=len(conv.items),
            vectors=dict(zip(contents, embedder.embed(contents), strict=True)),
            dia_ids=[str(item["metadata"]["dia_id"]) for item in conv.items],
            context={b: embedder.embed(context_texts(conv, b)) for b in CONTEXT_BEFORE},
        )
        with Memory.open(paths[conv.sample_id], embedder=embedder) as mem:
            for question, _, gold in conv.questions:
                for n, values in ceiling.items():
                    found = set(ids(mem.explain(question, k=n, mode="hybrid").hits)) & gold
                    values.append(min(K, len(found)) / len(gold))
        for lever in all_levers:
            for label, config, ask in lever.settings:
                with Memory.open(paths[conv.sample_id], embedder=embedder, recall=config) as mem:
                    rows = []
                    for question, category, gold in conv.questions:
                        vec = embedder.embed([question])[0].tolist()
                        found = set(ask(mem, question, vec, ctx)[:K])
                        rows.append((category, len(found & gold) / len(gold), 1.0 if found & gold else 0.0))
                lever.scores.setdefault(label, {})[conv.sample_id] = rows
    return ceiling


def mean(rows: Sequence[tuple[int, float, float]], cats: Sequence[int] = CATEGORIES, at: int = 1) -> float:
    values = [r[at] for r in rows if r[0] in cats]
    return float(np.mean(values)) if values else float("nan")


def cross_validate(lever: Lever, convs: Sequence[Conversation], baseline: Lever) -> dict[str, Any]:
    """Leave one conversation out: the setting best on the others, scored on it."""
    ids = [c.sample_id for c in convs]
    held: list[tuple[int, float, float]] = []
    folds = []
    for out in ids:
        train = [c for c in ids if c != out]
        best = max(
            lever.scores, key=lambda s: mean([r for c in train for r in lever.scores[s][c]])
        )  # ties: the first setting, the previous default
        rows = lever.scores[best][out]
        held += rows
        before = mean(baseline.scores["-"][out])
        folds.append({"held_out": out, "chosen": best, "recall@10": mean(rows), "gain": mean(rows) - before})
    gains = [f["gain"] for f in folds]
    return {
        "name": lever.name,
        "kept": lever.kept,
        "recall@10": mean(held),
        "hit@10": mean(held, at=2),
        "by_category": {CATEGORY_NAMES[c]: mean(held, [c]) for c in CATEGORIES},
        "folds": folds,
        "gain_mean": float(np.mean(gains)),
        "gain_min": min(gains),
        "gain_max": max(gains),
        "in_sample": {s: mean([r for c in ids for r in lever.scores[s][c]]) for s in lever.scores},
    }


def main(argv: Sequence[str] | None = None) -> int:
    def more(parser: Any) -> None:
        parser.add_argument("--reranker", choices=["minilm", "e5"], help="add the re-ranking lever with this re-scorer")
        parser.add_argument("--only-rerank", action="store_true", help="only the anchor, the defaults and re-ranking")

    args = arguments(__doc__, "locomo_cv.json", argv, more)
    started = time.perf_counter()
    convs = start("LoCoMo recall@10, leave-one-conversation-out cross-validation", args.data)
    if convs is None:
        return 2
    embedder = MemoEmbedder(MiniLMEmbedder())
    embedder.embed([q for c in convs for q, _, _ in c.questions])
    workdir = Path(tempfile.mkdtemp(prefix="em-locomo-cv-"))
    reranker = rescorer(args.reranker)[1] if args.reranker else None
    all_levers = levers(reranker, only_rerank=args.only_rerank)
    try:
        section("Ingest (one temp-file store per conversation)")
        paths = {}
        for conv in convs:
            paths[conv.sample_id] = str(workdir / f"{conv.sample_id}.db")
            with Memory.open(paths[conv.sample_id], embedder=embedder) as mem:
                mem.remember_many(conv.items, dedupe=False)
        section("Recall: every setting of every lever on every question")
        t = time.perf_counter()
        ceiling = measure(convs, paths, embedder, all_levers)
        print(
            f"{sum(len(lv.settings) for lv in all_levers)} settings x {sum(len(c.questions) for c in convs)} "
            f"questions: {time.perf_counter() - t:.0f} s"
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    previous = all_levers[1]
    results = [cross_validate(lever, convs, previous) for lever in all_levers]
    bm25 = results[0]
    rows = []
    for r in results:
        chosen = Counter(f["chosen"] for f in r["folds"])
        rows.append(
            [
                r["name"] + (" [kept]" if r["kept"] else ""),
                ", ".join(f"{s} x{n}" for s, n in chosen.most_common()),
                *(r["by_category"][CATEGORY_NAMES[c]] for c in CATEGORIES),
                r["recall@10"],
                f"{r['recall@10'] - bm25['recall@10']:+.3f}",
                f"{r['gain_mean']:+.3f} [{r['gain_min']:+.3f}, {r['gain_max']:+.3f}]",
            ]
        )
    print()
    print(
        table(
            f"LoCoMo recall@{K}, held out (leave one conversation out; each fold picks the setting on the other four)",
            ["lever", "chosen", *(f"cat {c}" for c in CATEGORIES), "all", "vs BM25", "gain per fold [min, max]"],
            rows,
            digits=3,
        )
    )
    print("categories: " + ", ".join(f"{c} {CATEGORY_NAMES[c]}" for c in CATEGORIES))
    print("gain per fold: held-out recall minus the previous default's on the same conversation")
    for n, values in ceiling.items():
        print(f"ceiling of re-ranking the default hybrid's first {n} candidates: recall@{K} {np.mean(values):.3f}")
    for r in results[2:]:
        print(f"in sample, {r['name']}: " + ", ".join(f"{s} {v:.3f}" for s, v in r["in_sample"].items()))
    if args.reranker:
        question, texts = convs[0].questions[0][0], [item["content"] for item in convs[0].items]
        for n in RERANK_CANDIDATES:
            ms = cold_cost(args.reranker, question, texts[:n])
            print(
                f"re-scoring {n} candidates with {args.reranker}, nothing memoised: {ms:.0f} ms per query (median of 3)"
            )
    print(f"total run time {time.perf_counter() - started:.0f} s")
    payload = {
        "run": run_block(args),
        "levers": results,
        "rerank_ceiling": {str(n): float(np.mean(v)) for n, v in ceiling.items()},
    }
    write_json(args.json, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
