"""The PostgreSQL schema: forward-only migrations recorded in ``schema_version``.

Each migration's statements and its version row run in one transaction, under an
advisory lock, so two processes opening a new database never apply one twice and a
failure leaves the previous version intact. Shipped migrations are never edited.

The memories table mirrors SQLite's (same columns, same meanings): ``tags`` and
``metadata`` are ``jsonb`` (read back as JSON text, see :mod:`.pg_text`), ``fts`` a
generated ``tsvector`` (content weighted A, tags B) under a GIN index, and tags are kept
one per row in ``memory_tags`` by a trigger. The vector table is created when the first
vector pins the store, because its width is the pinned model's dimension
(:func:`vectors_table`). Version 2 adds the memory loop's tables (turns, sessions, versioned
facts with a ``tsvector``, quarantine, memory edges) and the knowledge graph's (entities,
their keys and mentions, relations). Version 3 indexes the embedding backlog.
"""

from __future__ import annotations

from ..sqlite.migrations import Migration

__all__ = ["LATEST", "MIGRATIONS", "vectors_table"]

_V1 = (
    "CREATE SEQUENCE memories_seq",
    """
    CREATE TABLE memories (
        seq BIGINT PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        agent_id TEXT NOT NULL,
        scope TEXT NOT NULL CHECK (scope IN ('private', 'shared', 'global')),
        pool TEXT,
        type TEXT NOT NULL CHECK (type IN ('episodic', 'semantic', 'procedural')),
        content TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        importance DOUBLE PRECISION NOT NULL CHECK (importance BETWEEN 0 AND 1),
        confidence DOUBLE PRECISION NOT NULL CHECK (confidence BETWEEN 0 AND 1),
        source TEXT NOT NULL CHECK (source IN ('user_confirmed', 'agent', 'extracted', 'imported')),
        pinned SMALLINT NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
        tags JSONB NOT NULL DEFAULT '[]',
        metadata JSONB NOT NULL DEFAULT '{}',
        session_id TEXT,
        created_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL,
        accessed_at DOUBLE PRECISION NOT NULL,
        access_count BIGINT NOT NULL DEFAULT 0,
        retention_strength DOUBLE PRECISION NOT NULL DEFAULT 1.0,
        archived SMALLINT NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
        deleted_at DOUBLE PRECISION,
        expires_at DOUBLE PRECISION,
        has_vector SMALLINT NOT NULL DEFAULT 0 CHECK (has_vector IN (0, 1)),
        kind TEXT NOT NULL DEFAULT 'note',
        fts TSVECTOR GENERATED ALWAYS AS (
            setweight(to_tsvector('english', content), 'A') || setweight(to_tsvector('english', tags), 'B')
        ) STORED
    )
    """,
    "CREATE INDEX memories_hash ON memories (content_hash, agent_id, scope, pool)",
    "CREATE INDEX memories_agent ON memories (agent_id, scope, pool)",
    "CREATE INDEX memories_created ON memories (created_at)",
    "CREATE INDEX memories_session ON memories (session_id)",
    "CREATE INDEX memories_kind ON memories (kind, agent_id)",
    "CREATE INDEX memories_deleted ON memories (deleted_at) WHERE deleted_at IS NOT NULL",
    "CREATE INDEX memories_fts ON memories USING gin (fts)",
    """
    CREATE TABLE memory_tags (
        tag TEXT NOT NULL,
        seq BIGINT NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
        PRIMARY KEY (tag, seq)
    )
    """,
    "CREATE INDEX memory_tags_seq ON memory_tags (seq)",
    """
    CREATE FUNCTION memory_tags_sync() RETURNS trigger LANGUAGE plpgsql AS $body$
    BEGIN
        IF TG_OP = 'UPDATE' THEN
            DELETE FROM memory_tags WHERE seq = NEW.seq;
        END IF;
        IF NEW.tags <> '[]'::jsonb THEN
            INSERT INTO memory_tags (tag, seq)
            SELECT DISTINCT t, NEW.seq FROM jsonb_array_elements_text(NEW.tags) AS t
            ON CONFLICT DO NOTHING;
        END IF;
        RETURN NULL;
    END
    $body$
    """,
    """
    CREATE TRIGGER memory_tags_insert AFTER INSERT ON memories
    FOR EACH ROW EXECUTE FUNCTION memory_tags_sync()
    """,
    """
    CREATE TRIGGER memory_tags_update AFTER UPDATE OF tags ON memories
    FOR EACH ROW WHEN (OLD.tags IS DISTINCT FROM NEW.tags) EXECUTE FUNCTION memory_tags_sync()
    """,
    """
    CREATE TABLE embedding_meta (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        model_id TEXT NOT NULL,
        dimension INTEGER NOT NULL CHECK (dimension > 0),
        family TEXT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL
    )
    """,
)

