"""Isolation of collections in one database through Haystack: the document store and its three retrievers.

Two ``ElasticMemoryDocumentStore`` share one ``Memory`` (``:memory:`` or a PostgreSQL schema),
each on its own ``collection`` (a core ``agent_id``) whose name is an adversarial pair of the
other's. Both hold documents matching the same query and embedding; each reads its own only.
The memory ``ElasticMemoryRetriever`` (core filters) runs in the shared conformance suite.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from haystack import Document
from haystack.document_stores.errors import DocumentStoreError
from haystack.document_stores.types import DuplicatePolicy

from elastic_memory import Memory
from elastic_memory.testing import LOOKALIKE_NAMES
from haystack_integrations.components.retrievers.elastic_memory import (
    ElasticMemoryBM25Retriever,
    ElasticMemoryEmbeddingRetriever,
    ElasticMemoryHybridRetriever,
)
from haystack_integrations.document_stores.elastic_memory import ElasticMemoryDocumentStore

PAIRS = [pytest.param(a, b, id=name) for name, a, b in LOOKALIKE_NAMES]
RETRIEVERS = [ElasticMemoryBM25Retriever, ElasticMemoryEmbeddingRetriever, ElasticMemoryHybridRetriever]
QUERY = "harbour lantern"
EMBEDDING = [1.0, 0.2, 0.0]


@pytest.fixture
def mem(location: str) -> Iterator[Memory]:
    """One database both collections live in (no embedder: documents bring their embeddings)."""
    with Memory.open(location, embedder=None) as m:
        yield m


def _stores(mem: Memory, a: str, b: str) -> dict[str, ElasticMemoryDocumentStore]:
    stores = {
        "a": ElasticMemoryDocumentStore(memory=mem, collection=a),
        "b": ElasticMemoryDocumentStore(memory=mem, collection=b),
    }
    for side, store in stores.items():
        store.write_documents(
            [
                Document(id=f"{side}{i}", content=f"{QUERY} {i}", embedding=[1.0, 0.1 * i, 0.0], meta={"side": side})
                for i in range(4)
            ]
        )
    return stores


def _inputs(cls: type[Any]) -> dict[str, Any]:
    if cls is ElasticMemoryBM25Retriever:
        return {"query": QUERY}
    if cls is ElasticMemoryEmbeddingRetriever:
        return {"query_embedding": EMBEDDING}
    return {"query": QUERY, "query_embedding": EMBEDDING}


@pytest.mark.parametrize("cls", RETRIEVERS)
@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_retrievers_return_only_their_collections_documents(mem: Memory, a: str, b: str, cls: type[Any]) -> None:
    """Each retriever (BM25, embedding, hybrid; run and run_async) over one store returns its four documents only.

    A leak means the store's base filters (``agent_id``, ``kind``, the document tag) were
    lost on that retrieval path (document_store: bm25/embedding/hybrid_retrieval).
    """
    stores = _stores(mem, a, b)
    for side, store in stores.items():
        retriever = cls(document_store=store, top_k=50)
        found = retriever.run(**_inputs(cls))["documents"]
        assert sorted(d.id for d in found) == [f"{side}{i}" for i in range(4)]
        assert {d.meta["side"] for d in found} == {side}


@pytest.mark.parametrize("cls", RETRIEVERS)
@pytest.mark.parametrize(("a", "b"), PAIRS)
async def test_async_retrievers_return_only_their_collections_documents(
    mem: Memory, a: str, b: str, cls: type[Any]
) -> None:
    """run_async of each retriever stays in its collection (the async store path is separate code)."""
    stores = _stores(mem, a, b)
    for side, store in stores.items():
        found = (await cls(document_store=store, top_k=50).run_async(**_inputs(cls)))["documents"]
        assert sorted(d.id for d in found) == [f"{side}{i}" for i in range(4)]


@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_filter_and_count_documents_see_only_their_collection(mem: Memory, a: str, b: str) -> None:
    """filter_documents (with and without a filter) and count_documents read one collection.

    A leak here points at _hits' paging recall or _count's tag count losing the agent filter.
    """
    stores = _stores(mem, a, b)
    for side, store in stores.items():
        assert sorted(d.id for d in store.filter_documents()) == [f"{side}{i}" for i in range(4)]
        other = "b" if side == "a" else "a"
        assert store.filter_documents({"field": "meta.side", "operator": "==", "value": other}) == []
        assert store.count_documents() == 4


@pytest.mark.parametrize("policy", [DuplicatePolicy.NONE, DuplicatePolicy.OVERWRITE, DuplicatePolicy.SKIP])
@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_a_document_id_held_by_another_collection_is_not_taken_over(
    mem: Memory, a: str, b: str, policy: DuplicatePolicy
) -> None:
    """Writing an id that the other collection holds never moves or overwrites that document (ids are database-wide).

    If B's document changes or turns up in A, the write path upserts by the core id without
    checking the owner (document_store._write).
    """
    stores = _stores(mem, a, b)
    with contextlib.suppress(DocumentStoreError):  # refusing is fine; B's document must stay as it was
        stores["a"].write_documents([Document(id="b0", content="taken over", embedding=EMBEDDING)], policy=policy)
    assert [d.content for d in stores["b"].filter_documents({"field": "id", "operator": "==", "value": "b0"})] == [
        f"{QUERY} 0"
    ]
    assert "b0" not in {d.id for d in stores["a"].filter_documents()}
