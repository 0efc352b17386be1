"""v5: the memories table rebuilt for a cheaper insert, same columns, same meanings.

Measured with 20k memories in batches of 500: an ``IN (...)`` list in a CHECK builds a
throwaway table per checked row, 8 us of a 13 us bare insert on SQLite 3.40 (4.6 of 11.6
on 3.51); the same checks written as ``=`` chains cost nothing measurable. And the FTS5
insert trigger made FTS5 flush its pending terms once per row (a trigger runs as a
sub-statement): 20 us a row on both versions, against 4-5 us for the writer's own
``INSERT INTO memories_fts`` of the whole batch.

So the table is copied into one with the cheap checks, keeping every seq and the
AUTOINCREMENT counter, and the FTS5 insert trigger is gone: the one place that inserts
memories (``SQLiteStore``'s write) fills ``memories_fts`` first, in the same transaction.
The delete and update triggers stay, so every other change keeps the index in step. A
process of an older version that had the file open before the upgrade would insert rows
FTS5 never saw (and a later delete of one would corrupt the index), so a guard refuses an
insert whose FTS5 row is not there yet: that process's write fails, saying to upgrade.

The copy runs in the migration's one transaction: 0.8 s for 100k memories on a 2-core
machine, after which the file keeps the old table's pages (34 MB there) free for reuse
(``VACUUM`` returns them).

The duplicate index is on the content hash's first 16 hex digits only (the lookup then
compares whole hashes): about 26 bytes a memory instead of 104 for the whole hash with its
namespace, which the write compared in Python anyway.

Shipped migrations are never edited: add a new ``vNNN_*.py`` module instead.
"""

VERSION = 5
STATEMENTS = (
    """
    CREATE TABLE memories_v5 (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        agent_id TEXT NOT NULL,
        scope TEXT NOT NULL CHECK (scope = 'private' OR scope = 'shared' OR scope = 'global'),
        pool TEXT,
        type TEXT NOT NULL CHECK (type = 'semantic' OR type = 'episodic' OR type = 'procedural'),
        content TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        importance REAL NOT NULL CHECK (importance >= 0 AND importance <= 1),
        confidence REAL NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
        source TEXT NOT NULL CHECK (
            source = 'agent' OR source = 'extracted' OR source = 'user_confirmed' OR source = 'imported'
        ),
        pinned INTEGER NOT NULL DEFAULT 0 CHECK (pinned = 0 OR pinned = 1),
        tags TEXT NOT NULL DEFAULT '[]',
        metadata TEXT NOT NULL DEFAULT '{}',
        session_id TEXT,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        accessed_at REAL NOT NULL,
        access_count INTEGER NOT NULL DEFAULT 0,
        retention_strength REAL NOT NULL DEFAULT 1.0,
        archived INTEGER NOT NULL DEFAULT 0 CHECK (archived = 0 OR archived = 1),
        deleted_at REAL,
        expires_at REAL,
        has_vector INTEGER NOT NULL DEFAULT 0 CHECK (has_vector = 0 OR has_vector = 1),
        kind TEXT NOT NULL DEFAULT 'note'
    )
    """,
    "INSERT INTO memories_v5 SELECT * FROM memories ORDER BY seq",
    # The counter outlives deleted rows (a seq, and its vector rowid, is never reused);
    # DROP TABLE forgets it, so carry it over.
    "DELETE FROM sqlite_sequence WHERE name = 'memories_v5'",
    "INSERT INTO sqlite_sequence (name, seq) SELECT 'memories_v5', seq FROM sqlite_sequence WHERE name = 'memories'",
    "DROP TABLE memories",
    # A view or trigger of the user's naming ``memories`` would fail the schema check of a
    # modern RENAME while the table is gone; the legacy one renames without checking.
    "PRAGMA legacy_alter_table = ON",
    "ALTER TABLE memories_v5 RENAME TO memories",
    "PRAGMA legacy_alter_table = OFF",
    # Duplicates are found by the hash's first 16 hex digits (64 bits), then compared in full:
    # a quarter of the bytes of an index of the whole hash with its namespace.
    "CREATE INDEX memories_hash ON memories (substr(content_hash, 1, 16))",
    "CREATE INDEX memories_agent ON memories (agent_id, scope, pool)",
    "CREATE INDEX memories_created ON memories (created_at)",
    "CREATE INDEX memories_session ON memories (session_id)",
    "CREATE INDEX memories_deleted ON memories (deleted_at) WHERE deleted_at IS NOT NULL",
    "CREATE INDEX memories_kind ON memories (kind, agent_id)",
    """
    CREATE TRIGGER memories_fts_first BEFORE INSERT ON memories
    WHEN NOT EXISTS (SELECT 1 FROM memories_fts_docsize WHERE id = new.seq) BEGIN
        SELECT RAISE(ABORT, 'this database has schema version 5: upgrade elastic-memory to write to it');
    END
    """,
    """
    CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, content, tags)
        VALUES ('delete', old.seq, old.content, old.tags);
    END
    """,
    """
    CREATE TRIGGER memories_fts_update AFTER UPDATE OF content, tags ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, content, tags)
        VALUES ('delete', old.seq, old.content, old.tags);
        INSERT INTO memories_fts (rowid, content, tags) VALUES (new.seq, new.content, new.tags);
    END
    """,
    """
    CREATE TRIGGER memory_tags_insert AFTER INSERT ON memories WHEN new.tags <> '[]' BEGIN
        INSERT OR IGNORE INTO memory_tags (tag, seq) SELECT value, new.seq FROM json_each(new.tags);
    END
    """,
    """
    CREATE TRIGGER memory_tags_delete AFTER DELETE ON memories BEGIN
        DELETE FROM memory_tags WHERE seq = old.seq;
    END
    """,
    """
    CREATE TRIGGER memory_tags_update AFTER UPDATE OF tags ON memories BEGIN
        DELETE FROM memory_tags WHERE seq = old.seq;
        INSERT OR IGNORE INTO memory_tags (tag, seq) SELECT value, new.seq FROM json_each(new.tags);
    END
    """,
)
