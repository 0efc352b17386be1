"""The record reads both stores share, written once over each store's SQL dialect.

A store mixes in :class:`RecordReads` and supplies ``_read(sql, params)`` (one statement in its own placeholders,
its rows), ``clock`` and ``dialect``: the module whose ``select_rows``, ``browse``, ``page`` and
``tag_counts`` build its SQL (:mod:`.queries` for SQLite, :mod:`.pg_queries` for
PostgreSQL). Rows come back in :data:`.queries.COLUMNS` order either way.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, ClassVar, Protocol

from ..filters import Filters
from ..types import MemoryRecord
from .queries import Prepared
from .rows import record_from_row, seq_of
from .vectors.leg import chunks

__all__ = ["Dialect", "RecordReads"]


class Dialect(Protocol):
    """The query builders :class:`RecordReads` needs of a store's SQL dialect."""

    def select_rows(
        self, *, by: str, values: Sequence[Any], filters: Filters | None = None, now: float = 0.0
    ) -> Prepared:
        """Every column of the memories whose ``by`` column is in ``values`` (with ``filters``: live and matching)."""
        ...

    def browse(self, filters: Filters, *, now: float, limit: int) -> Prepared:
        """Live memories matching ``filters``, pinned first, then by importance, then newest."""
        ...

    def page(self, filters: Filters, *, state: str, after: int, limit: int, now: float) -> Prepared:
        """Memories in ``state`` matching ``filters`` with a seq above ``after``, by seq."""
        ...

    def tag_counts(self, filters: Filters, *, now: float, prefix: str | None = None) -> Prepared:
        """``(tag, count)`` over live memories matching ``filters``."""
        ...

    def unembedded(self, *, now: float) -> Prepared:
        """How many unexpired live memories of the whole store have no vector yet."""
        ...


class RecordReads:
    """The record reads of a store: ``get``, ``records_matching``, ``rows_for``, ``browse``, ``page`` and the rest."""

    dialect: ClassVar[Dialect]
    clock: Callable[[], float]
    _read: Callable[[str, Sequence[Any]], Awaitable[list[Any]]]

    async def get(self, ids: Sequence[str], *, include_hidden: bool = True) -> dict[str, MemoryRecord]:
        """Records by id (missing ids are absent from the result)."""
        out: dict[str, MemoryRecord] = {}
        for chunk in chunks(list(ids)):
            for row in await self._read(*self.dialect.select_rows(by="id", values=chunk)):
                record = record_from_row(row)
                if include_hidden or (record.deleted_at is None and not record.archived):
                    out[record.id] = record
        return out

    async def records_matching(self, ids: Sequence[str], filters: Filters) -> list[MemoryRecord]:
        """The live records among ``ids`` that match ``filters``."""
        out: list[MemoryRecord] = []
        now = self.clock()
        for chunk in chunks(list(ids)):
            sql, params = self.dialect.select_rows(by="id", values=chunk, filters=filters, now=now)
            out += [record_from_row(row) for row in await self._read(sql, params)]
        return out

    async def rows_for(
        self, seqs: Sequence[int], filters: Filters, *, known: Mapping[int, MemoryRecord] | None = None
    ) -> dict[int, MemoryRecord]:
        """The live records among ``seqs`` that match ``filters``, keyed by seq (``known`` ones are not read again)."""
        out: dict[int, MemoryRecord] = {s: known[s] for s in seqs if known and s in known}
        now = self.clock()
        for chunk in chunks([s for s in seqs if s not in out]):
            sql, params = self.dialect.select_rows(by="seq", values=chunk, filters=filters, now=now)
            for row in await self._read(sql, params):
                out[seq_of(row)] = record_from_row(row)
        return out

    async def browse(self, filters: Filters, limit: int) -> list[tuple[int, MemoryRecord]]:
        """Live records, pinned first, then by importance, then newest."""
        sql, params = self.dialect.browse(filters, now=self.clock(), limit=limit)
        return [(seq_of(r), record_from_row(r)) for r in await self._read(sql, params)]

    async def page(self, filters: Filters, *, state: str, after: int, limit: int) -> list[tuple[int, MemoryRecord]]:
        """Up to ``limit`` records in ``state`` matching ``filters`` with a seq above ``after``, by seq."""
        sql, params = self.dialect.page(filters, state=state, after=after, limit=limit, now=self.clock())
        return [(seq_of(r), record_from_row(r)) for r in await self._read(sql, params)]

    async def tag_counts(self, filters: Filters, prefix: str | None = None) -> dict[str, int]:
        """How many live memories matching ``filters`` carry each tag (starting with ``prefix``)."""
        sql, params = self.dialect.tag_counts(filters, now=self.clock(), prefix=prefix)
        return {str(tag): int(count) for tag, count in await self._read(sql, params)}

    async def unembedded(self) -> int:
        """How many live memories, in every agent's rows, have no vector yet: the embedding backlog.

        Read from the backlog's own index: it costs what the backlog holds, nothing when it is empty.
        """
        rows = await self._read(*self.dialect.unembedded(now=self.clock()))
        return int(rows[0][0])
