"""LlamaIndex chat stores on elastic-memory: a classic ``BaseChatStore`` and the ``AsyncDBChatStore`` of ``Memory``."""

from llama_index.storage.chat_store.elastic_memory.base import ElasticMemoryAsyncChatStore, ElasticMemoryChatStore

__all__ = ["ElasticMemoryAsyncChatStore", "ElasticMemoryChatStore"]
