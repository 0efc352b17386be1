"""Storage: the SQLite store (aiosqlite + FTS5 + sqlite-vec), the PostgreSQL store, and their parts."""

from .postgres import PostgresStore, is_url
from .sqlite import KEEP, EmbeddingPin, SQLiteStore

#: Either backend: the same methods for the memories.
Store = SQLiteStore | PostgresStore

__all__ = ["KEEP", "EmbeddingPin", "PostgresStore", "SQLiteStore", "Store", "is_url"]
