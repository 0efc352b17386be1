"""The keyword leg of a :class:`.SQLiteStore`: BM25 over FTS5, the frequent-term tier first where it serves.

BM25's statistics (row count, average length, each term's row frequency) are those of one
agent's rows when the filters pin exactly one ``agent_id`` (its own FTS5 table, schema v6),
else of the whole file. Other filters only choose among the rows. The caller holds the
store's lock around every call.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

import aiosqlite

from ...filters import Filters
from .. import queries as q
from ..vectors.leg import Query, chunks
from . import bm25, fts
from . import keyword_queries as kq
from .driver import Driver
from .frequent_terms import FrequentTerms
from .keyword_partitions import KeywordPartitions

__all__ = ["KeywordSearch"]

_NO_FILTERS = Filters()


def _bare(filters: Filters) -> Filters:
    """``filters`` without the kinds recall leaves out by default (checked on the ranked rows instead)."""
    return dataclasses.replace(filters, exclude_kinds=()) if filters.exclude_kinds else filters


class KeywordSearch:
    """Keyword searches on a store's connection.

    ``rows`` runs one query on it; ``snapshot()`` opens a read transaction on it (one
    state of the file for every query inside).
    """

    def __init__(
        self,
        conn: aiosqlite.Connection,
        drv: Driver,
        rows: Query,
        snapshot: Callable[[], AbstractAsyncContextManager[None]],
        *,
        partitions: KeywordPartitions,
        frequent: FrequentTerms,
    ) -> None:
        self._conn = conn
        self._driver = drv
        self._all = rows
        self._snapshot = snapshot
        self._keywords = partitions
        self._frequent = frequent
        #: The last search's BM25 of relevance 1 (``bm25.scale``).
        self.scale = 0.0

    async def search(self, match: str, filters: Filters, limit: int, *, now: float) -> list[tuple[int, float]]:
        """``(seq, bm25 relevance)`` best first among live memories matching ``filters``; sets :attr:`scale`.

        Without other filters the FTS5 table is ranked alone and the few top rows are checked
        for liveness afterwards (fetching more if some are hidden): 3-4x faster than joining
        every match to its row. With filters, one joined query applies them before the limit.
        """
        self.scale = 0.0
        if len(filters.agent_ids) != 1:
            # the statistics and the ranking see one state of the file (a caller's snapshot, or one here)
            snapshot = contextlib.nullcontext() if self._conn.in_transaction else self._snapshot()
            async with snapshot:
                return await self._search_in(q.GLOBAL_FTS, match, filters, limit, now=now, alone=False)
        async with self._snapshot():  # the table chosen and the search see one state of the file
            table = await self._keywords.table_for(filters.agent_ids[0])
            alone = _bare(filters) == Filters(agent_ids=filters.agent_ids)
            return (
                []  # this agent has no row in the file
                if table is None
                else await self._search_in(table, match, filters, limit, now=now, alone=alone)
            )

    async def _search_in(
        self, table: str, match: str, filters: Filters, limit: int, *, now: float, alone: bool
    ) -> list[tuple[int, float]]:
        """Search ``table``; ``alone``: it holds just the rows ``filters`` admit if live (rank, then check the top)."""
        fetch = limit + 16
        # The table holds that agent's rows only: liveness is all left to check (and an agent
        # condition would let the planner scan the agent's index instead of looking up seqs).
        # Kinds left out (chat messages) are checked on the top rows like liveness: ranking alone stays fast.
        plain = _bare(filters) == _NO_FILTERS
        check = Filters(exclude_kinds=filters.exclude_kinds) if alone or plain else filters
        if (alone or plain) and table == q.GLOBAL_FTS:
            found = await self._frequent_first(match, check, limit, now=now)
            if found is not None:
                return found
        phrases = await self._phrases(table, match)
        if not phrases:
            return []  # no term of the query is in the table
        if not alone and not plain:
            sql, params = kq.search(table, phrases, filters, now=now, limit=limit)
            return [(int(r[0]), float(r[1])) for r in await self._all(sql, params)]
        while True:
            sql, params = kq.ranking_checked(table, phrases, check, now=now, limit=fetch)
            rows = await self._all(sql, params)
            kept = [(int(r[0]), float(r[1])) for r in rows if r[2]]
            if len(kept) >= limit or len(rows) < fetch:
                return kept[:limit]
            fetch *= 4

    async def _phrases(self, table: str, match: str) -> list[tuple[str, float]]:
        """The query's phrases found in ``table``, each with its factor to the contract's BM25 (``bm25.rescale``)."""
        terms = fts.phrases(match)
        block, *held = (await self._all(*kq.phrase_stats(table, terms)))[0]
        rows, _ = bm25.averages(block)
        self.scale = bm25.scale(rows, [int(n) for n in held])
        return [(term, bm25.rescale(rows, int(n))) for term, n in zip(terms, held, strict=True) if n]

    async def _frequent_first(
        self, match: str, check: Filters, limit: int, *, now: float
    ) -> list[tuple[int, float]] | None:
        """The frequent-term tier's ranking, its top rows checked; ``None``: FTS5 ranks instead."""
        if not self._frequent.wanted():
            return None  # a small file: no round trip spent on the tier
        fetch = limit + 16
        # The tier's checks and its FTS5 part see one state of the file (a caller's snapshot, or one here).
        snapshot = contextlib.nullcontext() if self._conn.in_transaction else self._snapshot()
        async with snapshot:
            while True:
                try:
                    ranked = await self._frequent.ranking(match, fetch)
                except self._driver.module.Error:
                    raise
                except Exception as e:  # noqa: BLE001 - the tier only accelerates: FTS5 answers
                    self._frequent.fail(e)
                    return None
                if ranked is None:
                    return None
                self.scale = self._frequent.last_scale
                ok: set[int] = set()
                for chunk in chunks([s for s, _ in ranked]):
                    ok.update(int(r[0]) for r in await self._all(*q.seqs_checked(chunk, check, now=now)) if r[1])
                kept = [(s, score) for s, score in ranked if s in ok]
                if len(kept) >= limit or len(ranked) < fetch:
                    return kept[:limit]
                fetch *= 4