# The memory loop's and the graph's tables, as SQLite's v2, v3 and v7 left them (same columns,
# same meanings; booleans as 0/1 SMALLINTs). Facts carry a generated ``tsvector`` (key and
# value, the key split into its words as FTS5 splits it) under a GIN index where SQLite has
# an FTS5 table.
_V2 = (
    # A chunk's neighbours in its session are an index range (SQLite's index has the rowid).
    "DROP INDEX memories_session",
    "CREATE INDEX memories_session ON memories (session_id, seq)",
    """
    CREATE TABLE turns (
        seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        agent_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        turn BIGINT NOT NULL,
        user_text TEXT NOT NULL,
        reply_text TEXT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        importance DOUBLE PRECISION NOT NULL,
        extracted_at DOUBLE PRECISION
    )
    """,
    "CREATE INDEX turns_session ON turns (agent_id, session_id, turn)",
    "CREATE INDEX turns_pending ON turns (agent_id, seq) WHERE extracted_at IS NULL",
    """
    CREATE TABLE sessions (
        agent_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        started_at DOUBLE PRECISION NOT NULL,
        last_turn_at DOUBLE PRECISION NOT NULL,
        turns BIGINT NOT NULL DEFAULT 0,
        rolling_summary TEXT,
        evicted_messages BIGINT NOT NULL DEFAULT 0,
        ended_at DOUBLE PRECISION,
        summary_id TEXT,
        PRIMARY KEY (agent_id, session_id)
    )
    """,
    "CREATE INDEX sessions_recent ON sessions (agent_id, last_turn_at)",
    """
    CREATE TABLE facts (
        seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        agent_id TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        category TEXT NOT NULL CHECK (category IN ('profile', 'note')),
        source TEXT NOT NULL CHECK (source IN ('user_confirmed', 'agent', 'extracted', 'imported')),
        origin TEXT NOT NULL,
        confidence DOUBLE PRECISION NOT NULL CHECK (confidence BETWEEN 0 AND 1),
        importance DOUBLE PRECISION NOT NULL CHECK (importance BETWEEN 0 AND 1),
        session_id TEXT,
        turn_seq BIGINT,
        valid_from DOUBLE PRECISION NOT NULL,
        valid_to DOUBLE PRECISION,
        recorded_at DOUBLE PRECISION NOT NULL,
        invalidated_at DOUBLE PRECISION,
        invalidated_by BIGINT,
        forgotten SMALLINT NOT NULL DEFAULT 0 CHECK (forgotten IN (0, 1)),
        archived SMALLINT NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
        accessed_at DOUBLE PRECISION NOT NULL,
        access_count BIGINT NOT NULL DEFAULT 0,
        fts TSVECTOR GENERATED ALWAYS AS (
            to_tsvector('english', translate(key, '._', '  ') || ' ' || value)
        ) STORED
    )
    """,
    "CREATE UNIQUE INDEX facts_current ON facts (agent_id, key) WHERE invalidated_at IS NULL",
    "CREATE INDEX facts_history ON facts (agent_id, key, recorded_at)",
    "CREATE INDEX facts_fts ON facts USING gin (fts)",
    """
    CREATE TABLE quarantine (
        seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        agent_id TEXT NOT NULL,
        reason TEXT NOT NULL,
        what TEXT NOT NULL,
        text TEXT NOT NULL,
        origin TEXT NOT NULL,
        session_id TEXT,
        created_at DOUBLE PRECISION NOT NULL,
        turn_seq BIGINT,
        payload TEXT
    )
    """,
    "CREATE INDEX quarantine_agent ON quarantine (agent_id, seq)",
    """
    CREATE TABLE memory_edges (
        src_id TEXT NOT NULL,
        dst_id TEXT NOT NULL,
        relation TEXT NOT NULL,
        source TEXT NOT NULL,
        confidence DOUBLE PRECISION NOT NULL DEFAULT 1.0 CHECK (confidence BETWEEN 0 AND 1),
        created_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (src_id, dst_id, relation)
    )
    """,
    "CREATE INDEX memory_edges_dst ON memory_edges (dst_id, relation)",
    "CREATE INDEX memory_edges_source ON memory_edges (source)",
    """
    CREATE TABLE entities (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        agent_id TEXT NOT NULL,
        key TEXT NOT NULL,
        name TEXT NOT NULL,
        type TEXT NOT NULL DEFAULT 'unknown',
        aliases TEXT NOT NULL DEFAULT '[]',
        confidence DOUBLE PRECISION NOT NULL CHECK (confidence BETWEEN 0 AND 1),
        mention_count BIGINT NOT NULL DEFAULT 1,
        cluster_id BIGINT,
        cluster_label TEXT,
        created_at DOUBLE PRECISION NOT NULL,
        reinforced_at DOUBLE PRECISION NOT NULL,
        UNIQUE (agent_id, key)
    )
    """,
    """
    CREATE TABLE entity_keys (
        agent_id TEXT NOT NULL,
        key TEXT NOT NULL,
        entity_id BIGINT NOT NULL,
        PRIMARY KEY (agent_id, key, entity_id)
    )
    """,
    "CREATE INDEX entity_keys_entity ON entity_keys (entity_id)",
    """
    CREATE TABLE relations (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        agent_id TEXT NOT NULL,
        src BIGINT NOT NULL,
        dst BIGINT NOT NULL,
        type TEXT NOT NULL,
        confidence DOUBLE PRECISION NOT NULL CHECK (confidence BETWEEN 0 AND 1),
        mention_count BIGINT NOT NULL DEFAULT 1,
        provenance TEXT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        reinforced_at DOUBLE PRECISION NOT NULL,
        UNIQUE (src, dst, type)
    )
    """,
    "CREATE INDEX relations_dst ON relations (dst, src)",
    "CREATE INDEX relations_agent ON relations (agent_id)",
    """
    CREATE TABLE entity_mentions (
        entity_id BIGINT NOT NULL,
        memory_id TEXT NOT NULL,
        PRIMARY KEY (entity_id, memory_id)
    )
    """,
    "CREATE INDEX entity_mentions_memory ON entity_mentions (memory_id)",
)

