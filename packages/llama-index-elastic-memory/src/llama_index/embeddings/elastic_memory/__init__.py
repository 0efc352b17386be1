"""LlamaIndex embedding model on elastic-memory's built-in offline model: ``ElasticMemoryEmbedding``."""

from llama_index.embeddings.elastic_memory.base import ElasticMemoryEmbedding, shared_embedder

__all__ = ["ElasticMemoryEmbedding", "shared_embedder"]
