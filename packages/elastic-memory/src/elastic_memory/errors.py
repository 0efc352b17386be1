"""The one error tree of elastic-memory.

Everything the library raises on purpose derives from :class:`ElasticMemoryError`.
The first split says whose fault it is::

    ElasticMemoryError
    ├── UsageError                  # your call or config is wrong: fix the call
    │   ├── RoutingError            # a federation has no tier for this scope or pool
    │   └── AccessDeniedError       # this agent may not change that shared memory (a PermissionError)
    ├── StorageError                # the database failed (wraps sqlite3 errors)
    │   ├── CorruptDatabaseError    # the file is not a readable SQLite database
    │   ├── SchemaVersionError      # the file was written by a newer elastic-memory
    │   ├── EmbeddingMismatchError  # a vector or model that the database's pin refuses
    │   ├── TierWriteError          # one federation tier refused or missed a write
    │   └── MemoryWriteError        # the agent's private tier could not keep a write
    └── EmbedderError               # the embedding model failed to load or to run

Warnings (not errors: the call still answers) are :class:`RecallWarning` (recall is degraded).

``UsageError`` also derives from :class:`ValueError`, so code that already guards
argument errors with ``except ValueError`` keeps working; ``AccessDeniedError`` is also a
:class:`PermissionError`. Messages say what to do next.
"""

from __future__ import annotations

__all__ = [
    "AccessDeniedError",
    "CorruptDatabaseError",
    "ElasticMemoryError",
    "EmbedderError",
    "EmbeddingMismatchError",
    "MemoryWriteError",
    "ReadOnlyError",
    "RecallWarning",
    "RoutingError",
    "SchemaVersionError",
    "StorageError",
    "TierWriteError",
    "UsageError",
]


class ElasticMemoryError(Exception):
    """Base of every error elastic-memory raises on purpose."""


class UsageError(ElasticMemoryError, ValueError):
    """A call or configuration is wrong; the message says how to correct it."""


class StorageError(ElasticMemoryError):
    """The database failed; the original ``sqlite3`` error is the ``__cause__``."""


class CorruptDatabaseError(StorageError):
    """The file is not a readable SQLite database. It is never overwritten."""


class SchemaVersionError(StorageError):
    """The database's schema is newer than this version of elastic-memory understands."""


class EmbeddingMismatchError(StorageError):
    """A vector or embedder does not match the model the database is pinned to."""


class EmbedderError(ElasticMemoryError):
    """The embedding model could not be loaded or failed while embedding."""


class RoutingError(UsageError):
    """A federation write or read names a tier it does not have (an unknown pool, no global tier)."""


class AccessDeniedError(UsageError, PermissionError):
    """A federated agent tried to change a shared memory it may not, or to write as another agent.

    In pools and the global tier an agent may update, forget, archive or restore only the
    memories it wrote, unless it moderates that tier; ``remember(agent_id=...)`` naming
    another agent is refused. Nothing of the call was written. The message names the ids
    the caller gave, never another memory's content or author.
    """


class TierWriteError(StorageError):
    """One federation tier failed a write.

    ``tier`` names it (``"private"``, ``"shared:<pool>"``, ``"global"``), ``scope`` is its
    scope and ``reason`` one of ``"timeout"``, ``"breaker_open"``, ``"backend_error"``,
    ``"corruption"``. The backend's exception, if any, is the ``__cause__``. A timed-out
    write may still land later; its id is fixed, so writing it again is idempotent.
    """

    def __init__(self, message: str, *, tier: str, scope: str, reason: str) -> None:
        super().__init__(message)
        self.tier = tier
        self.scope = scope
        self.reason = reason


class MemoryWriteError(StorageError):
    """The agent's private tier, the federation's durability anchor, failed a write: it was not kept.

    Shared and global tiers degrade instead (see ``health()``). The
    :class:`TierWriteError` is the ``__cause__``; retrying with the same ids is safe.
    """


class ReadOnlyError(UsageError):
    """A read-only source (a Markdown folder) was asked to change: edit the files instead."""


class RecallWarning(UserWarning):
    """Recall is degraded (for example keyword-only because no embedder is usable)."""
