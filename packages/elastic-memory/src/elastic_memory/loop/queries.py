"""SQL of the memory loop's tables (transcript, sessions, facts, quarantine, links), sans-IO.

Like :mod:`elastic_memory.storage.queries`: every function returns ``(sql, params)`` or a constant string;
values are always bound. Every statement is written once, in SQL that SQLite and
PostgreSQL both run (``?`` placeholders; a backend translates them); where the engines
differ (full-text search of facts, a number inside JSON) a
:class:`LoopDialect` holds each engine's version (:data:`SQLITE`, :data:`POSTGRES`).

>>> sql, params = current_facts("a", category="profile", limit=5)
>>> params
['a', 'profile', 5]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..storage.postgres import queries as pq
from ..storage.queries import UNEMBEDDED, Prepared, in_list

__all__ = [
    "FACT_COLUMNS",
    "POSTGRES",
    "SQLITE",
    "LoopDialect",
    "current_facts",
    "fact_as_of",
    "fact_history",
    "DIALECTS",
    "insert_fact",
    "insert_turn",
    "pending_turns",
    "session_turns",
    "upsert_session",
]

#: Columns of ``facts`` in the order the fact queries return them.
FACT_COLUMNS = (
    "seq",
    "agent_id",
    "key",
    "value",
    "category",
    "source",
    "origin",
    "confidence",
    "importance",
    "session_id",
    "valid_from",
    "valid_to",
    "recorded_at",
    "invalidated_at",
    "invalidated_by",
    "forgotten",
    "archived",
    "access_count",
)
_FACTS = ", ".join(f'f."{c}"' for c in FACT_COLUMNS)
_INSERTED = (
    "agent_id",
    "key",
    "value",
    "category",
    "source",
    "origin",
    "confidence",
    "importance",
    "session_id",
    "turn_seq",
    "valid_from",
    "recorded_at",
    "forgotten",
    "accessed_at",
)
TURN_COLUMNS = ("seq", "session_id", "turn", "user_text", "reply_text", "created_at", "importance")
_TURNS = ", ".join(f'"{c}"' for c in TURN_COLUMNS)


def insert_fact(values: dict[str, Any]) -> Prepared:
    """INSERT one fact version, returning its seq."""
    cols = ", ".join(f'"{c}"' for c in _INSERTED)
    marks = ", ".join("?" * len(_INSERTED))
    return f"INSERT INTO facts ({cols}) VALUES ({marks}) RETURNING seq", [values[c] for c in _INSERTED]


CURRENT_FACT = f"SELECT {_FACTS} FROM facts AS f WHERE f.agent_id = ? AND f.key = ? AND f.invalidated_at IS NULL"


def _greater(column: str, other: str = "?") -> str:
    """The larger of ``column`` and ``other`` (SQLite's two-argument ``max``, PostgreSQL's ``greatest``)."""
    return f"CASE WHEN {column} > {other} THEN {column} ELSE {other} END"


def invalidate_fact(seq: int, now: float, valid_from: float) -> Prepared:
    """Close the current version ``seq``: a backdated successor ends it where it began (validity never runs back)."""
    sql = (
        f"UPDATE facts SET invalidated_at = ?, invalidated_by = NULL, "
        f"valid_to = coalesce(valid_to, {_greater('valid_from')}) WHERE seq = ?"
    )
    return sql, [now, valid_from, valid_from, seq]


def reinforce_fact(seq: int, confidence: float, importance: float, now: float) -> Prepared:
    """A repetition: confidence and importance rise to the new statement's, and the fact is back in view."""
    sql = (
        f"UPDATE facts SET confidence = {_greater('confidence')}, importance = {_greater('importance')}, "
        "archived = 0, accessed_at = ? WHERE seq = ?"
    )
    return sql, [confidence, confidence, importance, importance, now, seq]


def current_facts(agent_id: str, *, category: str | None = None, limit: int = 1000) -> Prepared:
    """The current, not forgotten, not archived facts of an agent: most important first."""
    where = ["f.agent_id = ?", "f.invalidated_at IS NULL", "f.forgotten = 0", "f.archived = 0"]
    params: list[Any] = [agent_id]
    if category is not None:
        where.append("f.category = ?")
        params.append(category)
    sql = (
        f"SELECT {_FACTS} FROM facts AS f WHERE {' AND '.join(where)} "
        "ORDER BY f.importance DESC, f.recorded_at DESC, f.seq DESC LIMIT ?"
    )
    return sql, [*params, limit]


def fact_history(agent_id: str, key: str) -> Prepared:
    """Every version of ``key``, oldest first: the audit chain."""
    return f"SELECT {_FACTS} FROM facts AS f WHERE f.agent_id = ? AND f.key = ? ORDER BY f.seq", [agent_id, key]


