"""elastic-memory for Haystack agents: a ``MemoryStore``, a ``ChatMessageStore`` and Agent hooks.

``ElasticMemoryStore`` and ``ElasticMemoryChatMessageStore`` implement the haystack-experimental
protocols by duck typing (haystack-experimental is not needed to import them);
``memory_hooks`` (or the two hook classes) give a haystack-ai ``Agent`` persistent memory.
"""

from .chat_message_store import ElasticMemoryChatMessageStore
from .hooks import CONTEXT_META_KEY, ElasticMemoryRecallHook, ElasticMemoryRecordHook, memory_hooks
from .memory_store import ElasticMemoryStore

__all__ = [
    "ElasticMemoryChatMessageStore",
    "ElasticMemoryStore",
    "ElasticMemoryRecallHook",
    "ElasticMemoryRecordHook",
    "memory_hooks",
    "CONTEXT_META_KEY",
]
