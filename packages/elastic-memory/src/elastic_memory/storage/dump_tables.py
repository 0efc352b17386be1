"""The tables a lossless export carries besides the memories, and the SQL that reads and upserts them.

Each :class:`DumpTable` says how its rows are paged out (a unique key, in order) and how an
import finds the same row in another store (its natural key), so importing a file twice
changes nothing. Integer ids are kept when the target has them free and remapped
otherwise; columns holding another table's id (``refs``) follow the remapping. What the
engine derives (FTS tables, tag rows, keyword partitions, counters) is rebuilt by its own
triggers, never exported. SQL uses ``?`` placeholders: both backends run it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .queries import quote_ident

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
    #: Counters that an import never moves backwards (the larger value stays).
    monotonic: tuple[str, ...] = ()

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
        """The columns an import overwrites on a row it found."""
        keep = {*self.natural, *(c for c in (self.ident,) if c)}
        return tuple(c for c in self.columns if c not in keep)


_INT64 = 2**63


def check(column: str, kind: str, value: object) -> object:
    """``value`` if it fits the column's kind, else ``ValueError`` naming it.

    Kinds: ``text``, ``int``, ``real``, ``unit`` (a number from 0 to 1), ``flag`` (0 or 1), or
    choices ``a|b``; a trailing ``?`` allows null.

    >>> check("turns", "int", 3), check("ended_at", "real?", None)
    (3, None)
    """
    if value is None:
        if kind.endswith("?"):
            return None
        msg = f"{column} is null; it needs a value"
        raise ValueError(msg)
    kind = kind.rstrip("?")
    if kind == "text" or "|" in kind:
        if not isinstance(value, str):
            msg = f"{column} is a {type(value).__name__}; a string is expected"
            raise ValueError(msg)
        if "|" in kind and value not in kind.split("|"):
            msg = f"{column} is {value!r}; one of {kind.split('|')} is expected"
            raise ValueError(msg)
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        msg = f"{column} is a {type(value).__name__}; a number is expected"
        raise ValueError(msg)
    if kind in ("int", "flag"):
        if not isinstance(value, int) or not -_INT64 <= value < _INT64 or (kind == "flag" and value not in (0, 1)):
            msg = f"{column} is {value!r}; " + ("0 or 1" if kind == "flag" else "a whole number") + " is expected"
            raise ValueError(msg)
        return value
    number = float(value)
    if not math.isfinite(number) or (kind == "unit" and not 0.0 <= number <= 1.0):
        msg = (
            f"{column} is {value!r}; "
            + ("a number from 0 to 1" if kind == "unit" else "a finite number")
            + " is expected"
        )
        raise ValueError(msg)
    return number


SESSIONS = DumpTable(
    "session",
    "sessions",
    (
        "agent_id:text",
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
    monotonic=("last_turn_at", "turns", "evicted_messages"),
)
TURNS = DumpTable(
    "turn",
    "turns",
    (
        "seq:int",
        "agent_id:text",
        "session_id:text",
        "turn:int",
        "user_text:text",
        "reply_text:text",
        "created_at:real",
        "importance:real",
        "extracted_at:real?",
    ),
    order=("seq",),
    natural=("agent_id", "session_id", "turn"),
    ident="seq",
)
FACTS = DumpTable(
    "fact",
    "facts",
    (
        "seq:int",
        "agent_id:text",
        "key:text",
        "value:text",
        "category:profile|note",
        "source:user_confirmed|agent|extracted|imported",
        "origin:text",
        "confidence:unit",
        "importance:unit",
        "session_id:text?",
        "turn_seq:int?",
        "valid_from:real",
        "valid_to:real?",
        "recorded_at:real",
        "invalidated_at:real?",
        "invalidated_by:int?",
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
        "seq:int",
        "agent_id:text",
        "reason:text",
        "what:text",
        "text:text",
        "origin:text",
        "session_id:text?",
        "created_at:real",
        "turn_seq:int?",
        "payload:text?",
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
        "id:int",
        "agent_id:text",
        "key:text",
        "name:text",
        "type:text",
        "aliases:text",
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
)
ENTITY_KEYS = DumpTable(
    "entity_key",
    "entity_keys",
    (
        "agent_id:text",
        "key:text",
        "entity_id:int",
    ),
    order=("agent_id", "key", "entity_id"),
    natural=("agent_id", "key", "entity_id"),
    refs={"entity_id": "entity"},
)
RELATIONS = DumpTable(
    "relation",
    "relations",
    (
        "id:int",
        "agent_id:text",
        "src:int",
        "dst:int",
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
    refs={"src": "entity", "dst": "entity"},
)
MENTIONS = DumpTable(
    "mention",
    "entity_mentions",
    (
        "entity_id:int",
        "memory_id:text",
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


def update(t: DumpTable) -> str:
    """Overwrite a found row (binds :attr:`DumpTable.updated` values, then the id)."""
    assert t.ident is not None
    sets = ", ".join(f"{quote_ident(c)} = ?" for c in t.updated)
    return f"UPDATE {quote_ident(t.table)} SET {sets} WHERE {quote_ident(t.ident)} = ?"


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
    sets = []
    for column in t.updated:
        c, new, old = (
            quote_ident(column),
            f"excluded.{quote_ident(column)}",
            f"{quote_ident(t.table)}.{quote_ident(column)}",
        )
        sets.append(
            f"{c} = CASE WHEN {new} > {old} THEN {new} ELSE {old} END" if column in t.monotonic else f"{c} = {new}"
        )
    return sql + "UPDATE SET " + ", ".join(sets)


# Facts: one current fact per (agent, key) (the ``facts_current`` index).
CURRENT_FACT = (
    "SELECT seq, recorded_at, valid_from FROM facts WHERE agent_id = ? AND key = ? AND invalidated_at IS NULL"
)
CLOSE_FACT = "UPDATE facts SET invalidated_at = ?, valid_to = coalesce(valid_to, ?), invalidated_by = ? WHERE seq = ?"
SET_INVALIDATED_BY = "UPDATE facts SET invalidated_by = ? WHERE seq = ?"


def pg_sequence_reset(t: DumpTable) -> str:
    """PostgreSQL: move the id column's identity sequence past the largest id (rows came with their ids)."""
    assert t.ident is not None
    table, ident = quote_ident(t.table), quote_ident(t.ident)
    return f"SELECT setval(pg_get_serial_sequence('{table}', '{t.ident}'), (SELECT max({ident}) FROM {table}))"
