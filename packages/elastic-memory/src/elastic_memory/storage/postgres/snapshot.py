"""The :class:`.Snapshot` of a :class:`.PostgresStore`: reads inside one read-only transaction."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np
import numpy.typing as npt

from ..backend import Backend
from . import queries as pq

__all__ = ["PgSnapshot", "to_array"]

F32 = npt.NDArray[np.float32]


class PgSnapshot:
    """Reads inside one read-only transaction (see :meth:`.PostgresStore.snapshot`).

    ``store`` is read for its pin; ``errors(what)`` turns the driver's errors into the library's.
    """

    def __init__(self, store: Backend, conn: Any, errors: Callable[[str], AbstractContextManager[None]]) -> None:
        self._store = store
        self._conn = conn
        self._errors = errors

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """Run one query (``?`` placeholders); its rows."""
        with self._errors("read a snapshot"):
            cur = await self._conn.execute(pq.pg(sql), list(params))
            return list(await cur.fetchall()) if cur.description else []

    async def vectors(self, seqs: Sequence[int]) -> dict[int, F32]:
        """The stored vectors of memories ``seqs`` (those that have one), by seq."""
        if not seqs or not self._store.has_vec or self._store.pin is None:
            return {}
        with self._errors("read a snapshot"):
            cur = await self._conn.execute(
                "SELECT seq, embedding FROM memory_vectors WHERE seq = ANY(%s)", [[int(s) for s in seqs]]
            )
            return {int(r[0]): to_array(r[1]) for r in await cur.fetchall()}


def to_array(value: Any) -> F32:
    """A stored vector as float32 (pgvector's loader gives a ``Vector``, or an array)."""
    if hasattr(value, "to_numpy"):
        value = value.to_numpy()
    return np.asarray(value, dtype=np.float32)
