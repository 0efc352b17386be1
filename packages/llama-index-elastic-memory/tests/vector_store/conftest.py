"""The vector store tests' stores: an empty one (a file, and PostgreSQL), a seeded one, an open core store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from elastic_memory import Memory
from elastic_memory.testing import FakeEmbedder
from llama_index.vector_stores.elastic_memory import ElasticMemoryVectorStore

from .support import GEOMETRY, TEXTS, node


@pytest.fixture
def store(location: str) -> Iterator[ElasticMemoryVectorStore]:
    """An empty store, on a SQLite file and on PostgreSQL (``tests/conftest.py``)."""
    with ElasticMemoryVectorStore(path=location) as s:
        yield s


@pytest.fixture
def seeded(store: ElasticMemoryVectorStore) -> ElasticMemoryVectorStore:
    store.add([node(k, TEXTS[k], v, {"key": k}) for k, v in GEOMETRY.items()])
    return store


@pytest.fixture
def shared(tmp_path: Path) -> Iterator[Memory]:
    """An open core store with its own embedder (16-d hashing)."""
    with Memory.open(tmp_path / "shared.db", embedder=FakeEmbedder()) as mem:
        yield mem
