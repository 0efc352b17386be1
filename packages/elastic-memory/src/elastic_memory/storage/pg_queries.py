"""PostgreSQL's SQL, built apart from where it runs: every function returns ``(sql, params)``.

The dialect-neutral statements of :mod:`.queries` run here too, through :func:`pg`,
which turns their ``?`` placeholders into psycopg's ``%s``. What differs lives in this
module: metadata filters over ``jsonb``, keyword ranking over a ``tsvector``, and cosine
search with pgvector.

>>> pg("SELECT 1 WHERE a = ? AND b LIKE 'x%'")
"SELECT 1 WHERE a = %s AND b LIKE 'x%%'"
>>> tsquery('"dog" OR "name"')
"'dog' | 'name'"
>>> metadata_node(("color", "$eq", "red"), "m")[0]
"(CASE WHEN jsonb_typeof(m.metadata #> %s) = 'string' THEN m.metadata #>> %s END) = %s"
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..filters import Filters
from . import queries as q
from .queries import Prepared

__all__ = [
    "browse",
    "keyword_search",
    "live_filter",
    "metadata_node",
    "pg",
    "select_rows",
    "tag_counts",
    "tsquery",
    "vector_scan",
]

#: The text search configuration: English stemming, as FTS5's porter tokenizer does.
TS_CONFIG = "english"
#: ``ts_rank`` weights for labels D, C, B, A: tags (B) count half as much as content (A).
_WEIGHTS = "{0, 0, 0.5, 1}"
_TERM = re.compile(r'"((?:[^"]|"")*)"')


def pg(sql: str) -> str:
    """SQL written with ``?`` placeholders (as in :mod:`.queries`) in psycopg's ``%s`` style."""
    return sql.replace("%", "%%").replace("?", "%s")


def tsquery(match: str) -> str:
    """The ``to_tsquery`` text for an FTS5 expression of :func:`~.fts.match_expression`: an OR of its terms.

    The terms are word characters only, so quoting each makes any text a valid query.
    """
    terms = [t.replace('""', '"') for t in _TERM.findall(match)]
    return " | ".join("'" + t.replace("'", "''") + "'" for t in terms)


def _typed(value: str, operand: Any) -> str:
    """The JSON value as SQL when it has ``operand``'s type (a number or a string), else NULL."""
    if isinstance(operand, str):
        return f"(CASE WHEN jsonb_typeof({value}) = 'string' THEN {value.replace('#>', '#>>', 1)} END)"
    return f"(CASE WHEN jsonb_typeof({value}) = 'number' THEN ({value.replace('#>', '#>>', 1)})::float8 END)"


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
    path = key.split(".")
    value = f"{alias}.metadata #> %s"
    missing = f"({value} IS NULL OR jsonb_typeof({value}) = 'null')"
    if op == "$exists":
        return (f"({value}) IS {'NOT ' if operand else ''}NULL", [path])
    if op in ("$eq", "$ne"):
        negate = op == "$ne"
        if operand is None:
            return ((f"NOT {missing}" if negate else missing), [path, path])
        if isinstance(operand, bool):
            cond = f"coalesce({value} = %s::jsonb, false)"
            return ((f"NOT {cond}" if negate else cond), [path, "true" if operand else "false"])
        cond = f"{_typed(value, operand)} = %s"
        return ((f"NOT coalesce({cond}, false)" if negate else cond), [path, path, operand])
    if op in ("$gt", "$gte", "$lt", "$lte"):
        sym = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}[op]
        collate = ' COLLATE "C"' if isinstance(operand, str) else ""  # bytewise, as SQLite compares text
        return (f"{_typed(value, operand)}{collate} {sym} %s", [path, path, operand])
    if op == "$empty":
        empty = f"({missing} OR {value} = '\"\"'::jsonb OR {value} = '[]'::jsonb)"
        return ((empty if operand else f"NOT {empty}"), [path, path, path, path])
    if op in ("$contains", "$icontains"):
        return _contains(path, operand, alias, fold=op == "$icontains")
    texts = [v for v in operand if isinstance(v, str)]
    numbers = [float(v) for v in operand if isinstance(v, int | float) and not isinstance(v, bool)]
    parts: list[str] = []
    params = []
    if texts:
        parts.append(f"{_typed(value, '')} = ANY(%s::text[])")
        params += [path, path, texts]
    if numbers:
        parts.append(f"{_typed(value, 0)} = ANY(%s::float8[])")
        params += [path, path, numbers]
    for flag in sorted({v for v in operand if isinstance(v, bool)}):
        parts.append(f"coalesce({value} = %s::jsonb, false)")
        params += [path, "true" if flag else "false"]
    if any(v is None for v in operand):
        parts.append(missing)
        params += [path, path]
    cond = "(" + " OR ".join(parts) + ")" if parts else "false"
    if op == "$nin":
        return (f"NOT coalesce({cond}, false)", params)
    return (cond, params)


def _contains(path: list[str], operand: Any, alias: str, *, fold: bool) -> Prepared:
    """A list holding ``operand`` (typed, like ``$eq``), or a string holding it as a substring."""
    value = f"{alias}.metadata #> %s"
    params: list[Any] = []
    if operand is None:
        element = "jsonb_typeof(e) = 'null'"
    elif isinstance(operand, bool):
        element, params = "e = %s::jsonb", ["true" if operand else "false"]
    elif isinstance(operand, str):
        text = "(CASE WHEN jsonb_typeof(e) = 'string' THEN e #>> '{}' END)"
        element = f"lower({text}) = lower(%s)" if fold else f"{text} = %s"
        params = [operand]
    else:
        element, params = "(CASE WHEN jsonb_typeof(e) = 'number' THEN (e #>> '{}')::float8 END) = %s", [operand]
    each = f"EXISTS (SELECT 1 FROM jsonb_array_elements({value}) AS e WHERE {element})"
    sql = f"(CASE WHEN jsonb_typeof({value}) = 'array' THEN {each} ELSE false END)"
    out: list[Any] = [path, path, *params]
    if isinstance(operand, str):
        text = _typed(value, "")
        found = f"strpos(lower({text}), lower(%s)) > 0" if fold else f"strpos({text}, %s) > 0"
        sql = f"({sql} OR coalesce({found}, false))"
        out += [path, path, operand]
    return sql, out


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


def tag_counts(filters: Filters, *, now: float, prefix: str | None = None) -> Prepared:
    """:func:`.queries.tag_counts` for PostgreSQL."""
    return _pg(q.tag_counts(filters, now=now, prefix=prefix, metadata=metadata_node))


def keyword_search(match: str, filters: Filters, *, now: float, limit: int) -> Prepared:
    """``ts_rank`` over content (weight 1) and tags (0.5), length-normalised; ``(seq, relevance)`` best first."""
    where, params = live_filter(filters, now=now)
    sql = (
        f"SELECT m.seq, ts_rank('{_WEIGHTS}', m.fts, tq, 1) AS score "
        f"FROM memories AS m, to_tsquery('{TS_CONFIG}', %s) AS tq "
        f"WHERE m.fts @@ tq AND {where} ORDER BY score DESC, m.seq LIMIT %s"
    )
    return sql, [tsquery(match), *params, limit]


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
