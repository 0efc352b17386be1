"""v1: memories, their FTS5 and tag indexes kept in lockstep by triggers, the embedding pin.

Shipped migrations are never edited: add a new ``vNNN_*.py`` module instead.
The sqlite-vec table is created when the first vector is written, because its width
is the pinned model's dimension (see ``storage/queries.py``).
"""

VERSION = 1
STATEMENTS = (
    """
    CREATE TABLE memories (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        agent_id TEXT NOT NULL,
        scope TEXT NOT NULL CHECK (scope IN ('private', 'shared', 'global')),
        pool TEXT,
        type TEXT NOT NULL CHECK (type IN ('episodic', 'semantic', 'procedural')),
        content TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        importance REAL NOT NULL CHECK (importance BETWEEN 0 AND 1),
        confidence REAL NOT NULL CHECK (confidence BETWEEN 0 AND 1),
        source TEXT NOT NULL CHECK (source IN ('user_confirmed', 'agent', 'extracted', 'imported')),
        pinned INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
        tags TEXT NOT NULL DEFAULT '[]',
        metadata TEXT NOT NULL DEFAULT '{}',
        session_id TEXT,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        accessed_at REAL NOT NULL,
        access_count INTEGER NOT NULL DEFAULT 0,
        retention_strength REAL NOT NULL DEFAULT 1.0,
        archived INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
        deleted_at REAL,
        expires_at REAL,
        has_vector INTEGER NOT NULL DEFAULT 0 CHECK (has_vector IN (0, 1))
    )
    """,
    "CREATE INDEX memories_hash ON memories (content_hash, agent_id, scope, pool)",
    "CREATE INDEX memories_agent ON memories (agent_id, scope, pool)",
    "CREATE INDEX memories_created ON memories (created_at)",
    "CREATE INDEX memories_session ON memories (session_id)",
    "CREATE INDEX memories_deleted ON memories (deleted_at) WHERE deleted_at IS NOT NULL",
    """
    CREATE VIRTUAL TABLE memories_fts USING fts5(
        content, tags, content='memories', content_rowid='seq', tokenize='porter unicode61'
    )
    """,
    """
    CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts (rowid, content, tags) VALUES (new.seq, new.content, new.tags);
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
    # Tags, one row each, so a tag filter is an index lookup instead of a JSON scan.
    "CREATE TABLE memory_tags (tag TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (tag, seq)) WITHOUT ROWID",
    "CREATE INDEX memory_tags_seq ON memory_tags (seq)",
    """
    CREATE TRIGGER memory_tags_insert AFTER INSERT ON memories BEGIN
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
    # Bumped by every transaction that changes what recall can see (never by access
    # tracking), so other connections know when their in-RAM index is stale.
    "CREATE TABLE store_state (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID",
    "INSERT INTO store_state (key, value) VALUES ('generation', 0)",
    """
    CREATE TABLE embedding_meta (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        model_id TEXT NOT NULL,
        dimension INTEGER NOT NULL CHECK (dimension > 0),
        family TEXT NOT NULL,
        created_at REAL NOT NULL
    )
    """,
)