def fact_as_of(agent_id: str, key: str, when: float) -> Prepared:
    """The version of ``key`` that held in the world at ``when`` (latest recorded wins)."""
    sql = (
        f"SELECT {_FACTS} FROM facts AS f WHERE f.agent_id = ? AND f.key = ? AND f.forgotten = 0 "
        "AND f.valid_from <= ? AND (f.valid_to IS NULL OR f.valid_to > ?) ORDER BY f.recorded_at DESC, f.seq DESC "
        "LIMIT 1"
    )
    return sql, [agent_id, key, when, when]


_CURRENT = "f.agent_id = ? AND f.invalidated_at IS NULL AND f.forgotten = 0 AND f.archived = 0"


def _fact_search_fts5(agent_id: str, match: str, limit: int) -> Prepared:
    sql = (
        f"SELECT {_FACTS}, -bm25(facts_fts) AS score FROM facts_fts JOIN facts AS f ON f.seq = facts_fts.rowid "
        f"WHERE facts_fts MATCH ? AND {_CURRENT} ORDER BY score DESC LIMIT ?"
    )
    return sql, [match, agent_id, limit]


def _fact_search_tsvector(agent_id: str, match: str, limit: int) -> Prepared:
    sql = (
        f"SELECT {_FACTS}, ts_rank(f.fts, query) AS score FROM facts AS f, to_tsquery('{pq.TS_CONFIG}', ?) AS query "
        f"WHERE f.fts @@ query AND {_CURRENT} ORDER BY score DESC, f.seq LIMIT ?"
    )
    return sql, [pq.tsquery(match), agent_id, limit]


def touch_facts(seqs: Sequence[int], now: float) -> Prepared:
    """Record that facts were shown to the model."""
    sql, params = in_list("seq", list(seqs))
    return f"UPDATE facts SET access_count = access_count + 1, accessed_at = ? WHERE {sql}", [now, *params]


INSERT_TURN = (
    "INSERT INTO turns (agent_id, session_id, turn, user_text, reply_text, created_at, importance, extracted_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq"
)


def insert_turn(
    agent_id: str,
    session_id: str,
    turn: int,
    user: str,
    reply: str,
    now: float,
    importance: float,
    *,
    extracted: bool,
) -> Prepared:
    """INSERT one exchange of the transcript (``extracted``: no background extraction due), returning its seq."""
    return INSERT_TURN, [agent_id, session_id, turn, user, reply, now, importance, now if extracted else None]


def upsert_session(agent_id: str, session_id: str, now: float) -> Prepared:
    """Start a session or count one more turn in it; returns the session's turn count."""
    sql = (
        "INSERT INTO sessions (agent_id, session_id, started_at, last_turn_at, turns) VALUES (?, ?, ?, ?, 1) "
        "ON CONFLICT (agent_id, session_id) DO UPDATE SET last_turn_at = excluded.last_turn_at, "
        "turns = sessions.turns + 1, ended_at = NULL RETURNING turns"
    )
    return sql, [agent_id, session_id, now, now]


def session_turns(agent_id: str, session_id: str, *, limit: int = 1000) -> Prepared:
    """The latest ``limit`` turns of a session, in order."""
    sql = (
        f"SELECT * FROM (SELECT {_TURNS} FROM turns WHERE agent_id = ? AND session_id = ? "
        "ORDER BY turn DESC, seq DESC LIMIT ?) AS recent ORDER BY turn, seq"
    )
    return sql, [agent_id, session_id, limit]


def shown_turns(agent_id: str, session_id: str, texts: Sequence[str]) -> Prepared:
    """The turns of a session whose user text is one of ``texts`` (the host's window).

    Replies are not matched: short ones repeat ("Noted.") and would mark every turn as seen.
    """
    marks = ", ".join("?" * len(texts))
    sql = f"SELECT DISTINCT turn FROM turns WHERE agent_id = ? AND session_id = ? AND user_text IN ({marks})"
    return sql, [agent_id, session_id, *texts]


def turns_by_seq(seqs: Sequence[int]) -> Prepared:
    """Turns by seq."""
    sql, params = in_list("seq", list(seqs))
    return f"SELECT {_TURNS} FROM turns WHERE {sql} ORDER BY seq", params


def pending_turns(agent_id: str, limit: int) -> Prepared:
    """Turns the background extraction has not processed yet, oldest first."""
    sql = f"SELECT {_TURNS} FROM turns WHERE agent_id = ? AND extracted_at IS NULL ORDER BY seq LIMIT ?"
    return sql, [agent_id, limit]


