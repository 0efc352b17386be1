"""Deterministic fakes for fast tests. Public, so adapters and hosts can test with them.

:class:`FakeEmbedder` hashes word tokens into a small vector: texts that share words get
similar vectors, the same text always gets the same vector, and no model is loaded.

>>> e = FakeEmbedder()
>>> v = e.embed(["red apple", "red apple", "blue sky"])
>>> bool((v[0] == v[1]).all()), round(float(v[0] @ v[0]), 3), float(v[0] @ v[2]) < 0.9
(True, 1.0, True)
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ._pg_server import TemporaryPostgres, fresh_schema, postgres_available, postgres_server, postgres_session

__all__ = [
    "LOOKALIKE_NAMES",
    "FakeEmbedder",
    "TemporaryPostgres",
    "fresh_schema",
    "postgres_available",
    "postgres_server",
    "postgres_session",
]

_WORD = re.compile(r"[^\W_]+", re.UNICODE)

#: Pairs of collection or agent names that a sloppy comparison (a prefix, ``LIKE``, a glob, a
#: path split, case folding, a look-alike letter, unescaped quotes) would conflate, as
#: ``(id, a, b)``: isolation tests parametrise over them.
LOOKALIKE_NAMES: tuple[tuple[str, str, str], ...] = (
    ("prefix", "ali", "alice"),
    ("percent", "a%", "ab"),
    ("underscore", "a_", "ab"),
    ("star", "a*", "ab"),
    ("dotted-prefix", "a.b", "a.bc"),
    ("dotted-child", "a", "a.b"),
    ("cyrillic-a", "\u0430lice", "alice"),
    ("case", "Alice", "alice"),
    ("quotes", "o'brien", 'o"brien'),
)


class FakeEmbedder:
    """A bag-of-words hashing embedder (default 16-d). ``calls`` counts embedded texts."""

    def __init__(self, dimension: int = 16, *, model_id: str = "fake-hash", family: str = "fake-hash") -> None:
        self.dimension = dimension
        self.model_id = model_id
        self.family = family
        self.calls = 0

    def _one(self, text: str) -> npt.NDArray[np.float32]:
        vec = np.zeros(self.dimension, dtype=np.float32)
        for word in _WORD.findall(text.casefold()) or [""]:
            digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
            slot = int.from_bytes(digest[:4], "little") % self.dimension
            vec[slot] += 1.0 if digest[4] & 1 else -1.0
        norm = float(np.linalg.norm(vec))
        if norm == 0.0:
            vec[0] = 1.0
            norm = 1.0
        return vec / norm

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Unit float32 vectors, one row per text."""
        self.calls += len(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self._one(t) for t in texts])
