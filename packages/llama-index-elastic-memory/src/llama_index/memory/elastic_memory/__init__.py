"""Persistent long-term memory for LlamaIndex's ``Memory``: a memory block and a ready ``Memory``.

>>> from llama_index.memory.elastic_memory import ElasticMemory, ElasticMemoryBlock
"""

from llama_index.memory.elastic_memory.base import ElasticMemory, ElasticMemoryBlock

__all__ = ["ElasticMemory", "ElasticMemoryBlock"]
