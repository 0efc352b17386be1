"""elastic-memory recall as a LlamaIndex retriever."""

from llama_index.retrievers.elastic_memory.base import ElasticMemoryRetriever

__all__ = ["ElasticMemoryRetriever"]
