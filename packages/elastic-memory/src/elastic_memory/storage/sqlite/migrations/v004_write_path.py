"""v4: the tag trigger skips memories without tags (most of them), a cheaper write.

Shipped migrations are never edited: add a new ``vNNN_*.py`` module instead.
"""

VERSION = 4
STATEMENTS = (
    "DROP TRIGGER memory_tags_insert",
    """
    CREATE TRIGGER memory_tags_insert AFTER INSERT ON memories WHEN new.tags <> '[]' BEGIN
        INSERT OR IGNORE INTO memory_tags (tag, seq) SELECT value, new.seq FROM json_each(new.tags);
    END
    """,
)
