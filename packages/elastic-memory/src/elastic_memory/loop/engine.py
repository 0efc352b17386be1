"""MemoryLoop: the host's two calls every turn, and everything behind them.

``record_turn`` stores the exchange verbatim and condensed, captures facts with rules and
queues the rest (extraction, embedding, summaries, consolidation) for the worker;
``build_context`` assembles budgeted, quoted sections for the next model call. Neither
raises into the host: a failure is logged, counted in :meth:`health`, and answered with
a degraded result (an error receipt, an emptier plan).
"""

from __future__ import annotations

import copy
import json
import logging
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, NoReturn, cast

from .. import _runner
from .. import _validate as v
from ..context import ContextPlan, check_counter, estimate_tokens
from ..core import RecallStep
from ..embedders import MiniLMEmbedder
from ..errors import UsageError
from ..extraction import HeuristicExtractor, LLMExtractor
from ..extraction.flags import FLAG_KEY
from ..extraction.guards import GuardReason, check_text
from ..extraction.rules import KEYS
from ..filters import to_timestamp
from ..governor import Admission, Governor, MemoryProfile
from ..retrieval.graph_nudge import GraphBudget, GraphNudge
from ..types import KINDS, Fact, MemoryRecord, QuarantinedItem, TurnReceipt
from . import jobs, plan, turns
from .config import LoopConfig
from .host import LoopHost
from .inputs import as_messages, as_session, as_text, check_loop_args
from .tables import FactWrite, LoopStore
from .worker import ForegroundGate, Job, LLMCaller, Worker, describe
from .writes import Written

__all__ = ["MemoryLoop"]

log = logging.getLogger("elastic_memory")
#: What a store without the loop's tables answers to every loop call.
NO_LOOP = (
    "the memory loop (record_turn, build_context, facts, lessons, sessions, the knowledge graph) is not "
    "available on PostgreSQL yet: keep the agent's own memory in a SQLite file and put shared pools and the "
    "global tier on PostgreSQL with Memory.for_agent (see docs/scaling-out.md)"
)


class _NoLoopTables:
    """Stands for the loop's tables on a store that has none: every call raises :data:`NO_LOOP`."""

    def __getattr__(self, name: str) -> Any:
        if name == "graph":
            return self

        async def unavailable(*args: Any, **kwargs: Any) -> NoReturn:
            raise UsageError(NO_LOOP)

        return unavailable


#: Keys whose facts are shown in every plan unless set with another category.
PROFILE_KEYS = frozenset(key for key, category, _ in KEYS if category == "profile")


