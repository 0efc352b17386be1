"""How the memory loop behaves: :class:`LoopConfig` (validated at :meth:`Memory.open`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import UsageError
from ..extraction import ExtractionPolicy
from ..governor import Tier

__all__ = ["LoopConfig"]

#: Longest timeout accepted (a day): lock waits are twice ``llm_timeout``.
_MAX_SECONDS = 86_400


def _positive(name: str, value: object, *, integer: bool = False) -> None:
    kinds: tuple[type, ...] = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or not value > 0:  # type: ignore[operator]
        msg = f"LoopConfig.{name} must be a positive {'integer' if integer else 'number'}, got {value!r}"
        raise UsageError(msg)


#: The default :attr:`LoopConfig.past_floor` (benchmarks/plan_floor.py: each fold of LoCoMo chose it).
PAST_FLOOR = 0.1


@dataclass(frozen=True, kw_only=True)
class LoopConfig:
    """Settings of ``build_context`` / ``record_turn`` and the background worker.

    Args:
        tier: Force a governor tier (``"off"``, ``"lite"``, ``"standard"``, ``"full"``);
            ``None`` lets the governor pick from free RAM and the context size.
        budget_tokens: Tokens the whole plan may use; ``None`` derives it from the tier.
        token_counter: Counts tokens the way the host's model does (``str -> int``); the
            default is a fast estimate.
        extraction: Confidence caps, minimum confidence and reserved key prefixes.
        language: Cue set of the rule and heuristic extraction (``"en"`` built in).
        llm_timeout: Seconds a background ``llm`` call may take before it is abandoned.
        llm_cooldown: Seconds background ``llm`` use pauses after a hang or repeated errors.
        max_lessons: Live lessons kept; the oldest beyond are archived.
        forgetting: Archive stale, unimportant, never-recalled chunks and auto facts
            during consolidation (never deletes).
        max_chunks: Live exchanges (chunks) kept; beyond, consolidation archives the
            lowest-priority ones (importance, recency, access, retention). ``None``: no cap.
        background: Run jobs on a background task. ``False`` runs them only in
            :meth:`Memory.drain` and :meth:`Memory.tick` (deterministic, for tests).
        replay_flagged: Let ``build_context`` show past moments of flagged turns (user
            messages that tried to instruct the model). Off by default: they are kept in
            the transcript and recall, never replayed into prompts.
        past_floor: The relevance (``Hit.relevance``, a moment's own match with the input, in
            [0, 1]) the best past moment must reach for the plan to show past moments at all:
            an input about nothing stored (small talk, a general question) then gets none
            instead of the weak matches that would fill the budget. The default, ``0.1``, is
            the highest gate that lost no LoCoMo plan evidence, chosen by cross-validation;
            ``0.15`` trades 0.3 points of evidence for far emptier plans on unrelated input
            (``benchmarks/plan_floor.py`` and ``docs/memory-loop.md`` have the figures).

    >>> LoopConfig(tier="lite").tier
    'lite'
    """

    tier: str | None = None
    budget_tokens: int | None = None
    token_counter: Callable[[str], int] | None = None
    extraction: ExtractionPolicy = field(default_factory=ExtractionPolicy)
    language: str = "en"
    llm_timeout: float = 30.0
    llm_cooldown: float = 300.0
    max_lessons: int = 50
    forgetting: bool = True
    max_chunks: int | None = None
    background: bool = True
    replay_flagged: bool = False
    past_floor: float = PAST_FLOOR

    def __post_init__(self) -> None:
        if self.tier is not None:
            Tier.parse(self.tier)
        if self.budget_tokens is not None:
            _positive("budget_tokens", self.budget_tokens, integer=True)
        if self.token_counter is not None and not callable(self.token_counter):
            msg = f"LoopConfig.token_counter must be callable (str -> int), got {self.token_counter!r}"
            raise UsageError(msg)
        if not isinstance(self.extraction, ExtractionPolicy):
            msg = f"LoopConfig.extraction must be an ExtractionPolicy, got {type(self.extraction).__name__}"
            raise UsageError(msg)
        if not isinstance(self.language, str):
            msg = f"LoopConfig.language must be a language code such as 'en', got {self.language!r}"
            raise UsageError(msg)
        for name in ("llm_timeout", "llm_cooldown"):
            _positive(name, getattr(self, name))
            if not math.isfinite(getattr(self, name)) or getattr(self, name) > _MAX_SECONDS:
                msg = f"LoopConfig.{name} must be a finite number of seconds up to {_MAX_SECONDS:,}"
                raise UsageError(msg)
        _positive("max_lessons", self.max_lessons, integer=True)
        if self.max_lessons > 1000:
            msg = f"LoopConfig.max_lessons is at most 1000, got {self.max_lessons}"
            raise UsageError(msg)
        if self.max_chunks is not None:
            _positive("max_chunks", self.max_chunks, integer=True)
        if (
            isinstance(self.past_floor, bool)
            or not isinstance(self.past_floor, int | float)
            or not 0.0 <= self.past_floor <= 1.0
        ):
            msg = f"LoopConfig.past_floor must be a number from 0 to 1 (a relevance), got {self.past_floor!r}"
            raise UsageError(msg)
        for name in ("forgetting", "background", "replay_flagged"):
            if not isinstance(getattr(self, name), bool):
                msg = f"LoopConfig.{name} must be True or False"
                raise UsageError(msg)
