"""Governor policy (pure): which tier a machine gets and what each tier may spend.

The only inputs are numbers the host or the probe supplies (free RAM in bytes, the model's
context window in tokens, whether an ``llm`` callable exists), so every decision here is
a plain function of its arguments and is tested without a machine.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..errors import UsageError

__all__ = [
    "Tier",
    "Threshold",
    "MemoryProfile",
    "TIER_THRESHOLDS",
    "SECTIONS",
    "SECTION_SHARES",
    "TOKENS_PER_TURN",
    "REPLY_RESERVE_DIVISOR",
    "choose_tier",
    "profile_for",
]

_MIB = 1 << 20
_GIB = 1 << 30


class Tier(str, enum.Enum):
    """How much memory work the machine affords, lowest first.

    Tiers compare by rank (``Tier.LITE < Tier.FULL``), never alphabetically.

    >>> Tier.parse("Full") > Tier.LITE
    True
    >>> Tier.STANDARD.rank
    2
    """

    OFF = "off"
    LITE = "lite"
    STANDARD = "standard"
    FULL = "full"

    @property
    def rank(self) -> int:
        """0 for OFF up to 3 for FULL."""
        return _RANK[self]

    @classmethod
    def parse(cls, value: Tier | str, *, name: str = "tier") -> Tier:
        """A tier from a :class:`Tier` or its name in any case; anything else raises :class:`UsageError`."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            try:
                return cls(value.strip().lower())
            except ValueError:
                pass
        msg = f"{name} must be one of {[t.value for t in cls]} (or a Tier), got {value!r}"
        raise UsageError(msg)

    def __lt__(self, other: object) -> bool:
        return self.rank < other.rank if isinstance(other, Tier) else NotImplemented

    def __le__(self, other: object) -> bool:
        return self.rank <= other.rank if isinstance(other, Tier) else NotImplemented

    def __gt__(self, other: object) -> bool:
        return self.rank > other.rank if isinstance(other, Tier) else NotImplemented

    def __ge__(self, other: object) -> bool:
        return self.rank >= other.rank if isinstance(other, Tier) else NotImplemented


_RANK = {tier: rank for rank, tier in enumerate(Tier)}


@dataclass(frozen=True, kw_only=True)
class Threshold:
    """What a machine needs to reach ``tier``."""

    tier: Tier
    """The tier granted when every condition holds."""
    min_ram_bytes: int
    """Free (available) RAM at least this many bytes."""
    min_context_tokens: int
    """The model's context window at least this many tokens."""
    needs_llm: bool
    """The host supplied an ``llm`` callable."""


#: The tier table, highest tier first; the first row whose conditions all hold wins, else OFF.
TIER_THRESHOLDS: tuple[Threshold, ...] = (
    Threshold(tier=Tier.FULL, min_ram_bytes=4 * _GIB, min_context_tokens=4_096, needs_llm=True),
    Threshold(tier=Tier.STANDARD, min_ram_bytes=1 * _GIB, min_context_tokens=4_096, needs_llm=False),
    Threshold(tier=Tier.LITE, min_ram_bytes=256 * _MIB, min_context_tokens=1_024, needs_llm=False),
)

#: The sections of a context plan, in the order they are rendered.
SECTIONS: tuple[str, ...] = ("profile", "facts", "past", "lessons", "related", "summary")
#: Per-cent of the plan budget each section gets (rounded down, so the sum never exceeds the budget).
SECTION_SHARES: Mapping[str, int] = MappingProxyType(
    {"profile": 15, "facts": 20, "past": 40, "lessons": 10, "related": 5, "summary": 10}
)
#: Assumed size of one verbatim turn (user message + reply) when sizing the working window.
TOKENS_PER_TURN = 150
#: The reply is reserved ``context_tokens // REPLY_RESERVE_DIVISOR`` tokens (1/8 of the window).
REPLY_RESERVE_DIVISOR = 8
_MIN_TURNS, _MAX_TURNS = 2, 50
_CHUNK_TOKENS = 120
#: Tokens of a typical rendered exchange (one short user message and reply).
_TYPICAL_CHUNK_TOKENS = 60
_WORKER_MAX_TOKENS = 96


