"""LangChain and LangGraph on elastic-memory: long-term memory for AI agents in one SQLite file.

Every class takes keyword-only ``path=`` (a database file, or ``":memory:"``) or an open
``memory=`` (an elastic-memory ``Memory`` or ``AsyncMemory``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._memory import LangChainEmbedder
    from .chat_history import ElasticMemoryChatMessageHistory
    from .embeddings import ElasticMemoryEmbeddings
    from .middleware import ElasticMemoryMiddleware
    from .retrievers import ElasticMemoryRetriever
    from .store import ElasticMemoryStore
    from .vectorstores import ElasticMemoryVectorStore

__version__ = "0.1.0"

# Each name loads its module on first use: importing the package stays cheap.
_MODULES = {
    "ElasticMemoryChatMessageHistory": ".chat_history",
    "ElasticMemoryEmbeddings": ".embeddings",
    "ElasticMemoryMiddleware": ".middleware",
    "ElasticMemoryRetriever": ".retrievers",
    "ElasticMemoryStore": ".store",
    "ElasticMemoryVectorStore": ".vectorstores",
    "LangChainEmbedder": "._memory",
}

__all__ = [
    "ElasticMemoryChatMessageHistory",
    "ElasticMemoryEmbeddings",
    "ElasticMemoryMiddleware",
    "ElasticMemoryRetriever",
    "ElasticMemoryStore",
    "ElasticMemoryVectorStore",
    "LangChainEmbedder",
    "__version__",
]


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        value = getattr(importlib.import_module(_MODULES[name], __name__), name)
        globals()[name] = value
        return value
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)


def __dir__() -> list[str]:
    return sorted(__all__)
