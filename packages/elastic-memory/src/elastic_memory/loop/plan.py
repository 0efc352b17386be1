"""``build_context``'s plan: one recall split into budgeted sections, assembled for the next model call.

The reads no section needs the recall for (profile facts, matching facts, standing lessons,
the graph's relations) run beside it; the sections rank what they show by relevance with
small nudges, leave out what the host's window holds, and :func:`.assemble` fits them to
the governor's budgets.
"""

from __future__ import annotations

import asyncio
import functools
import math
import time
from typing import TYPE_CHECKING, Any

from ..context import ContextPlan, PlanItem, assemble
from ..extraction.flags import flag_of
from ..governor import MemoryProfile, Tier
from ..graph import ngrams
from ..storage.sqlite.fts import match_expression
from ..types import Fact, Hit
from ..users import owner_key, split_owner
from .chunking import asked_in
from .inputs import DEFAULT_SESSION, as_messages, as_session, as_text
from .tables import SessionState
from .window import InWindow, by_count, by_turns, window_texts

if TYPE_CHECKING:
    from .engine import MemoryLoop

__all__ = ["FACT_FLOOR", "HOST_SOURCES", "MAX_QUERY_CHARS", "build_plan", "lesson_owners"]

#: Characters of the user input used as a search query.
MAX_QUERY_CHARS = 2_000
#: Sources of memories the host itself wrote (everything but what extraction inferred).
HOST_SOURCES = ("user_confirmed", "agent", "imported")
#: Facts and semantic memories shown only when at least this relevant, relative to the best match.
FACT_FLOOR = 0.3
_DAY = 86_400.0


async def build_plan(loop: MemoryLoop, user_input: Any, session_id: Any, *, touch: bool, window: Any) -> ContextPlan:
    """The plan for the next model call; never raises (an empty plan on failure, counted in ``health()``)."""
    session = DEFAULT_SESSION
    query = ""
    profile = loop.profile
    try:
        profile = loop.retune()
        session = as_session(session_id)
        query = as_text(user_input)[:MAX_QUERY_CHARS]
        if profile.tier is Tier.OFF or profile.budget_tokens == 0:
            return _empty(loop, profile, query)
        state, sole = await asyncio.gather(
            loop.store.session(loop.agent_id, session), loop.store.sole_agent(loop.agent_id)
        )
        in_window = await _in_window(loop, session, state, profile, window)
        # The reads no section needs the recall for run beside it: they overlap the query's
        # embedding (and, on a server, each other: one pooled connection each).
        # The agent filter costs the keyword leg its fast path: use it only when other agents share the file.
        hits, profile_items, found_facts, standing, related_items = await asyncio.gather(
            _relevant(loop, query, in_window, profile, None if sole else loop.agent_id),
            _profile_items(loop, profile),
            _found_facts(loop, query, profile),
            _standing_lessons(loop, profile),
            _related_items(loop, query, profile),
        )
        withheld = 0
        if not loop.config.replay_flagged:  # flagged turns are kept, never replayed into a prompt
            kept = [h for h in hits if flag_of(h.metadata) is None]
            hits, withheld = kept, len(hits) - len(kept)
        top = max((h.score for h in hits), default=0.0)
        pools = {
            "profile": profile_items,
            "facts": _fact_items(loop, found_facts, hits, top, profile),
            "lessons": _lesson_items(loop, standing, hits, top, profile),
            "past": _past_items(loop, hits, top, in_window, profile, query),
            "related": related_items,
        }
        plan = assemble(
            pools,
            budgets=dict(profile.section_tokens),
            total_budget=profile.budget_tokens,
            counter=loop.count,
            keep_last_n_turns=profile.keep_last_n_turns,
            rolling_summary=state.rolling_summary if state else None,
            tier=profile.tier.value,
            query=query,
            withheld=withheld,
        )
        if touch:
            await _touch(loop, plan)
        return plan
    except Exception as e:  # noqa: BLE001 - build_context never raises into the host
        loop.failed("build_context", e)
        return _empty(loop, profile, query)


async def _in_window(
    loop: MemoryLoop, session: str, state: SessionState | None, profile: MemoryProfile, window: Any
) -> InWindow:
    """Which recalled memories the model already sees: the host's ``window``, else the plan's assumption."""
    if window is None:
        return by_count(session, state.turns if state else 0, profile.keep_last_n_turns)
    texts = window_texts(as_messages(window), as_text)
    if state is None or not texts:
        return lambda _: False
    return by_turns(session, await loop.store.shown_turns(loop.agent_id, session, texts))


