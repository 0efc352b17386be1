"""BM25 with an IDF that never reaches zero, on top of FTS5's own ``bm25()`` (pure arithmetic).

FTS5's ``bm25()`` uses ``log((N - n + 0.5) / (n + 0.5))`` and floors it at 1e-6, so a word
found in more than half the rows (``meeting`` in a team's notes) weighs almost nothing and
a match on it barely counts. The score contract (docs/concepts.md) uses the Lucene form,
``log(1 + (N - n + 0.5) / (n + 0.5))``: always positive, the same order as FTS5's for rare
words. FTS5 stays the scorer: BM25 is a sum over the query's phrases, each ``idf x`` a term
part FTS5 computes, so one phrase's ``bm25()`` times :func:`rescale` is that phrase's
Lucene-IDF score, and the parts add up (``keyword_queries.scaled``).

>>> round(idf(100, 80), 3), fts5_idf(100, 80)
(0.227, 1e-06)
>>> round(rescale(100, 1), 3)
1.004
>>> averages(bytes([3, 10, 2]))
(3, 12)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = [
    "ABSENT_WEIGHT",
    "B",
    "FTS5_IDF_FLOOR",
    "K1",
    "RELEVANCE_HALF",
    "averages",
    "fts5_idf",
    "idf",
    "rescale",
    "scale",
    "varints",
]

#: BM25's parameters, as FTS5's ``bm25()`` fixes them.
K1, B = 1.2, 0.75
#: FTS5's IDF for a phrase in at least half the rows.
FTS5_IDF_FLOOR = 1e-6
#: The BM25 score whose relevance is 0.5 (``retrieval.scores.keyword_relevance``).
RELEVANCE_HALF = 5.0
#: How much of its IDF a query phrase found in no row adds to :func:`scale` (chosen on LoCoMo
#: dev: 1 gave recall@10 0.737, 0.5 gave 0.741, 0 (left out) 0.742).
ABSENT_WEIGHT = 0.5


def idf(rows: int, holding: int) -> float:
    """The contract's IDF of a phrase found in ``holding`` of ``rows`` rows: ``log(1 + (N - n + 0.5) / (n + 0.5))``."""
    return math.log(1.0 + (rows - holding + 0.5) / (holding + 0.5))


def fts5_idf(rows: int, holding: int) -> float:
    """The IDF FTS5's ``bm25()`` uses: ``log((N - n + 0.5) / (n + 0.5))``, floored at :data:`FTS5_IDF_FLOOR`."""
    value = math.log((rows - holding + 0.5) / (holding + 0.5))
    return value if value > 0.0 else FTS5_IDF_FLOOR


def rescale(rows: int, holding: int) -> float:
    """The factor turning one phrase's FTS5 ``bm25()`` into the contract's: ``idf / fts5_idf``."""
    return idf(rows, holding) / fts5_idf(rows, holding)


def scale(rows: int, holding: Sequence[int]) -> float:
    """The BM25 of relevance 1 for a query: a row of average length holding each of its phrases once.

    Each phrase then contributes its IDF (``tf * (k1 + 1) / (tf + k1)`` is 1 at ``tf = 1``),
    so it is the sum of the IDFs of the phrases found in ``holding`` of ``rows`` rows each. A
    phrase found in no row counts too, at :data:`ABSENT_WEIGHT` times its IDF: a row matching
    one word of a three-word query is not a perfect match because the other two are missing
    everywhere (but such a word is often a paraphrase of one that is there).

    >>> scale(100, [1, 0]) > scale(100, [1]) > scale(100, [50])
    True
    """
    return sum(idf(rows, n) if n else ABSENT_WEIGHT * idf(rows, 0) for n in holding)


def averages(block: bytes | None) -> tuple[int, int]:
    """``(rows, tokens)`` from FTS5's averages record: the row count, then each column's token count."""
    values = varints(block or b"")
    return (values[0], sum(values[1:])) if values else (0, 0)  # empty: nothing indexed yet


def varints(blob: bytes) -> list[int]:
    """SQLite's big-endian varints (7 bits a byte, the ninth byte whole), as FTS5 stores sizes."""
    out: list[int] = []
    value = length = 0
    for byte in blob:
        if length == 8:
            out.append((value << 8) | byte)
            value = length = 0
            continue
        value = (value << 7) | (byte & 0x7F)
        length += 1
        if byte < 0x80:
            out.append(value)
            value = length = 0
    return out