@dataclass(frozen=True, kw_only=True)
class _TierKnobs:
    share_pct: int
    floor: int
    ceiling: int
    recall_k: int
    facts_max: int
    lessons_max: int
    past_max: int
    graph_hops: int
    graph_rows_max: int
    queue_max: int
    headroom_seconds: float


_KNOBS: Mapping[Tier, _TierKnobs] = MappingProxyType(
    {
        Tier.OFF: _TierKnobs(
            share_pct=0, floor=0, ceiling=0, recall_k=0, facts_max=0, lessons_max=0, past_max=0,
            graph_hops=0, graph_rows_max=0, queue_max=0, headroom_seconds=0.0,
        ),
        Tier.LITE: _TierKnobs(
            share_pct=8, floor=300, ceiling=800, recall_k=10, facts_max=5, lessons_max=2, past_max=2,
            graph_hops=1, graph_rows_max=10, queue_max=8, headroom_seconds=5.0,
        ),
        Tier.STANDARD: _TierKnobs(
            share_pct=12, floor=600, ceiling=1_800, recall_k=25, facts_max=10, lessons_max=3, past_max=4,
            graph_hops=1, graph_rows_max=25, queue_max=16, headroom_seconds=20.0,
        ),
        Tier.FULL: _TierKnobs(
            share_pct=15, floor=900, ceiling=4_000, recall_k=50, facts_max=20, lessons_max=5, past_max=8,
            graph_hops=2, graph_rows_max=50, queue_max=32, headroom_seconds=60.0,
        ),
    }
)  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class MemoryProfile:
    """The budgets of every capability at one tier; build it with :func:`profile_for`.

    At ``Tier.OFF`` the budget and every section are 0 and nothing is recalled (``build_context``
    returns an empty plan), but ``record_turn`` still stores the transcript: memory is never
    destroyed, only not consulted.

    >>> from elastic_memory.governor import Tier, profile_for
    >>> p = profile_for(Tier.STANDARD, context_tokens=8_192, has_llm=True)
    >>> p.budget_tokens, p.section("past"), p.keep_last_n_turns
    (983, 393, 41)
    """

    tier: Tier
    """The tier these budgets belong to."""
    context_tokens: int
    """The host model's context window, in tokens."""
    budget_tokens: int
    """Ceiling of the whole memory plan (all sections together), in tokens."""
    section_tokens: Mapping[str, int] = field(hash=False)
    """Token budget per section (every name of :data:`SECTIONS`); read-only, sums to at most the budget."""
    keep_last_n_turns: int
    """Verbatim turns the working window affords, in [2, 50]; see :func:`profile_for`."""
    recall_k: int
    """Candidate rows fetched per retrieval leg (keyword, vector)."""
    facts_max: int
    """Most facts shown."""
    lessons_max: int
    """Most lessons shown."""
    past_max: int
    """Most past chunks shown: the tier's cap (2, 4, 8), fewer when the past section holds fewer chunks (min 1)."""
    graph_hops: int
    """Graph traversal depth: 0 OFF, 1 LITE and STANDARD, 2 FULL."""
    graph_rows_max: int
    """Most graph rows (nodes and edges) a traversal returns."""
    ram_vector_index: bool
    """Keep the vector matrix in RAM (STANDARD+); below, vectors are scanned in sqlite-vec."""
    ann_vector_index: bool
    """Also build an ANN index over the matrix from ``ann_threshold`` vectors on, within the RAM budget (STANDARD+).

    FULL differs from STANDARD by the host's llm, which says nothing about vectors; what an
    ANN index costs (about 0.4 KB a vector beyond the matrix) is checked against the RAM budget.
    """
    embedder: bool
    """Embed and search by vector with a host-supplied embedder (LITE+)."""
    builtin_embedder: bool
    """Load the built-in embedder when the host supplied none (STANDARD+)."""
    llm_extraction: bool
    """Background LLM extraction of facts and graph entities (STANDARD+, needs an llm)."""
    llm_summaries: bool
    """LLM rolling and session summaries (STANDARD+, needs an llm); else the extractive floor."""
    llm_contradiction_merge: bool
    """LLM merge of contradicting fact versions during consolidation (FULL only, needs an llm)."""
    worker_max_tokens: int
    """Cap on the tokens one background LLM call may generate."""
    extract_every_n_turns: int
    """LLM extraction cadence: every n-th turn; 0 = never."""
    idle_consolidate_seconds: float | None
    """Consolidate after this many idle seconds (FULL: 90.0); ``None`` = only at session end."""
    queue_max: int
    """Depth of the bounded background queue; non-critical jobs beyond it are shed."""
    headroom_seconds: float
    """Estimated seconds of queued background work allowed before non-critical jobs are shed."""
    chunk_target_tokens: int
    """Target size of one episodic chunk, in tokens."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "tier", Tier.parse(self.tier))
        sections = dict(self.section_tokens)
        if sorted(sections) != sorted(SECTIONS) or any(_bad_count(v) for v in sections.values()):
            msg = f"section_tokens must map each of {list(SECTIONS)} to a non-negative int, got {sections!r}"
            raise UsageError(msg)
        if sum(sections.values()) > self.budget_tokens:
            msg = f"section_tokens sum to {sum(sections.values())}, more than budget_tokens={self.budget_tokens}"
            raise UsageError(msg)
        object.__setattr__(self, "section_tokens", MappingProxyType(sections))
        for name in _COUNT_FIELDS:
            if _bad_count(getattr(self, name)):
                msg = f"{name} must be a non-negative int, got {getattr(self, name)!r}"
                raise UsageError(msg)

    def section(self, name: str) -> int:
        """The token budget of section ``name`` (one of :data:`SECTIONS`)."""
        try:
            return self.section_tokens[name]
        except KeyError:
            msg = f"unknown section {name!r}; use one of {list(SECTIONS)}"
            raise UsageError(msg) from None


_COUNT_FIELDS = (
    "context_tokens budget_tokens keep_last_n_turns recall_k facts_max lessons_max past_max graph_hops"
    " graph_rows_max worker_max_tokens extract_every_n_turns queue_max chunk_target_tokens"
).split()


def _bad_count(value: Any) -> bool:
    return isinstance(value, bool) or not isinstance(value, int) or value < 0


def _check_context(context_tokens: Any) -> int:
    if isinstance(context_tokens, bool) or not isinstance(context_tokens, int) or context_tokens < 1:
        msg = f"context_tokens must be the model's context window as a positive int (tokens), got {context_tokens!r}"
        raise UsageError(msg)
    return context_tokens


def _check_llm(has_llm: Any) -> bool:
    if not isinstance(has_llm, bool):
        msg = f"has_llm must be True or False (whether the host passed an llm callable), got {has_llm!r}"
        raise UsageError(msg)
    return has_llm


def choose_tier(
    *, available_ram_bytes: int, context_tokens: int, has_llm: bool, forced: Tier | str | None = None
) -> Tier:
    """The tier for this machine: the first row of :data:`TIER_THRESHOLDS` that holds, else OFF.

    FULL needs an ``llm`` (its extra capabilities are mostly LLM work), so without one the
    best is STANDARD. ``forced`` (a :class:`Tier` or its name) wins over every threshold.

    >>> jetson = choose_tier(available_ram_bytes=2 << 30, context_tokens=4_096, has_llm=True)
    >>> workstation = choose_tier(available_ram_bytes=100 << 30, context_tokens=32_768, has_llm=True)
    >>> jetson.value, workstation.value
    ('standard', 'full')
    >>> choose_tier(available_ram_bytes=100 << 30, context_tokens=512, has_llm=True).value
    'off'
    """
    ram = available_ram_bytes
    if isinstance(ram, bool) or not isinstance(ram, int) or ram < 0:
        msg = f"available_ram_bytes must be a non-negative int (bytes), got {ram!r}"
        raise UsageError(msg)
    _check_context(context_tokens)
    _check_llm(has_llm)
    if forced is not None:
        return Tier.parse(forced, name="forced")
    for row in TIER_THRESHOLDS:
        if ram >= row.min_ram_bytes and context_tokens >= row.min_context_tokens and (has_llm or not row.needs_llm):
            return row.tier
    return Tier.OFF


def _plan_budget(tier: Tier, context_tokens: int, budget_tokens: int | None) -> int:
    if budget_tokens is not None and (_bad_count(budget_tokens) or not 0 < budget_tokens * 2 <= context_tokens):
        msg = (
            f"budget_tokens must be a positive int at most half of context_tokens ({context_tokens // 2}), "
            f"got {budget_tokens!r}; pass None to let the governor size it"
        )
        raise UsageError(msg)
    if tier is Tier.OFF:
        return 0
    if budget_tokens is not None:
        return budget_tokens
    knobs = _KNOBS[tier]
    share = context_tokens * knobs.share_pct // 100
    return min(max(share, knobs.floor), knobs.ceiling, context_tokens // 2)


def profile_for(
    tier: Tier | str, *, context_tokens: int, has_llm: bool, budget_tokens: int | None = None
) -> MemoryProfile:
    """The budgets of ``tier`` for a model with ``context_tokens`` of context.

    The plan budget is the tier's share of the window (LITE 8 %, STANDARD 12 %, FULL 15 %)
    clamped to the tier's floor and ceiling (300-800, 600-1,800, 900-4,000 tokens) and to half
    the window, unless the host passes ``budget_tokens`` (a positive int, at most half the
    window). Sections get :data:`SECTION_SHARES` of it, rounded down. The working window keeps
    ``(context - budget - context // 8) // 150`` verbatim turns, clamped to [2, 50]: one turn is
    assumed to be 150 tokens and 1/8 of the window is reserved for the reply. Every LLM flag is
    False when ``has_llm`` is False.

    >>> p = profile_for("lite", context_tokens=4_096, has_llm=False)
    >>> p.budget_tokens, p.builtin_embedder, p.llm_extraction, p.graph_hops
    (327, False, False, 1)
    """
    tier = Tier.parse(tier)
    _check_context(context_tokens)
    _check_llm(has_llm)
    budget = _plan_budget(tier, context_tokens, budget_tokens)
    knobs = _KNOBS[tier]
    sections = {name: budget * SECTION_SHARES[name] // 100 for name in SECTIONS}
    spare = context_tokens - budget - context_tokens // REPLY_RESERVE_DIVISOR
    turns = min(max(spare // TOKENS_PER_TURN, _MIN_TURNS), _MAX_TURNS)
    # As many past moments as the past budget holds at a typical exchange's size, at least the
    # tier's own count and never more than the candidates recalled.
    fits = sections["past"] // _TYPICAL_CHUNK_TOKENS
    past_max = min(knobs.recall_k, max(knobs.past_max, fits)) if tier is not Tier.OFF else 0
    standard = tier >= Tier.STANDARD
    llm = has_llm and standard
    full_llm = has_llm and tier is Tier.FULL
    return MemoryProfile(
        tier=tier,
        context_tokens=context_tokens,
        budget_tokens=budget,
        section_tokens=sections,
        keep_last_n_turns=turns,
        recall_k=knobs.recall_k,
        facts_max=knobs.facts_max,
        lessons_max=knobs.lessons_max,
        past_max=past_max,
        graph_hops=knobs.graph_hops,
        graph_rows_max=knobs.graph_rows_max,
        ram_vector_index=standard,
        ann_vector_index=standard,
        embedder=tier >= Tier.LITE,
        builtin_embedder=standard,
        llm_extraction=llm,
        llm_summaries=llm,
        llm_contradiction_merge=full_llm,
        worker_max_tokens=_WORKER_MAX_TOKENS,
        extract_every_n_turns=(1 if full_llm else 2) if llm else 0,
        idle_consolidate_seconds=90.0 if tier is Tier.FULL else None,
        queue_max=knobs.queue_max,
        headroom_seconds=knobs.headroom_seconds,
        chunk_target_tokens=_CHUNK_TOKENS,
    )