def _empty(loop: MemoryLoop, profile: MemoryProfile, query: str) -> ContextPlan:
    return assemble(
        {},
        budgets={},
        total_budget=profile.budget_tokens,
        counter=loop.count,
        keep_last_n_turns=profile.keep_last_n_turns,
        tier=profile.tier.value,
        query=query,
    )


async def _touch(loop: MemoryLoop, plan: ContextPlan) -> None:
    """Count an access for every memory and fact the plan shows (retention grows), in the background.

    Access counts are bookkeeping: the worker writes them, and a shed job loses only counts.
    """
    for item in plan.items():
        if item.source_id and item.kind == "fact":
            loop.touched_facts.add(int(item.source_id))
        elif item.source_id and item.kind != "summary":
            loop.touched.add(item.source_id)
    if loop.touched or loop.touched_facts:
        loop.submit("touch", "touch", lambda: _write_touches(loop))


async def _write_touches(loop: MemoryLoop) -> None:
    memories, facts = list(loop.touched), list(loop.touched_facts)
    loop.touched.clear()
    loop.touched_facts.clear()
    await loop.store.touch_memories(memories)
    await loop.store.touch_facts(facts)


async def _profile_items(loop: MemoryLoop, profile: MemoryProfile) -> list[PlanItem]:
    facts = await loop.store.current_facts(loop.agent_id, category="profile", limit=profile.facts_max * 2)
    return [_fact_item(f, 1.0 + f.importance) for f in facts]


def _fact_item(fact: Fact, score: float) -> PlanItem:
    return PlanItem(fact.value, score=score, source_id=str(fact.id), kind="fact", meta={"key": fact.key})


def _nudged(loop: MemoryLoop, relevance: float, importance: float, created_at: float, confidence: float) -> float:
    """Relevance plus small additive nudges (never multipliers): importance, confidence, recency.

    On a 0-1 relevance the nudges add at most 0.1 (importance), 0.05 (confidence: what the
    user confirmed ranks above what was inferred) and 0.05 (a 30-day recency decay).
    """
    age_days = max(0.0, (loop.core.store.clock() - created_at) / _DAY)
    return relevance + 0.1 * importance + 0.05 * confidence + 0.05 * math.exp(-age_days / 30.0)


async def _recall(loop: MemoryLoop, query: str, k: int, filters: dict[str, Any] | None) -> list[Hit]:
    if k <= 0:
        return []
    # While the model started at open still loads, the plan is keyword-only rather than wait for it.
    embedder = await loop.core.embedder(quiet=True) if loop.may_embed() and not loop.core.loading else None
    mode = "hybrid" if embedder is not None else "keyword"
    if loop.core.recall_hook is not None:  # a federation: every tier, the plan keeps its own private hits
        return await loop.core.recall_hook(query, k, mode)
    hits: list[Hit] = await loop.core.recall(query, k=k, mode=mode, filters=filters, touch=False)
    return hits


@functools.lru_cache(maxsize=4_096)
def _date(day: int) -> str:
    """The UTC date of day number ``day`` since the epoch (a plan dates each of its moments)."""
    return time.strftime("%Y-%m-%d", time.gmtime(day * _DAY))


def _hit_items(loop: MemoryLoop, hits: list[Hit], kind: str, top: float, *, floor: float = 0.0) -> list[PlanItem]:
    """Plan items for recalled memories: relevance relative to ``top`` (the best hit of the recall), plus nudges.

    Hits below ``floor`` of the best one's score are left out.
    """
    if top <= 0:
        return []
    items = []
    for h in hits:
        if h.score / top < floor:
            continue
        score = _nudged(loop, h.score / top, h.importance, h.created_at, h.confidence)
        meta = {} if kind == "lesson" else {"when": _date(math.floor(h.created_at / _DAY))}
        if h.session_id and kind == "chunk":
            meta["session"] = h.session_id
        items.append(PlanItem(h.content, score=score, source_id=h.id, kind=kind, meta=meta))
    return sorted(items, key=lambda i: -i.score)


async def _relevant(
    loop: MemoryLoop, query: str, in_window: InWindow, profile: MemoryProfile, only: str | None
) -> list[Hit]:
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
            for h in await _recall(loop, query, k, filters)
            if owner_key(h.agent_id, h.user_id) == loop.agent_id or h.tier not in (None, "private")
        ]
        window = sum(1 for h in hits if in_window(h))
        if len(hits) < k or len(hits) - window >= profile.recall_k or k >= 1_000:
            return hits
        k = min(1_000, k * 4)  # the live window crowded the candidates out: look further


