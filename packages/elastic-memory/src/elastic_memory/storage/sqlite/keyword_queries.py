"""SQL for keyword search with the contract's BM25 (``bm25``): every function returns ``(sql, params)``.

A query is a list of phrases (one quoted term each, as ``fts.match_expression`` writes
them). Each phrase is matched on its own and FTS5's ``bm25()`` rescaled by its factor
(``bm25.rescale``); a row's score is the sum over the phrases it holds, as FTS5 sums them.

>>> sql, params = ranking("memories_fts", [("cat", 1.1)], limit=3)
>>> params
[1.1, '"cat"', 3]
"""

from __future__ import annotations

from collections.abc import Sequence

from ...filters import Filters
from ..queries import BM25_WEIGHTS, Prepared, live_filter, quote_ident

__all__ = ["phrase_stats", "ranking", "ranking_checked", "scaled", "search"]

#: ``(phrase, factor)``: a term and the factor turning its FTS5 ``bm25()`` into the contract's.
Scaled = Sequence[tuple[str, float]]


def phrase_stats(table: str, phrases: Sequence[str]) -> Prepared:
    """``(averages record, rows holding phrase 1, rows holding phrase 2, ...)`` of ``table`` in one read."""
    t = quote_ident(table)
    counts = "".join(f", (SELECT count(*) FROM {t} WHERE {t} MATCH ?)" for _ in phrases)
    sql = f"SELECT (SELECT block FROM {quote_ident(table + '_data')} WHERE id = 1){counts}"
    return sql, [_quoted(p) for p in phrases]


def scaled(table: str, phrases: Scaled) -> Prepared:
    """``(seq, score)`` of every row holding any phrase, unordered: the sum of its phrases' rescaled ``bm25()``."""
    t = quote_ident(table)
    weights = ", ".join(map(str, BM25_WEIGHTS))
    part = f"SELECT rowid AS seq, -bm25({t}, {weights}) * ? AS score FROM {t} WHERE {t} MATCH ?"
    params = [value for phrase, factor in phrases for value in (factor, _quoted(phrase))]
    if len(phrases) == 1:
        return part, params
    union = " UNION ALL ".join([part] * len(phrases))
    return f"SELECT seq, sum(score) AS score FROM ({union}) GROUP BY seq", params


def ranking(table: str, phrases: Scaled, *, limit: int) -> Prepared:
    """The top ``limit`` ``(seq, score)`` of :func:`scaled`, best first (ties: lower seq)."""
    sql, params = scaled(table, phrases)
    return f"SELECT seq, score FROM ({sql}) ORDER BY score DESC, seq LIMIT ?", [*params, limit]


def ranking_checked(table: str, phrases: Scaled, filters: Filters, *, now: float, limit: int) -> Prepared:
    """:func:`ranking`'s top ``limit`` rows, each saying whether it is live and matches ``filters``.

    ``(seq, score, ok)``, best first.
    """
    ranked, ranked_params = ranking(table, phrases, limit=limit)
    where, params = live_filter(filters, now=now)
    sql = (
        f"SELECT r.seq, r.score, {where} FROM ({ranked}) AS r "
        "JOIN memories AS m ON m.seq = r.seq ORDER BY r.score DESC, r.seq"
    )
    return sql, [*params, *ranked_params]


def search(table: str, phrases: Scaled, filters: Filters, *, now: float, limit: int) -> Prepared:
    """The top ``limit`` ``(seq, score)`` among live memories matching ``filters``, best first."""
    found, found_params = scaled(table, phrases)
    where, params = live_filter(filters, now=now)
    sql = (
        # CROSS JOIN: the phrases are matched once and the rows looked up by key (a plain JOIN
        # lets the planner start from a tag or session index and match once per filtered row).
        f"SELECT m.seq, r.score FROM ({found}) AS r CROSS JOIN memories AS m ON m.seq = r.seq "
        f"WHERE {where} ORDER BY r.score DESC, m.seq LIMIT ?"
    )
    return sql, [*found_params, *params, limit]


def _quoted(phrase: str) -> str:
    return f'"{phrase}"'
