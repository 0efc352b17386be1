"""PostgreSQL's SQL, built apart from where it runs: every function returns ``(sql, params)``.

The dialect-neutral statements of :mod:`.queries` run here too, through :func:`pg`,
which turns their ``?`` placeholders into psycopg's ``%s``. What differs lives in this
module: metadata filters over ``jsonb``, keyword ranking over a ``tsvector``, and cosine
search with pgvector.

>>> pg("SELECT 1 WHERE a = ? AND b LIKE 'x%'")
"SELECT 1 WHERE a = %s AND b LIKE 'x%%'"
>>> tsquery('"dog" OR "name"')
"'dog' | 'name'"
>>> metadata_node(("n", "$gt", 2), "m")[0]
"(CASE WHEN jsonb_typeof((m.metadata -> U&'n')) = 'number' THEN ((m.metadata ->> U&'n'))::numeric END) > %s::numeric"
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from ...filters import Filters
from .. import queries as q
from ..queries import Prepared
from .text import escape

_NO_FILTERS = Filters()

__all__ = [
    "browse",
    "keyword_search",
    "live_filter",
    "metadata_node",
    "page",
    "pg",
    "select_rows",
    "tag_counts",
    "translate",
    "tsquery",
    "unembedded",
    "vector_ranking",
    "vector_scan",
]

#: The text search configuration: English stemming, as FTS5's porter tokenizer does.
TS_CONFIG = "english"
#: The ``ts_rank`` whose relevance is 0.5 (a good match ranks about 0.1 to 0.3).
TS_RANK_HALF = 0.1
#: ``ts_rank`` weights for labels D, C, B, A: tags (B) count half as much as content (A).
_WEIGHTS = "{0, 0, 0.5, 1}"
_TERM = re.compile(r'"((?:[^"]|"")*)"')


def pg(sql: str) -> str:
    """SQL written with ``?`` placeholders (as in :mod:`.queries`) in psycopg's ``%s`` style."""
    return sql.replace("%", "%%").replace("?", "%s")


def translate(prepared: Prepared) -> Prepared:
    """A statement of :mod:`.queries` (``?`` placeholders) with its parameters, in psycopg's ``%s`` style."""
    sql, params = prepared
    return pg(sql), params


def tsquery(match: str) -> str:
    """The ``to_tsquery`` text for an FTS5 expression of :func:`~.fts.match_expression`: an OR of its terms.

    The terms are word characters only, so quoting each makes any text a valid query.
    """
    terms = [t.replace('""', '"') for t in _TERM.findall(match)]
    return " | ".join("'" + t.replace("'", "''") + "'" for t in terms)


def _literal(key: str) -> str:
    r"""A JSON object key as an SQL string constant: letters and digits as they are, the rest as escapes.

    ``U&'...'`` escapes leave no quote, ``?`` or ``%`` in the SQL, so :func:`pg` cannot
    mistake a key for a placeholder. The key is escaped as stored (see :mod:`.pg_text`).

    >>> _literal("what?"), _literal("it's 50%")
    ("U&'what\\003F'", "U&'it\\0027s\\002050\\0025'")
    """
    out = []
    for ch in escape(key):
        if ch.isascii() and (ch.isalnum() or ch == "_"):
            out.append(ch)
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\{ord(ch):04X}")
        else:
            out.append(f"\\+{ord(ch):06X}")
    return "U&'" + "".join(out) + "'"


def _at(alias: str, key: str) -> tuple[str, str]:
    """The value at a dotted ``key`` of the metadata: as ``jsonb`` and as text.

    ``->`` with a text key reads object fields only, as SQLite's ``$."a"."0"`` does (``#>``
    would take ``0`` as an array index).
    """
    parts = [_literal(p) for p in key.split(".")]
    head = "".join(f" -> {p}" for p in parts[:-1])
    return f"({alias}.metadata{head} -> {parts[-1]})", f"({alias}.metadata{head} ->> {parts[-1]})"


def _typed(value: str, text: str, operand: Any) -> str:
    """The JSON value as SQL when it has ``operand``'s type (a number or a string), else NULL.

    Numbers compare as ``numeric``: exact for any integer, as SQLite compares them.
    """
    if isinstance(operand, str):
        return f"(CASE WHEN jsonb_typeof({value}) = 'string' THEN {text} END)"
    return f"(CASE WHEN jsonb_typeof({value}) = 'number' THEN ({text})::numeric END)"


