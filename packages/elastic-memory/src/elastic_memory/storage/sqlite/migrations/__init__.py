"""Forward-only schema migrations on ``PRAGMA user_version``.

Each version is one module (``vNNN_name.py``) with ``VERSION`` and ``STATEMENTS``;
modules are append-only. A migration's statements and its ``user_version`` bump run in one
``BEGIN IMMEDIATE`` transaction, so a failure leaves the previous version intact.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import (
    v001_initial,
    v002_memory_loop,
    v003_graph,
    v004_write_path,
    v005_cheap_insert,
    v006_keyword_partitions,
    v007_quarantine_review,
    v008_fts_rewrites,
    v009_embedding_backlog,
    v010_unembedded_messages,
)

__all__ = ["LATEST", "MIGRATIONS", "OWN_TABLES", "Migration", "pending"]


@dataclass(frozen=True)
class Migration:
    """One schema version: the statements that bring version ``version - 1`` to it."""

    version: int
    statements: tuple[str, ...]
    #: The store then creates and fills the per-agent keyword tables of the registered
    #: agents, in the same transaction (a table per row of data cannot be static SQL).
    fill_partitions: bool = False


MIGRATIONS: tuple[Migration, ...] = (
    Migration(v001_initial.VERSION, v001_initial.STATEMENTS),
    Migration(v002_memory_loop.VERSION, v002_memory_loop.STATEMENTS),
    Migration(v003_graph.VERSION, v003_graph.STATEMENTS),
    Migration(v004_write_path.VERSION, v004_write_path.STATEMENTS),
    Migration(v005_cheap_insert.VERSION, v005_cheap_insert.STATEMENTS),
    Migration(v006_keyword_partitions.VERSION, v006_keyword_partitions.STATEMENTS, fill_partitions=True),
    Migration(v007_quarantine_review.VERSION, v007_quarantine_review.STATEMENTS),
    Migration(v008_fts_rewrites.VERSION, v008_fts_rewrites.STATEMENTS),
    Migration(v009_embedding_backlog.VERSION, v009_embedding_backlog.STATEMENTS),
    Migration(v010_unembedded_messages.VERSION, v010_unembedded_messages.STATEMENTS),
)
LATEST = MIGRATIONS[-1].version
#: Tables whose presence marks a file as an elastic-memory database (prefix match).
OWN_TABLES = (
    "memories",
    "memory_tags",
    "store_state",
    "embedding_meta",
    "sqlite_sequence",
    "turns",
    "sessions",
    "facts",
    "quarantine",
    "memory_edges",
    "entities",
    "entity_keys",
    "relations",
    "entity_mentions",
    "keyword_partitions",
)

assert [m.version for m in MIGRATIONS] == list(range(1, LATEST + 1)), "migrations must be 1..N"


def pending(current: int) -> tuple[Migration, ...]:
    """The migrations to apply to a database at ``current``, in order."""
    return tuple(m for m in MIGRATIONS if m.version > current)
