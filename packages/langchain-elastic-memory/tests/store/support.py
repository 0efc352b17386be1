"""What the ElasticMemoryStore tests share: a deterministic embedding, a test clock, small helpers."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from typing import Any

from langchain_core.embeddings import Embeddings
from langgraph.store.base import Item

from langchain_elastic_memory import ElasticMemoryStore

DIMS = 64
WORD = re.compile(r"\w+")


class Words(Embeddings):
    """Deterministic bag-of-words vectors: texts sharing words point the same way."""

    def vector(self, text: str) -> list[float]:
        out = [0.0] * DIMS
        for word in WORD.findall(text.lower()):
            out[int(hashlib.sha256(word.encode()).hexdigest(), 16) % DIMS] += 1.0
        if not any(out):
            out[0] = 1e-3
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.vector(text)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / (math.hypot(*a) * math.hypot(*b))


class Clock:
    """Seconds since the epoch, moved only by the test."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def indexed(clock: Clock, **kwargs: Any) -> ElasticMemoryStore:
    """A store embedding the ``text`` field with :class:`Words`."""
    index: Any = {"dims": DIMS, "embed": Words(), "fields": ["text"], **kwargs.pop("index", {})}
    return ElasticMemoryStore(path=":memory:", index=index, clock=clock, **kwargs)


def keys(items: Sequence[Item]) -> list[str]:
    return [i.key for i in items]


NAMESPACES = [
    ("a", "b", "c"),
    ("a", "b", "d", "e"),
    ("a", "b", "d", "i"),
    ("a", "b", "f"),
    ("a", "c", "f"),
    ("b", "a", "f"),
    ("users", "123"),
    ("users", "456", "settings"),
    ("admin", "users", "789"),
]
