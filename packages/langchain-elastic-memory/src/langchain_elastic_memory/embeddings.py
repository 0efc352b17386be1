"""``ElasticMemoryEmbeddings``: the core's embedders as LangChain :class:`~langchain_core.embeddings.Embeddings`.

By default it runs the core's built-in offline model (all-MiniLM-L6-v2, 384-d), the one
every class of this package opens its stores with: the model is loaded once per process
and shared by them all (:func:`builtin_embedder`).

>>> from elastic_memory.testing import FakeEmbedder
>>> embeddings = ElasticMemoryEmbeddings(FakeEmbedder(dimension=8))
>>> len(embeddings.embed_query("tea")), len(embeddings.embed_documents(["a", "b"]))
(8, 2)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from elastic_memory import Embedder, UsageError
from elastic_memory.embedders import MiniLMEmbedder, check_embedder, shared_builtin

__all__ = ["ElasticMemoryEmbeddings", "builtin_embedder"]


def builtin_embedder() -> MiniLMEmbedder:
    """The process's one built-in embedder (loaded on first use, then shared by every store and embeddings)."""
    return shared_builtin()


def _rows(vectors: Any, count: int) -> list[list[float]]:
    rows = np.asarray(vectors, dtype=np.float64).reshape(count, -1)
    return [[float(x) for x in row] for row in rows]


class ElasticMemoryEmbeddings(Embeddings):
    """An elastic-memory embedder as LangChain ``Embeddings``.

    Args:
        embedder: Any core :class:`~elastic_memory.Embedder` (default: the built-in offline
            model, shared by the process). Queries go through its ``embed_query`` when it
            has one, documents through ``embed``.

    The built-in model gives unit vectors, so cosine similarity is their dot product. Use it
    wherever LangChain takes embeddings (``InMemoryVectorStore(embedding=...)``, a LangGraph
    store's ``index={"embed": ...}``): the vectors are the ones elastic-memory stores.
    """

    def __init__(self, embedder: Embedder | None = None) -> None:
        self.embedder: Embedder = builtin_embedder() if embedder is None else check_embedder(embedder)

    @property
    def model_id(self) -> str:
        """The embedder's model id (what a database is pinned to)."""
        return self.embedder.model_id

    @property
    def dimension(self) -> int:
        """The width of the vectors."""
        return self.embedder.dimension

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.embedder.model_id!r}, dimension={self.embedder.dimension})"

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, in order."""
        batch = _texts(texts)
        if not batch:
            return []
        return _rows(self.embedder.embed(batch), len(batch))

    def embed_query(self, text: str) -> list[float]:
        """The vector of a query (the embedder's ``embed_query`` if it has one)."""
        if not isinstance(text, str):
            msg = f"text must be a string, got {type(text).__name__}"
            raise UsageError(msg)
        embed_query = getattr(self.embedder, "embed_query", None)
        if callable(embed_query):
            return _rows([embed_query(text)], 1)[0]
        return _rows(self.embedder.embed([text]), 1)[0]


def _texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str) or not isinstance(texts, Sequence):
        msg = f"texts must be a list of strings, got {type(texts).__name__}"
        raise UsageError(msg)
    batch = list(texts)
    for n, text in enumerate(batch):
        if not isinstance(text, str):
            msg = f"texts[{n}] must be a string, got {type(text).__name__}"
            raise UsageError(msg)
    return batch