async def _found_facts(loop: MemoryLoop, query: str, profile: MemoryProfile) -> list[tuple[Fact, float]]:
    """Note facts matching the input (their own full-text index), with their BM25 relevance."""
    match = match_expression(query)
    if match is None:
        return []
    found = await loop.store.search_facts(loop.agent_id, match, profile.facts_max * 2)
    return [(f, s) for f, s in found if f.category != "profile"]


def _fact_items(
    loop: MemoryLoop, found: list[tuple[Fact, float]], hits: list[Hit], top: float, profile: MemoryProfile
) -> list[PlanItem]:
    """The facts found for the input and the relevant semantic memories, best first."""
    items: list[PlanItem] = []
    best = max((s for _, s in found), default=0.0)
    if best > 0:
        items += [
            _fact_item(f, _nudged(loop, s / best, f.importance, f.recorded_at, f.confidence))
            for f, s in found
            if s / best >= FACT_FLOOR
        ]
    semantic = [h for h in hits if h.type.value == "semantic"]
    items += _hit_items(loop, semantic, "memory", top, floor=FACT_FLOOR)
    return sorted(items, key=lambda i: -i.score)[: profile.facts_max]


async def _related_items(loop: MemoryLoop, query: str, profile: MemoryProfile) -> list[PlanItem]:
    """RELATED TOPICS: relations of the entities the input names (graph, no model)."""
    if profile.graph_rows_max <= 0 or not query.strip():
        return []
    graph = loop.store.graph
    seeds = {e.id: e for e, _ in await graph.detect(loop.agent_id, ngrams(query))}
    items: list[PlanItem] = []
    seen: set[tuple[str, str, str]] = set()
    for entity in sorted(seeds.values(), key=lambda e: -e.mention_count)[:3]:
        for r in await graph.relations(loop.agent_id, entity.name, limit=profile.graph_rows_max):
            triple = (r.source, r.relation, r.target)
            if triple in seen or (r.relation == "mentioned_with" and r.mention_count < 2):
                continue
            seen.add(triple)
            text = f"{r.source} {r.relation.replace('_', ' ')} {r.target}"
            items.append(PlanItem(text, score=r.confidence * math.log1p(r.mention_count), kind="entity"))
    return sorted(items, key=lambda i: -i.score)[: profile.graph_rows_max]


async def _standing_lessons(loop: MemoryLoop, profile: MemoryProfile) -> list[Hit]:
    """The lessons the host wrote (shown whatever the input): a user's own and the agent's.

    Lessons added on the agent's own handle (no user) are how the agent works for everyone;
    a user's lessons stay that user's.
    """
    hits: list[Hit] = await loop.core.root.recall(
        "", k=profile.lessons_max, filters={"kind": "lesson", "agent_id": lesson_owners(loop.agent_id)}, touch=False
    )
    return hits


def lesson_owners(agent_id: str) -> list[str]:
    """Whose lessons the plans of ``agent_id``'s loop show: its own, and for a user the agent's as well."""
    agent = split_owner(agent_id)[0]
    return [agent_id] if agent == agent_id else [agent_id, agent]


def _lesson_items(
    loop: MemoryLoop, standing: list[Hit], hits: list[Hit], top: float, profile: MemoryProfile
) -> list[PlanItem]:
    """Lessons the host wrote, always; procedures the host stored, when relevant.

    How-tos extracted from conversations (the assistant's own words) are not lessons:
    they compete as past moments.
    """
    relevant = [h for h in hits if h.type.value == "procedural" and h.source.value in HOST_SOURCES]
    items = _hit_items(loop, relevant, "lesson", top)
    seen = {i.source_id for i in items}
    items += [
        PlanItem(h.content, score=0.5 * h.importance, source_id=h.id, kind="lesson")
        for h in standing
        if h.id not in seen
    ]
    return items[: profile.lessons_max]


def _casefold(text: str | None) -> str | None:
    """``text`` with whitespace collapsed and case folded (how echoes of a question are compared)."""
    return None if text is None else " ".join(text.split()).casefold()


def _past_items(
    loop: MemoryLoop, hits: list[Hit], top: float, in_window: InWindow, profile: MemoryProfile, query: str
) -> list[PlanItem]:
    """Relevant moments outside the host's window: other sessions, and this one's turns it no longer shows.

    What the host's message list holds already (:mod:`.window`) is left out, as are earlier
    askings of the same question (an echo tells the model nothing it is not being asked); when
    even the best moment is below :attr:`.LoopConfig.past_floor`, none is shown.
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
    if best is not None and best < loop.config.past_floor:
        return []  # the input is about nothing stored: weak matches would only fill the budget
    return _hit_items(loop, kept, "chunk", top)[: max(profile.past_max, profile.recall_k)]
