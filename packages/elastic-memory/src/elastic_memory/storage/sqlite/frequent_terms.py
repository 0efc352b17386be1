"""Exact BM25 for keyword queries with frequent terms: their postings in RAM, scored in numpy.

FTS5 ranks an OR query by scoring every row that holds any of its terms, with no early
termination: three terms in a fifth of 1M rows each cost it over half a second. This tier
keeps, for the terms found in at least one row in :data:`FREQUENT_SHARE` (and
:data:`FREQUENT_MIN` rows), each holding row and the term's weighted frequency there, plus
every row's length. A query's frequent terms are scored here with BM25 as ``bm25`` defines
it (FTS5's k1 1.2, b 0.75 and column weights, the contract's IDF; IDF and average length from
the current counts); its other terms are ranked by FTS5 itself (``keyword_queries.scaled``),
cheaply since they are rare; BM25 is a sum over the query's phrases, so the parts add up to
the score the FTS5 path would give.

FTS5 stays the source of truth. The tier is read from the index's own tables on a second
connection in a worker thread (from :data:`MIN_ROWS` rows on; the exact FTS5 ranking answers
meanwhile); rows added later are tokenized by a temporary FTS5 table with the same tokenizer
and appended before the next query; a rewrite of indexed rows (a delete, a changed text or
tags: ``store_state.fts_rewrites``, migration v8) or any disagreement with the index's row
and token counts drops it, and it is rebuilt in the background.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..queries import BM25_WEIGHTS, FTS_COLUMNS, MAX_PARAMS
from ..vectors.leg import Query
from . import bm25
from . import frequent_queries as fq
from . import keyword_queries as kq
from .bm25 import K1, B, averages, varints
from .fts import STOP_WORDS

__all__ = ["CATCH_UP_MAX", "FREQUENT_MIN", "FREQUENT_SHARE", "MIN_ROWS", "FrequentTerms"]

_log = logging.getLogger(__name__)

#: The tier is built for FTS5 tables of at least this many rows (below, the FTS5 path is fast enough).
MIN_ROWS = 20_000
#: A term is frequent from one row in this many on ...
FREQUENT_SHARE = 200
#: ... and at least this many rows (FTS5 ranks a rarer term in a few milliseconds).
FREQUENT_MIN = 1_000
#: More new rows than this since the build: rebuild instead of catching up in the query.
CATCH_UP_MAX = 5_000
#: RAM for postings (12 bytes per row of a frequent term); the most frequent terms come first.
DEFAULT_BUDGET = 256 << 20
#: A failed or refused build is retried after this many seconds.
_RETRY_AFTER = 60.0
#: Without an index, the table's size is looked at again after this many seconds.
_SIZE_CHECK_EVERY = 10.0
_MATCH = re.compile(r'"[^"]*"(?: OR "[^"]*")*')
_TERM = re.compile(r'"([^"]*)"')
_ROW_VOCAB, _INSTANCE_VOCAB = "elastic_memory_kw_rows", "elastic_memory_kw_instances"
_TERMS_CACHED = 4096

F64 = npt.NDArray[np.float64]


class _Grown:
    """A numpy array that grows at its end (capacity doubles), read as a view of its filled part."""

    def __init__(self, values: npt.NDArray[Any]) -> None:
        self._data = values
        self.size = len(values)

    def view(self) -> npt.NDArray[Any]:
        return self._data[: self.size]

    def extend(self, values: npt.NDArray[Any]) -> None:
        need = self.size + len(values)
        if need > len(self._data):
            grown = np.empty(max(need, 2 * len(self._data), 16), dtype=self._data.dtype)
            grown[: self.size] = self._data[: self.size]
            self._data = grown
        self._data[self.size : need] = values
        self.size = need


@dataclass
class _Postings:
    """One frequent term: the rows holding it (positions), its weighted frequency and the row's length there."""

    positions: _Grown
    freqs: _Grown
    lengths: _Grown

    def extend(self, positions: Sequence[int], freqs: Sequence[float], lengths: Sequence[int]) -> None:
        self.positions.extend(np.asarray(positions, dtype=np.int32))
        self.freqs.extend(np.asarray(freqs, dtype=np.float32))  # halves and whole numbers: exact
        self.lengths.extend(np.asarray(lengths, dtype=np.float32))  # token counts below 2**24: exact


