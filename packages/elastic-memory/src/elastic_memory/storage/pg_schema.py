"""The PostgreSQL schema: forward-only migrations recorded in ``schema_version``.

Each migration's statements and its version row run in one transaction, under an
advisory lock, so two processes opening a new database never apply one twice and a
failure leaves the previous version intact. Shipped migrations are never edited.

The memories table mirrors SQLite's (same columns, same meanings): ``tags`` and
``metadata`` are ``jsonb`` (read back as JSON text, see :mod:`.pg_text`), ``fts`` a
generated ``tsvector`` (content weighted A, tags B) under a GIN index, and tags are kept
one per row in ``memory_tags`` by a trigger. The vector table is created when the first
vector pins the store, because its width is the pinned model's dimension
(:func:`vectors_table`).
"""

from __future__ import annotations

from .migrations import Migration

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

MIGRATIONS: tuple[Migration, ...] = (Migration(1, _V1),)
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
