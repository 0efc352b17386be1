"""Isolation of collections in one database through LlamaIndex: the vector store and an index's retriever.

Two ``ElasticMemoryVectorStore`` share one ``Memory`` (a file, or a PostgreSQL schema), each
on its own ``collection`` (a core ``agent_id``) whose name is an adversarial pair of the
other's. Both hold nodes matching the same query; each reads its own only. The adapter's
``ElasticMemoryRetriever`` (core filters) runs in the shared conformance suite.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from llama_index.core import VectorStoreIndex
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import VectorStoreQuery, VectorStoreQueryMode

from elastic_memory import Memory
from elastic_memory.testing import LOOKALIKE_NAMES, FakeEmbedder
from llama_index.vector_stores.elastic_memory import ElasticMemoryVectorStore

PAIRS = [pytest.param(a, b, id=name) for name, a, b in LOOKALIKE_NAMES]
MODES = [VectorStoreQueryMode.DEFAULT, VectorStoreQueryMode.TEXT_SEARCH, VectorStoreQueryMode.HYBRID]
QUERY = "harbour lantern"
_FAKE = FakeEmbedder()


class HashingEmbedding(BaseEmbedding):
    """LlamaIndex's face of the core's FakeEmbedder: the same vectors the store holds."""

    def _get_text_embedding(self, text: str) -> list[float]:
        return [float(x) for x in _FAKE.embed([text])[0]]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._get_text_embedding(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_text_embedding(query)


@pytest.fixture
def mem(location: str) -> Iterator[Memory]:
    """One database both collections live in."""
    with Memory.open(location, embedder=_FAKE) as m:
        yield m


def _stores(mem: Memory, a: str, b: str) -> dict[str, ElasticMemoryVectorStore]:
    stores = {
        "a": ElasticMemoryVectorStore(memory=mem, collection=a),
        "b": ElasticMemoryVectorStore(memory=mem, collection=b),
    }
    for side, store in stores.items():
        store.add([TextNode(id_=f"{side}{i}", text=f"{QUERY} {i}", metadata={"side": side}) for i in range(4)])
    return stores


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_query_returns_only_its_collections_nodes(mem: Memory, a: str, b: str, mode: VectorStoreQueryMode) -> None:
    """query() in each mode returns exactly the collection's four nodes.

    A leak means the store's base filters (``agent_id``, ``kind``, its node-id key) were lost
    on that mode's path (base.py: the filters built for recall).
    """
    stores = _stores(mem, a, b)
    vector = mem.embed_query(QUERY)
    for side, store in stores.items():
        found = store.query(VectorStoreQuery(query_str=QUERY, query_embedding=vector, similarity_top_k=50, mode=mode))
        assert sorted(found.ids or []) == [f"{side}{i}" for i in range(4)]


@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_get_nodes_returns_nothing_of_another_collection(mem: Memory, a: str, b: str) -> None:
    """get_nodes with the other collection's node ids returns nothing; its own come back.

    A leak means get_nodes trusts the ids without checking the record's collection (_ours).
    """
    stores = _stores(mem, a, b)
    assert stores["a"].get_nodes(node_ids=["b0", "b1"]) == []
    assert [n.node_id for n in stores["a"].get_nodes(node_ids=["a0", "b0"])] == ["a0"]


@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_an_index_retriever_returns_only_its_collections_nodes(mem: Memory, a: str, b: str) -> None:
    """VectorStoreIndex.from_vector_store(...).as_retriever() (LlamaIndex's own retriever) stays in its collection.

    If this leaks while query() does not, the retriever passes a query the store handles
    differently (node_ids=[], doc_ids, filters): check query()'s handling of those fields.
    """
    stores = _stores(mem, a, b)
    for side, store in stores.items():
        retriever = VectorStoreIndex.from_vector_store(store, embed_model=HashingEmbedding()).as_retriever(
            similarity_top_k=50
        )
        assert sorted(n.node.node_id for n in retriever.retrieve(QUERY)) == [f"{side}{i}" for i in range(4)]
