"""MemoryLoop: the host's two calls every turn, and everything behind them.

``record_turn`` stores the exchange verbatim and condensed, captures facts with rules and
queues the rest (extraction, embedding, summaries, consolidation) for the worker;
``build_context`` assembles budgeted, quoted sections for the next model call. Neither
raises into the host: a failure is logged, counted in :meth:`health`, and answered with
a degraded result (an error receipt, an emptier plan).
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
import logging
import math
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any, NoReturn, cast

from .. import _runner
from .. import _validate as v
from ..context import ContextPlan, PlanItem, assemble, check_counter, estimate_tokens
from ..embedders import MiniLMEmbedder
from ..errors import UsageError
from ..extraction import (
    Extraction,
    FactCandidate,
    HeuristicExtractor,
    LLMExtractor,
    MemoryCandidate,
    Rejection,
    Turn,
)
from ..extraction.flags import FLAG_KEY, SPLIT_CHARS, UNSCREENED, flag_of, split_flag, turn_flag, withhold
from ..extraction.guards import GuardReason, check_text
from ..extraction.rules import KEYS
from ..filters import Filters, to_timestamp
from ..governor import Admission, Governor, MemoryProfile, Tier
from ..graph import ngrams
from ..graph import recall as graph_recall
from ..graph.writes import graph_write, known_in
from ..storage.sqlite.fts import match_expression
from ..types import KINDS, Explanation, Fact, Hit, MemoryRecord, QuarantinedItem, TurnReceipt
from ..users import owner_key, split_owner
from . import jobs
from .chunking import asked_in, split_exchange
from .config import LoopConfig
from .tables import FactWrite, LoopStore, Quarantined, SessionState
from .window import InWindow, by_count, by_turns, window_texts
from .worker import ForegroundGate, Job, LLMCaller, Worker, describe

if TYPE_CHECKING:
    from ..core import MemoryCore

__all__ = ["MemoryLoop", "as_session", "as_text", "check_loop_args"]

log = logging.getLogger("elastic_memory")
#: Characters of one side of a turn kept verbatim; beyond, the text is cut with a marker.
MAX_TURN_CHARS = 1_000_000
#: Characters of the user input used as a search query.
MAX_QUERY_CHARS = 2_000
DEFAULT_SESSION = "default"
#: Sources of memories the host itself wrote (everything but what extraction inferred).
HOST_SOURCES = ("user_confirmed", "agent", "imported")
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


#: Characters of each side of a turn the inline extraction reads (the transcript keeps all).
INLINE_CHARS = 2_000
#: Characters of each side of a turn condensed into chunks (at most 32 are indexed anyway); all are screened.
CHUNKED_CHARS = 40_000
#: Characters of each side of a turn screened on the write path; the chunks of a longer turn are
#: withheld from plans (``em_flagged="unscreened"``) until the worker has screened all of it.
SCREENED_INLINE = INLINE_CHARS
#: Sessions whose last user message is kept in memory, to read an instruction split over two turns.
_SPLIT_SESSIONS = 256
#: What a turn wrote: its chunks' ids, its memories' ids, the keys of the facts it created.
_Written = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]
#: Turns between consolidation sweeps when sessions do not end (one long-lived session).
CONSOLIDATE_EVERY = 200
#: Facts and semantic memories shown only when at least this relevant, relative to the best match.
FACT_FLOOR = 0.3
#: Keys whose facts are shown in every plan unless set with another category.
PROFILE_KEYS = frozenset(key for key, category, _ in KEYS if category == "profile")
_DAY = 86_400.0


def as_text(value: Any) -> str:
    """Any turn value as text: ``None`` is empty, bytes are decoded, other objects ``str()``-ed.

    Chat-message-like objects (``.content``) and dicts (``["content"]``) give their content;
    lone surrogates are replaced so the text can always be stored.
    """
    if value is None:
        text = ""
    elif isinstance(value, str):
        text = value
    elif isinstance(value, bytes | bytearray):
        text = bytes(value).decode("utf-8", "replace")
    elif isinstance(value, dict) and "content" in value:
        return as_text(value["content"])
    elif hasattr(value, "content") and not isinstance(value, type):
        return as_text(value.content)
    elif isinstance(value, list | tuple):
        text = "\n".join(as_text(v) for v in value)
    else:
        try:
            text = str(value)
        except Exception:  # noqa: BLE001 - a hostile __str__ must not break the host
            text = f"<unprintable {type(value).__name__}>"
    text = text.encode("utf-8", "replace").decode("utf-8")
    if len(text) > MAX_TURN_CHARS:
        text = text[:MAX_TURN_CHARS] + f" [... {len(text) - MAX_TURN_CHARS} characters cut]"
    return text.replace("\x00", "")


def as_session(session_id: Any) -> str:
    """A usable session id: ``None`` is ``"default"``, anything else its text (at most 200 chars)."""
    if session_id is None:
        return DEFAULT_SESSION
    text = as_text(session_id).strip()[:200]
    return text or DEFAULT_SESSION


def check_loop_args(llm: Any, context_tokens: Any) -> None:
    """Validate :meth:`Memory.open`'s ``llm`` and ``context_tokens``."""
    if llm is not None and not callable(llm):
        msg = f"llm must be a callable taking a prompt and returning text, got {llm!r}"
        raise UsageError(msg)
    if isinstance(context_tokens, bool) or not isinstance(context_tokens, int) or context_tokens <= 0:
        msg = f"context_tokens must be the model's context size in tokens (a positive int), got {context_tokens!r}"
        raise UsageError(msg)


