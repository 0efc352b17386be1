"""v8: a counter of rewritten full-text rows, for keyword indexes kept outside SQLite.

Every delete of a memory and every change of its content or tags rewrites rows the
``memories_fts`` index already held; appends leave them alone. ``store_state`` counts those
rewrites under ``fts_rewrites``, so a RAM keyword tier built from the index knows, with one
read, that only new rows were added since (and catches up) or that old rows changed (and
rebuilds), whichever connection or process wrote.

Shipped migrations are never edited: add a new ``vNNN_*.py`` module instead.
"""

VERSION = 8
STATEMENTS = (
    "INSERT INTO store_state (key, value) VALUES ('fts_rewrites', 0)",
    """
    CREATE TRIGGER memories_fts_rewritten_delete AFTER DELETE ON memories BEGIN
        UPDATE store_state SET value = value + 1 WHERE key = 'fts_rewrites';
    END
    """,
    """
    CREATE TRIGGER memories_fts_rewritten_update AFTER UPDATE OF content, tags ON memories BEGIN
        UPDATE store_state SET value = value + 1 WHERE key = 'fts_rewrites';
    END
    """,
)