@dataclass
class _Index:
    """Every row's seq and length; each frequent term's postings."""

    rewrites: int
    seqs: _Grown
    lengths: _Grown
    total: int
    postings: dict[str, _Postings]
    built_rows: int
    watermark: int = field(init=False)
    #: Zeros between queries: a query adds its scores, then zeroes the rows it touched.
    scratch: F64 = field(init=False)

    def __post_init__(self) -> None:
        self.watermark = int(self.seqs.view()[-1]) if self.seqs.size else 0
        self.scratch = np.zeros(self.seqs.size, dtype=np.float64)

    def zeros(self) -> F64:
        """The scratch array, as long as the rows."""
        if len(self.scratch) < self.rows:
            self.scratch = np.zeros(max(self.rows, 2 * len(self.scratch)), dtype=np.float64)
        return self.scratch[: self.rows]

    @property
    def rows(self) -> int:
        return self.seqs.size


class FrequentTerms:
    """The frequent-term tier of one FTS5 table (see the module docstring).

    ``query`` runs a statement on the store's connection (under its lock); ``connect``
    opens a second, read-only connection to the same file for the build (``None``: no
    build, FTS5 answers every query).
    """

    def __init__(
        self,
        query: Query,
        connect: Callable[[], Any] | None,
        *,
        table: str,
        min_rows: int | None = None,
        budget_bytes: int = DEFAULT_BUDGET,
    ) -> None:
        self._query = query
        self._connect = connect
        self.table = table
        self._min_rows = min_rows
        self.budget_bytes = budget_bytes
        #: The governor's say (RAM tiers allowed); refusing drops the tier.
        self.allowed = True
        #: Why the last build failed, or ``None``.
        self.error: str | None = None
        #: The last ranked query's BM25 of relevance 1 (``bm25.scale``).
        self.last_scale = 0.0
        self._index: _Index | None = None
        self._build: asyncio.Future[None] | None = None
        self._retry_at = 0.0
        self._size_check_at = 0.0
        self._stop = threading.Event()
        self._closed = False
        self._probe_ready = False
        self._tokens: dict[str, str | None] = {}

    @property
    def min_rows(self) -> int:
        """The table size from which the tier is built (:data:`MIN_ROWS` unless given)."""
        return MIN_ROWS if self._min_rows is None else self._min_rows

    @property
    def terms(self) -> int:
        """How many frequent terms the index holds postings for (0: no index)."""
        return 0 if self._index is None else len(self._index.postings)

    @property
    def nbytes(self) -> int:
        """The index's RAM: rows (seq, length, a score) and postings."""
        index = self._index
        if index is None:
            return 0
        postings = sum(12 * p.positions.size for p in index.postings.values())
        return 24 * index.rows + postings

    @property
    def loaded(self) -> bool:
        """True while the tier holds an index (it may still need to catch up)."""
        return self._index is not None

    def allow(self, allowed: bool) -> None:
        """Let the tier keep postings in RAM or not (refusing frees them now)."""
        self.allowed = allowed
        if not allowed:
            self.invalidate()

    def fail(self, error: BaseException) -> None:
        """Set the tier aside after an unexpected error (FTS5 answers; a rebuild is tried later)."""
        self.error = f"{type(error).__name__}: {error}"
        self._index = None
        self._retry_at = time.monotonic() + _RETRY_AFTER
        _log.warning("elastic-memory: the frequent-term keyword tier failed (%s); FTS5 answers", self.error)

    def invalidate(self) -> None:
        """Forget the index (rebuilt on a later query)."""
        self._index = None

    async def close(self) -> None:
        """Refuse new builds; a running one stops before its next term's postings."""
        self._closed = True
        self._stop.set()  # a build stops at its next statement
        self._index = None
        if self._build is not None:
            await asyncio.gather(self._build, return_exceptions=True)

    async def start(self) -> None:
        """Start building the index now (no retry delay) when the table is large enough and none serves."""
        self._retry_at = self._size_check_at = 0.0
        await self._usable()

    def wanted(self) -> bool:
        """Whether a query should ask the tier (without an index, the table's size is looked at now and then)."""
        if not self.allowed:
            return False
        return self._index is not None or time.monotonic() >= self._size_check_at

    async def wait(self) -> None:
        """Wait until a running build has finished (or failed: see :attr:`error`)."""
        while self._build is not None:
            await asyncio.shield(self._build)

    # ------------------------------------------------------------------ query
    async def ranking(self, match: str, limit: int) -> list[tuple[int, float]] | None:
        """The top ``limit`` ``(seq, relevance)``, best first, as FTS5 would rank ``match``.

        ``None`` when the tier cannot answer (no index yet, an expression it does not read,
        no frequent term in it): rank with FTS5. ``match`` is an OR of quoted terms, as
        :func:`.fts.match_expression` writes.
        """
        if limit <= 0 or not self.allowed or _MATCH.fullmatch(match) is None:
            return None
        if not await self._usable():
            return None
        index = self._index
        assert index is not None
        terms = _TERM.findall(match)
        tokens = await self._tokens_of(terms)
        frequent = [token for token in (tokens[t] for t in terms) if token is not None and token in index.postings]
        if not frequent:
            return None  # every term is rare: FTS5 ranks it fast
        rest = [t for t in terms if tokens[t] not in index.postings]
        ranked = []
        held: list[int] = []
        if rest:
            held = [int(n) for n in (await self._query(*kq.phrase_stats(self.table, rest)))[0][1:]]
            phrases = [(t, bm25.rescale(index.rows, n)) for t, n in zip(rest, held, strict=True) if n]
            ranked = await self._query(*kq.scaled(self.table, phrases)) if phrases else []
        holding = [len(index.postings[t].positions.view()) for t in frequent] + held
        self.last_scale = bm25.scale(index.rows, holding)
        seqs = index.seqs.view()
        found = np.fromiter((r[0] for r in ranked), dtype=np.int64, count=len(ranked))
        rare = np.searchsorted(seqs, found)
        if np.any(rare >= index.rows) or np.any(seqs[np.minimum(rare, index.rows - 1)] != found):
            self._drop("FTS5 matched a row the tier does not hold")
            return None
        scores = index.zeros()
        try:
            self._add_scores(index, scores, frequent)
            scores[rare] += np.fromiter((r[1] for r in ranked), dtype=np.float64, count=len(ranked))
            shortest = min((index.postings[t].positions.view() for t in frequent), key=len)
            return _top(scores, seqs, limit, among=shortest)
        finally:
            for token in frequent:
                scores[index.postings[token].positions.view()] = 0.0
            scores[rare] = 0.0

    async def _usable(self) -> bool:
        """Whether the index (caught up now if need be) matches the FTS5 table's current state."""
        rows = await self._query(*fq.state(self.table))
        rewrites, highest, block = rows[0]
        index = self._index
        if rewrites is None or block is None:
            return False  # a file before migration v8, or an empty index
        count, total = averages(block)
        if index is None:
            if count >= self.min_rows:
                self._start_build()
            else:
                self._size_check_at = time.monotonic() + _SIZE_CHECK_EVERY
            return False
        if int(rewrites) != index.rewrites:
            self._drop(None)
            return False
        if highest is not None and int(highest) > index.watermark and not await self._catch_up(index):
            return False
        if (index.rows, index.total) != (count, total):
            self._drop(f"the index holds {count} rows and {total} tokens, the tier {index.rows} and {index.total}")
            return False
        if index.rows >= 2 * index.built_rows:
            self._start_build()  # grown much since: terms frequent now may have no postings yet
        return True

    @staticmethod
    def _add_scores(index: _Index, scores: F64, tokens: Sequence[str]) -> None:
        """Add each row's BM25 for the frequent query phrases (one per term, as FTS5 counts them).

        The arithmetic is FTS5's, in its order: ``idf * (f * (k1 + 1)) / (f + k1 * (1 - b + b * D / avgdl))``,
        with the contract's IDF (``bm25.idf``).
        """
        n = index.rows
        average = index.total / n
        for token in tokens:
            postings = index.postings[token]
            positions = postings.positions.view()
            df = len(positions)
            idf = bm25.idf(n, df)
            # In place, two temporaries; each step rounds as FTS5's expression does.
            freq = postings.freqs.view().astype(np.float64)
            norm = postings.lengths.view().astype(np.float64)
            norm *= B
            norm /= average
            norm += 1 - B
            norm *= K1
            norm += freq
            freq *= K1 + 1.0
            freq *= idf
            freq /= norm
            scores[positions] += freq

    # --------------------------------------------------------------- tokenizing
    async def _probe(self, rows: Sequence[tuple[int, str, str]]) -> list[Any]:
        """``(rowid, term, column, occurrences, first offset)`` of ``rows`` as the index's tokenizer reads them."""
        create, view, reset = fq.probe_create()
        if not self._probe_ready:
            await self._query(create, [])
            await self._query(view, [])
            self._probe_ready = True
        await self._query(reset, [])
        per = MAX_PARAMS // 3
        for start in range(0, len(rows), per):
            part = rows[start : start + per]
            sql = fq.probe_fill() + ", (?, ?, ?)" * (len(part) - 1)
            await self._query(sql, [v for row in part for v in row])
        try:
            return await self._query(*fq.probe_tokens())
        finally:
            await self._query(reset, [])

    async def _tokens_of(self, terms: Sequence[str]) -> dict[str, str | None]:
        """Each term's index token (``None``: not exactly one token, FTS5 ranks it)."""
        unseen = [t for t in dict.fromkeys(terms) if t not in self._tokens]
        if unseen:
            found: dict[int, list[tuple[str, int]]] = {}
            for doc, token, _col, count, _offset in await self._probe([(i + 1, t, "") for i, t in enumerate(unseen)]):
                found.setdefault(int(doc), []).append((str(token), int(count)))
            if len(self._tokens) + len(unseen) > _TERMS_CACHED:
                self._tokens.clear()
            for i, term in enumerate(unseen):
                got = found.get(i + 1, [])
                self._tokens[term] = got[0][0] if len(got) == 1 and got[0][1] == 1 else None
        return {t: self._tokens[t] for t in terms}

    async def _catch_up(self, index: _Index) -> bool:
        """Append the rows added after the build (tokenized by the probe); ``False``: too many, rebuild."""
        rows = await self._query(*fq.catch_up_rows(self.table, index.watermark, CATCH_UP_MAX + 1))
        if len(rows) > CATCH_UP_MAX:
            self._drop(None)
            return False
        if not rows:
            return True
        weight = dict(zip(FTS_COLUMNS, BM25_WEIGHTS, strict=True))
        texts = [(int(r[0]), "" if r[1] is None else str(r[1]), "" if r[2] is None else str(r[2])) for r in rows]
        start = index.rows
        place = {seq: start + i for i, (seq, _, _) in enumerate(texts)}
        lengths = dict.fromkeys(place, 0)
        added: dict[str, dict[int, float]] = {}
        for doc, token, col, count, _offset in await self._probe(texts):
            lengths[int(doc)] += int(count)
            if token in index.postings:
                per = added.setdefault(str(token), {})
                per[int(doc)] = per.get(int(doc), 0.0) + weight[str(col)] * int(count)
        index.seqs.extend(np.fromiter(place, dtype=np.int64, count=len(place)))
        index.lengths.extend(np.fromiter(lengths.values(), dtype=np.float64, count=len(lengths)))
        index.total += sum(lengths.values())
        for token, per in added.items():
            index.postings[token].extend([place[d] for d in per], list(per.values()), [lengths[d] for d in per])
        index.watermark = texts[-1][0]
        return True

    # ------------------------------------------------------------------ build
    def _drop(self, why: str | None) -> None:
        if why is not None:
            _log.warning("elastic-memory: the frequent-term keyword tier was dropped (%s); it is rebuilt", why)
        self._index = None
        self._start_build()

    def _start_build(self, *, force: bool = False) -> None:
        if self._build is not None or self._closed or not self.allowed or self._connect is None:
            return
        if not force and time.monotonic() < self._retry_at:
            return
        self._build = asyncio.ensure_future(self._run_build())

    async def _run_build(self) -> None:
        connect = self._connect
        assert connect is not None
        try:
            index = await asyncio.to_thread(
                _read_index, connect, self.table, min_rows=self.min_rows, budget=self.budget_bytes, stop=self._stop
            )
        except Exception as e:  # noqa: BLE001 - the tier is an accelerator: FTS5 answers meanwhile
            self.error = f"{type(e).__name__}: {e}"
            self._retry_at = time.monotonic() + _RETRY_AFTER
            _log.warning("elastic-memory: the frequent-term keyword tier could not be built (%s)", self.error)
        else:
            if index is None:
                self._retry_at = time.monotonic() + _RETRY_AFTER
            elif not self._closed and self.allowed:
                self._index, self.error = index, None
        finally:
            self._build = None


