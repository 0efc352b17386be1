"""SQL, built apart from where it runs: every function returns ``(sql, params)``.

Nothing here touches a connection. Identifiers are constants or pass through
:func:`quote_ident`; every value is a bound parameter.

>>> sql, params = live_filter(Filters.parse({"type": "semantic"}), now=5.0)
>>> sql
'm."deleted_at" IS NULL AND m."archived" = 0 AND (m."expires_at" IS NULL OR m."expires_at" > ?) AND m."type" IN (?)'
>>> params
[5.0, 'semantic']
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from ..filters import Filters

__all__ = [
    "COLUMNS",
    "Prepared",
    "bm25_expression",
    "browse",
    "keyword_search",
    "live_filter",
    "page",
    "quote_ident",
    "select_rows",
    "tag_counts",
    "unembedded",
    "vec_create",
    "vec_knn",
    "vec_scan",
]

Prepared = tuple[str, list[Any]]
#: Compiles one parsed metadata condition ``(key, op, operand)`` to SQL (one per dialect).
MetadataCompiler = Callable[[tuple[str, str, Any], str], Prepared]

#: The columns of ``memories`` in the order :func:`select_rows` returns them.
COLUMNS = (
    "seq",
    "id",
    "agent_id",
    "scope",
    "pool",
    "type",
    "content",
    "content_hash",
    "importance",
    "confidence",
    "source",
    "pinned",
    "tags",
    "metadata",
    "session_id",
    "created_at",
    "updated_at",
    "accessed_at",
    "access_count",
    "retention_strength",
    "archived",
    "deleted_at",
    "expires_at",
    "has_vector",
    "kind",
)
#: Columns a caller writes (everything but ``seq``).
WRITABLE = COLUMNS[1:]
#: Attributes kept beside each vector so the vector leg can filter during the scan.
VECTOR_ATTRS = ("agent_id", "scope", "type")
#: Parameters per statement stay below SQLite's historical limit of 999.
MAX_PARAMS = 900
#: The FTS5 table of every row (one agent's rows have their own: ``partition_queries``).
GLOBAL_FTS = "memories_fts"
#: The FTS5 tables' columns, and their BM25 weights (a word in the tags counts half).
FTS_COLUMNS = ("content", "tags")
BM25_WEIGHTS = (1.0, 0.5)
#: The expression SQLite's ``memories_hash`` index is on (migration v5), spelt as there.
HASH_PREFIX = "substr(content_hash, 1, 16)"


def quote_ident(name: str) -> str:
    """Quote an SQL identifier: ``quote_ident('a"b') == '"a""b"'``."""
    return '"' + name.replace('"', '""') + '"'


def columns(alias: str = "m") -> str:
    """Every column of :data:`COLUMNS`, qualified by ``alias``."""
    return ", ".join(f"{alias}.{quote_ident(c)}" for c in COLUMNS)


def in_list(column: str, values: Sequence[Any]) -> Prepared:
    """``column IN (?, ...)`` with its parameters."""
    return f"{column} IN ({', '.join('?' * len(values))})", list(values)


def _json_path(key: str) -> str:
    return "$." + ".".join(f'"{part}"' for part in key.split("."))


def _metadata_condition(key: str, op: str, operand: Any, alias: str) -> Prepared:
    path = _json_path(key)
    value = f'json_extract({alias}."metadata", ?)'
    kind = f'json_type({alias}."metadata", ?)'
    if op == "$exists":
        return (f"{kind} IS {'NOT ' if operand else ''}NULL", [path])
    if op in ("$eq", "$ne"):
        # The value, or a list holding it (the document-store convention); $ne: neither.
        scalar: Prepared
        if operand is None:
            scalar = f"{value} IS NULL", [path]
        elif isinstance(operand, bool):
            scalar = f"coalesce({kind} = ?, 0)", [path, "true" if operand else "false"]
        else:
            typed = f"({kind} IN ('integer', 'real'))" if not isinstance(operand, str) else f"({kind} = 'text')"
            scalar = f"({typed} AND {value} = ?)", [path, path, operand]
        listed, more = _holds(path, *_element(operand), alias)
        cond = f"({scalar[0]} OR {listed})"
        return ((f"NOT coalesce({cond}, 0)" if op == "$ne" else cond), scalar[1] + more)
    if op == "$between":
        (low, lp), (high, hp) = (
            _metadata_condition(key, "$gte", operand[0], alias),
            _metadata_condition(key, "$lte", operand[1], alias),
        )
        return f"({low} AND {high})", lp + hp
    if op in ("$like", "$ilike"):
        # Case-sensitive LIKE as GLOB; $ilike is SQLite's LIKE, which folds ASCII letters only.
        test, pattern = ("GLOB ?", _glob(operand)) if op == "$like" else ("LIKE ? ESCAPE '\\'", operand)
        listed, more = _holds(path, f"e.type = 'text' AND e.value {test}", [pattern], alias)
        return f"(({kind} = 'text' AND {value} {test}) OR {listed})", [path, path, pattern, *more]
    if op in ("$gt", "$gte", "$lt", "$lte"):
        sym = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}[op]
        typed = f"({kind} IN ('integer', 'real'))" if not isinstance(operand, str) else f"({kind} = 'text')"
        return (f"({typed} AND {value} {sym} ?)", [path, path, operand])
    if op == "$empty":
        empty = (
            f"({kind} IS NULL OR {kind} = 'null' OR ({kind} = 'text' AND {value} = '') "
            f"OR ({kind} = 'array' AND json_array_length({alias}.\"metadata\", ?) = 0))"
        )
        return ((empty if operand else f"NOT {empty}"), [path, path, path, path, path, path])
    if op in ("$contains", "$icontains"):
        return _contains(path, operand, alias, fold=op == "$icontains")
    # $in / $nin: each value matches like $eq (typed, or a list holding it); None matches a missing or null key.
    texts = [v for v in operand if isinstance(v, str)]
    numbers = [v for v in operand if isinstance(v, int | float) and not isinstance(v, bool)]
    parts: list[str] = []
    params: list[Any] = []
    items: list[str] = []  # the same tests on the items of a list
    item_params: list[Any] = []
    for group, types in ((texts, "('text')"), (numbers, "('integer', 'real')")):
        if group:
            marks = ", ".join("?" * len(group))
            parts.append(f"({kind} IN {types} AND {value} IN ({marks}))")
            params += [path, path, *group]
            items.append(f"(e.type IN {types} AND e.value IN ({marks}))")
            item_params += group
    for flag in sorted({v for v in operand if isinstance(v, bool)}):
        parts.append(f"{kind} = ?")
        params += [path, "true" if flag else "false"]
        items.append(f"e.type = '{'true' if flag else 'false'}'")
    if any(v is None for v in operand):
        parts.append(f"{value} IS NULL")
        params.append(path)
        items.append("e.type = 'null'")
    if items:
        listed, more = _holds(path, " OR ".join(items), item_params, alias)
        parts.append(listed)
        params += more
    cond = "(" + " OR ".join(parts) + ")" if parts else "0"
    if op == "$nin":
        return (f"NOT coalesce({cond}, 0)", params)
    return (cond, params)


def _element(operand: Any, *, fold: bool = False) -> Prepared:
    """The test of one ``json_each`` item ``e`` against a scalar (typed, like ``$eq``); ``fold``: ASCII case too."""
    if operand is None:
        return "e.type = 'null'", []
    if isinstance(operand, bool):
        return "e.type = ?", ["true" if operand else "false"]
    if isinstance(operand, str):
        return "e.type = 'text' AND " + ("lower(e.value) = lower(?)" if fold else "e.value = ?"), [operand]
    return "e.type IN ('integer', 'real') AND e.value = ?", [operand]


def _holds(path: str, element: str, params: list[Any], alias: str) -> Prepared:
    """A list value at ``path`` one of whose items passes ``element`` (an SQL test of ``e``)."""
    kind = f'json_type({alias}."metadata", ?)'
    each = f'SELECT 1 FROM json_each({alias}."metadata", ?) AS e WHERE {element}'
    return f"({kind} = 'array' AND EXISTS ({each}))", [path, path, *params]


def _glob(pattern: str) -> str:
    r"""A LIKE pattern (``%``, ``_``, ``\`` escapes) as the GLOB pattern matching the same strings, case and all.

    >>> _glob(r"50\% of *_")
    '50% of [*]?'
    """
    out: list[str] = []
    chars = iter(pattern)
    for ch in chars:
        if ch in "%_":
            out.append("*" if ch == "%" else "?")
            continue
        literal = next(chars) if ch == "\\" else ch  # filters.py refused a trailing lone backslash
        out.append(f"[{literal}]" if literal in "*?[" else literal)
    return "".join(out)


def _contains(path: str, operand: Any, alias: str, *, fold: bool) -> Prepared:
    """A list value holding ``operand`` (typed, like ``$eq``), or a string value holding it as a substring.

    With ``fold`` text is compared ignoring the case of ASCII letters (SQLite's ``lower``).
    """
    kind = f'json_type({alias}."metadata", ?)'
    sql, out = _holds(path, *_element(operand, fold=fold), alias)
    if isinstance(operand, str):
        value = f'json_extract({alias}."metadata", ?)'
        found = f"instr(lower({value}), lower(?)) > 0" if fold else f"instr({value}, ?) > 0"
        sql = f"({sql} OR ({kind} = 'text' AND {found}))"
        out += [path, path, operand]
    return sql, out


def _metadata_clause(conditions: Sequence[tuple[str, str, Any]], alias: str) -> Prepared:
    """Every condition of a parsed metadata filter, as a two-valued (0/1) SQL expression."""
    parts: list[str] = []
    params: list[Any] = []
    for condition in conditions:
        sql, p = _metadata_node(condition, alias)
        parts.append(f"coalesce({sql}, 0)")
        params += p
    return "(" + " AND ".join(parts) + ")", params


def _metadata_node(condition: tuple[str, str, Any], alias: str) -> Prepared:
    """One condition: a ``(key, op, operand)`` test, or ``$and``/``$or``/``$not`` of parsed filters."""
    key, op, operand = condition
    if op == "$not":
        sql, params = _metadata_clause(operand, alias)
        return f"NOT {sql}", params
    if op in ("$and", "$or"):
        compiled = [_metadata_clause(branch, alias) for branch in operand]
        joiner = " AND " if op == "$and" else " OR "
        return "(" + joiner.join(sql for sql, _ in compiled) + ")", [p for _, ps in compiled for p in ps]
    return _metadata_condition(key, op, operand, alias)


#: What :func:`page` lists: live memories (not archived, deleted or expired), archived ones
#: (not deleted), soft-deleted ones, or every row.
STATES = ("live", "archived", "deleted", "all")


def _state(state: str, now: float, a: str) -> Prepared:
    """The conditions that select the memories in ``state`` (one of :data:`STATES`)."""
    if state == "live":
        return (
            f'{a}."deleted_at" IS NULL AND {a}."archived" = 0 AND ({a}."expires_at" IS NULL OR {a}."expires_at" > ?)',
            [now],
        )
    if state == "archived":
        return f'{a}."deleted_at" IS NULL AND {a}."archived" = 1', []
    if state == "deleted":
        return f'{a}."deleted_at" IS NOT NULL', []
    return "", []


def live_filter(
    filters: Filters, *, now: float, alias: str = "m", metadata: MetadataCompiler | None = None, state: str = "live"
) -> Prepared:
    """The WHERE clause (without ``WHERE``) for live memories matching ``filters``.

    ``metadata`` compiles metadata conditions (default: SQLite's JSON functions); ``state``
    (one of :data:`STATES`) swaps "live" for archived, deleted or every memory, and with
    ``"all"`` and no filters the clause is empty.
    """
    compile_metadata = metadata or _metadata_node
    a = alias
    first, params = _state(state, now, a)
    parts = [first] if first else []
    for column, values in (
        ("agent_id", filters.agent_ids),
        ("scope", filters.scopes),
        ("pool", filters.pools),
        ("type", filters.types),
        ("source", filters.sources),
        ("session_id", filters.session_ids),
        ("kind", filters.kinds),
    ):
        if values:
            sql, p = in_list(f"{a}.{quote_ident(column)}", values)
            parts.append(sql)
            params += p
    if filters.exclude_kinds:
        sql, p = in_list(f"{a}.{quote_ident('kind')}", filters.exclude_kinds)
        parts.append(f"NOT {sql}")
        params += p
    if filters.exclude_session_ids:
        sql, p = in_list(f"{a}.{quote_ident('session_id')}", filters.exclude_session_ids)
        parts.append(f"({a}.{quote_ident('session_id')} IS NULL OR NOT {sql})")
        params += p
    # Tags: an indexed lookup per row (memory_tags), never a scan of the tag column's JSON.
    if filters.tags_any:
        sql, p = in_list("t.tag", filters.tags_any)
        parts.append(f"EXISTS (SELECT 1 FROM memory_tags AS t WHERE t.seq = {a}.seq AND {sql})")
        params += p
    if filters.tags_all:
        sql, p = in_list("t.tag", filters.tags_all)
        parts.append(f"(SELECT count(*) FROM memory_tags AS t WHERE t.seq = {a}.seq AND {sql}) = ?")
        params += [*p, len(filters.tags_all)]
    for column, op, bound in (
        ("confidence", ">=", filters.min_confidence),
        ("importance", ">=", filters.min_importance),
        ("created_at", ">=", filters.since),
        ("created_at", "<=", filters.until),
    ):
        if bound is not None:
            parts.append(f"{a}.{quote_ident(column)} {op} ?")
            params.append(bound)
    if filters.pinned is not None:
        parts.append(f'{a}."pinned" = ?')
        params.append(int(filters.pinned))
    for condition in filters.metadata:
        sql, p = compile_metadata(condition, a)
        parts.append(sql)
        params += p
    return " AND ".join(parts), params


def tagged(filters: Filters) -> Prepared:
    """The seqs carrying any of ``tags_any`` and all of ``tags_all`` (an index lookup)."""
    parts: list[str] = []
    params: list[Any] = []
    if filters.tags_any:
        sql, p = in_list("tag", filters.tags_any)
        parts.append(f"SELECT seq FROM memory_tags WHERE {sql}")
        params += p
    if filters.tags_all:
        sql, p = in_list("tag", filters.tags_all)
        parts.append(f"SELECT seq FROM memory_tags WHERE {sql} GROUP BY seq HAVING count(*) = ?")
        params += [*p, len(filters.tags_all)]
    return " INTERSECT ".join(parts), params


def select_rows(
    *,
    by: str,
    values: Sequence[Any],
    filters: Filters | None = None,
    now: float = 0.0,
    metadata: MetadataCompiler | None = None,
) -> Prepared:
    """All columns of the memories whose ``by`` column (``id`` or ``seq``) is in ``values``.

    With ``filters``, only live memories that match them.
    """
    where, params = in_list(f"m.{quote_ident(by)}", values)
    if filters is not None:
        live, live_params = live_filter(filters, now=now, metadata=metadata)
        where, params = f"{where} AND {live}", [*params, *live_params]
    return f"SELECT {columns()} FROM memories AS m WHERE {where}", params


def keyword_search(match: str, filters: Filters, *, now: float, limit: int, table: str = GLOBAL_FTS) -> Prepared:
    """BM25 over content (weight 1) and tags (weight 0.5); score = -bm25, higher is better.

    ``table`` is ``memories_fts`` (every row) or one agent's table (see ``partition_queries``).
    """
    t = quote_ident(table)
    bm25 = bm25_expression(t)
    where, params = live_filter(filters, now=now)
    sql = (
        f"SELECT m.seq, -{bm25} AS score "
        # CROSS JOIN: FTS5 runs once and the rows are looked up by key. A plain JOIN lets the
        # planner start from a tag or session index and run MATCH once per filtered row.
        f"FROM {t} CROSS JOIN memories AS m ON m.seq = {t}.rowid "
        f"WHERE {t} MATCH ? AND {where} "
        f"ORDER BY {bm25} LIMIT ?"
    )
    return sql, [match, *params, limit]


def bm25_expression(quoted_table: str) -> str:
    """FTS5's ``bm25()`` over ``quoted_table`` with the columns' weights (:data:`BM25_WEIGHTS`)."""
    return f"bm25({quoted_table}, {', '.join(map(str, BM25_WEIGHTS))})"


def keyword_ranking(match: str, *, limit: int, table: str = GLOBAL_FTS) -> Prepared:
    """BM25 over an FTS5 table alone (no row join, no filters): ``(seq, relevance)``."""
    t = quote_ident(table)
    bm25 = bm25_expression(t)
    return f"SELECT rowid AS seq, -{bm25} AS score FROM {t} WHERE {t} MATCH ? ORDER BY {bm25} LIMIT ?", [match, limit]


def keyword_ranking_checked(
    match: str, filters: Filters, *, now: float, limit: int, table: str = GLOBAL_FTS
) -> Prepared:
    """:func:`keyword_ranking`'s top ``limit`` rows, each saying whether it is live and matches ``filters``.

    The FTS5 table is ranked alone; only its top rows are joined to their memories, in the
    same statement: ``(seq, relevance, ok)``, best first.
    """
    ranking, ranked = keyword_ranking(match, limit=limit, table=table)
    where, params = live_filter(filters, now=now)
    sql = (
        f"SELECT r.seq, r.score, {where} FROM ({ranking}) AS r "
        "JOIN memories AS m ON m.seq = r.seq ORDER BY r.score DESC, r.seq"
    )
    return sql, [*params, *ranked]


def seqs_checked(seqs: Sequence[int], filters: Filters, *, now: float) -> Prepared:
    """``(seq, ok)`` of the given memories: ``ok`` says whether it is live and matches ``filters``."""
    where, params = live_filter(filters, now=now)
    listed, values = in_list("m.seq", seqs)
    return f"SELECT m.seq, {where} FROM memories AS m WHERE {listed}", [*params, *values]


#: Live memories without a vector (whichever agent's): the condition of the ``memories_unembedded``
#: partial index (schema v9), which a query must repeat for the index to serve it.
UNEMBEDDED = 'm."has_vector" = 0 AND m."deleted_at" IS NULL AND m."archived" = 0 AND m."kind" <> \'message\''


def unembedded(*, now: float) -> Prepared:
    """How many unexpired live memories of the whole store have no vector yet (read from the backlog's index)."""
    sql = f'SELECT count(*) FROM memories AS m WHERE {UNEMBEDDED} AND (m."expires_at" IS NULL OR m."expires_at" > ?)'
    return sql, [now]


def browse(filters: Filters, *, now: float, limit: int, metadata: MetadataCompiler | None = None) -> Prepared:
    """No-text recall: pinned first, then importance, then recency."""
    where, params = live_filter(filters, now=now, metadata=metadata)
    sql = (
        f"SELECT {columns()} FROM memories AS m WHERE {where} "
        "ORDER BY m.pinned DESC, m.importance DESC, m.created_at DESC, m.seq DESC LIMIT ?"
    )
    return sql, [*params, limit]


def page(
    filters: Filters,
    *,
    state: str,
    after: int,
    limit: int,
    now: float,
    metadata: MetadataCompiler | None = None,
) -> Prepared:
    """Memories in ``state`` matching ``filters`` with a seq above ``after``, oldest first (a keyset page)."""
    where, params = live_filter(filters, now=now, metadata=metadata, state=state)
    sql = f"SELECT {columns()} FROM memories AS m WHERE m.seq > ?{' AND ' + where if where else ''} "
    return sql + "ORDER BY m.seq LIMIT ?", [after, *params, limit]


def tag_counts(
    filters: Filters, *, now: float, prefix: str | None = None, metadata: MetadataCompiler | None = None
) -> Prepared:
    """``(tag, count)`` over live memories matching ``filters``, tags starting with ``prefix`` only."""
    where, params = live_filter(filters, now=now, metadata=metadata)
    sql = f"SELECT t.tag, count(*) FROM memory_tags AS t JOIN memories AS m ON m.seq = t.seq WHERE {where}"
    if prefix:
        sql += " AND t.tag >= ? AND substr(t.tag, 1, ?) = ?"
        params += [prefix, len(prefix), prefix]
    return sql + " GROUP BY t.tag ORDER BY t.tag", params


def vec_create(dimension: int) -> str:
    """The sqlite-vec table: agent in a partition key, scope and type as metadata columns."""
    return (
        "CREATE VIRTUAL TABLE IF NOT EXISTS memories_vec USING vec0("
        "agent_id text partition key, "
        f"embedding float[{int(dimension)}] distance_metric=cosine, "
        "scope text, type text)"
    )


def vec_knn(vector: bytes, k: int, filters: Filters) -> Prepared | None:
    """KNN inside vec0 with the filters vec0 can apply during the scan.

    Returns ``None`` when ``filters`` need conditions vec0 cannot check (the caller then
    scans exactly with :func:`vec_scan`, so no row is silently lost).
    """
    if filters.needs_row_check or filters.pools or filters.session_ids:
        return None
    parts = ["embedding MATCH ?", "k = ?"]
    params: list[Any] = [vector, k]
    for column, values in zip(VECTOR_ATTRS, (filters.agent_ids, filters.scopes, filters.types), strict=True):
        if len(values) > 1:
            return None
        if values:
            parts.append(f"{quote_ident(column)} = ?")
            params.append(values[0])
    return f"SELECT rowid, 1.0 - distance FROM memories_vec WHERE {' AND '.join(parts)}", params


def vec_by_rowids(seqs: Sequence[int], *, score: bytes | None = None) -> Prepared:
    """``(rowid, embedding)`` of the given vec0 rows, or ``(rowid, cosine)`` with ``score``.

    vec0 answers ``rowid IN (...)`` with a full scan; a join from a JSON list of ids makes
    it one lookup per id.
    """
    ids = encode_json([int(s) for s in seqs])
    what = "v.embedding" if score is None else "1.0 - vec_distance_cosine(v.embedding, ?)"
    sql = f"SELECT v.rowid, {what} FROM json_each(?) AS j CROSS JOIN memories_vec AS v ON v.rowid = j.value"
    return sql, ([ids] if score is None else [score, ids])


def vec_scan(vector: bytes, filters: Filters, *, now: float, limit: int) -> Prepared:
    """Exact cosine over the live rows that match ``filters`` (any filter)."""
    where, params = live_filter(filters, now=now)
    sql = (
        "SELECT m.seq, 1.0 - vec_distance_cosine(v.embedding, ?) AS score "
        "FROM memories AS m JOIN memories_vec AS v ON v.rowid = m.seq "
        f"WHERE {where} ORDER BY score DESC LIMIT ?"
    )
    return sql, [vector, *params, limit]


def insert_rows() -> str:
    """INSERT of one memory with an explicit ``seq``, for ``executemany``: seq, then :data:`WRITABLE`."""
    cols = ", ".join(quote_ident(c) for c in ("seq", *WRITABLE))
    return f"INSERT INTO memories ({cols}) VALUES ({', '.join('?' * (len(WRITABLE) + 1))})"


def fts_insert_rows(inserts: Sequence[Sequence[Any]]) -> tuple[str, list[tuple[Any, Any, Any]]]:
    """The FTS5 rows of new memories (``[seq, *WRITABLE]`` each, as for :func:`insert_rows`), for ``executemany``.

    The writer adds them itself, in the insert's transaction and before the rows (the
    schema checks): an FTS5 insert in a trigger flushes FTS5's pending terms once per row
    (see migration v5).
    """
    seq, content, tags = 0, COLUMNS.index("content"), COLUMNS.index("tags")
    sql = "INSERT INTO memories_fts (rowid, content, tags) VALUES (?, ?, ?)"
    return sql, [(row[seq], row[content], row[tags]) for row in inserts]


def update_rows(columns: Sequence[str]) -> str:
    """UPDATE of ``columns`` by ``seq``, for ``executemany``: the values, then the seq."""
    sets = ", ".join(f"{quote_ident(c)} = ?" for c in columns)
    return f"UPDATE memories SET {sets} WHERE seq = ?"


def update_row(seq: int, changes: dict[str, Any]) -> Prepared:
    """Set ``changes`` (column -> value) on the memory ``seq``."""
    return update_rows(list(changes)), [*changes.values(), seq]


def live_by_hash(hashes: Sequence[str], *, now: float) -> Prepared:
    """Visible memories with one of these content hashes, with their namespace and id.

    Deleted, archived and expired memories do not count as duplicates: writing their text
    again stores a new, visible memory. Two parameters per hash: SQLite finds the rows
    through its index of the hash's first 16 characters (migration v5, a quarter of the
    full hash's index), PostgreSQL through its index of the whole hash. Chunk ``hashes``
    to :data:`MAX_PARAMS` // 2.
    """
    prefixes, prefix_params = in_list(HASH_PREFIX, [h[:16] for h in hashes])
    where, params = in_list("content_hash", hashes)
    return (
        f"SELECT content_hash, agent_id, scope, pool, id FROM memories WHERE {prefixes} AND {where} "
        "AND deleted_at IS NULL AND archived = 0 AND (expires_at IS NULL OR expires_at > ?) ORDER BY seq",
        [*prefix_params, *params, now],
    )


def encode_json(value: Any) -> str:
    """Compact, key-sorted JSON for the ``tags`` and ``metadata`` columns."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
