"""The SQL of the frequent-term keyword tier (``frequent_terms.py``): built here, run there.

Every statement reads an FTS5 table and its shadow tables (``<table>_docsize``: one row per
indexed row, its token count per column as varints; ``<table>_data`` row 1: the row count and
the token count per column) or a temporary ``fts5vocab`` view of them.

>>> docsizes("memories_fts")
('SELECT id, sz FROM "memories_fts_docsize" ORDER BY id', [])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..queries import Prepared, quote_ident

__all__ = [
    "PROBE",
    "catch_up_rows",
    "docsizes",
    "frequent_vocabulary",
    "postings",
    "probe_create",
    "probe_fill",
    "probe_tokens",
    "state",
    "vocab_create",
]

#: A temporary FTS5 table that tokenizes text the way the index does (query terms, new rows).
PROBE = "elastic_memory_kw_probe"


def state(table: str) -> Prepared:
    """``(rewrites, highest rowid, averages record)`` in one read: what the tier checks before answering."""
    t = table
    sql = (
        "SELECT (SELECT value FROM store_state WHERE key = 'fts_rewrites'), "
        f"(SELECT max(id) FROM {quote_ident(t + '_docsize')}), "
        f"(SELECT block FROM {quote_ident(t + '_data')} WHERE id = 1)"
    )
    return sql, []


def docsizes(table: str) -> Prepared:
    """``(rowid, sizes blob)`` of every indexed row, in rowid order."""
    return f"SELECT id, sz FROM {quote_ident(table + '_docsize')} ORDER BY id", []


def vocab_create(table: str, name: str, kind: str) -> str:
    """A temporary ``fts5vocab`` view of ``table`` (``kind``: ``row`` or ``instance``)."""
    view = quote_ident(name)
    return f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{view} USING fts5vocab(main, {quote_ident(table)}, {kind})"


def frequent_vocabulary(row_vocab: str, min_rows: int) -> Prepared:
    """``(term, rows holding it)`` of the terms in at least ``min_rows`` rows, most frequent first."""
    return f"SELECT term, doc FROM temp.{quote_ident(row_vocab)} WHERE doc >= ? ORDER BY doc DESC, term", [min_rows]


def postings(instance_vocab: str, term: str, weights: Sequence[float], columns: Sequence[str]) -> Prepared:
    """``(rowid, weighted frequency)`` of one term: its occurrences per row, each weighted by its column."""
    cases = " ".join("WHEN ? THEN ?" for _ in columns)
    params: list[Any] = [v for pair in zip(columns, weights, strict=True) for v in pair]
    sql = (
        f"SELECT doc, sum(CASE col {cases} ELSE 0 END) FROM temp.{quote_ident(instance_vocab)} "
        "WHERE term = ? GROUP BY doc ORDER BY doc"
    )
    return sql, [*params, term]


def catch_up_rows(table: str, after: int, limit: int) -> Prepared:
    """The indexed text ``(rowid, content, tags)`` of rows above ``after`` (at most ``limit``)."""
    t = quote_ident(table)
    return f"SELECT rowid, content, tags FROM {t} WHERE rowid > ? ORDER BY rowid LIMIT ?", [after, limit]


def probe_create() -> tuple[str, str, str]:
    """The probe table (columns as the index's, same tokenizer), its instance view, and its reset."""
    p = quote_ident(PROBE)
    return (
        f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{p} USING fts5(content, tags, tokenize='porter unicode61')",
        f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{quote_ident(PROBE + '_v')} USING fts5vocab(temp, {p}, instance)",
        f"DELETE FROM temp.{p}",
    )


def probe_fill() -> str:
    """Insert ``(rowid, content, tags)`` into the probe."""
    return f"INSERT INTO temp.{quote_ident(PROBE)} (rowid, content, tags) VALUES (?, ?, ?)"


def probe_tokens() -> Prepared:
    """``(rowid, term, column, occurrences)`` of what the probe holds, in rowid then position order."""
    v = quote_ident(PROBE + "_v")
    return f"SELECT doc, term, col, count(*), min(offset) FROM temp.{v} GROUP BY doc, term, col ORDER BY doc, 5", []
