"""v3: the knowledge graph in plain tables, beside the memories it indexes.

- ``entities``: one row per distinct entity of an agent, keyed by its canonical name
  (case-folded, punctuation and extra whitespace removed); repeated mentions raise
  ``mention_count`` and move ``confidence`` as a running average. ``cluster_id`` and
  ``cluster_label`` are set by consolidation (connected components).
- ``entity_keys``: every canonical name and alias that points to an entity, so query-time
  entity detection is an index lookup of the query's word n-grams.
- ``relations``: typed directed relations between entities, deduplicated on
  ``(src, dst, type)`` the same way.
- ``entity_mentions``: which memories mention which entity.

Memory-to-memory edges already live in ``memory_edges`` (v2).
"""

VERSION = 3
STATEMENTS = (
    """
    CREATE TABLE entities (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        agent_id TEXT NOT NULL,
        key TEXT NOT NULL,
        name TEXT NOT NULL,
        type TEXT NOT NULL DEFAULT 'unknown',
        aliases TEXT NOT NULL DEFAULT '[]',
        confidence REAL NOT NULL CHECK (confidence BETWEEN 0 AND 1),
        mention_count INTEGER NOT NULL DEFAULT 1,
        cluster_id INTEGER,
        cluster_label TEXT,
        created_at REAL NOT NULL,
        reinforced_at REAL NOT NULL,
        UNIQUE (agent_id, key)
    )
    """,
    """
    CREATE TABLE entity_keys (
        agent_id TEXT NOT NULL,
        key TEXT NOT NULL,
        entity_id INTEGER NOT NULL,
        PRIMARY KEY (agent_id, key, entity_id)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX entity_keys_entity ON entity_keys (entity_id)",
    """
    CREATE TABLE relations (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        agent_id TEXT NOT NULL,
        src INTEGER NOT NULL,
        dst INTEGER NOT NULL,
        type TEXT NOT NULL,
        confidence REAL NOT NULL CHECK (confidence BETWEEN 0 AND 1),
        mention_count INTEGER NOT NULL DEFAULT 1,
        provenance TEXT NOT NULL,
        created_at REAL NOT NULL,
        reinforced_at REAL NOT NULL,
        UNIQUE (src, dst, type)
    )
    """,
    "CREATE INDEX relations_dst ON relations (dst, src)",
    """
    CREATE TABLE entity_mentions (
        entity_id INTEGER NOT NULL,
        memory_id TEXT NOT NULL,
        PRIMARY KEY (entity_id, memory_id)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX entity_mentions_memory ON entity_mentions (memory_id)",
)
