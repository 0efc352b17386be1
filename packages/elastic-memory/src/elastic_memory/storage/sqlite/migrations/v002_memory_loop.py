"""v2: the memory loop's tables: transcript, sessions, versioned facts, quarantine, links.

- ``memories.kind`` says what wrote a memory: ``note`` (``remember``), ``chunk`` (a
  condensed exchange of ``record_turn``), ``lesson``, ``preference``, ``howto``,
  ``summary`` (a session summary) or ``merged`` (a consolidation of near-duplicates).
- ``turns`` is the verbatim transcript, never rewritten; ``extracted_at`` stays NULL
  until the background extraction ran, so a shed or lost job is found again.
- ``facts`` holds every version of every key: the current one has ``invalidated_at``
  NULL (one per agent and key, enforced by a partial unique index). ``valid_from`` and
  ``valid_to`` are when the value held in the world; ``recorded_at`` and
  ``invalidated_at`` when the store learnt and superseded it. A forgotten key gets a
  tombstone row (``forgotten = 1``) as its current version.
- ``quarantine`` keeps what the guards rejected, for inspection.
- ``memory_edges`` are typed directed links between memories (a merged memory links
  the originals it replaced).
"""

VERSION = 2
STATEMENTS = (
    "ALTER TABLE memories ADD COLUMN kind TEXT NOT NULL DEFAULT 'note'",
    "CREATE INDEX memories_kind ON memories (kind, agent_id)",
    """
    CREATE TABLE turns (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        agent_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        turn INTEGER NOT NULL,
        user_text TEXT NOT NULL,
        reply_text TEXT NOT NULL,
        created_at REAL NOT NULL,
        importance REAL NOT NULL,
        extracted_at REAL
    )
    """,
    "CREATE INDEX turns_session ON turns (agent_id, session_id, turn)",
    "CREATE INDEX turns_pending ON turns (agent_id, seq) WHERE extracted_at IS NULL",
    """
    CREATE TABLE sessions (
        agent_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        started_at REAL NOT NULL,
        last_turn_at REAL NOT NULL,
        turns INTEGER NOT NULL DEFAULT 0,
        rolling_summary TEXT,
        evicted_messages INTEGER NOT NULL DEFAULT 0,
        ended_at REAL,
        summary_id TEXT,
        PRIMARY KEY (agent_id, session_id)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX sessions_recent ON sessions (agent_id, last_turn_at)",
    """
    CREATE TABLE facts (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        agent_id TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        category TEXT NOT NULL CHECK (category IN ('profile', 'note')),
        source TEXT NOT NULL CHECK (source IN ('user_confirmed', 'agent', 'extracted', 'imported')),
        origin TEXT NOT NULL,
        confidence REAL NOT NULL CHECK (confidence BETWEEN 0 AND 1),
        importance REAL NOT NULL CHECK (importance BETWEEN 0 AND 1),
        session_id TEXT,
        turn_seq INTEGER,
        valid_from REAL NOT NULL,
        valid_to REAL,
        recorded_at REAL NOT NULL,
        invalidated_at REAL,
        invalidated_by INTEGER,
        forgotten INTEGER NOT NULL DEFAULT 0 CHECK (forgotten IN (0, 1)),
        archived INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
        accessed_at REAL NOT NULL,
        access_count INTEGER NOT NULL DEFAULT 0
    )
    """,
    "CREATE UNIQUE INDEX facts_current ON facts (agent_id, key) WHERE invalidated_at IS NULL",
    "CREATE INDEX facts_history ON facts (agent_id, key, recorded_at)",
    """
    CREATE VIRTUAL TABLE facts_fts USING fts5(
        key, value, content='facts', content_rowid='seq', tokenize='porter unicode61'
    )
    """,
    """
    CREATE TRIGGER facts_fts_insert AFTER INSERT ON facts BEGIN
        INSERT INTO facts_fts (rowid, key, value) VALUES (new.seq, new.key, new.value);
    END
    """,
    """
    CREATE TRIGGER facts_fts_delete AFTER DELETE ON facts BEGIN
        INSERT INTO facts_fts (facts_fts, rowid, key, value) VALUES ('delete', old.seq, old.key, old.value);
    END
    """,
    """
    CREATE TABLE quarantine (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        agent_id TEXT NOT NULL,
        reason TEXT NOT NULL,
        what TEXT NOT NULL,
        text TEXT NOT NULL,
        origin TEXT NOT NULL,
        session_id TEXT,
        created_at REAL NOT NULL
    )
    """,
    """
    CREATE TABLE memory_edges (
        src_id TEXT NOT NULL,
        dst_id TEXT NOT NULL,
        relation TEXT NOT NULL,
        source TEXT NOT NULL,
        confidence REAL NOT NULL DEFAULT 1.0 CHECK (confidence BETWEEN 0 AND 1),
        created_at REAL NOT NULL,
        PRIMARY KEY (src_id, dst_id, relation)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX memory_edges_dst ON memory_edges (dst_id, relation)",
)