# The embedding backlog (SQLite's v9): live memories without a vector, for the worker's next
# batch and the count ``stats()`` and ``explain()`` report, without a scan of the table.
_V3 = (
    "CREATE INDEX memories_unembedded ON memories (seq, expires_at) "
    "WHERE has_vector = 0 AND deleted_at IS NULL AND archived = 0",
)

# Chat messages (kind "message") are never embedded: out of the backlog (SQLite's v10).
_V4 = (
    "DROP INDEX IF EXISTS memories_unembedded",
    "CREATE INDEX memories_unembedded ON memories (seq, expires_at) "
    "WHERE has_vector = 0 AND deleted_at IS NULL AND archived = 0 AND kind <> 'message'",
)

MIGRATIONS: tuple[Migration, ...] = (Migration(1, _V1), Migration(2, _V2), Migration(3, _V3), Migration(4, _V4))
LATEST = MIGRATIONS[-1].version

#: The version table, created before any migration runs.
VERSION_TABLE = "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"


def vectors_table(dimension: int) -> str:
    """The pgvector table of the pinned width; a row per memory with a vector."""
    return (
        "CREATE TABLE IF NOT EXISTS memory_vectors ("
        "seq BIGINT PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE, "
        f"embedding vector({int(dimension)}) NOT NULL)"
    )


#: The optional approximate index (``vector_index="ann"``), cosine distance; built without blocking writers.
HNSW_INDEX = (
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS memory_vectors_hnsw "
    "ON memory_vectors USING hnsw (embedding vector_cosine_ops)"
)
