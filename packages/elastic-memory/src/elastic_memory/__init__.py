"""elastic-memory: long-term memory for AI agents in one SQLite file.

>>> from elastic_memory import Memory
>>> from elastic_memory.testing import FakeEmbedder
>>> with Memory.open(":memory:", embedder=FakeEmbedder()) as mem:
...     _ = mem.remember("The user's dog is called Biscuit.")
...     mem.recall("dog name", k=1)[0].content
"The user's dog is called Biscuit."
"""

from ._version import __version__
from .config import RecallConfig
from .context import ContextPlan, PlanItem, Section
from .embedders import Embedder, FastEmbedEmbedder, MiniLMEmbedder
from .errors import (
    AccessDeniedError,
    CorruptDatabaseError,
    ElasticMemoryError,
    EmbedderError,
    EmbeddingMismatchError,
    MemoryWriteError,
    RecallWarning,
    RoutingError,
    SchemaVersionError,
    StorageError,
    TierWriteError,
    UsageError,
)
from .extraction import ExtractionPolicy
from .facade.async_memory import AsyncMemory
from .facade.facts import AsyncFacts, AsyncLessons, Facts, Lessons
from .facade.graph import AsyncGraph, Cluster, Graph, Reached, Traversal
from .facade.memory import Memory
from .facade.paging import Page
from .filters import METADATA_OPERATORS, Filters
from .governor import MemoryProfile, Tier
from .location import resolve_location
from .loop import LoopConfig
from .maintenance.backup import BackupReport, abackup, arestore_backup, backup, restore_backup
from .maintenance.repair import RepairReport, TableReport, arepair, repair
from .rerankers import CrossEncoderReranker, EmbedderReranker, LLMReranker
from .retrieval.rerank import Reranker
from .types import (
    CheckReport,
    Edge,
    Entity,
    Explanation,
    Fact,
    FactHistory,
    Fusion,
    Hit,
    Hits,
    ImportReport,
    MemoryId,
    MemoryRecord,
    MemoryType,
    PruneAction,
    PrunePolicy,
    PruneReport,
    QuarantinedItem,
    RecallMode,
    Relation,
    Scope,
    Source,
    TurnReceipt,
)

__all__ = [
    "METADATA_OPERATORS",
    "AccessDeniedError",
    "AsyncFacts",
    "AsyncGraph",
    "AsyncLessons",
    "AsyncMemory",
    "BackupReport",
    "CheckReport",
    "Cluster",
    "ContextPlan",
    "CorruptDatabaseError",
    "CrossEncoderReranker",
    "Edge",
    "ElasticMemoryError",
    "Embedder",
    "EmbedderError",
    "EmbedderReranker",
    "EmbeddingMismatchError",
    "Entity",
    "Explanation",
    "ExtractionPolicy",
    "Fact",
    "FactHistory",
    "Facts",
    "FastEmbedEmbedder",
    "Filters",
    "Fusion",
    "Graph",
    "Hit",
    "Hits",
    "ImportReport",
    "LLMReranker",
    "Lessons",
    "LoopConfig",
    "Memory",
    "MemoryId",
    "MemoryProfile",
    "MemoryRecord",
    "MemoryType",
    "MemoryWriteError",
    "MiniLMEmbedder",
    "Page",
    "PlanItem",
    "PruneAction",
    "PrunePolicy",
    "PruneReport",
    "QuarantinedItem",
    "Reached",
    "RecallConfig",
    "RecallMode",
    "RecallWarning",
    "Relation",
    "RepairReport",
    "Reranker",
    "RoutingError",
    "SchemaVersionError",
    "Scope",
    "Section",
    "Source",
    "StorageError",
    "TableReport",
    "Tier",
    "TierWriteError",
    "Traversal",
    "TurnReceipt",
    "UsageError",
    "__version__",
    "abackup",
    "arepair",
    "arestore_backup",
    "backup",
    "repair",
    "resolve_location",
    "restore_backup",
]

for _name in __all__:
    _obj = globals()[_name]
    if isinstance(_obj, type):
        _obj.__module__ = "elastic_memory"
del _name, _obj