def mark_extracted(seqs: Sequence[int], now: float) -> Prepared:
    """Mark turns as processed by the extraction (those still pending: the row count tells how many)."""
    sql, params = in_list("seq", list(seqs))
    return f"UPDATE turns SET extracted_at = ? WHERE extracted_at IS NULL AND {sql}", [now, *params]


SESSION = (
    "SELECT session_id, started_at, last_turn_at, turns, rolling_summary, evicted_messages, ended_at, summary_id "
    "FROM sessions WHERE agent_id = ? AND session_id = ?"
)
OPEN_SESSIONS = (
    "SELECT session_id FROM sessions WHERE agent_id = ? AND ended_at IS NULL AND session_id != ? "
    "AND last_turn_at <= (SELECT started_at FROM sessions WHERE agent_id = ? AND session_id = ?) "
    "ORDER BY last_turn_at"
)


def set_rolling_summary(agent_id: str, session_id: str, text: str, evicted: int) -> Prepared:
    """Replace a session's rolling summary; the count of evicted messages only grows."""
    sql = (
        f"UPDATE sessions SET rolling_summary = ?, evicted_messages = {_greater('evicted_messages')} "
        "WHERE agent_id = ? AND session_id = ?"
    )
    return sql, [text, evicted, evicted, agent_id, session_id]


#: Ends a session unless a turn arrived since ``last_turn_at`` was read (it resumed).
END_SESSION = (
    "UPDATE sessions SET ended_at = ?, summary_id = coalesce(?, summary_id) "
    "WHERE agent_id = ? AND session_id = ? AND last_turn_at = ?"
)
#: Make sure a session row exists (evictions reported for a session with no turn yet).
ENSURE_SESSION = (
    "INSERT INTO sessions (agent_id, session_id, started_at, last_turn_at, turns) VALUES (?, ?, ?, ?, 0) "
    "ON CONFLICT (agent_id, session_id) DO NOTHING"
)
INSERT_QUARANTINE = (
    "INSERT INTO quarantine (agent_id, reason, what, text, origin, session_id, created_at, turn_seq, payload) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_QUARANTINE_COLUMNS = (
    "seq, agent_id, reason, what, text, origin, session_id, created_at, turn_seq, payload IS NOT NULL, payload"
)
QUARANTINE = f"SELECT {_QUARANTINE_COLUMNS} FROM quarantine WHERE agent_id = ? ORDER BY seq DESC LIMIT ?"
QUARANTINED = f"SELECT {_QUARANTINE_COLUMNS} FROM quarantine WHERE agent_id = ? AND seq = ?"
DISCARD_QUARANTINED = "DELETE FROM quarantine WHERE agent_id = ? AND seq = ?"
CAP_QUARANTINE = (
    "DELETE FROM quarantine WHERE agent_id = ? AND seq NOT IN "
    "(SELECT seq FROM quarantine WHERE agent_id = ? ORDER BY seq DESC LIMIT ?)"
)
INSERT_EDGE = (
    "INSERT INTO memory_edges (src_id, dst_id, relation, source, confidence, created_at) VALUES (?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (src_id, dst_id, relation) DO UPDATE SET "
    f"confidence = {_greater('memory_edges.confidence', 'excluded.confidence')}"
)
EDGES_FROM = "SELECT dst_id, relation FROM memory_edges WHERE src_id = ? ORDER BY dst_id, relation"


def pending_vectors(now: float, limit: int) -> Prepared:
    """Live memories still without a vector, oldest first: ``(seq, id, content, content_hash)``.

    Every agent's rows of the store (and every partition of an agent's): the vectors are the
    store's, whoever wrote the rows. The backlog's partial index serves it (see :data:`.queries.UNEMBEDDED`).
    """
    sql = (
        f"SELECT m.seq, m.id, m.content, m.content_hash FROM memories AS m WHERE {UNEMBEDDED} "
        'AND (m."expires_at" IS NULL OR m."expires_at" > ?) ORDER BY m.seq LIMIT ?'
    )
    return sql, [now, limit]


@dataclass(frozen=True)
class LoopDialect:
    """Where the loop's SQL differs between engines; the rest is written once."""

    #: ``(agent_id, match, limit)`` -> current facts matching a full-text expression: ``(columns..., score)``.
    fact_search: Callable[[str, str, int], Prepared]
    #: The turn number a chunk (``m``) stores in its metadata, as an SQL expression.
    chunk_turn: str


SQLITE = LoopDialect(
    fact_search=_fact_search_fts5,
    chunk_turn="json_extract(m.metadata, '$.turn')",
)
POSTGRES = LoopDialect(
    fact_search=_fact_search_tsvector,
    chunk_turn="CAST(m.metadata ->> 'turn' AS BIGINT)",
)
#: The dialect of each :attr:`.Capabilities.engine`.
DIALECTS = {"sqlite": SQLITE, "postgresql": POSTGRES}
