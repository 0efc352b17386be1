"""The sync facade, :class:`Memory`.

The same methods as :class:`~elastic_memory.AsyncMemory`, each run on the library's event loop
and waited for.

Its methods are written by ``packages/elastic-memory/tools/gen_sync.py`` from AsyncMemory's
(:mod:`.async_memory`): edit AsyncMemory, then run it.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from .. import _runner
from .._validate import check_k as v_limit
from ..config import RecallConfig
from ..context import ContextPlan
from ..core import EmbedderSpec
from ..federation.assembly import PoolConfig, open_federated
from ..federation.resilience import DegradedEvent
from ..federation.router import DecayProfile, MemoryWeights
from ..federation.user_ops import federated_user
from ..governor import MemoryProfile
from ..loop import LoopConfig
from ..loop.attach import loop_of, open_core
from ..maintenance import export as dump
from ..storage.sqlite.store import VectorTier
from ..storage.vectors.leg import DEFAULT_ANN_THRESHOLD
from ..types import (
    CheckReport,
    Explanation,
    Hits,
    ImportReport,
    MemoryId,
    MemoryRecord,
    PrunePolicy,
    PruneReport,
    QuarantinedItem,
    TurnReceipt,
)
from ..user_core import user_core
from ..users import check_user
from . import paging as _paging
from .async_memory import AsyncMemory
from .base import Facade, register_sync
from .facts import Facts, Lessons
from .graph import Graph
from .paging import Page

__all__ = ["Memory"]


class Memory(Facade):
    """Long-term memory in one SQLite file, sync API (the same methods as AsyncMemory).

    Create one with :meth:`open`, not with the constructor.

    >>> from elastic_memory import Memory
    >>> from elastic_memory.testing import FakeEmbedder
    >>> with Memory.open(":memory:", embedder=FakeEmbedder()) as mem:
    ...     mid = mem.remember("The user prefers metric units.", tags=["prefs"])
    ...     [h.content for h in mem.recall("metric units", k=5, mode="hybrid")]
    ['The user prefers metric units.']
    """

    # ---- generated from AsyncMemory by packages/elastic-memory/tools/gen_sync.py: do not edit, run it ----

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        agent_id: str = "default",
        user_id: str | None = None,
        embedder: EmbedderSpec = "auto",
        recall: RecallConfig | None = None,
        vector_index: VectorTier = "auto",
        ram_budget_bytes: int | None = None,
        ann_threshold: int = DEFAULT_ANN_THRESHOLD,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.time,
        llm: Callable[..., str] | None = None,
        context_tokens: int = 8_192,
        loop: LoopConfig | None = None,
    ) -> Memory:
        """Open (creating and migrating if needed) the store at ``path`` or ``":memory:"``.

        ``embedder``: ``"auto"`` (the built-in offline MiniLM), ``None`` (keyword only), an
        :class:`Embedder`, or a list in priority order (see the embedding gateway).
        ``vector_index``: ``"auto"`` (RAM matrix when it fits the RAM budget, else vec0; from
        ``ann_threshold`` vectors on, an ANN index when faiss is installed), ``"ram"``
        (exact), ``"vec0"`` (sqlite-vec's scan, no RAM) or ``"ann"`` (needs the ``ann``
        extra); see ``docs/performance.md``. On PostgreSQL: ``"auto"`` (an exact scan, and from
        ``ann_threshold`` vectors on an HNSW index, built in the background) or ``"ann"``.
        ``timeout``: seconds to wait for another writer's lock.
        ``llm``: the host's text completion (``str -> str``), used only by background
        extraction and summaries, never on the write path; ``None`` means rule-based and
        heuristic capture only. ``context_tokens``: the model's context size, which the
        governor budgets from. ``loop``: :class:`LoopConfig` for the memory loop.
        ``user_id``: the handle serves that user of the agent (see :meth:`for_user`); closing
        it closes the store.
        """
        check_user(user_id)  # before anything is opened
        core = _runner.run(
            open_core(
                path,
                agent_id=agent_id,
                embedder=embedder,
                recall=recall,
                vector_index=vector_index,
                ram_budget_bytes=ram_budget_bytes,
                ann_threshold=ann_threshold,
                timeout=timeout,
                clock=clock,
                llm=llm,
                context_tokens=context_tokens,
                loop=loop,
            ),
            "open",
        )
        return cls(user_core(core, user_id, owns_root=True))

    @classmethod
    def for_agent(
        cls,
        agent_id: str,
        *,
        user_id: str | None = None,
        home: str | Path = "~/.elastic-memory",
        pools: list[str | PoolConfig] | None = None,
        embedder: EmbedderSpec = "auto",
        weights: MemoryWeights | None = None,
        decay: DecayProfile | None = None,
        on_degraded: Callable[[DegradedEvent], None] | None = None,
        **options: Any,
    ) -> Memory:
        """One agent's memory over a federation: its private file, shared pools and the global tier.

        The private tier is ``<home>/agents/<agent_id>/memory.db``; each pool name is a file
        under ``<home>/pools/``; the global tier (``<home>/global/memory.db``) exists when an
        embedder is configured. Writes route by ``scope`` (private memories from importance
        0.9 are also copied to global); recall merges every tier unless ``scope``/``pool``
        narrow it; ``health()`` reports each tier. ``server="postgresql://..."`` puts the pools
        and the global tier on that server; ``private_on_server=True`` the private tier too
        (for stateless workers). Other ``options`` are :meth:`open`'s. See ``docs/federation.md``.
        ``user_id``: the handle serves that user of the agent (see :meth:`for_user`); closing it
        closes the federation.
        """
        check_user(user_id)  # before anything is opened
        ops = _runner.run(
            open_federated(
                agent_id,
                home=home,
                pools=pools,
                embedder=embedder,
                weights=weights,
                decay=decay,
                on_degraded=on_degraded,
                **options,
            ),
            "for_agent",
        )
        return cls(federated_user(ops, user_id, owns=True))

    def close(self) -> None:
        """Close the database (idempotent)."""
        _runner.run(self._ops.close(), "close")

    def __enter__(self) -> Memory:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def remember(
        self,
        content: str,
        *,
        id: str | None = None,
        type: str = "semantic",
        importance: float = 0.5,
        confidence: float = 1.0,
        source: str = "agent",
        tags: Iterable[str] | None = None,
        metadata: dict[str, Any] | None = None,
        agent_id: str | None = None,
        scope: str = "private",
        pool: str | None = None,
        session_id: str | None = None,
        pinned: bool = False,
        ttl: float | None = None,
        expires_at: Any = None,
        dedupe: bool = True,
        user_id: str | None = None,
    ) -> MemoryId:
        """Store one memory and return its id (``.status``: created, updated or duplicate).

        A caller-supplied ``id`` that exists is updated (upsert). With ``dedupe`` the same
        content in the same agent/scope/pool is not stored twice: the existing id comes back
        with status ``"duplicate"``. ``importance`` and ``confidence`` are clamped to [0, 1].
        ``ttl`` (seconds) or ``expires_at`` hide the memory once passed. ``user_id`` writes it
        for that user of the agent (see :meth:`for_user`; a user's handle writes its own).
        """
        return _runner.run(
            self._ops.remember(
                content,
                dedupe=dedupe,
                id=id,
                type=type,
                importance=importance,
                confidence=confidence,
                source=source,
                tags=tags,
                metadata=metadata,
                agent_id=agent_id,
                scope=scope,
                pool=pool,
                session_id=session_id,
                pinned=pinned,
                ttl=ttl,
                expires_at=expires_at,
                user_id=user_id,
            ),
            "remember",
        )

    def remember_many(
        self,
        items: Iterable[str | dict[str, Any]],
        *,
        dedupe: bool = True,
        vectors: Sequence[Sequence[float] | None] | None = None,
    ) -> list[MemoryId]:
        """Store many memories (strings, or dicts of :meth:`remember`'s fields) in one transaction.

        ``vectors``: one vector per item, computed by the caller with the store's model, stored
        instead of embedding the item (``None`` for an item: the embedder embeds it). Without an
        embedder, supplied vectors pin a new store to the model ``"supplied"`` of their width;
        every vector must fit the store's pin. Single stores only.
        """
        return _runner.run(self._ops.remember_many(items, dedupe=dedupe, vectors=vectors), "remember_many")

    def recall(
        self,
        query: str = "",
        *,
        k: int = 10,
        mode: str = "hybrid",
        filters: dict[str, Any] | None = None,
        touch: bool | None = None,
        scope: str | None = None,
        pool: str | None = None,
        vector: Sequence[float] | None = None,
        vector_weight: float | None = None,
    ) -> Hits:
        """The ``k`` memories that best match ``query``, best first.

        ``mode``: ``"keyword"`` (BM25), ``"semantic"`` (vector cosine) or ``"hybrid"``.
        An empty query lists memories: pinned first, then by importance, then newest.
        ``filters``: agent_id, scope, pool, type, source, session_id, tags (any of),
        tags_all, min_confidence, min_importance, since, until, pinned, metadata
        (``{"key": value}`` or ``{"key": {"$gt": 1}}``; operators $eq $ne $gt $gte $lt $lte
        $in $nin $exists $contains $icontains $empty $like $ilike $between; equality on a
        list-valued key means the list holds the value; ``$and``/``$or`` take lists of such
        dicts, ``$not`` one). ``touch`` records an access (default: the store's RecallConfig).
        ``scope`` and ``pool`` are shorthands for those filters; on a federation they pick
        the tiers asked (no scope: every tier, merged). ``vector``: a query vector of the
        store's embedding width, searched instead of embedding ``query`` (mode ``"semantic"``
        or ``"hybrid"``; with an empty query only the vector leg runs; single stores only).
        ``vector_weight``: the vector leg's weight in [0, 1] for this hybrid recall, instead of
        the store's :class:`RecallConfig` one (single stores only).
        """
        found = _runner.run(
            self._ops.recall(
                query,
                k=k,
                mode=mode,
                filters=filters,
                touch=touch,
                scope=scope,
                pool=pool,
                vector=vector,
                vector_weight=vector_weight,
            ),
            "recall",
        )
        return found if isinstance(found, Hits) else Hits(found)

    def explain(
        self,
        query: str = "",
        *,
        k: int = 10,
        mode: str = "hybrid",
        filters: dict[str, Any] | None = None,
        scope: str | None = None,
        pool: str | None = None,
        vector: Sequence[float] | None = None,
        vector_weight: float | None = None,
    ) -> Explanation:
        """Recall without recording access, and say how the result was made.

        ``details["vectors_pending"]``, when the query was meant for semantic search: the
        store's live memories it could not see yet (no vector; keyword search still finds them).
        """
        return _runner.run(
            self._ops.explain(
                query,
                k=k,
                mode=mode,
                filters=filters,
                scope=scope,
                pool=pool,
                vector=vector,
                vector_weight=vector_weight,
            ),
            "explain",
        )

    def get(self, id: str) -> MemoryRecord | None:
        """The memory ``id`` (hidden ones too), or ``None``. Records no access."""
        return _runner.run(self._ops.get(id), "get")

    def get_many(self, ids: Iterable[str]) -> list[MemoryRecord]:
        """The memories that exist among ``ids``, in the order given."""
        return _runner.run(self._ops.get_many(ids), "get_many")

    def update(self, id: str, **changes: Any) -> MemoryRecord:
        """Change fields of a live memory (content re-hashes and re-embeds); returns it."""
        return _runner.run(self._ops.update(id, **changes), "update")

    def forget(self, ids: str | Iterable[str], *, hard: bool = False) -> int:
        """Soft-delete (hidden, recoverable with :meth:`restore`) or, with ``hard``, erase."""
        return _runner.run(self._ops.forget(ids, hard=hard), "forget")

    def restore(self, ids: str | Iterable[str]) -> int:
        """Bring soft-deleted memories back; returns how many."""
        return _runner.run(self._ops.restore(ids), "restore")

    def archive(self, ids: str | Iterable[str], *, archived: bool = True) -> int:
        """Hide memories from recall without deleting them (``archived=False`` unhides)."""
        return _runner.run(self._ops.archive(ids, archived=archived), "archive")

    def purge(self, older_than: float = 0.0, *, ids: str | Iterable[str] | None = None) -> int:
        """Erase memories soft-deleted, or expired, at least ``older_than`` seconds ago; returns how many.

        ``ids`` limits it to those memories, checked and erased in one transaction: one renewed
        (a new ``expires_at``) or restored meanwhile stays.
        """
        return _runner.run(self._ops.purge(older_than, ids=ids), "purge")

    def prune(self, policy: PrunePolicy | None = None, **fields: Any) -> PruneReport:
        """Archive or purge by an importance floor and/or an entry cap; pinned never touched."""
        return _runner.run(self._ops.prune(policy, **fields), "prune")

    def stats(self) -> dict[str, Any]:
        """Counts, vector index (tier, vectors, dimension, RAM bytes, ANN), embedding pin, driver and file size.

        ``vectors_pending`` counts the live memories still without a vector (every agent's): the
        worker embeds them, :meth:`drain` waits for them.
        """
        return _runner.run(self._ops.stats(), "stats")

    def load_index(self) -> str:
        """Load the vector index now, and wait for the ANN index when the tier builds one; returns the tier.

        Recall loads it on first use anyway (and serves exactly while an ANN index is built
        in the background); call this after opening to pay that cost up front.
        """
        return _runner.run(self._ops.load_index(), "load_index")

    def embed_query(self, text: str) -> list[float]:
        """The unit vector recall searches with for ``text`` (raises when the store has no usable embedder)."""
        return _runner.run(self._core.embed_query(text), "embed_query")

    def tags(self, *, filters: dict[str, Any] | None = None, prefix: str | None = None) -> dict[str, int]:
        """How many live memories carry each tag, by tag (sorted).

        ``filters`` (as :meth:`recall`'s) narrow the memories counted; ``prefix`` keeps the
        tags that start with it.
        """
        return _runner.run(self._ops.tags(filters=filters, prefix=prefix), "tags")

    def generation(self) -> int | None:
        """A number that moves on whenever memories change, or ``None`` where the store keeps none.

        Any write that changes a memory moves it on, this process's or another's (reading it
        picks up other connections' commits), so what was read under one value is still
        current while it stays the same: a cache's key. Two things change without it: a
        memory whose ``ttl`` runs out leaves reads with no write, and the memory loop's own
        tables (facts, summaries, the graph) are not memories. A SQLite file keeps one;
        PostgreSQL and a federation do not (``None``: read again).
        """
        return _runner.run(self._ops.generation(), "generation")

    def vectors(self, ids: str | Iterable[str]) -> dict[str, list[float]]:
        """The stored (unit-length) vectors of the memories among ``ids`` that have one, by id."""
        return _runner.run(self._ops.vectors(ids), "vectors")

    def export_jsonl(self, path: str | Path, *, vectors: bool = False) -> int:
        """Write the whole store as JSON lines; returns the number of memories.

        Every table's user data goes: memories (hidden ones too; ``vectors=True`` adds their
        vectors), turns, sessions, facts with their history, quarantine, the graph and memory
        edges, read from one snapshot (consistent while writers go on).
        """
        return _runner.run(dump.export_jsonl(self._core, path, vectors=vectors), "export_jsonl")

    def import_jsonl(self, path: str | Path, *, progress: Callable[[int, int], object] | None = None) -> ImportReport:
        """Read an export back (ids, times and counters kept; an upsert, so importing twice is safe).

        The whole file is checked first: a bad line names itself and nothing is imported. Then
        each batch of records is one transaction (a store failing midway keeps the batches
        before; importing again is safe). Files from earlier releases (memories only) still import. ``progress(done,
        total)`` is called with the records written so far and the file's count after each
        batch (from elastic-memory's own thread).
        """
        owner = None if self._ops is self._core else self._core.agent_id  # a federation: its private tier's rows
        return _runner.run(dump.import_jsonl(self._core, path, progress=progress, owner=owner), "import_jsonl")

    # ------------------------------------------------------------- memory loop
    @property
    def facts(self) -> Facts:
        """Versioned key-value facts (:class:`Facts`): ``facts.set("user.dog_name", "Biscuit")``."""
        return Facts(self._core)

    @property
    def graph(self) -> Graph:
        """The knowledge graph (:class:`Graph`): entities, relations, traversal, memory edges."""
        return Graph(self._core)

    @property
    def lessons(self) -> Lessons:
        """Operational lessons shown in every plan (:class:`Lessons`): ``lessons.add("Use metric units.")``."""
        return Lessons(self._core)

    def build_context(
        self,
        user_input: str,
        *,
        session_id: str | None = None,
        touch: bool = True,
        window: Iterable[Any] | None = None,
    ) -> ContextPlan:
        """What the model should see now: budgeted, quoted memory sections. Never raises.

        Profile facts always; other facts, relevant past moments (earlier sessions, and this
        session's turns the model no longer sees), lessons and the rolling summary within the
        governor's token budget. On a failure the plan is emptier, the error is logged and
        counted in :meth:`health`. ``touch=False`` records no access for what it shows (a
        read-only viewer). ``window``: the messages the model will get (texts, chat messages
        or dicts with ``content``) when the host trims or summarises its history; by default
        the host is assumed to keep the plan's ``keep_last_n_turns`` turns.
        """
        return _runner.run(
            loop_of(self._core).build_context(user_input, session_id, touch=touch, window=window), "build_context"
        )

    def record_turn(
        self, user: str, reply: str, *, session_id: str | None = None, metadata: dict[str, Any] | None = None
    ) -> TurnReceipt:
        """Keep one exchange: verbatim, as chunks, and its facts captured by rules. Never raises.

        No llm call and no embedding happen here; extraction, embedding and summaries run
        in the background worker. ``metadata`` is stored on the exchange's chunks.
        """
        return _runner.run(loop_of(self._core).record_turn(user, reply, session_id, metadata), "record_turn")

    def report_evictions(self, session_id: str | None, messages: Iterable[Any]) -> int:
        """The host trimmed ``messages`` from its window: fold them into the rolling summary."""
        return _runner.run(loop_of(self._core).report_evictions(session_id, messages), "report_evictions")

    @contextlib.contextmanager
    def foreground(self) -> Iterator[None]:
        """Bracket the host's own model call: background llm calls wait until it ends."""
        with loop_of(self._core).foreground():
            yield

    def tick(self) -> MemoryProfile:
        """Re-check free RAM (cheap) and start idle work; returns the current budgets."""
        return _runner.run(loop_of(self._core).tick(), "tick")

    def drain(self) -> None:
        """Wait until the background queue is empty and every live memory has a vector (before unloading the model).

        When no vector can be made (no usable embedder, a governor tier that embeds nothing, a
        read-only store, a failing embedder) it returns with the rest waiting, says why once in
        the log, and ``stats()["vectors_pending"]`` counts them.
        """
        _runner.run(loop_of(self._core).drain(), "drain")

    def end_session(self, session_id: str | None) -> None:
        """Mark a session over: its summary and a consolidation are queued."""
        _runner.run(loop_of(self._core).end_session(session_id), "end_session")

    def consolidate(self) -> None:
        """Queue a forgetting and consolidation sweep (archives, never deletes)."""
        _runner.run(loop_of(self._core).consolidate(), "consolidate")

    def health(self) -> dict[str, Any]:
        """The loop's state: tier, queue, shed and failed jobs, llm errors, counts."""
        return _runner.run(self._ops.health(), "health")

    def check(self, *, full: bool = False) -> CheckReport:
        """Look for damage in the store's file: ``PRAGMA quick_check``, or with ``full`` ``integrity_check``.

        The check reads the whole file through its own connection in a worker thread, so
        reads and writes go on meanwhile; it takes about a second per few hundred MB (``full``:
        several times longer). When it finds damage the store refuses writes from then on
        (``health()["damaged"]`` says why): copy what is readable into a new file with
        :func:`~elastic_memory.repair` (``elastic-memory repair``). A store opened after a
        process ended without closing it runs the quick check by itself (see
        ``health()["open_check"]``). In a federation (:meth:`for_agent`) it checks the
        private tier; PostgreSQL raises :class:`~elastic_memory.UsageError`.
        """
        return _runner.run(self._core.root.check(full=full), "check")

    def quarantine(self, limit: int = 100) -> list[QuarantinedItem]:
        """What the guards refused to store, most recent first (reason, source turn, whether releasable)."""
        return _runner.run(loop_of(self._core).quarantine(v_limit(limit)), "quarantine")

    def release_quarantined(self, item_id: int) -> str:
        """Write a quarantined fact or memory as it would have been; returns the fact's key or the memory's id."""
        return _runner.run(loop_of(self._core).release_quarantined(item_id), "release_quarantined")

    def discard_quarantined(self, item_id: int) -> None:
        """Delete a quarantined item for good."""
        _runner.run(loop_of(self._core).discard_quarantined(item_id), "discard_quarantined")

    # Last in the class: below it, ``list`` would name this method, not the builtin.
    def list(
        self,
        filters: dict[str, Any] | None = None,
        *,
        state: str = "live",
        limit: int = 50,
        after: str | None = None,
    ) -> Page:
        """Every memory, page by page in the order written (ids included, no access recorded).

        ``filters`` as :meth:`recall`'s; ``state`` is ``"live"`` (recall's memories),
        ``"archived"``, ``"deleted"`` (soft-deleted) or ``"all"`` (expired ones too).
        ``limit`` (1 to 1000) records a page; pass a page's ``next`` as ``after`` for the
        next one. In a federation (:meth:`for_agent`) it lists the private tier.
        """
        return _runner.run(_paging.list_page(self._core, filters, state=state, limit=limit, after=after), "list")

    # ---- end of generated code ----

    def as_async(self) -> AsyncMemory:
        """An :class:`AsyncMemory` over the same open store (closing either closes both).

        >>> from elastic_memory.testing import FakeEmbedder
        >>> with Memory.open(":memory:", embedder=FakeEmbedder()) as mem:
        ...     mem.as_async().path == mem.path
        True
        """
        return AsyncMemory(self._ops)


register_sync(Memory)
