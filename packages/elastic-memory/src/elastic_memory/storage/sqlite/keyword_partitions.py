"""Per-agent keyword tables (schema v6): which table ranks a query, and keeping them in step.

A file that has only ever held one agent has no agent table: ``memories_fts`` holds exactly
that agent's rows. When a write brings a second agent, the file splits: every agent gets a
table (registered in ``keyword_partitions``, filled from ``memories``), and from then on
the writer puts each row into its agent's table too, and takes it out on delete or
rewrite, in the write's own transaction. A split file stays split.

What this object remembers (agent -> partition id, "the file is split") only ever grows
once committed, so it stays true whatever other connections do; :meth:`forget` drops it
after a rollback, which may have undone what it learnt.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

import aiosqlite

from ..vectors.leg import chunks
from . import partition_queries as pq

__all__ = ["KeywordPartitions"]


class KeywordPartitions:
    """The agent tables of one connection (every call runs inside the store's lock)."""

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._conn = conn
        self._ids: dict[str, int] = {}
        self._split = False

    def forget(self) -> None:
        """Drop what was learnt: a rolled-back transaction may have registered it."""
        self._ids.clear()
        self._split = False

    async def table_for(self, agent: str) -> str | None:
        """The FTS5 table holding exactly ``agent``'s rows, or ``None`` when the file has none of them.

        ``memories_fts`` when the file is not split and holds only that agent, else the
        agent's own table.
        """
        if agent in self._ids:
            return pq.table(self._ids[agent])
        async with self._conn.execute(*pq.lookup(agent)) as cur:
            split, lowest, highest, partition = await cur.fetchone()  # type: ignore[misc]
        if partition is not None:
            self._ids[agent] = int(partition)
            return pq.table(int(partition))
        return pq.GLOBAL if not split and lowest == highest == agent else None

    async def fill_registered(self) -> None:
        """Create and fill the table of every registered agent (the v6 upgrade of a file with several)."""
        async with self._conn.execute("SELECT id, agent_id FROM keyword_partitions ORDER BY id") as cur:
            registered = [(int(r[0]), str(r[1])) for r in await cur.fetchall()]
        for partition, agent in registered:
            await self._create(partition, agent)

    async def write(self, rows: Iterable[tuple[int, str, str, str]], previous: Iterable[tuple[int, str]]) -> None:
        """Before a batch changes ``memories``: ``rows`` ``(seq, agent, content, tags)`` as they will be.

        ``previous`` ``(seq, agent)`` are the rows' stored versions, taken out of their
        agents' tables first. Splits the file when the batch brings a second agent.
        """
        rows, previous = list(rows), list(previous)
        agents = {agent for _, agent, _, _ in rows}
        if not rows or not await self._split_for(agents):
            return
        ids = await self._ensure(agents | {agent for _, agent in previous})
        gone: defaultdict[str, list[tuple[int]]] = defaultdict(list)
        for seq, agent in previous:
            gone[agent].append((seq,))
        for agent, seqs in gone.items():
            await self._conn.executemany(pq.delete_row(pq.table(ids[agent])), seqs)
        added: defaultdict[str, list[tuple[int, str, str]]] = defaultdict(list)
        for seq, agent, content, tags in rows:
            added[agent].append((seq, content, tags))
        for agent, values in added.items():
            await self._conn.executemany(pq.insert_row(pq.table(ids[agent])), values)

    async def delete(self, seqs: Sequence[int]) -> None:
        """Before ``seqs`` are deleted from ``memories``: take them out of their agents' tables."""
        if not seqs or not await self._is_split():
            return
        gone: defaultdict[str, list[tuple[int]]] = defaultdict(list)
        async with self._conn.execute(*pq.owners(seqs)) as cur:
            for seq, agent in await cur.fetchall():
                gone[str(agent)].append((int(seq),))
        ids = await self._ensure(set(gone))
        for agent, rows in gone.items():
            await self._conn.executemany(pq.delete_row(pq.table(ids[agent])), rows)

    # ---------------------------------------------------------------- helpers
    async def _is_split(self) -> bool:
        if not self._split:
            async with self._conn.execute("SELECT EXISTS (SELECT 1 FROM keyword_partitions)") as cur:
                self._split = bool((await cur.fetchone())[0])  # type: ignore[index]
        return self._split

    async def _split_for(self, agents: set[str]) -> bool:
        """Whether the file is split once ``agents`` write to it (splitting it now if they make it two)."""
        if self._split:
            return True
        async with self._conn.execute(pq.STATE) as cur:
            split, lowest, highest = await cur.fetchone()  # type: ignore[misc]
        if split:
            self._split = True
            return True
        if len(agents | ({lowest, highest} - {None})) < 2:
            return False
        async with self._conn.execute("SELECT DISTINCT agent_id FROM memories") as cur:
            stored = {str(r[0]) for r in await cur.fetchall()}
        await self._ensure(stored | agents)
        self._split = True
        return True

    async def _ensure(self, agents: set[str]) -> dict[str, int]:
        """Each agent's partition id, registering (and filling) the agents that have none yet."""
        missing = sorted(agents - self._ids.keys())
        for chunk in chunks(missing):
            async with self._conn.execute(*pq.find(chunk)) as cur:
                self._ids.update((str(a), int(i)) for a, i in await cur.fetchall())
        for agent in sorted(agents - self._ids.keys()):
            async with self._conn.execute(*pq.register(agent)) as cur:
                partition = int((await cur.fetchone())[0])  # type: ignore[index]
            await self._create(partition, agent)
            self._ids[agent] = partition
        return {agent: self._ids[agent] for agent in agents}

    async def _create(self, partition: int, agent: str) -> None:
        """The agent's table, holding every row the agent has in ``memories`` now."""
        name = pq.table(partition)
        await self._conn.execute(pq.create(name))
        await self._conn.execute(*pq.backfill(name, agent))