class MemoryLoop:
    """The loop of one core (see :class:`.LoopHost`). Every coroutine runs on the library loop.

    ``record_turn``'s write path is :mod:`.turns`, ``build_context``'s plan :mod:`.plan`, the
    background work :mod:`.jobs`; this class holds their shared state and the host's other calls.
    """

    def __init__(
        self,
        core: LoopHost,
        config: LoopConfig,
        *,
        llm: Callable[..., str] | None,
        context_tokens: int,
        probe: Callable[[], int] | None = None,
    ) -> None:
        check_loop_args(llm, context_tokens)
        self.core = core
        self.config = config
        self.agent_id = core.agent_id
        #: False on PostgreSQL: the loop's tables are SQLite-only for now (see ``docs/scaling-out.md``).
        self.supported = core.store.capabilities.loop_tables
        self.store = LoopStore(core.store) if self.supported else cast(LoopStore, _NoLoopTables())
        self.governor = Governor(
            context_tokens=context_tokens,
            has_llm=llm is not None,
            tier=config.tier,
            budget_tokens=config.budget_tokens,
            probe=probe,
        )
        self.count = check_counter(config.token_counter) if config.token_counter else estimate_tokens
        self.gate = ForegroundGate(timeout=config.llm_timeout * 2)
        self.llm = LLMCaller(llm, self.gate, timeout=config.llm_timeout, cooldown=config.llm_cooldown) if llm else None
        self.worker = Worker(self.gate, Admission(), background=config.background)
        self.heuristic = HeuristicExtractor(language=config.language, policy=config.extraction)
        self.llm_extractor = LLMExtractor(language=config.language, policy=config.extraction)
        self.errors: dict[str, int] = {}
        self.last_error: str | None = None
        #: Vectors the embed job stored (``drain`` tells progress by it).
        self.embedded = 0
        #: Set by :meth:`close`: the embed job finishes its batches but chains no follow-up.
        self.closing = False
        self._backlog_said: set[str] = set()  # why drain left a backlog, each reason logged once
        self.last_turn_at = time.monotonic()
        self.consolidated_at = time.monotonic()
        #: The session of the latest turn recorded by this process.
        self.current_session: str | None = None
        #: Memories and facts plans showed, for the touch job to count (see :mod:`.plan`).
        self.touched: set[str] = set()
        self.touched_facts: set[int] = set()
        #: Turns recorded since the last consolidation sweep.
        self.since_sweep = 0
        #: Per (jobs prefix, session): the ends of the last user messages and what they wrote (see :mod:`.turns`).
        self.said: dict[tuple[str, str], tuple[tuple[str, Written], ...]] = {}
        self.asked_pairs: set[tuple[int, int]] = set()  # duplicate-entity questions already asked
        self.labelled: dict[int, str] = {}  # clusters the llm named, and their labels
        self._foreground_owner: int | None = None
        #: Prefixes this loop's job keys: empty for the agent's own loop, the owner for a user's.
        self.jobs_prefix = ""
        #: What this loop adds to its core's recall (see :meth:`MemoryCore.attach`): the graph nudge.
        self.recall_steps: tuple[RecallStep, ...] = self._own_recall_steps()
        core.store.allow_ram_index(self.profile.ram_vector_index, ann=self.profile.ann_vector_index)

    def for_owner(self, core: LoopHost) -> MemoryLoop:
        """The loop of ``core``, a user's handle on this loop's store (see :mod:`elastic_memory.users`).

        It shares this loop's worker, governor, foreground gate, llm and extractors (one queue,
        one budget for the whole store) and keeps its own session, touches and sweep count; its
        jobs are keyed by its owner, so two users' jobs never stand for each other.
        """
        sibling = copy.copy(self)
        sibling.core = core
        sibling.agent_id = core.agent_id
        # Length-prefixed: ids may hold ':' ("u" + "summary:x:embed" must not equal "u:summary:x" + "embed"),
        # and a root job key never starts with a digit.
        sibling.jobs_prefix = f"{len(core.agent_id)}:{core.agent_id}:"
        sibling.current_session = None
        sibling.touched, sibling.touched_facts = set(), set()
        sibling.since_sweep = 0
        sibling.asked_pairs, sibling.labelled = set(), {}
        sibling.recall_steps = sibling._own_recall_steps()  # nudged by the owner's graph, failures its own
        return sibling

    # ------------------------------------------------------------------ helpers
    @property
    def profile(self) -> MemoryProfile:
        """The governor's current budgets."""
        return self.governor.profile

    def retune(self) -> MemoryProfile:
        """Re-check the governor; apply what its tier says to the store (the RAM vector index)."""
        profile = self.governor.tick()
        self.core.store.allow_ram_index(profile.ram_vector_index, ann=profile.ann_vector_index)
        return profile

    def failed(self, what: str, error: BaseException) -> str:
        """Count and log a failure of ``what`` (the loop goes on); the message, as ``health()`` shows it."""
        self.errors[what] = self.errors.get(what, 0) + 1
        self.last_error = f"{what}: {type(error).__name__}: {describe(error)}"
        log.warning("elastic-memory %s", self.last_error)
        return self.last_error

    def submit(
        self,
        kind: str,
        key: str,
        run: Callable[[], Any],
        *,
        critical: bool = False,
        defer: bool = False,
        store_wide: bool = False,
    ) -> bool:
        """Queue a job (or, with ``background=False``, keep it for the next drain/tick).

        Jobs over the store's shared state (not this process's own access counts) run under
        the store's claim on ``agent:key``: of two processes serving one agent, one does it;
        a ``store_wide`` job (work on every agent's rows) claims ``key`` alone: of all the
        processes serving the store, one does it. A ``defer`` job that load shedding refuses
        runs once the queue has run dry instead of being dropped.
        """
        profile = self.profile
        if kind != "touch":
            own = self.jobs_prefix + key if self.jobs_prefix else f"{self.agent_id}:{key}"
            run = self._claimed(key if store_wide else own, run)
        queued = key if store_wide else self.jobs_prefix + key  # one store-wide job serves every user's loop
        job = Job(kind=kind, run=run, key=queued, critical=critical, deferrable=defer)
        return self.worker.submit(job, queue_max=profile.queue_max, headroom_seconds=profile.headroom_seconds)

    def _claimed(self, name: str, run: Callable[[], Any]) -> Callable[[], Awaitable[None]]:
        async def claimed() -> None:
            async with self.core.store.claim(name) as mine:
                if mine:
                    await run()
                else:
                    log.debug("elastic-memory: job %s skipped, another process is running it", name)

        return claimed

    def queue_embedding(self, *, critical: bool = False) -> bool:
        """Queue the embed job: vectors for every live memory of the store that has none.

        It is never dropped: shed, it waits for the queue to run dry (see :class:`.Job`).
        """
        return self.submit(
            "embed", "embed", lambda: jobs.embed_pending(self), critical=critical, defer=True, store_wide=True
        )

    async def embedding_blocked(self) -> str | None:
        """Why the embed job can give no vectors now (``None``: it can)."""
        store = self.core.store
        if not store.has_vec:
            return "the store cannot hold vectors (sqlite-vec or pgvector is missing)"
        if store.read_only is not None:
            return f"the store is open read-only ({store.read_only})"
        if not self.core.embeds:
            return "no embedder is configured (open the store with embedder='auto' or an Embedder)"
        if not self.may_embed():
            return f"the governor's {self.profile.tier.value} tier embeds nothing in the background"
        if await self.core.embedder(quiet=True) is None:
            return f"no configured embedder is usable ({self.core.embedder_problem or 'see the RecallWarning'})"
        return None

    async def resume(self) -> None:
        """At open: queue the embedding of memories earlier processes left without a vector.

        Only where a background worker runs and the store has an embedder to give them; the
        count reads the backlog's index, so a store with none pays nothing, and no model is
        loaded here (the job resolves it on the worker).
        """
        store = self.core.store
        if not (self.supported and self.config.background and store.has_vec and store.read_only is None):
            return
        if not self.core.embeds or not self.may_embed():
            return
        try:
            if await store.unembedded():
                self.queue_embedding()
        except Exception as e:  # noqa: BLE001 - the store opened: a backlog waits for the next turn or drain
            self.failed("embedding backlog", e)

    # -------------------------------------------------------------- record_turn
    async def record_turn(self, user: Any, reply: Any, session_id: Any = None, metadata: Any = None) -> TurnReceipt:
        """Store one exchange; never raises (see :meth:`AsyncMemory.record_turn` and :mod:`.turns`)."""
        if not self.supported:
            raise UsageError(NO_LOOP)
        async with self.worker.calls.call():  # background work waits for the host's call
            return await turns.record_turn(self, user, reply, session_id, metadata)

    async def distrust(self, written: Written, flag: str) -> None:
        """A turn proved half of a split instruction: its chunks flagged, its memories archived, new facts forgotten."""
        chunk_ids, memory_ids, fact_keys = written
        await self.core.set_metadata_key(chunk_ids, FLAG_KEY, flag)
        if memory_ids:
            await self.core.archive(list(memory_ids))
        for key in fact_keys:
            await self.forget_fact(key)

    def llm_extraction_due(self) -> bool:
        """Whether the worker will run an llm extraction over new turns."""
        profile = self.profile
        return self.llm is not None and profile.llm_extraction and profile.extract_every_n_turns > 0

    # ------------------------------------------------------------ build_context
    async def build_context(
        self, user_input: Any, session_id: Any = None, *, touch: Any = True, window: Any = None
    ) -> ContextPlan:
        """The plan for the next model call (see :mod:`.plan`); never raises (an empty plan on failure).

        ``touch=False`` counts no access for what the plan shows (a read-only caller).
        ``window``: the messages the model will see (see :mod:`.window`); ``None`` assumes the
        host keeps the plan's ``keep_last_n_turns`` turns.
        """
        if not self.supported:
            raise UsageError(NO_LOOP)
        if not isinstance(touch, bool):
            msg = f"touch must be True or False, got {touch!r}"
            raise UsageError(msg)
        async with self.worker.calls.call():  # background work waits for the host's call
            return await plan.build_plan(self, user_input, session_id, touch=touch, window=window)

    # ------------------------------------------------------------------ recall
    def may_embed(self) -> bool:
        """Whether this tier may embed queries with the configured embedder."""
        profile = self.profile
        builtin = isinstance(self.core.configured_embedder, MiniLMEmbedder)
        return profile.builtin_embedder if builtin else profile.embedder

    def graph_budget(self) -> GraphBudget:
        """What the graph nudge may do now: the recall settings' ``graph_boost``, the governor's hops and rows."""
        profile = self.profile
        return GraphBudget(self.core.recall_config.graph_boost, profile.graph_hops, profile.graph_rows_max)

    def _own_recall_steps(self) -> tuple[RecallStep, ...]:
        """This loop's recall steps: the graph nudge, by this loop's owner's graph (none without the loop's tables)."""
        if not self.supported:
            return ()
        return (GraphNudge(self.store.graph, self.agent_id, budget=self.graph_budget, failed=self.failed),)

    # ------------------------------------------------------------------- facts
    async def set_fact(
        self,
        key: Any,
        value: Any,
        *,
        category: Any = None,
        valid_from: Any = None,
        importance: Any = 0.7,
        source: Any = "user_confirmed",
    ) -> Fact:
        """Set ``key``: user-confirmed (explicit, confidence 1.0) or written by the agent: see :meth:`Facts.set`."""
        if not self.supported:
            raise UsageError(NO_LOOP)
        agent = _writer(source) == "agent"
        fact_key = v.check_fact_key(key, self.config.extraction.reserved_prefixes)
        text = v.check_fact_value(value)
        _screen("fact", f"{fact_key.replace('.', ' ').replace('_', ' ')}: {text}", agent=agent)
        cat = v.check_category(category, fact_key, PROFILE_KEYS)
        when = None if valid_from is None else to_timestamp("valid_from", valid_from)
        write = FactWrite(
            key=fact_key,
            value=text,
            category=cat,
            source="agent" if agent else "user_confirmed",
            origin="agent" if agent else "explicit",
            confidence=self.config.extraction.agent_confidence_cap if agent else 1.0,
            importance=v.unit("importance", importance),
            valid_from=when,
        )
        await self.store.put_facts(self.agent_id, [write])
        fact = await self.store.current_fact(self.agent_id, fact_key)
        assert fact is not None  # just written in a committed transaction
        return fact

    async def get_fact(self, key: Any, *, as_of: Any = None) -> Fact | None:
        """The current version of ``key``, or the one valid at ``as_of``."""
        if not self.supported:
            raise UsageError(NO_LOOP)
        fact_key = v.check_fact_key(key, ())
        if as_of is None:
            return await self.store.current_fact(self.agent_id, fact_key)
        return await self.store.fact_as_of(self.agent_id, fact_key, to_timestamp("as_of", as_of))

    async def fact_history(self, key: Any) -> list[Fact]:
        """Every version of ``key``, oldest first."""
        if not self.supported:
            raise UsageError(NO_LOOP)
        return await self.store.fact_history(self.agent_id, v.check_fact_key(key, ()))

    async def forget_fact(self, key: Any) -> bool:
        """Tombstone ``key``; ``False`` if it held no value."""
        if not self.supported:
            raise UsageError(NO_LOOP)
        fact_key = v.check_fact_key(key, ())
        write = FactWrite(
            key=fact_key,
            value="",
            category="note",
            source="user_confirmed",
            origin="explicit",
            confidence=1.0,
            importance=0.0,
            forgotten=True,
        )
        return (await self.store.put_facts(self.agent_id, [write]))[0] != "unchanged"

    async def list_facts(self, *, category: Any = None) -> list[Fact]:
        """The current facts, most important first."""
        if not self.supported:
            raise UsageError(NO_LOOP)
        if category is not None and category not in ("profile", "note"):
            msg = f"category must be 'profile', 'note' or None, got {category!r}"
            raise UsageError(msg)
        return await self.store.current_facts(self.agent_id, category=category)

    # -------------------------------------------------------------- quarantine
    async def quarantine(self, limit: int) -> list[QuarantinedItem]:
        """What the guards refused to store, most recent first."""
        if not self.supported:
            raise UsageError(NO_LOOP)
        return await self.store.quarantine(self.agent_id, limit)

    async def _item(self, item_id: Any) -> tuple[QuarantinedItem, str | None]:
        if not self.supported:
            raise UsageError(NO_LOOP)
        if isinstance(item_id, bool) or not isinstance(item_id, int) or not 1 <= item_id < 2**63:
            msg = f"item_id must be a QuarantinedItem's id (a positive int), got {item_id!r}"
            raise UsageError(msg)
        found = await self.store.quarantined(self.agent_id, item_id)
        if found is None:
            msg = f"no quarantined item {item_id} for agent {self.agent_id!r}; list them with quarantine()"
            raise UsageError(msg)
        return found

    async def release_quarantined(self, item_id: Any) -> str:
        """Write a quarantined fact or memory as it would have been; the fact's key or the memory's id.

        A reviewer's decision: the guards are not asked again. The item leaves the quarantine
        in the same transaction.

        Raises:
            UsageError: No such item, or one that cannot be released (an entity, a relation,
                or an item kept before schema v7): discard it instead.
        """
        item, payload = await self._item(item_id)
        data = json.loads(payload) if payload else {}
        if "fact" in data:
            fact = FactWrite(**data["fact"])
            if await self.store.release_fact(self.agent_id, item.id, fact, item.turn_seq) is not None:
                return fact.key
        elif "memory" in data:
            m = data["memory"]
            row = v.build_row(
                m["content"],
                now=self.core.store.clock(),
                default_agent=self.agent_id,
                type=m["type"],
                importance=m["importance"],
                confidence=m["confidence"],
                source="extracted",
                session_id=m["session_id"],
                kind=m["kind"] if m["kind"] in KINDS else "note",
            )
            mid = await self.store.release_memory(self.agent_id, item.id, row)
            if mid is not None:
                self.queue_embedding()
                return str(mid)
        else:
            msg = (
                f"quarantined item {item.id} ({item.what}) cannot be released: only facts and memories quarantined "
                "since schema v7 keep what they would have written; discard it, or write it yourself"
            )
            raise UsageError(msg)
        msg = f"quarantined item {item.id} was released or discarded meanwhile"
        raise UsageError(msg)

    async def discard_quarantined(self, item_id: Any) -> None:
        """Delete a quarantined item for good.

        Raises:
            UsageError: No such item.
        """
        item, _ = await self._item(item_id)
        if not await self.store.discard_quarantined(self.agent_id, item.id):
            msg = f"quarantined item {item.id} was released or discarded meanwhile"
            raise UsageError(msg)

    # ----------------------------------------------------------------- lessons
    async def add_lesson(self, text: Any, *, importance: Any = 0.7, source: Any = "user_confirmed") -> str:
        """Store a short operational lesson (deduplicated; the oldest beyond the cap archived).

        A lesson is the host's own directive, so directives pass; text the guards read as
        spoofing, a claim of authority, a request for secrets or a payment redirection is
        refused (nothing is written).
        """
        if not self.supported:
            raise UsageError(NO_LOOP)
        writer = _writer(source)
        if isinstance(text, str):
            _screen("lesson", text, agent=writer == "agent")
        mid = await self.core.remember(text, type="procedural", importance=importance, source=writer, kind="lesson")
        lessons = await self.store.live_of_kind(self.agent_id, "lesson")
        excess = [i for i in lessons if i != mid][: max(0, len(lessons) - self.config.max_lessons)]
        if excess:
            await self.core.archive(excess)
        return str(mid)

    async def list_lessons(self) -> list[MemoryRecord]:
        """Live lessons: pinned, then most important, then most recent."""
        if not self.supported:
            raise UsageError(NO_LOOP)
        hits = await self.core.root.recall(
            "",
            k=self.config.max_lessons,
            filters={"kind": "lesson", "agent_id": plan.lesson_owners(self.agent_id)},
            touch=False,
        )
        if not hits:
            return []
        records: list[MemoryRecord] = await self.core.root.get_many([h.id for h in hits])
        return records

    # ---------------------------------------------------------------- evictions
    async def report_evictions(self, session_id: Any, messages: Any) -> int:
        """The host dropped ``messages`` from its window: fold them into the rolling summary."""
        if not self.supported:
            raise UsageError(NO_LOOP)
        try:
            session = as_session(session_id)
            texts = [t for t in (as_text(m).strip() for m in as_messages(messages)) if t]
            if not texts:
                return 0
            state = await self.store.session(self.agent_id, session)
            total = (state.evicted_messages if state else 0) + len(texts)
            if state is None or not state.rolling_summary:
                await self.store.set_rolling_summary(self.agent_id, session, jobs.marker(total), total)
            if self.llm is not None and self.profile.llm_summaries:
                self.submit(
                    "rolling_summary",
                    f"rolling:{session}:{total}",
                    lambda: jobs.rolling_summary(self, session, texts, total),
                )
            else:
                await self.store.set_rolling_summary(self.agent_id, session, jobs.marker(total), total)
            return len(texts)
        except Exception as e:  # noqa: BLE001 - part of the per-turn loop: never raises
            self.failed("report_evictions", e)
            return 0

    # ------------------------------------------------------------ pace & health
    @contextmanager
    def foreground(self) -> Iterator[None]:
        """Hold the model: background ``llm`` calls wait until the block ends (re-entrant per thread)."""
        me = threading.get_ident()
        if self._foreground_owner == me:
            yield
            return
        acquired = self.gate.acquire()
        if acquired:
            self._foreground_owner = me
        if not acquired:
            log.warning("elastic-memory: the background llm call did not yield in time; going ahead")
        try:
            yield
        finally:
            if acquired:
                self._foreground_owner = None
                self.gate.release()

    @asynccontextmanager
    async def aforeground(self) -> AsyncIterator[None]:
        """:meth:`foreground` for a coroutine: waits for the gate without blocking the event loop."""
        acquired = await self.gate.acquire_async()
        try:
            yield
        finally:
            if acquired:
                self.gate.release()

    async def tick(self) -> MemoryProfile:
        """Re-check the machine (cheap), and start idle work that is due."""
        profile = self.retune()
        idle = profile.idle_consolidate_seconds
        now = time.monotonic()
        if idle is not None and now - self.last_turn_at >= idle and self.consolidated_at < self.last_turn_at:
            self.consolidated_at = now
            self.submit("consolidate", "consolidate", lambda: jobs.consolidate(self))
        if self.config.background:
            self.worker.start()
        else:
            await self.worker.drain()
        return profile

    async def drain(self) -> None:
        """Run every queued job to the end, then embed every live memory still without a vector.

        The backlog is the whole store's (every agent's rows), whoever left it: shed jobs, a
        process that closed early, writes with ``embedder=None``. When no vector can be made
        (no usable embedder, a tier that embeds nothing, a read-only store, a failing
        embedder, another process holding the store's embedding), it returns with the
        backlog left, logs why once, and ``stats()["vectors_pending"]`` counts what is left.
        """
        await self.worker.drain()
        if self.supported:
            await self._embed_backlog()

    async def _embed_backlog(self) -> None:
        while not _runner.exiting():
            left = await self.core.store.unembedded()
            if not left:
                return
            why = await self.embedding_blocked()
            if why is None:
                done, failed = self.embedded, self.worker.errors.get("embed", 0)
                self.queue_embedding(critical=True)  # the host waits for it: never shed
                await self.worker.drain()
                if self.embedded > done:
                    continue
                if self.worker.errors.get("embed", 0) > failed:
                    why = f"the embed job failed ({self.worker.last_error})"
                else:
                    why = "the embed job stored no vector (another process may be embedding the store)"
            if self.core.embeds and why not in self._backlog_said:
                self._backlog_said.add(why)
                log.warning("elastic-memory: drain() left %d memories without a vector: %s", left, why)
            return

    async def end_session(self, session_id: Any) -> None:
        """End a session now: summary, consolidation (in the background)."""
        if not self.supported:
            raise UsageError(NO_LOOP)
        session = as_session(session_id)
        self.submit("session_summary", f"summary:{session}", lambda: jobs.session_summary(self, session), critical=True)

    async def consolidate(self) -> None:
        """Queue a consolidation sweep (forgetting, near-duplicate merge, caps)."""
        if not self.supported:
            raise UsageError(NO_LOOP)
        self.submit("consolidate", "consolidate", lambda: jobs.consolidate(self), critical=True)

    async def close(self) -> None:
        """Finish the queue and stop the worker (an embed job running chains no follow-up: see ``drain``)."""
        self.closing = True
        await self.worker.stop()

    async def stats(self) -> dict[str, Any]:
        """This loop's counts for its owner (turns, sessions, facts, quarantine); none without the loop's tables."""
        return dict(await self.store.stats(self.agent_id)) if self.supported else {}

    async def health(self) -> dict[str, Any]:
        """Tier, queue, errors and the llm's state: what went wrong without raising."""
        profile = self.profile
        out: dict[str, Any] = {
            "tier": profile.tier.value,
            "budget_tokens": profile.budget_tokens,
            "ram_probe_ok": self.governor.last_probe_ok,
            "worker_alive": self.worker.alive,
            "worker_restarts": self.worker.restarts,
            "queue_depth": self.worker.depth,
            "jobs_done": dict(self.worker.done),
            "jobs_failed": dict(self.worker.errors),
            "jobs_shed": dict(self.worker.admission.shed),
            "jobs_deferred": self.worker.deferred,
            "errors": dict(self.errors),
            "last_error": self.last_error or self.worker.last_error,
            "llm": None,
        }
        if self.llm is not None:
            out["llm"] = {
                "calls": self.llm.calls,
                "failures": self.llm.failures,
                "available": self.llm.available,
                "last_error": self.llm.last_error,
            }
        if not self.supported:
            out["loop"] = NO_LOOP
            return out
        try:
            out.update(await self.store.stats(self.agent_id))
        except Exception as e:  # noqa: BLE001 - health reports, never raises
            out["stats_error"] = str(e)
        return out


def dumps(value: Any) -> str:
    """Compact JSON for prompts."""
    return json.dumps(value, ensure_ascii=False)


def _writer(source: Any) -> str:
    """Who wrote an explicit fact or lesson: ``"user_confirmed"`` (the user, through the host) or ``"agent"``."""
    if source not in ("user_confirmed", "agent"):
        msg = f"source must be 'user_confirmed' (the user said so) or 'agent' (the agent decided), got {source!r}"
        raise UsageError(msg)
    return str(source)


def _screen(what: str, text: str, *, agent: bool) -> None:
    """Refuse an explicit fact or lesson the guards read as poisoning (nothing is written).

    The host's own writes may direct the assistant (a lesson is a directive); a model's
    (``source="agent"``, MCP) may not: for them every family counts.
    """
    reason = check_text(text)
    if reason is None or (reason == GuardReason.INSTRUCTION and what == "lesson" and not agent):
        return
    msg = (
        f"this {what} was refused: it reads as {reason} (see 'Guards against memory poisoning' in "
        f"docs/memory-loop.md); a {what} says "
        + ("how to work" if what == "lesson" else "what is true of the user or the world")
        + ", never who may do what, where secrets or money go, or what the assistant must do for others"
    )
    raise UsageError(msg)
