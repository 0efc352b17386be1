"""The one error tree of elastic-memory.

Everything the library raises on purpose derives from :class:`ElasticMemoryError`.
The first split says whose fault it is::

    ElasticMemoryError
    ├── UsageError                  # your call or config is wrong: fix the call
    ├── StorageError                # the database failed (wraps sqlite3 errors)
    │   ├── CorruptDatabaseError    # the file is not a readable SQLite database
    │   ├── SchemaVersionError      # the file was written by a newer elastic-memory
    │   └── EmbeddingMismatchError  # a vector or model that the database's pin refuses
    └── EmbedderError               # the embedding model failed to load or to run

``UsageError`` also derives from :class:`ValueError`, so code that already guards
argument errors with ``except ValueError`` keeps working. Messages say what to do next.
"""

from __future__ import annotations

__all__ = [
    "CorruptDatabaseError",
    "ElasticMemoryError",
    "EmbedderError",
    "EmbeddingMismatchError",
    "SchemaVersionError",
    "StorageError",
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
