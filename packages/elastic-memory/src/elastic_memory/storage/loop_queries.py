"""SQL of the memory loop's tables (transcript, sessions, facts, quarantine, links), sans-IO.

Like :mod:`.queries`: every function returns ``(sql, params)`` or a constant string;
values are always bound.

>>> sql, params = current_facts("a", category="profile", limit=5)
>>> params
['a', 'profile', 5]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .queries import Prepared, in_list

__all__ = [
    "FACT_COLUMNS",
    "current_facts",
    "fact_as_of",
    "fact_history",
    "fact_search",
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
#: A backdated successor ends the old version where it began (its validity never runs backwards).
INVALIDATE_FACT = (
    "UPDATE facts SET invalidated_at = ?, invalidated_by = ?, valid_to = coalesce(valid_to, max(valid_from, ?)) "
    "WHERE seq = ?"
)
REINFORCE_FACT = (
    "UPDATE facts SET confidence = max(confidence, ?), importance = max(importance, ?), archived = 0, "
    "accessed_at = ? WHERE seq = ?"
)


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


def fact_search(agent_id: str, match: str, limit: int) -> Prepared:
    """Current note-or-profile facts matching an FTS5 ``match``: ``(columns..., bm25)``, best first."""
    sql = (
        f"SELECT {_FACTS}, -bm25(facts_fts) AS score FROM facts_fts JOIN facts AS f ON f.seq = facts_fts.rowid "
        "WHERE facts_fts MATCH ? AND f.agent_id = ? AND f.invalidated_at IS NULL AND f.forgotten = 0 "
        "AND f.archived = 0 ORDER BY score DESC LIMIT ?"
    )
    return sql, [match, agent_id, limit]


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
        "turns = turns + 1, ended_at = NULL RETURNING turns"
    )
    return sql, [agent_id, session_id, now, now]


def session_turns(agent_id: str, session_id: str, *, limit: int = 1000) -> Prepared:
    """The latest ``limit`` turns of a session, in order."""
    sql = (
        f"SELECT * FROM (SELECT {_TURNS} FROM turns WHERE agent_id = ? AND session_id = ? "
        "ORDER BY turn DESC, seq DESC LIMIT ?) ORDER BY turn, seq"
    )
    return sql, [agent_id, session_id, limit]


def turns_by_seq(seqs: Sequence[int]) -> Prepared:
    """Turns by seq."""
    sql, params = in_list("seq", list(seqs))
    return f"SELECT {_TURNS} FROM turns WHERE {sql} ORDER BY seq", params


def pending_turns(agent_id: str, limit: int) -> Prepared:
    """Turns the background extraction has not processed yet, oldest first."""
    sql = f"SELECT {_TURNS} FROM turns WHERE agent_id = ? AND extracted_at IS NULL ORDER BY seq LIMIT ?"
    return sql, [agent_id, limit]


def mark_extracted(seqs: Sequence[int], now: float) -> Prepared:
    """Mark turns as processed by the extraction."""
    sql, params = in_list("seq", list(seqs))
    return f"UPDATE turns SET extracted_at = ? WHERE {sql}", [now, *params]


SESSION = (
    "SELECT session_id, started_at, last_turn_at, turns, rolling_summary, evicted_messages, ended_at, summary_id "
    "FROM sessions WHERE agent_id = ? AND session_id = ?"
)
OPEN_SESSIONS = (
    "SELECT session_id FROM sessions WHERE agent_id = ? AND ended_at IS NULL AND session_id != ? "
    "AND last_turn_at <= (SELECT started_at FROM sessions WHERE agent_id = ? AND session_id = ?) "
    "ORDER BY last_turn_at"
)
SET_ROLLING_SUMMARY = (
    "UPDATE sessions SET rolling_summary = ?, evicted_messages = max(evicted_messages, ?) "
    "WHERE agent_id = ? AND session_id = ?"
)
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
    "ON CONFLICT (src_id, dst_id, relation) DO UPDATE SET confidence = max(confidence, excluded.confidence)"
)
EDGES_FROM = "SELECT dst_id, relation FROM memory_edges WHERE src_id = ? ORDER BY dst_id, relation"


def pending_vectors(agent_id: str, now: float, limit: int) -> Prepared:
    """Live memories of an agent still without a vector, oldest first: ``(seq, id, content, content_hash)``."""
    sql = (
        "SELECT seq, id, content, content_hash FROM memories WHERE agent_id = ? AND has_vector = 0 "
        "AND deleted_at IS NULL AND archived = 0 AND (expires_at IS NULL OR expires_at > ?) ORDER BY seq LIMIT ?"
    )
    return sql, [agent_id, now, limit]
