"""Storage: the SQLite store (aiosqlite + FTS5 + sqlite-vec), the PostgreSQL store, and their parts."""

from .backend import Backend, Capabilities, EmbeddingPin, Transaction
from .postgres.connect import is_url
from .postgres.store import PostgresStore
from .sqlite.store import KEEP, SQLiteStore

#: Either backend, as the rest of the library sees it: the declared contract.
Store = Backend

__all__ = [
    "KEEP",
    "Backend",
    "Capabilities",
    "EmbeddingPin",
    "PostgresStore",
    "SQLiteStore",
    "Store",
    "Transaction",
    "is_url",
]
