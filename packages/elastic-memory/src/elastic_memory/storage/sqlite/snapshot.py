"""The :class:`.Snapshot` of a :class:`.SQLiteStore`: reads on one connection inside its read transaction."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

import aiosqlite
import numpy as np
import numpy.typing as npt

from .. import queries as q
from ..backend import Backend
from ..rows import from_blob

__all__ = ["SQLiteSnapshot"]

F32 = npt.NDArray[np.float32]


class SQLiteSnapshot:
    """Reads on one connection inside its read transaction (see :meth:`.SQLiteStore.snapshot`).

    ``store`` is read for its pin; ``errors(what)`` turns the driver's errors into the library's.
    """

    def __init__(
        self, store: Backend, conn: aiosqlite.Connection, errors: Callable[[str], AbstractContextManager[None]]
    ) -> None:
        self._store = store
        self._conn = conn
        self._errors = errors

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """Run one query; its rows."""
        with self._errors("read a snapshot"):
            return list(await self._conn.execute_fetchall(sql, params))

    async def vectors(self, seqs: Sequence[int]) -> dict[int, F32]:
        """The stored vectors of memories ``seqs`` (those that have one), by seq."""
        if not seqs or not self._store.has_vec or self._store.pin is None:
            return {}
        return {int(r[0]): from_blob(r[1]) for r in await self.fetch(*q.vec_by_rowids(seqs))}