def _read_index(
    connect: Callable[[], Any], table: str, *, min_rows: int, budget: int, stop: threading.Event
) -> _Index | None:
    """The tier's index as the FTS5 table holds it now (one read transaction); ``None``: too small or stopped."""
    conn = connect()
    try:
        conn.execute("BEGIN")
        rewrites, _, block = conn.execute(*fq.state(table)).fetchone()
        if rewrites is None or block is None:
            return None
        count, total = averages(block)
        if count < min_rows:
            return None
        rows = conn.execute(*fq.docsizes(table)).fetchall()
        seqs = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        lengths = np.fromiter((sum(varints(r[1])) for r in rows), dtype=np.float64, count=len(rows))
        if len(rows) != count or int(lengths.sum()) != total:
            msg = f"{table}'s sizes ({len(rows)} rows, {int(lengths.sum())} tokens) disagree with its totals"
            raise ValueError(msg)
        conn.execute(fq.vocab_create(table, _ROW_VOCAB, "row"))
        conn.execute(fq.vocab_create(table, _INSTANCE_VOCAB, "instance"))
        postings: dict[str, _Postings] = {}
        spent = 0
        frequent = conn.execute(*fq.frequent_vocabulary(_ROW_VOCAB, max(FREQUENT_MIN, count // FREQUENT_SHARE)))
        # A stop word's stem is reached by other words ("one" is stemmed to "on", "bes" to
        # "be"), so stop words keep postings too, after the others when RAM runs short.
        for term, df in sorted(frequent.fetchall(), key=lambda row: row[0] in STOP_WORDS):
            if stop.is_set():
                return None
            spent += 12 * int(df)
            if spent > budget:
                break
            got = conn.execute(*fq.postings(_INSTANCE_VOCAB, term, BM25_WEIGHTS, FTS_COLUMNS)).fetchall()
            docs = np.fromiter((r[0] for r in got), dtype=np.int64, count=len(got))
            positions = np.searchsorted(seqs, docs).astype(np.int32)
            postings[str(term)] = _Postings(
                _Grown(positions),
                _Grown(np.fromiter((r[1] for r in got), dtype=np.float32, count=len(got))),
                _Grown(lengths[positions].astype(np.float32)),
            )
        return _Index(int(rewrites), _Grown(seqs), _Grown(lengths), total, postings, built_rows=count)
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.close()


def _top(scores: F64, seqs: npt.NDArray[np.int64], limit: int, *, among: npt.NDArray[Any]) -> list[tuple[int, float]]:
    """The ``limit`` best rows with a score, best first (ties: the lower seq first).

    The ``limit``-th best score ``among`` some rows bounds the overall one from below, so
    only the rows scoring at least that are sorted.
    """
    floor = 0.0
    if len(among) >= limit:
        sample = scores[among]
        floor = float(np.partition(sample, len(sample) - limit)[len(sample) - limit])
    found = np.flatnonzero(scores >= floor) if floor > 0 else np.flatnonzero(scores)
    if len(found) > limit:
        found = found[np.argpartition(-scores[found], limit - 1)[:limit]]
    order = np.lexsort((seqs[found], -scores[found]))
    return [(int(seqs[found[i]]), float(scores[found[i]])) for i in order]
