"""The tables a lossless export carries besides the memories, and the SQL that reads and upserts them.

Each :class:`DumpTable` says how its rows are paged out (a unique key, in order) and how an
import finds the same row in another store (its natural key), so importing a file twice
changes nothing. Integer ids are kept when the target has them free and remapped
otherwise; columns holding another table's id (``refs``) follow the remapping. What the
engine derives (FTS tables, tag rows, keyword partitions, counters) is rebuilt by its own
triggers, never exported. SQL uses ``?`` placeholders: both backends run it.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

from .._validate import check_fact_key, check_id
from ..storage.queries import quote_ident
from ..users import check_user, split_owner

#: Rows read per page by an export.
PAGE = 1000


@dataclass(frozen=True)
class DumpTable:
    """One table of the export: its record name, columns and their kinds, keys and references."""

    #: The ``"record"`` value of its lines.
    record: str
    table: str
    #: Every column exported as ``"name:kind"``, in order (see :func:`check`).
    spec: tuple[str, ...]
    #: A unique key the export pages by, in order.
    order: tuple[str, ...]
    #: The columns that find the same row in another store.
    natural: tuple[str, ...]
    #: The integer id column (kept when free in the target, remapped otherwise), or ``None``.
    ident: str | None = None
    #: Columns holding the id of another record type: ``column -> record``.
    refs: dict[str, str] = field(default_factory=dict)
    #: How an import merges a column into a row it found, when not by overwriting it:
    #: ``"max"`` / ``"min"`` keep the larger / smaller value (counters never go back),
    #: ``"keep"`` keeps the target's value unless it is null, ``"fixed"`` never changes it.
    merge: dict[str, str] = field(default_factory=dict)

    @property
    def columns(self) -> tuple[str, ...]:
        """The exported columns, in order."""
        return tuple(item.partition(":")[0] for item in self.spec)

    @property
    def kinds(self) -> dict[str, str]:
        """Each column's kind (see :func:`check`)."""
        return {name: kind for name, _, kind in (item.partition(":") for item in self.spec)}

    @property
    def updated(self) -> tuple[str, ...]:
        """The columns an import writes on a row it found (see :attr:`merge`)."""
        keep = {*self.natural, *(c for c in (self.ident,) if c)}
        return tuple(c for c in self.columns if c not in keep and self.merge.get(c) != "fixed")


def check(column: str, kind: str, value: object) -> object:
    """``value`` if it fits the column's kind, else ``ValueError`` naming it.

    Kinds: ``text`` (valid Unicode), ``agent`` (an id: 1 to 256 printable characters),
    ``key`` (a fact key), ``json-list`` (JSON text of a list of strings), ``json-object``
    (JSON text of an object), ``int``, ``id`` (a row id: 1 to 2**53), ``real``, ``unit`` (a
    number from 0 to 1), ``flag`` (0 or 1), or choices ``a|b``; a trailing ``?`` allows null.

    >>> check("turns", "int", 3), check("ended_at", "real?", None), check("aliases", "json-list", '["Bo"]')
    (3, None, '["Bo"]')
    """
    if value is None:
        if kind.endswith("?"):
            return None
        msg = f"{column} is null; it needs a value"
        raise ValueError(msg)
    kind = kind.rstrip("?")
    if kind in _TEXT_KINDS or "|" in kind:
        return _text(column, kind, value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        msg = f"{column} is a {type(value).__name__}; a number is expected"
        raise ValueError(msg)
    if kind in ("int", "flag", "id"):
        low, high = (1, MAX_ID) if kind == "id" else (0, 1) if kind == "flag" else (-_INT64, _INT64 - 1)
        if not isinstance(value, int) or not low <= value <= high:
            msg = f"{column} is {value!r}; a whole number from {low} to {high} is expected"
            raise ValueError(msg)
        return value
    number = float(value)
    if not math.isfinite(number) or (kind == "unit" and not 0.0 <= number <= 1.0):
        wanted = "a number from 0 to 1" if kind == "unit" else "a finite number"
        msg = f"{column} is {value!r}; {wanted} is expected"
        raise ValueError(msg)
    return number


#: The largest row id an import keeps: far below SQLite's and PostgreSQL's limit, so the
#: store's own ids go on after it.
MAX_ID = 2**53
_INT64 = 2**63
_TEXT_KINDS = frozenset({"text", "agent", "key", "json-list", "json-object"})


def _text(column: str, kind: str, value: object) -> str:
    if not isinstance(value, str):
        msg = f"{column} is a {type(value).__name__}; a string is expected"
        raise ValueError(msg)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        msg = f"{column} holds text that is not valid Unicode (a lone surrogate at {e.start})"
        raise ValueError(msg) from e
    if "|" in kind and value not in kind.split("|"):
        msg = f"{column} is {value!r}; one of {kind.split('|')} is expected"
        raise ValueError(msg)
    if kind == "agent":  # an owner key: the agent, or the agent and one of its users (see elastic_memory.users)
        agent, user = split_owner(value)
        check_id(agent, column)
        check_user(user)
    elif kind == "key":
        check_fact_key(value, ())
    elif kind.startswith("json-"):
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError) as e:
            msg = f"{column} is not JSON text ({e})"
            raise ValueError(msg) from e
        ok = (
            isinstance(parsed, list) and all(isinstance(x, str) for x in parsed)
            if kind == "json-list"
            else isinstance(parsed, dict)
        )
        if not ok:
            msg = f"{column} is not JSON text of " + ("a list of strings" if kind == "json-list" else "an object")
            raise ValueError(msg)
    return value