class MemoryLoop:
    """The loop of one :class:`MemoryCore`. Every coroutine runs on the library loop."""

    def __init__(
        self,
        core: MemoryCore,
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
        self._session: str | None = None
        self._touched: set[str] = set()
        self._touched_facts: set[int] = set()
        self._since_sweep = 0
        self._said: dict[tuple[str, str], tuple[tuple[str, _Written], ...]] = {}
        self.asked_pairs: set[tuple[int, int]] = set()  # duplicate-entity questions already asked
        self.labelled: dict[int, str] = {}  # clusters the llm named, and their labels
        self._foreground_owner: int | None = None
        self._jobs_prefix = ""
        core.store.allow_ram_index(self.profile.ram_vector_index, ann=self.profile.ann_vector_index)

    def for_owner(self, core: MemoryCore) -> MemoryLoop:
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
        sibling._jobs_prefix = f"{len(core.agent_id)}:{core.agent_id}:"
        sibling._session = None
        sibling._touched, sibling._touched_facts = set(), set()
        sibling._since_sweep = 0
        sibling.asked_pairs, sibling.labelled = set(), {}
        return sibling

    # ------------------------------------------------------------------ helpers
    @property
    def current_session(self) -> str | None:
        """The session of the latest turn recorded by this process."""
        return self._session

    @property
    def profile(self) -> MemoryProfile:
        """The governor's current budgets."""
        return self.governor.profile

    def _retune(self) -> MemoryProfile:
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
            own = self._jobs_prefix + key if self._jobs_prefix else f"{self.agent_id}:{key}"
            run = self._claimed(key if store_wide else own, run)
        queued = key if store_wide else self._jobs_prefix + key  # one store-wide job serves every user's loop
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
        """Store one exchange; never raises (see :meth:`AsyncMemory.record_turn`)."""
        if not self.supported:
            raise UsageError(NO_LOOP)
        async with self.worker.calls.call():  # background work waits for the host's call
            return await self._record_turn(user, reply, session_id, metadata)

    async def _record_turn(self, user: Any, reply: Any, session_id: Any, metadata: Any) -> TurnReceipt:
        session = DEFAULT_SESSION
        try:
            session = as_session(session_id)
            user_text, reply_text = as_text(user), as_text(reply)
            if not user_text.strip() and not reply_text.strip():
                return TurnReceipt(ok=True, session_id=session)
            extra = self._metadata(metadata)
            profile = self.profile
            now = self.core.store.clock()
            # Rules and cues only, no model; bounded text keeps the write path in milliseconds.
            turn = Turn(user=user_text[:INLINE_CHARS], reply=reply_text[:INLINE_CHARS], session_id=session)
            found = self.heuristic.extract(turn)
            flag = turn_flag(user_text[:SCREENED_INLINE], reply_text[:SCREENED_INLINE])
            before = self._said.get((self._jobs_prefix, session), ())
            said_before = " ".join(tail for tail, _ in before)
            split = split_flag(said_before, user_text) if flag is None and said_before.strip() else None
            flag = flag or split
            earlier = before if split is not None else ()  # only a split's first parts are withdrawn
            later = flag is None and max(len(user_text), len(reply_text)) > SCREENED_INLINE
            if flag is not None:  # kept verbatim, never trusted: its candidates go to the quarantine
                found = withhold(found, flag)
                extra = {**extra, FLAG_KEY: flag}
            elif later:  # withheld from plans until the worker has read all of it
                extra = {**extra, FLAG_KEY: UNSCREENED}
            importance = found.episode_importance
            chunks = split_exchange(
                user_text[:CHUNKED_CHARS],
                reply_text[:CHUNKED_CHARS],
                target_tokens=profile.chunk_target_tokens,
                count=self.count,
            )
            rows = [
                v.build_row(
                    text,
                    now=now,
                    default_agent=self.agent_id,
                    type="episodic",
                    importance=importance,
                    source="agent",
                    session_id=session,
                    metadata={**extra, **({"part": i} if i else {})},
                    kind="chunk",
                )
                for i, text in enumerate(chunks)
            ]
            rows += self.memory_rows(found, session, now)
            facts = [self.fact_write(f, session, now) for f in found.facts]
            quarantine = self.quarantined(found.rejected, session, now)
            said = f"{turn.user}\n{turn.reply}"
            known = known_in(said, await self.store.graph.detect(self.agent_id, ngrams(said, limit=400)))
            number, ids, outcomes = await self.store.record_turn(
                agent_id=self.agent_id,
                session_id=session,
                user=user_text,
                reply=reply_text,
                importance=importance,
                rows=rows,
                facts=facts,
                quarantine=quarantine,
                extracted=not self.llm_extraction_due(),
                graph=graph_write(found, known),
            )
            self.last_turn_at = time.monotonic()
            chunk_ids = tuple(ids[: len(chunks)])
            created = tuple(f.key for f, outcome in outcomes if outcome == "created")
            written: _Written = (chunk_ids, tuple(ids[len(chunks) :]), created)
            self._remember_said(session, None if flag is not None else user_text, written)
            for _, wrote in earlier:  # the first parts of a split were stored as clean: distrust them
                await self.distrust(wrote, flag or "instruction")
            if later:
                self.submit(
                    "screen",
                    f"screen:{len(session)}:{session}:{number}",
                    lambda: jobs.screen_turn(self, written, user_text[:CHUNKED_CHARS], reply_text[:CHUNKED_CHARS]),
                    critical=True,
                    defer=True,
                )
            self._after_turn(session)
            return TurnReceipt(
                ok=True,
                session_id=session,
                turn=number,
                chunk_ids=chunk_ids,
                facts=tuple(f.key for f, outcome in outcomes if outcome in ("created", "superseded", "unchanged")),
                quarantined=len(quarantine),
            )
        except Exception as e:  # noqa: BLE001 - record_turn never raises into the host
            return TurnReceipt(ok=False, session_id=session, error=self.failed("record_turn", e))

    def _remember_said(self, session: str, user_text: str | None, written: _Written) -> None:
        """Keep the ends of the session's last two user messages (and what they wrote) for :func:`.split_flag`.

        A flagged message (``None``) starts afresh: what follows it is not read with it.
        """
        key = (self._jobs_prefix, session)
        kept = self._said.pop(key, ())
        self._said[key] = () if user_text is None else (*kept[-1:], (user_text[-SPLIT_CHARS:], written))
        while len(self._said) > _SPLIT_SESSIONS:
            self._said.pop(next(iter(self._said)))

    async def distrust(self, written: _Written, flag: str) -> None:
        """A turn proved half of a split instruction: its chunks flagged, its memories archived, new facts forgotten."""
        chunk_ids, memory_ids, fact_keys = written
        await self.core.set_metadata_key(chunk_ids, FLAG_KEY, flag)
        if memory_ids:
            await self.core.archive(list(memory_ids))
        for key in fact_keys:
            await self.forget_fact(key)

    def quarantined(self, rejected: Iterable[Rejection], session: str | None, observed_at: float) -> list[Quarantined]:
        """What to keep of refused candidates: a fact or memory with the write releasing it would make."""
        out = []
        for r in rejected:
            payload: dict[str, Any] | None = None
            if isinstance(r.candidate, FactCandidate):
                payload = {"fact": dataclasses.asdict(self.fact_write(r.candidate, session, observed_at))}
            elif isinstance(r.candidate, MemoryCandidate) and r.candidate.type in ("semantic", "procedural"):
                m = r.candidate
                fields = {"type": m.type, "importance": m.importance, "confidence": m.confidence, "kind": m.kind}
                payload = {"memory": {"content": m.content, "session_id": session, **fields}}
            text = None if payload is None else json.dumps(payload, ensure_ascii=False)
            out.append(Quarantined(r.reason, r.what, r.text, r.origin, text))
        return out

    def llm_extraction_due(self) -> bool:
        """Whether the worker will run an llm extraction over new turns."""
        profile = self.profile
        return self.llm is not None and profile.llm_extraction and profile.extract_every_n_turns > 0

    def memory_rows(self, found: Extraction, session: str | None, now: float) -> list[dict[str, Any]]:
        """Rows for the semantic and procedural memories an extraction proposes."""
        return [
            v.build_row(
                m.content,
                now=now,
                default_agent=self.agent_id,
                type=m.type,
                importance=m.importance,
                confidence=m.confidence,
                source="extracted",
                session_id=session,
                kind=m.kind if m.kind in KINDS else "note",
            )
            for m in found.memories
            if m.type in ("semantic", "procedural")  # the episode is the turn's chunk
        ]

    def _metadata(self, metadata: Any) -> dict[str, Any]:
        """The host's chunk metadata, made storable: values JSON cannot hold become text.

        Metadata that is not a mapping is dropped (reported in :meth:`health`): the turn
        itself is always stored.
        """
        if metadata is None:
            return {}
        try:
            if not isinstance(metadata, Mapping):
                msg = f"metadata must be a dict, got {type(metadata).__name__}; it was not stored"
                raise UsageError(msg)
            plain = json.loads(json.dumps(dict(metadata), default=str, ensure_ascii=False))
            return dict(v.check_metadata(plain))
        except Exception as e:  # noqa: BLE001 - bad metadata never costs the turn
            self.failed("record_turn metadata", e)
            return {}

    def fact_write(self, fact: Any, session: str | None, observed_at: float) -> FactWrite:
        """The write for a captured fact; ``observed_at`` is when the turn it came from was said."""
        return FactWrite(
            key=fact.key,
            value=fact.value,
            category=fact.category,
            source="extracted",
            origin=fact.origin,
            confidence=fact.confidence,
            importance=0.8 if fact.category == "profile" else 0.6,
            session_id=session,
            observed_at=observed_at,
        )

    def _after_turn(self, session: str) -> None:
        """Queue the work a stored turn leaves: extraction, embedding, ending earlier sessions."""
        if self.llm_extraction_due():
            self.submit("extract", "extract", lambda: jobs.extract_pending(self))
        self.queue_embedding()
        if session != self._session:
            self._session = session
            self.submit("session_summary", "end-others", lambda: jobs.end_other_sessions(self), critical=True)
        self._since_sweep += 1
        if self._since_sweep >= CONSOLIDATE_EVERY:
            self._since_sweep = 0
            self.submit("consolidate", "consolidate", lambda: jobs.consolidate(self))

    # ------------------------------------------------------------ build_context
    async def build_context(
        self, user_input: Any, session_id: Any = None, *, touch: Any = True, window: Any = None
    ) -> ContextPlan:
        """The plan for the next model call; never raises (an empty plan on failure).

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
            return await self._build_context(user_input, session_id, touch=touch, window=window)

    async def _in_window(
        self, session: str, state: SessionState | None, profile: MemoryProfile, window: Any
    ) -> InWindow:
        """Which recalled memories the model already sees: the host's ``window``, else the plan's assumption."""
        if window is None:
            return by_count(session, state.turns if state else 0, profile.keep_last_n_turns)
        texts = window_texts(_messages(window), as_text)
        if state is None or not texts:
            return lambda _: False
        return by_turns(session, await self.store.shown_turns(self.agent_id, session, texts))

    async def _build_context(self, user_input: Any, session_id: Any, *, touch: bool, window: Any) -> ContextPlan:
        session = DEFAULT_SESSION
        query = ""
        profile = self.profile
        try:
            profile = self._retune()
            session = as_session(session_id)
            query = as_text(user_input)[:MAX_QUERY_CHARS]
            if profile.tier is Tier.OFF or profile.budget_tokens == 0:
                return self._empty(profile, query)
            state, sole = await asyncio.gather(
                self.store.session(self.agent_id, session), self.store.sole_agent(self.agent_id)
            )
            in_window = await self._in_window(session, state, profile, window)
            # The reads no section needs the recall for run beside it: they overlap the query's
            # embedding (and, on a server, each other: one pooled connection each).
            # The agent filter costs the keyword leg its fast path: use it only when other agents share the file.
            hits, profile_items, found_facts, standing, related_items = await asyncio.gather(
                self._relevant(query, in_window, profile, None if sole else self.agent_id),
                self._profile_items(profile),
                self._found_facts(query, profile),
                self._standing_lessons(profile),
                self._related_items(query, profile),
            )
            withheld = 0
            if not self.config.replay_flagged:  # flagged turns are kept, never replayed into a prompt
                kept = [h for h in hits if flag_of(h.metadata) is None]
                hits, withheld = kept, len(hits) - len(kept)
            top = max((h.score for h in hits), default=0.0)
            pools = {
                "profile": profile_items,
                "facts": self._fact_items(found_facts, hits, top, profile),
                "lessons": self._lesson_items(standing, hits, top, profile),
                "past": self._past_items(hits, top, in_window, profile, query),
                "related": related_items,
            }
            plan = assemble(
                pools,
                budgets=dict(profile.section_tokens),
                total_budget=profile.budget_tokens,
                counter=self.count,
                keep_last_n_turns=profile.keep_last_n_turns,
                rolling_summary=state.rolling_summary if state else None,
                tier=profile.tier.value,
                query=query,
                withheld=withheld,
            )
            if touch:
                await self._touch(plan)
            return plan
        except Exception as e:  # noqa: BLE001 - build_context never raises into the host
            self.failed("build_context", e)
            return self._empty(profile, query)

    def _empty(self, profile: MemoryProfile, query: str) -> ContextPlan:
        return assemble(
            {},
            budgets={},
            total_budget=profile.budget_tokens,
            counter=self.count,
            keep_last_n_turns=profile.keep_last_n_turns,
            tier=profile.tier.value,
            query=query,
        )

    async def _touch(self, plan: ContextPlan) -> None:
        """Count an access for every memory and fact the plan shows (retention grows), in the background.

        Access counts are bookkeeping: the worker writes them, and a shed job loses only counts.
        """
        for item in plan.items():
            if item.source_id and item.kind == "fact":
                self._touched_facts.add(int(item.source_id))
            elif item.source_id and item.kind != "summary":
                self._touched.add(item.source_id)
        if self._touched or self._touched_facts:
            self.submit("touch", "touch", self._write_touches)

    async def _write_touches(self) -> None:
        memories, facts = list(self._touched), list(self._touched_facts)
        self._touched.clear()
        self._touched_facts.clear()
        await self.store.touch_memories(memories)
        await self.store.touch_facts(facts)

    async def _profile_items(self, profile: MemoryProfile) -> list[PlanItem]:
        facts = await self.store.current_facts(self.agent_id, category="profile", limit=profile.facts_max * 2)
        return [self._fact_item(f, 1.0 + f.importance) for f in facts]

    @staticmethod
    def _fact_item(fact: Fact, score: float) -> PlanItem:
        return PlanItem(fact.value, score=score, source_id=str(fact.id), kind="fact", meta={"key": fact.key})

    def _nudged(self, relevance: float, importance: float, created_at: float, confidence: float) -> float:
        """Relevance plus small additive nudges (never multipliers): importance, confidence, recency.

        On a 0-1 relevance the nudges add at most 0.1 (importance), 0.05 (confidence: what the
        user confirmed ranks above what was inferred) and 0.05 (a 30-day recency decay).
        """
        age_days = max(0.0, (self.core.store.clock() - created_at) / _DAY)
        return relevance + 0.1 * importance + 0.05 * confidence + 0.05 * math.exp(-age_days / 30.0)

    async def _recall(self, query: str, k: int, filters: dict[str, Any] | None) -> list[Hit]:
        if k <= 0:
            return []
        # While the model started at open still loads, the plan is keyword-only rather than wait for it.
        embedder = await self.core.embedder(quiet=True) if self.may_embed() and not self.core.loading else None
        mode = "hybrid" if embedder is not None else "keyword"
        if self.core.recall_hook is not None:  # a federation: every tier, the plan keeps its own private hits
            return await self.core.recall_hook(query, k, mode)
        hits: list[Hit] = await self.core.recall(query, k=k, mode=mode, filters=filters, touch=False)
        return hits

    def may_embed(self) -> bool:
        """Whether this tier may embed queries with the configured embedder."""
        profile = self.profile
        builtin = isinstance(self.core.configured_embedder, MiniLMEmbedder)
        return profile.builtin_embedder if builtin else profile.embedder

    def _hit_items(self, hits: list[Hit], kind: str, top: float, *, floor: float = 0.0) -> list[PlanItem]:
        """Plan items for recalled memories: relevance relative to ``top`` (the best hit of the recall), plus nudges.

        Hits below ``floor`` of the best one's score are left out.
        """
        if top <= 0:
            return []
        items = []
        for h in hits:
            if h.score / top < floor:
                continue
            score = self._nudged(h.score / top, h.importance, h.created_at, h.confidence)
            meta = {} if kind == "lesson" else {"when": time.strftime("%Y-%m-%d", time.gmtime(h.created_at))}
            if h.session_id and kind == "chunk":
                meta["session"] = h.session_id
            items.append(PlanItem(h.content, score=score, source_id=h.id, kind=kind, meta=meta))
        return sorted(items, key=lambda i: -i.score)

    async def _relevant(self, query: str, in_window: InWindow, profile: MemoryProfile, only: str | None) -> list[Hit]:
        """One recall serves every relevance-ranked section (the sections split it by type).

        Memories of other agents in the same file are left out (``only``: the agent to filter
        on, when others share the file). When the live window (dropped afterwards) fills the
        candidates, it asks again for more.
        """
        if not query.strip():
            return []
        k = min(1_000, 2 * profile.recall_k + profile.keep_last_n_turns)
        filters = None if only is None else {"agent_id": only}
        while True:
            hits = [
                h
                for h in await self._recall(query, k, filters)
                if owner_key(h.agent_id, h.user_id) == self.agent_id or h.tier not in (None, "private")
            ]
            window = sum(1 for h in hits if in_window(h))
            if len(hits) < k or len(hits) - window >= profile.recall_k or k >= 1_000:
                return hits
            k = min(1_000, k * 4)  # the live window crowded the candidates out: look further

    async def _found_facts(self, query: str, profile: MemoryProfile) -> list[tuple[Fact, float]]:
        """Note facts matching the input (their own full-text index), with their BM25 relevance."""
        match = match_expression(query)
        if match is None:
            return []
        found = await self.store.search_facts(self.agent_id, match, profile.facts_max * 2)
        return [(f, s) for f, s in found if f.category != "profile"]

    def _fact_items(
        self, found: list[tuple[Fact, float]], hits: list[Hit], top: float, profile: MemoryProfile
    ) -> list[PlanItem]:
        """The facts found for the input and the relevant semantic memories, best first."""
        items: list[PlanItem] = []
        best = max((s for _, s in found), default=0.0)
        if best > 0:
            items += [
                self._fact_item(f, self._nudged(s / best, f.importance, f.recorded_at, f.confidence))
                for f, s in found
                if s / best >= FACT_FLOOR
            ]
        semantic = [h for h in hits if h.type.value == "semantic"]
        items += self._hit_items(semantic, "memory", top, floor=FACT_FLOOR)
        return sorted(items, key=lambda i: -i.score)[: profile.facts_max]

    async def _related_items(self, query: str, profile: MemoryProfile) -> list[PlanItem]:
        """RELATED TOPICS: relations of the entities the input names (graph, no model)."""
        if profile.graph_rows_max <= 0 or not query.strip():
            return []
        graph = self.store.graph
        seeds = {e.id: e for e, _ in await graph.detect(self.agent_id, ngrams(query))}
        items: list[PlanItem] = []
        seen: set[tuple[str, str, str]] = set()
        for entity in sorted(seeds.values(), key=lambda e: -e.mention_count)[:3]:
            for r in await graph.relations(self.agent_id, entity.name, limit=profile.graph_rows_max):
                triple = (r.source, r.relation, r.target)
                if triple in seen or (r.relation == "mentioned_with" and r.mention_count < 2):
                    continue
                seen.add(triple)
                text = f"{r.source} {r.relation.replace('_', ' ')} {r.target}"
                items.append(PlanItem(text, score=r.confidence * math.log1p(r.mention_count), kind="entity"))
        return sorted(items, key=lambda i: -i.score)[: profile.graph_rows_max]

    async def _standing_lessons(self, profile: MemoryProfile) -> list[Hit]:
        """The lessons the host wrote (shown whatever the input): a user's own and the agent's.

        Lessons added on the agent's own handle (no user) are how the agent works for everyone;
        a user's lessons stay that user's.
        """
        hits: list[Hit] = await self.core.root.recall(
            "", k=profile.lessons_max, filters={"kind": "lesson", "agent_id": self._lesson_owners()}, touch=False
        )
        return hits

    def _lesson_owners(self) -> list[str]:
        """Whose lessons this loop's plans show: its own, and for a user the agent's as well."""
        agent = split_owner(self.agent_id)[0]
        return [self.agent_id] if agent == self.agent_id else [self.agent_id, agent]

    def _lesson_items(self, standing: list[Hit], hits: list[Hit], top: float, profile: MemoryProfile) -> list[PlanItem]:
        """Lessons the host wrote, always; procedures the host stored, when relevant.

        How-tos extracted from conversations (the assistant's own words) are not lessons:
        they compete as past moments.
        """
        relevant = [h for h in hits if h.type.value == "procedural" and h.source.value in HOST_SOURCES]
        items = self._hit_items(relevant, "lesson", top)
        seen = {i.source_id for i in items}
        items += [
            PlanItem(h.content, score=0.5 * h.importance, source_id=h.id, kind="lesson")
            for h in standing
            if h.id not in seen
        ]
        return items[: profile.lessons_max]

    def _past_items(
        self, hits: list[Hit], top: float, in_window: InWindow, profile: MemoryProfile, query: str
    ) -> list[PlanItem]:
        """Relevant moments outside the host's window: other sessions, and this one's turns it no longer shows.

        What the host's message list holds already (:mod:`.window`) is left out, as are earlier
        askings of the same question (an echo tells the model nothing it is not being asked); when
        even the best moment is below :attr:`LoopConfig.past_floor`, none is shown.
        """
        asked = _casefold(query)
        kept = [
            h
            for h in hits
            if (h.type.value == "episodic" or (h.type.value == "procedural" and h.source.value == "extracted"))
            and not in_window(h)
            and not (h.kind == "chunk" and asked == _casefold(asked_in(h.content)))
        ]
        best = max((h.relevance for h in kept if h.relevance is not None), default=None)
        if best is not None and best < self.config.past_floor:
            return []  # the input is about nothing stored: weak matches would only fill the budget
        return self._hit_items(kept, "chunk", top)[: max(profile.past_max, profile.recall_k)]

    async def graph_nudge(self, explanation: Explanation, filters: Filters, k: int) -> Explanation:
        """Recall made graph-aware: see :mod:`elastic_memory.graph.recall`. A failure leaves the recall as it was.

        A recall pinned to one agent is nudged by that agent's graph (whoever opened the
        store), one pinned to several others by none: an agent's ranking depends on its own
        rows and graph alone.
        """
        profile = self.profile
        fraction = self.core.recall_config.graph_boost
        if fraction <= 0 or profile.graph_rows_max <= 0 or not explanation.hits or not self.supported:
            return explanation
        owner = filters.agent_ids[0] if len(filters.agent_ids) == 1 else self.agent_id
        if filters.agent_ids and owner not in filters.agent_ids:
            return explanation
        try:
            return await graph_recall.nudge(
                self.store.graph,
                owner,
                explanation,
                filters=filters,
                k=k,
                hops=profile.graph_hops,
                rows=profile.graph_rows_max,
                fraction=fraction,
            )
        except Exception as e:  # noqa: BLE001 - the graph is a nudge: recall stands without it
            self.failed("graph recall", e)
            return explanation

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
            "", k=self.config.max_lessons, filters={"kind": "lesson", "agent_id": self._lesson_owners()}, touch=False
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
            texts = [t for t in (as_text(m).strip() for m in _messages(messages)) if t]
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
        profile = self._retune()
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


def _casefold(text: str | None) -> str | None:
    """``text`` with whitespace collapsed and case folded (how echoes of a question are compared)."""
    return None if text is None else " ".join(text.split()).casefold()


def _messages(messages: Any) -> Iterable[Any]:
    if messages is None:
        return []
    if isinstance(messages, str | bytes | dict) or hasattr(messages, "content"):
        return [messages]
    try:
        return list(messages)
    except TypeError:
        return [messages]


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