def _bound(value: Any) -> Any:
    """A metadata operand as bound: numbers as exact decimals (a float by its shortest repr), text as it is."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    return Decimal(value) if isinstance(value, int) else Decimal(repr(value))


def _fold(sql: str) -> str:
    """``lower`` of ASCII letters only (SQLite's ``lower``), whatever the server's locale."""
    return f'lower(({sql}) COLLATE "C")'


def metadata_node(condition: tuple[str, str, Any], alias: str) -> Prepared:
    """One parsed metadata condition over the ``jsonb`` column, as a boolean (the semantics of SQLite's)."""
    key, op, operand = condition
    if op == "$not":
        sql, params = _clause(operand, alias)
        return f"NOT {sql}", params
    if op in ("$and", "$or"):
        compiled = [_clause(branch, alias) for branch in operand]
        joiner = " AND " if op == "$and" else " OR "
        return "(" + joiner.join(sql for sql, _ in compiled) + ")", [p for _, ps in compiled for p in ps]
    value, text = _at(alias, key)
    missing = f"({value} IS NULL OR jsonb_typeof({value}) = 'null')"
    number = "%s::numeric"  # bound as a Decimal of the float's repr: exact, as SQLite compares
    if op == "$exists":
        return (f"{value} IS {'NOT ' if operand else ''}NULL", [])
    if op in ("$eq", "$ne", "$in", "$nin"):
        # The value, or a list holding it (the document-store convention); $ne/$nin: neither.
        test = _equals if op in ("$eq", "$ne") else _one_of
        (scalar, params), (item, more) = test(value, text, operand), test(*_ITEM, operand)
        cond = f"({scalar} OR {_holds(value, item)})"
        return ((f"NOT {cond}" if op in ("$ne", "$nin") else cond), params + more)
    if op == "$between":
        (low, lp), (high, hp) = (
            metadata_node((key, "$gte", operand[0]), alias),
            metadata_node((key, "$lte", operand[1]), alias),
        )
        return f"({low} AND {high})", lp + hp
    if op in ("$like", "$ilike"):
        # $ilike folds ASCII letters only, as SQLite's LIKE (and $icontains) do.
        def like(s: str) -> str:
            return f"{s} LIKE %s" if op == "$like" else f"{_fold(s)} LIKE {_fold('%s')}"

        string, item = _typed(value, text, ""), _typed(*_ITEM, "")
        return f"(coalesce({like(string)}, false) OR {_holds(value, like(item))})", [operand, operand]
    if op in ("$gt", "$gte", "$lt", "$lte"):
        sym = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}[op]
        if isinstance(operand, str):  # bytewise, as SQLite compares text
            return (f'{_typed(value, text, operand)} COLLATE "C" {sym} %s', [operand])
        return (f"{_typed(value, text, operand)} {sym} {number}", [_bound(operand)])
    if op == "$empty":
        empty = f"({missing} OR {value} = '\"\"'::jsonb OR {value} = '[]'::jsonb)"
        return ((empty if operand else f"NOT {empty}"), [])
    return _contains(value, text, operand, fold=op == "$icontains")


#: One item ``e`` of a ``jsonb`` list, as ``jsonb`` and as text (the ``value, text`` of :func:`_at`).
_ITEM = ("e", "(e #>> '{}')")


def _holds(value: str, element: str) -> str:
    """``value`` is a list one of whose items ``e`` passes ``element``."""
    each = f"EXISTS (SELECT 1 FROM jsonb_array_elements({value}) AS e WHERE {element})"
    return f"(CASE WHEN jsonb_typeof({value}) = 'array' THEN {each} ELSE false END)"


def _equals(value: str, text: str, operand: Any) -> Prepared:
    """The JSON value equals ``operand``, typed (``None``: missing or ``null``); never NULL."""
    if operand is None:
        return f"({value} IS NULL OR jsonb_typeof({value}) = 'null')", []
    if isinstance(operand, bool):
        return f"coalesce({value} = %s::jsonb, false)", ["true" if operand else "false"]
    bound = "%s" if isinstance(operand, str) else "%s::numeric"
    return f"coalesce({_typed(value, text, operand)} = {bound}, false)", [_bound(operand)]


def _one_of(value: str, text: str, operand: Sequence[Any]) -> Prepared:
    """The JSON value equals one of ``operand`` (as :func:`_equals`); ``false`` for none."""
    texts = [v for v in operand if isinstance(v, str)]
    numbers = [_bound(v) for v in operand if isinstance(v, int | float) and not isinstance(v, bool)]
    parts: list[str] = []
    params: list[Any] = []
    if texts:
        parts.append(f"coalesce({_typed(value, text, '')} = ANY(%s::text[]), false)")
        params.append(texts)
    if numbers:
        parts.append(f"coalesce({_typed(value, text, 0)} = ANY(%s::numeric[]), false)")
        params.append(numbers)
    for flag in sorted({v for v in operand if isinstance(v, bool)}):
        sql, p = _equals(value, text, flag)
        parts.append(sql)
        params += p
    if any(v is None for v in operand):
        parts.append(_equals(value, text, None)[0])
    return ("(" + " OR ".join(parts) + ")" if parts else "false"), params


def _contains(value: str, text: str, operand: Any, *, fold: bool) -> Prepared:
    """A list holding ``operand`` (typed, like ``$eq``), or a string holding it as a substring."""
    if fold and isinstance(operand, str):
        element, params = f"{_fold(_typed(*_ITEM, ''))} = {_fold('%s')}", [operand]
    else:
        element, params = _equals(*_ITEM, operand)
    sql = _holds(value, element)
    if isinstance(operand, str):
        string = _typed(value, text, "")
        found = f"strpos({_fold(string)}, {_fold('%s')}) > 0" if fold else f"strpos({string}, %s) > 0"
        sql = f"({sql} OR coalesce({found}, false))"
        params = [*params, operand]
    return sql, params


def _clause(conditions: Sequence[tuple[str, str, Any]], alias: str) -> Prepared:
    parts: list[str] = []
    params: list[Any] = []
    for condition in conditions:
        sql, p = metadata_node(condition, alias)
        parts.append(f"coalesce({sql}, false)")
        params += p
    return "(" + " AND ".join(parts) + ")", params


def _pg(prepared: Prepared) -> Prepared:
    """A :mod:`.queries` statement whose metadata conditions are already ``%s``-style (the rest is ``?``)."""
    sql, params = prepared
    marker = "\x00"
    return pg(sql.replace("%s", marker)).replace(marker, "%s"), params


def live_filter(filters: Filters, *, now: float, alias: str = "m") -> Prepared:
    """:func:`.queries.live_filter` for PostgreSQL."""
    return _pg(q.live_filter(filters, now=now, alias=alias, metadata=metadata_node))


def select_rows(*, by: str, values: Sequence[Any], filters: Filters | None = None, now: float = 0.0) -> Prepared:
    """:func:`.queries.select_rows` for PostgreSQL."""
    return _pg(q.select_rows(by=by, values=values, filters=filters, now=now, metadata=metadata_node))


def browse(filters: Filters, *, now: float, limit: int) -> Prepared:
    """:func:`.queries.browse` for PostgreSQL."""
    return _pg(q.browse(filters, now=now, limit=limit, metadata=metadata_node))


def page(filters: Filters, *, state: str, after: int, limit: int, now: float) -> Prepared:
    """:func:`.queries.page` for PostgreSQL."""
    return _pg(q.page(filters, state=state, after=after, limit=limit, now=now, metadata=metadata_node))


def tag_counts(filters: Filters, *, now: float, prefix: str | None = None) -> Prepared:
    """:func:`.queries.tag_counts` for PostgreSQL."""
    return _pg(q.tag_counts(filters, now=now, prefix=prefix, metadata=metadata_node))


def unembedded(*, now: float) -> Prepared:
    """:func:`.queries.unembedded` for PostgreSQL."""
    return _pg(q.unembedded(now=now))


def keyword_search(match: str, filters: Filters, *, now: float, limit: int) -> Prepared:
    """``ts_rank`` over content (weight 1) and tags (0.5), length-normalised; ``(seq, relevance)`` best first."""
    where, params = live_filter(filters, now=now)
    sql = (
        f"SELECT m.seq, ts_rank('{_WEIGHTS}', m.fts, tq, 1) AS score "
        f"FROM memories AS m, to_tsquery('{TS_CONFIG}', %s) AS tq "
        f"WHERE m.fts @@ tq AND {where} ORDER BY score DESC, m.seq LIMIT %s"
    )
    return sql, [tsquery(match), *params, limit]


def vector_ranking(vector: Any, *, limit: int, exact: bool, now: float) -> Prepared:
    """Cosine over every stored vector, exact or in the HNSW order; each of the top ``limit`` rows says if it is live.

    The vectors are ranked alone (no row joined before the limit); only the top rows are
    joined to their memories, in the same statement: ``(seq, score, live)``.
    """
    order = "score DESC, seq" if exact else "embedding <=> %s"
    live, params = live_filter(_NO_FILTERS, now=now)
    sql = (
        f"SELECT r.seq, r.score, {live} FROM (SELECT seq, 1 - (embedding <=> %s) AS score FROM memory_vectors "
        f"ORDER BY {order} LIMIT %s) AS r JOIN memories AS m ON m.seq = r.seq"
    )
    return sql, [*params, vector, *([] if exact else [vector]), limit]


def vector_scan(vector: Any, filters: Filters, *, now: float, limit: int, exact: bool) -> Prepared:
    """Cosine over the live rows matching ``filters``: exact, or in the HNSW index's order.

    Ordering by the score itself (not by the distance operator) keeps the planner off an
    HNSW index, so the exact scan stays exact when one exists.
    """
    where, params = live_filter(filters, now=now)
    order = "score DESC, m.seq" if exact else "v.embedding <=> %s"
    sql = (
        "SELECT m.seq, 1 - (v.embedding <=> %s) AS score "
        "FROM memory_vectors AS v JOIN memories AS m ON m.seq = v.seq "
        f"WHERE {where} ORDER BY {order} LIMIT %s"
    )
    return sql, [vector, *params, *([] if exact else [vector]), limit]