SESSIONS = DumpTable(
    "session",
    "sessions",
    (
        "agent_id:agent",
        "session_id:text",
        "started_at:real",
        "last_turn_at:real",
        "turns:int",
        "rolling_summary:text?",
        "evicted_messages:int",
        "ended_at:real?",
        "summary_id:text?",
    ),
    order=("agent_id", "session_id"),
    natural=("agent_id", "session_id"),
    merge={
        "started_at": "min",
        "last_turn_at": "max",
        "turns": "max",
        "evicted_messages": "max",
        "rolling_summary": "keep",
        "ended_at": "keep",
        "summary_id": "keep",
    },
)
TURNS = DumpTable(
    "turn",
    "turns",
    (
        "seq:id",
        "agent_id:agent",
        "session_id:text",
        "turn:int",
        "user_text:text",
        "reply_text:text",
        "created_at:real",
        "importance:real",
        "extracted_at:real?",
    ),
    order=("seq",),
    # A turn is its text at its time: two stores' turn 1 of session "default" are two turns.
    natural=("agent_id", "session_id", "created_at", "user_text"),
    ident="seq",
    merge={"turn": "fixed"},
)
FACTS = DumpTable(
    "fact",
    "facts",
    (
        "seq:id",
        "agent_id:agent",
        "key:key",
        "value:text",
        "category:profile|note",
        "source:user_confirmed|agent|extracted|imported",
        "origin:text",
        "confidence:unit",
        "importance:unit",
        "session_id:text?",
        "turn_seq:id?",
        "valid_from:real",
        "valid_to:real?",
        "recorded_at:real",
        "invalidated_at:real?",
        "invalidated_by:id?",
        "forgotten:flag",
        "archived:flag",
        "accessed_at:real",
        "access_count:int",
    ),
    order=("seq",),
    natural=("agent_id", "key", "recorded_at", "value"),
    ident="seq",
    refs={"turn_seq": "turn", "invalidated_by": "fact"},
)
QUARANTINE = DumpTable(
    "quarantine",
    "quarantine",
    (
        "seq:id",
        "agent_id:agent",
        "reason:text",
        "what:text",
        "text:text",
        "origin:text",
        "session_id:text?",
        "created_at:real",
        "turn_seq:id?",
        "payload:json-object?",
    ),
    order=("seq",),
    natural=("agent_id", "created_at", "reason", "text"),
    ident="seq",
    refs={"turn_seq": "turn"},
)
ENTITIES = DumpTable(
    "entity",
    "entities",
    (
        "id:id",
        "agent_id:agent",
        "key:text",
        "name:text",
        "type:text",
        "aliases:json-list",
        "confidence:unit",
        "mention_count:int",
        "cluster_id:int?",
        "cluster_label:text?",
        "created_at:real",
        "reinforced_at:real",
    ),
    order=("id",),
    natural=("agent_id", "key"),
    ident="id",
    merge={"mention_count": "max", "reinforced_at": "max", "created_at": "min"},
)
ENTITY_KEYS = DumpTable(
    "entity_key",
    "entity_keys",
    (
        "agent_id:agent",
        "key:text",
        "entity_id:id",
    ),
    order=("agent_id", "key", "entity_id"),
    natural=("agent_id", "key", "entity_id"),
    refs={"entity_id": "entity"},
)
RELATIONS = DumpTable(
    "relation",
    "relations",
    (
        "id:id",
        "agent_id:agent",
        "src:id",
        "dst:id",
        "type:text",
        "confidence:unit",
        "mention_count:int",
        "provenance:text",
        "created_at:real",
        "reinforced_at:real",
    ),
    order=("id",),
    natural=("src", "dst", "type"),
    ident="id",
    merge={"mention_count": "max", "reinforced_at": "max", "created_at": "min"},
    refs={"src": "entity", "dst": "entity"},
)
MENTIONS = DumpTable(
    "mention",
    "entity_mentions",
    (
        "entity_id:id",
        "memory_id:agent",
    ),
    order=("entity_id", "memory_id"),
    natural=("entity_id", "memory_id"),
    refs={"entity_id": "entity"},
)
EDGES = DumpTable(
    "edge",
    "memory_edges",
    (
        "src_id:text",
        "dst_id:text",
        "relation:text",
        "source:text",
        "confidence:unit",
        "created_at:real",
    ),
    order=("src_id", "dst_id", "relation"),
    natural=("src_id", "dst_id", "relation"),
)

#: In export order: a table's references point at tables before it (facts' own
#: ``invalidated_by`` is fixed up at the end of their section).
TABLES: tuple[DumpTable, ...] = (SESSIONS, TURNS, FACTS, QUARANTINE, ENTITIES, ENTITY_KEYS, RELATIONS, MENTIONS, EDGES)
BY_RECORD = {t.record: t for t in TABLES}


