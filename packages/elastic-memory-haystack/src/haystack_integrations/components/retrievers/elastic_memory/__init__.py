"""Haystack retrievers: BM25, embedding and hybrid over ElasticMemoryDocumentStore, and recall over any memory."""

from .bm25_retriever import ElasticMemoryBM25Retriever
from .embedding_retriever import ElasticMemoryEmbeddingRetriever
from .hybrid_retriever import ElasticMemoryHybridRetriever
from .memory_retriever import ElasticMemoryRetriever

__all__ = [
    "ElasticMemoryBM25Retriever",
    "ElasticMemoryEmbeddingRetriever",
    "ElasticMemoryHybridRetriever",
    "ElasticMemoryRetriever",
]
