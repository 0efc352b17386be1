"""Storage: the SQLite store (aiosqlite + FTS5 + sqlite-vec) and its parts."""

from .sqlite import KEEP, EmbeddingPin, SQLiteStore

__all__ = ["KEEP", "EmbeddingPin", "SQLiteStore"]
