"""Arguments of the wrong type get the library's UsageError (a ValueError), never an AttributeError.

Found by the fuzz suite (issue 21, finding E): ``similarity_search(None)`` raised
``AttributeError: 'NoneType' object has no attribute 'strip'`` and ``add_texts(None)`` a
``TypeError``. Each test uses a fresh SQLite file and checks that nothing was written.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langgraph.store.base import InvalidNamespaceError, PutOp, SearchOp

from elastic_memory import UsageError
from langchain_elastic_memory import ElasticMemoryStore, ElasticMemoryVectorStore


@pytest.fixture
def vectors(tmp_path: Path) -> Iterator[ElasticMemoryVectorStore]:
    with ElasticMemoryVectorStore(path=tmp_path / "v.db", embedding=DeterministicFakeEmbedding(size=16)) as s:
        s.add_texts(["kept"], ids=["kept"])
        yield s


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ElasticMemoryStore]:
    with ElasticMemoryStore(path=tmp_path / "s.db") as s:
        s.put(("docs",), "kept", {"v": 1})
        yield s


@pytest.mark.parametrize("query", [None, 3, b"bytes"], ids=["none", "int", "bytes"])
def test_a_query_that_is_not_text_is_a_usage_error(vectors: ElasticMemoryVectorStore, query: Any) -> None:
    """If this fails, check that each search checks ``query`` with elastic_memory.adapters.text_arg."""
    for search in (
        vectors.similarity_search,
        vectors.similarity_search_with_score,
        vectors.max_marginal_relevance_search,
    ):
        with pytest.raises(UsageError, match="query must be a string"):
            search(query)


@pytest.mark.parametrize("texts", [None, 0, "one text"], ids=["none", "int", "str"])
def test_texts_that_are_not_a_list_are_a_usage_error(vectors: ElasticMemoryVectorStore, texts: Any) -> None:
    """``add_texts("one text")`` would store one letter per document: a list is required."""
    with pytest.raises(UsageError, match="texts must be a list"):
        vectors.add_texts(texts)
    assert [d.id for d in vectors.similarity_search("kept", k=10)] == ["kept"]


def test_documents_that_are_not_documents_are_a_usage_error(vectors: ElasticMemoryVectorStore) -> None:
    with pytest.raises(UsageError, match="Document"):
        vectors.add_documents([Document(page_content="fine"), "not a document"])  # type: ignore[list-item]
    assert [d.id for d in vectors.similarity_search("fine", k=10)] == ["kept"]


def test_a_metadata_that_is_not_a_dict_is_a_usage_error(vectors: ElasticMemoryVectorStore) -> None:
    with pytest.raises(UsageError, match="metadata must be a dict"):
        vectors.add_texts(["a"], metadatas=[7])  # type: ignore[list-item]


def test_a_batch_that_is_not_a_list_is_a_usage_error(store: ElasticMemoryStore) -> None:
    with pytest.raises(UsageError, match="ops must be a list"):
        store.batch(None)  # type: ignore[arg-type]


def test_a_namespace_that_is_not_a_tuple_is_langgraphs_namespace_error(store: ElasticMemoryStore) -> None:
    """LangGraph's own error for a bad namespace, before the adapter reads it."""
    with pytest.raises(InvalidNamespaceError, match="tuple of strings"):
        store.batch([SearchOp(None)])  # type: ignore[arg-type]


def test_a_key_that_is_not_text_is_a_usage_error(store: ElasticMemoryStore) -> None:
    """``put()`` turns its key into text itself (LangGraph's BaseStore); a raw PutOp must carry a str key."""
    with pytest.raises(UsageError, match="key must be a string"):
        store.batch([PutOp(("docs",), None, {"v": 2})])  # type: ignore[arg-type]
    item = store.get(("docs",), "kept")
    assert item is not None and item.value == {"v": 1}
