"""Queries embedded together: the vectors of queries asked at the same moment come from one model call."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import numpy as np
import numpy.typing as npt

__all__ = ["QueryBatches"]

F32 = npt.NDArray[np.float32]
#: Query vectors remembered (a plan recalls the same query for several sections).
_QUERY_MEMO = 32


class QueryBatches:
    """Embeds queries asked at the same moment together; one batch in flight at a time; each query once.

    The first query of a batch schedules it for the loop's next turn, so every recall
    started meanwhile (``asyncio.gather``) joins it; queries that arrive while a batch is
    being embedded wait for it and go together in the next.
    """

    def __init__(self) -> None:
        #: The last few queries' vectors, by ``(model_id, text)``.
        self.memo: dict[tuple[str, str], F32] = {}
        self._flights: dict[tuple[str, str], asyncio.Future[F32]] = {}
        self._batch: list[tuple[tuple[str, str], asyncio.Future[F32]]] = []
        self._embed: Callable[[list[str]], Awaitable[list[F32]]] | None = None
        self._running = False

    async def vector(self, key: tuple[str, str], embed: Callable[[list[str]], Awaitable[list[F32]]]) -> F32:
        """The vector of ``key`` (``(model_id, text)``): remembered, in flight, or embedded by ``embed`` in a batch."""
        known = self.memo.get(key)
        if known is not None:
            return known
        flight = self._flights.get(key)
        if flight is None:
            loop = asyncio.get_running_loop()
            flight = loop.create_future()
            self._flights[key] = flight
            if self._batch and key[0] != self._batch[0][0][0]:
                self._start(force=True)  # another model: the batch so far goes now
            if not self._batch and not self._running:
                loop.call_soon(self._start)
            self._batch.append((key, flight))
            self._embed = embed
        return await asyncio.shield(flight)  # a cancelled caller leaves the batch to the others

    def _start(self, *, force: bool = False) -> None:
        if self._running and not force:
            return  # the running batch starts this one when it ends
        batch, embed = self._batch, self._embed
        self._batch, self._embed = [], None
        if batch and embed is not None:
            self._running = True
            task = asyncio.get_running_loop().create_task(self._run(batch, embed))
            _BACKGROUND.add(task)
            task.add_done_callback(_BACKGROUND.discard)

    async def _run(
        self,
        batch: list[tuple[tuple[str, str], asyncio.Future[F32]]],
        embed: Callable[[list[str]], Awaitable[list[F32]]],
    ) -> None:
        try:
            vectors = await embed([key[1] for key, _ in batch])
        except BaseException as e:
            self._next()
            for key, flight in batch:
                self._flights.pop(key, None)
                if not flight.done():
                    flight.set_exception(e)
                    flight.exception()  # retrieved here: a caller that went away logs nothing
            if not isinstance(e, Exception):
                raise
            return
        self._next()
        for (key, flight), vector in zip(batch, vectors, strict=True):
            self.memo[key] = vector  # before the flight ends: a query asked from now on finds it
            self._flights.pop(key, None)
            if not flight.done():
                flight.set_result(vector)
        while len(self.memo) > _QUERY_MEMO:
            self.memo.pop(next(iter(self.memo)))

    def _next(self) -> None:
        """A batch ended: start the queries that waited for it."""
        self._running = False
        if self._batch:
            self._start()


#: Batch tasks in flight (a task nobody references may be collected before it ends).
_BACKGROUND: set[asyncio.Task[None]] = set()
