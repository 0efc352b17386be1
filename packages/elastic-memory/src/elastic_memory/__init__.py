"""elastic-memory: long-term memory for AI agents in one SQLite file.

>>> from elastic_memory import Memory
>>> from elastic_memory.testing import FakeEmbedder
>>> with Memory.open(":memory:", embedder=FakeEmbedder()) as mem:
...     _ = mem.remember("The user's dog is called Biscuit.")
...     mem.recall("dog name", k=1)[0].content
"The user's dog is called Biscuit."
"""

from ._core import RecallWarning
from .config import RecallConfig
from .embedders import Embedder, FastEmbedEmbedder, MiniLMEmbedder
from .errors import (
    CorruptDatabaseError,
    ElasticMemoryError,
    EmbedderError,
    EmbeddingMismatchError,
    SchemaVersionError,
    StorageError,
    UsageError,
)
from .filters import METADATA_OPERATORS, Filters
from .memory import AsyncMemory, Memory
from .types import (
    Explanation,
    Fusion,
    Hit,
    ImportReport,
    MemoryId,
    MemoryRecord,
    MemoryType,
    PruneAction,
    PrunePolicy,
    PruneReport,
    RecallMode,
    Scope,
    Source,
)

__version__ = "0.1.0"

__all__ = [
    "METADATA_OPERATORS",
    "AsyncMemory",
    "CorruptDatabaseError",
    "ElasticMemoryError",
    "Embedder",
    "EmbedderError",
    "EmbeddingMismatchError",
    "Explanation",
    "FastEmbedEmbedder",
    "Filters",
    "Fusion",
    "Hit",
    "ImportReport",
    "Memory",
    "MemoryId",
    "MemoryRecord",
    "MemoryType",
    "MiniLMEmbedder",
    "PruneAction",
    "PrunePolicy",
    "PruneReport",
    "RecallConfig",
    "RecallMode",
    "RecallWarning",
    "SchemaVersionError",
    "Scope",
    "Source",
    "StorageError",
    "UsageError",
    "__version__",
]

for _name in __all__:
    _obj = globals()[_name]
    if isinstance(_obj, type):
        _obj.__module__ = "elastic_memory"
del _name, _obj
