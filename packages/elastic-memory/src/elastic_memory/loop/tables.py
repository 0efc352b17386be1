"""I/O for the memory loop's tables, through a storage :class:`~.backend.Backend`.

Every method is one transaction, so a turn, its chunks, its facts and its quarantined
candidates are stored together or not at all.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from ..errors import EmbeddingMismatchError, UsageError
from ..filters import Filters
from ..graph.tables import GraphStore, GraphWrite
from ..storage import queries as q
from ..storage.backend import Backend, EmbeddingPin, Transaction
from ..storage.queries import encode_json
from ..storage.vectors.leg import chunks
from ..types import Fact, MemoryId, QuarantinedItem, Source
from ..users import split_owner
from . import queries as lq

__all__ = ["FactWrite", "LoopStore", "Quarantined", "SessionState", "TurnRow"]

T = TypeVar("T")

log = logging.getLogger("elastic_memory")

F32 = npt.NDArray[np.float32]
#: An automatic write supersedes a current automatic fact when its confidence is at least
#: this share of the current one's (so a newer statement of similar trust wins).
_SUPERSEDE_RATIO = 0.9


@dataclass(frozen=True)
class FactWrite:
    """One fact to store.

    ``origin == "explicit"`` always supersedes the current value. Any other write leaves an
    explicit value alone; a ``"merge"`` (the llm reconciling versions) supersedes automatic
    values, and an automatic write needs at least 90 % of the current one's confidence.
    """

    key: str
    value: str
    category: str
    source: str
    origin: str
    confidence: float
    importance: float
    session_id: str | None = None
    valid_from: float | None = None
    forgotten: bool = False
    #: When the statement was made (the turn's time) for automatic writes: a statement made
    #: before the current version was recorded never replaces it (nor revives a forgotten key).
    observed_at: float | None = None


@dataclass(frozen=True)
class Quarantined:
    """A refused candidate to keep for review: ``payload`` (JSON) is what releasing it writes."""

    reason: str
    what: str
    text: str
    origin: str
    payload: str | None = None


@dataclass(frozen=True)
class TurnRow:
    """One exchange of the transcript."""

    seq: int
    session_id: str
    turn: int
    user: str
    reply: str
    created_at: float
    importance: float


@dataclass(frozen=True)
class SessionState:
    """What the store knows about one session."""

    session_id: str
    started_at: float
    last_turn_at: float
    turns: int
    rolling_summary: str | None
    evicted_messages: int
    ended_at: float | None
    summary_id: str | None


def fact_from_row(row: Sequence[Any]) -> Fact:
    """A :class:`Fact` from a row of :data:`.queries.FACT_COLUMNS`."""
    (
        seq,
        agent,
        key,
        value,
        category,
        source,
        origin,
        conf,
        imp,
        session,
        vfrom,
        vto,
        rec,
        inv,
        inv_by,
        forg,
        arch,
        acc,
    ) = row[: len(lq.FACT_COLUMNS)]
    agent_id, user_id = split_owner(agent)
    return Fact(
        id=int(seq),
        agent_id=agent_id,
        key=key,
        value=value,
        category=category,
        source=Source(source),
        origin=origin,
        confidence=float(conf),
        importance=float(imp),
        session_id=session,
        valid_from=float(vfrom),
        valid_to=None if vto is None else float(vto),
        recorded_at=float(rec),
        invalidated_at=None if inv is None else float(inv),
        invalidated_by=None if inv_by is None else int(inv_by),
        forgotten=bool(forg),
        archived=bool(arch),
        access_count=int(acc),
        user_id=user_id,
    )


def _quarantined(row: Sequence[Any]) -> QuarantinedItem:
    seq, agent, reason, what, text, origin, session, created, turn_seq, releasable = row[:10]
    turn = None if turn_seq is None else int(turn_seq)
    agent_id, user_id = split_owner(agent)
    return QuarantinedItem(
        int(seq), agent_id, reason, what, text, origin, session, float(created), turn, bool(releasable), user_id
    )


def _turn(row: Sequence[Any]) -> TurnRow:
    seq, session, turn, user, reply, created, importance = row
    return TurnRow(int(seq), session, int(turn), user, reply, float(created), float(importance))


class _ExtractedElsewhere(Exception):
    """Rolls back an extraction whose turns another writer marked done first."""


def _same_space(stored: EmbeddingPin, pin: EmbeddingPin) -> EmbeddingPin:
    """The pin to keep when ``pin``'s vectors meet the ``stored`` one another connection wrote meanwhile.

    A pin of another model (other width, or neither model nor family the same) refuses the
    vectors with :class:`EmbeddingMismatchError`: they would mix two embedding spaces.
    """
    if stored.dimension != pin.dimension or (stored.model_id != pin.model_id and stored.family != pin.family):
        msg = (
            f"vectors of {pin.model_id!r} ({pin.dimension}-d) refused: another connection pinned the "
            f"database to {stored.model_id!r} ({stored.dimension}-d, family {stored.family!r}) meanwhile; "
            "open it with that model"
        )
        raise EmbeddingMismatchError(msg)
    return stored


class LoopStore:
    """The loop's reads and writes. Shares ``store``'s connection, lock and transactions."""

    def __init__(self, store: Backend) -> None:
        self.store = store
        self.dialect = lq.DIALECTS[store.capabilities.engine]
        self.graph = GraphStore(store)

    # ------------------------------------------------------------------ helpers
    async def _read(self, sql: str, params: Sequence[Any]) -> list[Any]:
        return await self.store.read(sql, params)

    async def _write(self, what: str, work: Callable[[Transaction], Awaitable[T]], *, bump: bool = True) -> T:
        """Run ``await work(tx)`` in one transaction under the store's writer lock."""
        async with self.store.transaction(what, bump=bump) as tx:
            return await work(tx)

    # ------------------------------------------------------------------- turns
    async def record_turn(
        self,
        *,
        agent_id: str,
        session_id: str,
        user: str,
        reply: str,
        importance: float,
        rows: Sequence[dict[str, Any]],
        facts: Sequence[FactWrite],
        quarantine: Sequence[Quarantined],
        extracted: bool,
        graph: GraphWrite | None = None,
    ) -> tuple[int, list[MemoryId], list[tuple[FactWrite, str]]]:
        """Store one exchange with its memories (chunks first), facts and quarantined candidates, atomically.

        Chunks get ``{"turn": n}`` in their metadata. ``extracted`` marks the turn as done for
        the background extraction. Returns the turn number in its session, the memory ids
        (in the order of ``rows``) and each fact's outcome.
        """
        now = self.store.clock()

        async def work(tx: Transaction) -> tuple[int, list[MemoryId], list[tuple[FactWrite, str]]]:
            turn = int((await tx.fetch(*lq.upsert_session(agent_id, session_id, now)))[0][0])
            prepared = lq.insert_turn(agent_id, session_id, turn, user, reply, now, importance, extracted=extracted)
            turn_seq = int((await tx.fetch(*prepared))[0][0])
            numbered = [
                {**r, "metadata": encode_json({**json.loads(r["metadata"]), "turn": turn})}
                if r["kind"] == "chunk"
                else r
                for r in rows
            ]
            # Each exchange is its own moment (a repeated "thanks" on Friday is not Monday's): chunks
            # are never deduplicated; the memories extracted from them are.
            dedupe = [r["kind"] != "chunk" for r in numbered]
            ids = await tx.write_rows(numbered, [None] * len(numbered), dedupe, mode="upsert")
            outcomes = [(f, await self._put_fact(tx, agent_id, f, now, turn_seq)) for f in facts]
            await self._quarantine(tx, agent_id, session_id, quarantine, now, turn_seq)
            if graph is not None:  # the entities are mentioned by this exchange's chunks
                chunk_ids = tuple(str(i) for i, r in zip(ids, numbered, strict=True) if r["kind"] == "chunk")
                await self._put_graph(tx, agent_id, replace(graph, memory_ids=chunk_ids), now)
            return turn, ids, outcomes

        return await self._write("record a turn", work)

    async def session(self, agent_id: str, session_id: str) -> SessionState | None:
        """The session's state, or ``None`` if it never had a turn."""
        rows = await self._read(lq.SESSION, [agent_id, session_id])
        return SessionState(*rows[0]) if rows else None

    async def open_sessions(self, agent_id: str, *, besides: str) -> list[str]:
        """Sessions not ended yet whose last turn came before ``besides`` started, least recent first."""
        return [r[0] for r in await self._read(lq.OPEN_SESSIONS, [agent_id, besides, agent_id, besides])]

    async def turns(self, agent_id: str, session_id: str, *, limit: int = 1000) -> list[TurnRow]:
        """The latest ``limit`` turns of a session, in order."""
        return [_turn(r) for r in await self._read(*lq.session_turns(agent_id, session_id, limit=limit))]

    async def shown_turns(self, agent_id: str, session_id: str, texts: Sequence[str]) -> set[int]:
        """The numbers of the session's turns whose user text is exactly one of ``texts``."""
        if not texts:
            return set()
        return {int(r[0]) for r in await self._read(*lq.shown_turns(agent_id, session_id, texts))}

    async def turns_by_seq(self, seqs: Sequence[int]) -> list[TurnRow]:
        """Turns by their seq."""
        return [_turn(r) for r in await self._read(*lq.turns_by_seq(seqs))] if seqs else []

    async def pending_turns(self, agent_id: str, limit: int) -> list[TurnRow]:
        """Turns not yet extracted, oldest first."""
        return [_turn(r) for r in await self._read(*lq.pending_turns(agent_id, limit))]

    async def set_rolling_summary(self, agent_id: str, session_id: str, text: str, evicted: int) -> None:
        """Replace a session's rolling summary (``evicted``: messages the host dropped so far)."""
        now = self.store.clock()

        async def work(tx: Transaction) -> None:
            await tx.execute(lq.ENSURE_SESSION, [agent_id, session_id, now, now])
            await tx.execute(*lq.set_rolling_summary(agent_id, session_id, text, evicted))

        await self._write("store the rolling summary", work, bump=False)

    async def end_session(self, agent_id: str, session_id: str, summary_id: str | None, last_turn_at: float) -> None:
        """Mark a session ended (with its summary memory's id) unless it had a turn after ``last_turn_at``."""
        now = self.store.clock()

        async def work(tx: Transaction) -> None:
            await tx.execute(lq.END_SESSION, [now, summary_id, agent_id, session_id, last_turn_at])

        await self._write("end the session", work, bump=False)

    # ------------------------------------------------------------------- facts
    async def _put_fact(self, tx: Transaction, agent_id: str, fact: FactWrite, now: float, turn_seq: int | None) -> str:
        """Write inside ``tx``: ``created``, ``superseded``, ``unchanged`` or ``outranked``."""
        rows = await tx.fetch(lq.CURRENT_FACT, [agent_id, fact.key])
        current = fact_from_row(rows[0]) if rows else None
        explicit = fact.origin == "explicit"
        if current is not None and not current.forgotten and not fact.forgotten and current.value == fact.value:
            same = not explicit or (current.origin == "explicit" and fact.category == current.category)
            if same:  # a repetition reinforces (and brings a decayed fact back into view)
                await tx.execute(*lq.reinforce_fact(current.id, fact.confidence, fact.importance, now))
                return "unchanged"
        if fact.forgotten and (current is None or current.forgotten):
            return "unchanged"
        if current is not None and not explicit:
            stale = fact.observed_at is not None and fact.observed_at < current.recorded_at
            if current.forgotten and (fact.observed_at is None or stale):
                return "outranked"  # an old statement must not revive what the user asked to forget
            if not current.forgotten and (
                current.origin == "explicit"
                or stale
                or (fact.origin != "merge" and fact.confidence < current.confidence * _SUPERSEDE_RATIO)
            ):
                return "outranked"
        valid_from = now if fact.valid_from is None else fact.valid_from
        values = {
            "agent_id": agent_id,
            "key": fact.key,
            "value": fact.value,
            "category": fact.category,
            "source": fact.source,
            "origin": fact.origin,
            "confidence": fact.confidence,
            "importance": fact.importance,
            "session_id": fact.session_id,
            "turn_seq": turn_seq,
            "valid_from": valid_from,
            "recorded_at": now,
            "forgotten": int(fact.forgotten),
            "accessed_at": now,
        }
        if current is not None:  # the partial unique index allows one current version
            await tx.execute(*lq.invalidate_fact(current.id, now, valid_from))
        seq = int((await tx.fetch(*lq.insert_fact(values)))[0][0])
        if current is not None:
            await tx.execute("UPDATE facts SET invalidated_by = ? WHERE seq = ?", [seq, current.id])
            return "superseded"
        return "created"

    async def put_facts(self, agent_id: str, facts: Sequence[FactWrite]) -> list[str]:
        """Write facts in one transaction; each outcome as in :meth:`_put_fact`."""
        now = self.store.clock()

        async def work(tx: Transaction) -> list[str]:
            return [await self._put_fact(tx, agent_id, f, now, None) for f in facts]

        return await self._write("write facts", work, bump=False)

    async def current_fact(self, agent_id: str, key: str) -> Fact | None:
        """The current version of ``key`` (``None`` when unknown or forgotten)."""
        rows = await self._read(lq.CURRENT_FACT, [agent_id, key])
        fact = fact_from_row(rows[0]) if rows else None
        return None if fact is None or fact.forgotten else fact

    async def fact_as_of(self, agent_id: str, key: str, when: float) -> Fact | None:
        """The version of ``key`` valid at ``when``."""
        rows = await self._read(*lq.fact_as_of(agent_id, key, when))
        return fact_from_row(rows[0]) if rows else None

    async def fact_history(self, agent_id: str, key: str) -> list[Fact]:
        """Every version of ``key``, oldest first."""
        return [fact_from_row(r) for r in await self._read(*lq.fact_history(agent_id, key))]

    async def current_facts(self, agent_id: str, *, category: str | None = None, limit: int = 1000) -> list[Fact]:
        """The current facts of an agent, most important first."""
        return [fact_from_row(r) for r in await self._read(*lq.current_facts(agent_id, category=category, limit=limit))]

    async def search_facts(self, agent_id: str, match: str, limit: int) -> list[tuple[Fact, float]]:
        """Current facts matching an FTS5 expression, with their BM25 relevance (higher is better)."""
        rows = await self._read(*self.dialect.fact_search(agent_id, match, limit))
        return [(fact_from_row(r), float(r[-1])) for r in rows]

    async def touch_facts(self, seqs: Sequence[int]) -> None:
        """Count that these facts were shown to the model (no generation bump)."""
        if not seqs:
            return
        now = self.store.clock()

        async def work(tx: Transaction) -> None:
            for chunk in chunks(list(seqs)):
                await tx.execute(*lq.touch_facts(chunk, now))

        await self._write("record fact access", work, bump=False)

    async def archive_facts(self, seqs: Sequence[int]) -> None:
        """Hide current facts from the plan without removing them (decay)."""
        if not seqs:
            return

        async def work(tx: Transaction) -> None:
            for chunk in chunks(list(seqs)):
                sql, params = q.in_list("seq", chunk)
                await tx.execute(f"UPDATE facts SET archived = 1 WHERE {sql}", params)

        await self._write("archive facts", work, bump=False)

    async def recently_changed_keys(self, agent_id: str, since: float) -> list[str]:
        """Keys whose value was superseded since ``since`` (candidates for a contradiction merge)."""
        rows = await self._read(
            "SELECT DISTINCT key FROM facts WHERE agent_id = ? AND invalidated_at >= ? AND forgotten = 0 ORDER BY key",
            [agent_id, since],
        )
        return [r[0] for r in rows]

    # --------------------------------------------------------------- quarantine
    async def _quarantine(
        self,
        tx: Transaction,
        agent_id: str,
        session_id: str | None,
        items: Sequence[Quarantined],
        now: float,
        turn_seq: int | None = None,
    ) -> None:
        for item in items:
            values = [agent_id, item.reason, item.what, item.text[:4000], item.origin, session_id, now]
            await tx.execute(lq.INSERT_QUARANTINE, [*values, turn_seq, item.payload])

    async def add_quarantine(
        self, agent_id: str, session_id: str | None, items: Sequence[Quarantined], turn_seq: int | None = None
    ) -> None:
        """Keep refused candidates for review."""
        if not items:
            return
        now = self.store.clock()

        async def work(tx: Transaction) -> None:
            await self._quarantine(tx, agent_id, session_id, items, now, turn_seq)

        await self._write("quarantine candidates", work, bump=False)

    async def quarantine(self, agent_id: str, limit: int = 100) -> list[QuarantinedItem]:
        """The most recent quarantined items of an agent."""
        return [_quarantined(r) for r in await self._read(lq.QUARANTINE, [agent_id, limit])]

    async def quarantined(self, agent_id: str, item_id: int) -> tuple[QuarantinedItem, str | None] | None:
        """One quarantined item of the agent and its payload (what releasing it writes), or ``None``."""
        rows = await self._read(lq.QUARANTINED, [agent_id, item_id])
        return (_quarantined(rows[0]), rows[0][-1]) if rows else None

    async def discard_quarantined(self, agent_id: str, item_id: int) -> bool:
        """Delete one quarantined item; whether it existed."""

        async def work(tx: Transaction) -> bool:
            return await tx.execute(lq.DISCARD_QUARANTINED, [agent_id, item_id]) > 0

        return await self._write("discard a quarantined item", work, bump=False)

    async def release_fact(self, agent_id: str, item_id: int, fact: FactWrite, turn_seq: int | None) -> str | None:
        """Write the fact a guard stopped and drop its quarantine item, atomically; the outcome, or ``None`` if gone."""
        now = self.store.clock()

        async def work(tx: Transaction) -> str | None:
            if not await tx.execute(lq.DISCARD_QUARANTINED, [agent_id, item_id]):
                return None  # released or discarded meanwhile
            return await self._put_fact(tx, agent_id, fact, now, turn_seq)

        return await self._write("release a quarantined fact", work)

    async def release_memory(self, agent_id: str, item_id: int, row: dict[str, Any]) -> MemoryId | None:
        """Write the memory a guard stopped and drop its quarantine item, atomically; its id, or ``None`` if gone."""

        async def work(tx: Transaction) -> MemoryId | None:
            if not await tx.execute(lq.DISCARD_QUARANTINED, [agent_id, item_id]):
                return None
            return (await tx.write_rows([row], [None], [True], mode="upsert"))[0]

        return await self._write("release a quarantined memory", work)

    async def cap_quarantine(self, agent_id: str, keep: int) -> None:
        """Keep only the ``keep`` most recent quarantined items."""

        async def work(tx: Transaction) -> None:
            await tx.execute(lq.CAP_QUARANTINE, [agent_id, agent_id, keep])

        await self._write("cap the quarantine", work, bump=False)

    # ---------------------------------------------------------------- extraction
    async def finish_extraction(
        self,
        agent_id: str,
        turn_seqs: Sequence[int],
        *,
        rows: Sequence[dict[str, Any]],
        facts: Sequence[FactWrite],
        quarantine: Sequence[Quarantined],
        session_id: str | None,
        graph: GraphWrite | None = None,
    ) -> tuple[list[MemoryId], list[str]]:
        """Store what an extraction produced and mark its turns done, atomically.

        If another writer marked any of ``turn_seqs`` done meanwhile (two processes on one
        store), nothing is written and ``([], [])`` comes back.
        """
        now = self.store.clock()

        async def work(tx: Transaction) -> tuple[list[MemoryId], list[str]]:
            # Another process (or connection) extracted some of these turns first: its result
            # stands, and this one is rolled back whole (the turns still pending come again).
            if turn_seqs and await tx.execute(*lq.mark_extracted(turn_seqs, now)) < len(set(turn_seqs)):
                raise _ExtractedElsewhere
            dedupe = [r["kind"] != "summary" for r in rows]
            ids = await tx.write_rows(rows, [None] * len(rows), dedupe, mode="upsert")
            outcomes = [await self._put_fact(tx, agent_id, f, now, None) for f in facts]
            source = turn_seqs[-1] if len(turn_seqs) == 1 else None  # a group of turns has no single source
            await self._quarantine(tx, agent_id, session_id, quarantine, now, source)
            if graph is not None:
                mentioned = await self._chunks_of(tx, turn_seqs) + [str(i) for i in ids]
                await self._put_graph(tx, agent_id, replace(graph, memory_ids=tuple(mentioned)), now)
            return ids, outcomes

        try:
            return await self._write("store extracted memories", work)
        except _ExtractedElsewhere:
            log.debug("elastic-memory: turns %s were extracted elsewhere meanwhile; this result is dropped", turn_seqs)
            return [], []

    async def _put_graph(self, tx: Transaction, agent_id: str, graph: GraphWrite, now: float) -> None:
        """The graph write inside a savepoint: if it fails, the turn is stored without it."""
        await tx.execute("SAVEPOINT graph_write")
        try:
            await self.graph.put(tx, agent_id, graph, now)
        except Exception as e:  # noqa: BLE001 - the graph is an index: the turn is kept without it
            await tx.execute("ROLLBACK TO SAVEPOINT graph_write")
            self.graph.forget_counts(agent_id)
            log.warning("elastic-memory: the graph write of a turn failed and was skipped: %s", e)
        finally:
            await tx.execute("RELEASE SAVEPOINT graph_write")

    async def _chunks_of(self, tx: Transaction, turn_seqs: Sequence[int]) -> list[str]:
        """Ids of the chunks recorded for these turns (inside ``tx``)."""
        if not turn_seqs:
            return []
        sql, params = q.in_list("t.seq", list(turn_seqs))
        rows = await tx.fetch(
            "SELECT m.id FROM turns AS t JOIN memories AS m ON m.session_id = t.session_id AND m.kind = 'chunk' "
            f"AND m.agent_id = t.agent_id AND {self.dialect.chunk_turn} = t.turn WHERE {sql}",
            params,
        )
        return [r[0] for r in rows]

    # -------------------------------------------------------------------- links
    async def merge(self, row: dict[str, Any], originals: Sequence[str], vector: F32 | None) -> MemoryId:
        """Write a merged memory, link it to ``originals`` and archive them, atomically."""
        s = self.store
        now = s.clock()
        pin_ok = s.has_vec and s.pin is not None and vector is not None

        async def work(tx: Transaction) -> MemoryId:
            ids = await tx.write_rows([row], [vector if pin_ok else None], [False], mode="upsert")
            for original in originals:
                await tx.execute(lq.INSERT_EDGE, [ids[0], original, "consolidates", "consolidation", 1.0, now])
            await tx.archive(originals)
            return ids[0]

        return await self._write("merge memories", work)

    async def links(self, memory_id: str) -> list[tuple[str, str]]:
        """``(dst_id, relation)`` of the edges leaving ``memory_id``."""
        return [(r[0], r[1]) for r in await self._read(lq.EDGES_FROM, [memory_id])]

    # ------------------------------------------------------------------ vectors
    async def pending_vectors(self, limit: int) -> list[tuple[str, str, str]]:
        """``(id, content, content_hash)`` of live memories without a vector, every agent's, oldest first."""
        now = self.store.clock()
        return [(r[1], r[2], r[3]) for r in await self._read(*lq.pending_vectors(now, limit))]

    async def attach_vectors(self, items: Sequence[tuple[str, str, F32]], pin: EmbeddingPin) -> int:
        """Give memories their vectors: ``(id, content_hash the vector was made from, vector)``.

        A memory whose content changed since (another hash) or that is gone is skipped.
        Returns how many vectors were stored.
        """
        s = self.store
        if not s.has_vec or not items:
            return 0
        for _, _, vector in items:
            s.check_vector(vector)
        new_pin = pin if s.pin is None else None
        if new_pin is None and s.pin is not None and (s.pin.dimension != pin.dimension):
            msg = f"vectors of width {pin.dimension} do not fit the database's pin {s.pin.model_id!r}"
            raise UsageError(msg)

        async def work(tx: Transaction) -> int:
            nonlocal new_pin
            if new_pin is not None:
                new_pin = _same_space(await tx.settle_pin(new_pin), new_pin)
            stored = 0
            for mid, content_hash, vector in items:
                rows = await tx.fetch(
                    "SELECT seq, agent_id, scope, pool, type, session_id, content_hash, deleted_at, archived "
                    "FROM memories WHERE id = ?",
                    [mid],
                )
                if not rows or rows[0][6] != content_hash:
                    continue
                seq, agent, scope, pool, mtype, session, _, deleted_at, archived = rows[0]
                row = {
                    "agent_id": agent,
                    "scope": scope,
                    "pool": pool,
                    "type": mtype,
                    "session_id": session,
                    "deleted_at": deleted_at,
                    "archived": archived,
                }
                await tx.put_vector(int(seq), row, vector)
                stored += 1
            return stored

        count = await self._write("store vectors", work)
        if new_pin is not None:
            s.pin = new_pin
        return count

    # -------------------------------------------------------------- forgetting
    async def touch_memories(self, ids: Sequence[str]) -> None:
        """Record an access for memories shown to the model (retention grows)."""
        if not ids:
            return
        seqs: list[int] = []
        for chunk in chunks(list(dict.fromkeys(ids))):
            sql, params = q.in_list("id", chunk)
            seqs += [int(r[0]) for r in await self._read(f"SELECT seq FROM memories WHERE {sql}", params)]
        await self.store.touch(seqs)

    async def consolidation_candidates(
        self, agent_id: str, kinds: Sequence[str], limit: int
    ) -> list[tuple[str, str, str, float, int]]:
        """``(id, content, type, importance, seq)`` of live, unpinned memories of ``kinds``."""
        live, params = q.live_filter(Filters(agent_ids=(agent_id,), kinds=tuple(kinds)), now=self.store.clock())
        rows = await self._read(
            f"SELECT m.id, m.content, m.type, m.importance, m.seq FROM memories AS m WHERE {live} AND m.pinned = 0 "
            "ORDER BY m.seq LIMIT ?",
            [*params, limit],
        )
        return [(r[0], r[1], r[2], float(r[3]), int(r[4])) for r in rows]

    async def vectors_for(self, seqs: dict[str, int]) -> dict[str, F32]:
        """The stored vectors of memories ``{id: seq}`` that have one."""
        return await self.store.vectors_of(list(seqs)) if seqs else {}

    async def chunk_priorities(self, agent_id: str) -> list[tuple[str, float, float, float, int, float]]:
        """``(id, importance, created_at, accessed_at, access_count, retention_strength)`` of live unpinned chunks."""
        live, params = q.live_filter(Filters(agent_ids=(agent_id,), kinds=("chunk",)), now=self.store.clock())
        rows = await self._read(
            "SELECT m.id, m.importance, m.created_at, m.accessed_at, m.access_count, m.retention_strength "
            f"FROM memories AS m WHERE {live} AND m.pinned = 0",
            params,
        )
        return [(r[0], float(r[1]), float(r[2]), float(r[3]), int(r[4]), float(r[5])) for r in rows]

    async def sole_agent(self, agent_id: str) -> bool:
        """True when no other agent has memories in this store.

        The least and greatest agent ids: two index probes on either engine, whatever the
        planner's statistics say (a range probe can turn into a full scan on a server whose
        statistics are stale).
        """
        rows = await self._read("SELECT (SELECT min(agent_id) FROM memories), (SELECT max(agent_id) FROM memories)", [])
        least, greatest = rows[0]
        return least is None or least == greatest == agent_id

    async def live_of_kind(self, agent_id: str, kind: str) -> list[str]:
        """Ids of an agent's live, unpinned memories of ``kind``, oldest first."""
        live, params = q.live_filter(Filters(agent_ids=(agent_id,), kinds=(kind,)), now=self.store.clock())
        rows = await self._read(f"SELECT m.id FROM memories AS m WHERE {live} AND m.pinned = 0 ORDER BY m.seq", params)
        return [r[0] for r in rows]

    async def forgetting_candidates(self, agent_id: str, limit: int) -> list[tuple[str, float, float, float]]:
        """``(id, importance, accessed_at, retention_strength)`` of chunks that may be forgotten.

        Only live, unpinned chunks below importance 0.5 that were never recalled qualify.
        """
        live, params = q.live_filter(Filters(agent_ids=(agent_id,), kinds=("chunk",)), now=self.store.clock())
        rows = await self._read(
            f"SELECT m.id, m.importance, m.accessed_at, m.retention_strength FROM memories AS m WHERE {live} "
            "AND m.pinned = 0 AND m.importance < 0.5 AND m.access_count = 0 ORDER BY m.accessed_at LIMIT ?",
            [*params, limit],
        )
        return [(r[0], float(r[1]), float(r[2]), float(r[3])) for r in rows]

    # -------------------------------------------------------------------- stats
    async def stats(self, agent_id: str) -> dict[str, int]:
        """Counts of the loop's tables for one agent."""
        row = (
            await self._read(
                "SELECT (SELECT count(*) FROM turns WHERE agent_id = ?), "
                "(SELECT count(*) FROM turns WHERE agent_id = ? AND extracted_at IS NULL), "
                "(SELECT count(*) FROM sessions WHERE agent_id = ?), "
                "(SELECT count(*) FROM facts WHERE agent_id = ? AND invalidated_at IS NULL AND forgotten = 0), "
                "(SELECT count(*) FROM facts WHERE agent_id = ?), "
                "(SELECT count(*) FROM quarantine WHERE agent_id = ?)",
                [agent_id] * 6,
            )
        )[0]
        keys = ("turns", "turns_pending_extraction", "sessions", "facts_current", "fact_versions", "quarantined")
        return dict(zip(keys, (int(v) for v in row), strict=True))
