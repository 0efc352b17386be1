"""SQL of the per-agent keyword tables (schema v6), built apart from where it runs.

A file that has held memories of two or more agents keeps, beside the file-wide
``memories_fts``, one FTS5 table per agent (``memories_fts_a<id>``, ``id`` from the
``keyword_partitions`` registry) holding that agent's rows, so a query pinned to one agent
ranks with that agent's BM25 statistics alone (the searches are ``queries.keyword_search`` and
``queries.keyword_ranking`` with the table's name). Every function returns SQL (and parameters);
table names come from :func:`table` and pass through :func:`quote_ident`.

>>> table(3)
'memories_fts_a3'
>>> delete_row(table(3))
'DELETE FROM "memories_fts_a3" WHERE rowid = ?'
"""

from __future__ import annotations

from collections.abc import Sequence

from ..queries import GLOBAL_FTS, Prepared, in_list, quote_ident

__all__ = [
    "GLOBAL",
    "STATE",
    "backfill",
    "create",
    "delete_row",
    "find",
    "insert_row",
    "lookup",
    "owners",
    "register",
    "table",
]

#: The file-wide FTS5 table (every row of every agent).
GLOBAL = GLOBAL_FTS
#: Whether the file is split (any agent registered), and the agent range of ``memories``.
STATE = (
    "SELECT EXISTS (SELECT 1 FROM keyword_partitions), "
    "(SELECT min(agent_id) FROM memories), (SELECT max(agent_id) FROM memories)"
)


def lookup(agent: str) -> Prepared:
    """:data:`STATE` and ``agent``'s partition id (``NULL`` when not registered)."""
    return STATE + ", (SELECT id FROM keyword_partitions WHERE agent_id = ?)", [agent]


def table(partition: int) -> str:
    """The FTS5 table of the agent registered as ``partition``."""
    return f"{GLOBAL}_a{int(partition)}"


def create(name: str) -> str:
    """One agent's FTS5 table: columns and tokenizer as ``memories_fts``; it keeps its own copy of the text."""
    return f"CREATE VIRTUAL TABLE {quote_ident(name)} USING fts5(content, tags, tokenize='porter unicode61')"


def find(agents: Sequence[str]) -> Prepared:
    """``(agent_id, id)`` of the registered ``agents``."""
    sql, params = in_list("agent_id", agents)
    return f"SELECT agent_id, id FROM keyword_partitions WHERE {sql}", params


def register(agent: str) -> Prepared:
    """Register ``agent``; returns its partition id."""
    return "INSERT INTO keyword_partitions (agent_id) VALUES (?) RETURNING id", [agent]


def owners(seqs: Sequence[int]) -> Prepared:
    """``(seq, agent_id)`` of the memories ``seqs``."""
    sql, params = in_list("seq", seqs)
    return f"SELECT seq, agent_id FROM memories WHERE {sql}", params


def backfill(name: str, agent: str) -> Prepared:
    """Copy ``agent``'s memories (every row, as ``memories_fts`` holds them) into its table."""
    return (
        f"INSERT INTO {quote_ident(name)} (rowid, content, tags) "
        "SELECT seq, content, tags FROM memories WHERE agent_id = ? ORDER BY seq",
        [agent],
    )


def insert_row(name: str) -> str:
    """INSERT of one row ``(seq, content, tags)``, for ``executemany``."""
    return f"INSERT INTO {quote_ident(name)} (rowid, content, tags) VALUES (?, ?, ?)"


def delete_row(name: str) -> str:
    """DELETE of one row by seq, for ``executemany`` (FTS5 reads the tokens to remove from its own copy)."""
    return f"DELETE FROM {quote_ident(name)} WHERE rowid = ?"
