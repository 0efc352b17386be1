"""What the vector store tests share: embeddings, nodes, a query geometry and small helpers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode
from llama_index.core.vector_stores.types import FilterOperator, MetadataFilter, VectorStoreQuery, VectorStoreQueryMode

from elastic_memory.testing import FakeEmbedder
from llama_index.vector_stores.elastic_memory import ElasticMemoryVectorStore

Mode = VectorStoreQueryMode
Op = FilterOperator


class HashEmbedding(BaseEmbedding):
    """A deterministic bag-of-words embedding (elastic-memory's FakeEmbedder) as a LlamaIndex model."""

    dim: int = 16

    @classmethod
    def class_name(cls) -> str:
        return "HashEmbedding"

    def _vector(self, text: str) -> list[float]:
        return [float(x) for x in FakeEmbedder(self.dim).embed([text])[0]]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    async def _aget_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)


class AsyncOnlyEmbedding(HashEmbedding):
    """Once ``refuse_sync`` is set, refuses every sync call: the async twins must embed through the async API."""

    refuse_sync: bool = False

    def _get_query_embedding(self, query: str) -> list[float]:
        assert not self.refuse_sync, "sync embedding called"
        return self._vector(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        assert not self.refuse_sync, "sync embedding called"
        return self._vector(text)


def node(
    id_: str,
    text: str,
    embedding: Sequence[float] | None,
    metadata: dict[str, Any] | None = None,
    ref_doc: str | None = None,
) -> TextNode:
    out = TextNode(id_=id_, text=text, embedding=None if embedding is None else list(embedding))
    out.metadata = metadata or {}
    if ref_doc is not None:
        out.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=ref_doc)
    return out


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def q(embedding: Sequence[float] | None = None, k: int = 10, **fields: Any) -> VectorStoreQuery:
    return VectorStoreQuery(
        query_embedding=None if embedding is None else list(embedding), similarity_top_k=k, **fields
    )


QUERY = [1.0, 0.0, 0.3]
# "pie" and its near-duplicate "tart" are nearest the query; "cake" points elsewhere; "far" away.
GEOMETRY = {
    "pie": [1.0, 0.0, 0.0],
    "tart": [1.0, 0.05, 0.0],
    "cake": [0.5, 0.0, 0.866],
    "far": [-1.0, 0.0, -0.3],
}
TEXTS = {
    "pie": "apple pie with cinnamon",
    "tart": "apple tart with cream",
    "cake": "cherry cake",
    "far": "winter tyres for the car",
}


def ids(store: ElasticMemoryVectorStore, query: VectorStoreQuery, **kwargs: Any) -> list[str]:
    return list(store.query(query, **kwargs).ids or [])


def docs_store(store: ElasticMemoryVectorStore) -> ElasticMemoryVectorStore:
    store.add(
        [
            node("a1", "alpha one", [1.0, 0], ref_doc="A"),
            node("a2", "alpha two", [0.9, 0.1], ref_doc="A"),
            node("b1", "beta one", [0, 1.0], ref_doc="B"),
            node("loose", "no document", [0.5, 0.5]),
        ]
    )
    return store


def f(key: str, value: Any, operator: Op = Op.EQ) -> MetadataFilter:
    return MetadataFilter(key=key, value=value, operator=operator)
