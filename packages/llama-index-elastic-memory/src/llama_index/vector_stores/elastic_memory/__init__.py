"""LlamaIndex vector store on elastic-memory: ``ElasticMemoryVectorStore``."""

from llama_index.vector_stores.elastic_memory.base import NODE_ID_KEY, ElasticMemoryVectorStore

__all__ = ["NODE_ID_KEY", "ElasticMemoryVectorStore"]