def _names(columns: tuple[str, ...]) -> str:
    return ", ".join(quote_ident(c) for c in columns)


def _match(columns: tuple[str, ...]) -> str:
    return " AND ".join(f"{quote_ident(c)} = ?" for c in columns)


def page(t: DumpTable, *, first: bool) -> str:
    """One page of rows in key order: binds the last row's key (unless ``first``), then the limit."""
    keys = _names(t.order)
    after = "" if first else f" WHERE ({keys}) > ({', '.join('?' * len(t.order))})"
    return f"SELECT {_names(t.columns)} FROM {quote_ident(t.table)}{after} ORDER BY {keys} LIMIT ?"


def find(t: DumpTable) -> str:
    """The id of the row with the same natural key (binds the natural key's values)."""
    assert t.ident is not None
    ident = quote_ident(t.ident)
    return f"SELECT {ident} FROM {quote_ident(t.table)} WHERE {_match(t.natural)} ORDER BY {ident} LIMIT 1"


def taken(t: DumpTable) -> str:
    """A row if the id is in use (binds the id)."""
    assert t.ident is not None
    return f"SELECT 1 FROM {quote_ident(t.table)} WHERE {quote_ident(t.ident)} = ?"


def _merged(t: DumpTable, column: str, new: str) -> str:
    """The value a column takes on a row found: ``new`` (the file's), or as :attr:`DumpTable.merge` says."""
    old = f"{quote_ident(t.table)}.{quote_ident(column)}"
    rule = t.merge.get(column)
    if rule == "max":
        return f"CASE WHEN {new} > {old} THEN {new} ELSE {old} END"
    if rule == "min":
        return f"CASE WHEN {new} < {old} THEN {new} ELSE {old} END"
    if rule == "keep":
        return f"coalesce({old}, {new})"
    return new


def update(t: DumpTable) -> tuple[str, tuple[str, ...]]:
    """Merge the file's row into a found one: the SQL, and the columns whose values it binds in order (then the id)."""
    assert t.ident is not None
    sets = ", ".join(f"{quote_ident(c)} = {_merged(t, c, '?')}" for c in t.updated)
    binds = tuple(c for c in t.updated for _ in range(2 if t.merge.get(c) in ("max", "min") else 1))
    return f"UPDATE {quote_ident(t.table)} SET {sets} WHERE {quote_ident(t.ident)} = ?", binds


def insert(t: DumpTable, *, with_ident: bool) -> str:
    """A new row, with the exported id or a new one (returned); binds the columns in order (id first if kept)."""
    columns = t.columns if with_ident or t.ident is None else tuple(c for c in t.columns if c != t.ident)
    values = ", ".join("?" * len(columns))
    sql = f"INSERT INTO {quote_ident(t.table)} ({_names(columns)}) VALUES ({values})"
    return sql if t.ident is None or with_ident else f"{sql} RETURNING {quote_ident(t.ident)}"


def upsert(t: DumpTable) -> str:
    """Insert a row of a table without an id, or overwrite the one with the same key (counters only grow)."""
    sql = f"INSERT INTO {quote_ident(t.table)} ({_names(t.columns)}) VALUES ({', '.join('?' * len(t.columns))})"
    sql += f" ON CONFLICT ({_names(t.natural)}) DO "
    if not t.updated:
        return sql + "NOTHING"
    sets = [f"{quote_ident(c)} = {_merged(t, c, f'excluded.{quote_ident(c)}')}" for c in t.updated]
    return sql + "UPDATE SET " + ", ".join(sets)


# Facts: one current fact per (agent, key) (the ``facts_current`` index).
CURRENT_FACT = (
    "SELECT seq, recorded_at, valid_from FROM facts WHERE agent_id = ? AND key = ? AND invalidated_at IS NULL"
)
CLOSE_FACT = "UPDATE facts SET invalidated_at = ?, valid_to = coalesce(valid_to, ?), invalidated_by = ? WHERE seq = ?"
SET_INVALIDATED_BY = "UPDATE facts SET invalidated_by = ? WHERE seq = ?"

# Turns: a turn of another conversation under a number the target's session has is added after its last.
TURN_TAKEN = "SELECT 1 FROM turns WHERE agent_id = ? AND session_id = ? AND turn = ? LIMIT 1"
NEXT_TURN = "SELECT coalesce(max(turn), 0) + 1 FROM turns WHERE agent_id = ? AND session_id = ?"
SESSION_AT_LEAST = (
    "UPDATE sessions SET turns = CASE WHEN turns < ? THEN ? ELSE turns END WHERE agent_id = ? AND session_id = ?"
)


def pg_sequence_reset(t: DumpTable) -> tuple[str, list[str]]:
    """PostgreSQL: move the id column's identity sequence past the largest id (rows came with their ids)."""
    assert t.ident is not None
    table, ident = quote_ident(t.table), quote_ident(t.ident)
    return f"SELECT setval(pg_get_serial_sequence(?, ?), (SELECT max({ident}) FROM {table}))", [table, t.ident]
