"""The ElasticMemoryStore tests' stores: keyword-only and semantic, in memory, on a test clock."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from langchain_elastic_memory import ElasticMemoryStore

from .support import Clock, indexed


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(clock: Clock) -> Iterator[ElasticMemoryStore]:
    """A keyword-only store (no index), in memory, on the test's clock."""
    with ElasticMemoryStore(path=":memory:", clock=clock) as s:
        yield s


@pytest.fixture
def vstore(clock: Clock) -> Iterator[ElasticMemoryStore]:
    """A semantic-mode store: the score is the cosine similarity."""
    with indexed(clock, search_mode="semantic") as s:
        yield s
