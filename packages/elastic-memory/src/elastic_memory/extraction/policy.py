"""The trust policy (:class:`ExtractionPolicy`) and :func:`apply_policy`: caps, filters and guards for an extraction."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..errors import UsageError
from . import guards
from .values import EntityCandidate, Extraction, FactCandidate, MemoryCandidate, Rejection, RelationCandidate, Turn

__all__ = ["ExtractionPolicy", "apply_policy"]


@dataclass(frozen=True, kw_only=True)
class ExtractionPolicy:
    """How far automatically captured memory is trusted, and what is refused outright.

    Only facts set explicitly (``facts.set``) carry confidence 1.0; every cap here is below 1.
    """

    user_confidence_cap: float = 0.95
    """Ceiling for facts and memories taken from the user's own words by rules or heuristics."""
    agent_confidence_cap: float = 0.8
    """Ceiling for anything derived from the assistant's reply."""
    llm_confidence_cap: float = 0.7
    """Ceiling for anything an LLM extracted, whatever the model claims about it."""
    min_confidence: float = 0.3
    """Candidates below this (after capping) are dropped silently."""
    reserved_prefixes: tuple[str, ...] = ("system.", "host.", "elastic_memory.", "em.")
    """Keys starting with one of these belong to the host and are never written automatically."""
    max_value_chars: int = 300
    """Longest fact value (and entity name) accepted."""
    max_memory_chars: int = 1000
    """Longest memory content accepted."""

    def __post_init__(self) -> None:
        for name in ("user_confidence_cap", "agent_confidence_cap", "llm_confidence_cap"):
            cap = getattr(self, name)
            if isinstance(cap, bool) or not isinstance(cap, (int, float)) or not 0 < cap < 1:
                msg = (
                    f"{name}={cap!r} is refused: automatically captured memory can never be fully trusted, "
                    "and only facts set explicitly via facts.set carry confidence 1.0; use a number strictly "
                    "between 0 and 1, e.g. 0.9"
                )
                raise UsageError(msg)
        low = self.min_confidence
        caps = (self.user_confidence_cap, self.agent_confidence_cap, self.llm_confidence_cap)
        if isinstance(low, bool) or not isinstance(low, (int, float)) or not 0 <= low <= min(caps):
            msg = f"min_confidence={low!r} must be in [0, 1) and not above any cap (lowest cap: {min(caps)})"
            raise UsageError(msg)
        prefixes = self.reserved_prefixes
        if not isinstance(prefixes, tuple) or not all(isinstance(p, str) and p for p in prefixes):
            msg = "reserved_prefixes must be a tuple of non-empty str, e.g. ('system.', 'host.')"
            raise UsageError(msg)
        for name in ("max_value_chars", "max_memory_chars"):
            size = getattr(self, name)
            if isinstance(size, bool) or not isinstance(size, int) or size < 1:
                msg = f"{name}={size!r} must be a positive int"
                raise UsageError(msg)


def apply_policy(extraction: Extraction, policy: ExtractionPolicy, *, turn: Turn | None = None) -> Extraction:
    """Cap confidences by origin and source, drop what falls below ``min_confidence``, guard the rest.

    Caps: rules/heuristic from the user's words -> ``user_confidence_cap``; from the reply ->
    ``agent_confidence_cap``; ``llm`` -> ``llm_confidence_cap`` (and the agent cap if from the reply);
    any other origin -> the lowest cap. Guard failures move to ``rejected``; dropped entries vanish.
    ``turn`` lets the echo guard compare values with the transcript.
    """
    rejected = list(extraction.rejected)
    origin = extraction.origin
    facts: list[FactCandidate] = []
    for fact in extraction.facts:
        confidence = min(_unit(fact.confidence), _cap(policy, fact.origin, fact.source))
        if confidence < policy.min_confidence:
            continue
        reason = guards.check_fact(fact.key, fact.value, turn=turn, policy=policy) or guards.check_text(fact.evidence)
        if reason:
            rejected.append(Rejection(reason, "fact", f"{fact.key}={fact.value}"[:200], fact.origin, fact))
        else:
            facts.append(replace(fact, confidence=confidence))
    memories: list[MemoryCandidate] = []
    for memory in extraction.memories:
        confidence = min(_unit(memory.confidence), _cap(policy, origin, memory.source))
        if confidence < policy.min_confidence:
            continue
        reason = (
            guards.check_memory(memory.content, turn=turn, policy=policy)
            or guards.check_text(memory.evidence)
            or (guards.check_shape(memory.content) if memory.kind == "preference" else None)
            or (guards.check_howto(memory.content) if memory.kind == "howto" else None)
        )
        if reason:
            rejected.append(Rejection(reason, "memory", memory.content[:200], origin, memory))
        else:
            memories.append(replace(memory, confidence=confidence, importance=_unit(memory.importance)))
    entities: list[EntityCandidate] = []
    for entity in extraction.entities:
        confidence = min(_unit(entity.confidence), _cap(policy, origin, "user"))
        if confidence < policy.min_confidence:
            continue
        reason = guards.check_entity(entity.name, policy=policy)
        if reason:
            rejected.append(Rejection(reason, "entity", entity.name[:200], origin))
        else:
            entities.append(replace(entity, confidence=confidence))
    relations: list[RelationCandidate] = []
    for rel in extraction.relations:
        confidence = min(_unit(rel.confidence), _cap(policy, origin, "user"))
        if confidence < policy.min_confidence:
            continue
        reason = guards.check_relation(rel.source, rel.target, rel.relation, policy=policy)
        if reason:
            rejected.append(Rejection(reason, "relation", f"{rel.source} -{rel.relation}-> {rel.target}"[:200], origin))
        else:
            relations.append(replace(rel, confidence=confidence))
    return replace(
        extraction,
        facts=tuple(facts),
        memories=tuple(memories),
        entities=tuple(entities),
        relations=tuple(relations),
        rejected=tuple(rejected),
        episode_importance=_unit(extraction.episode_importance),
    )


def _cap(policy: ExtractionPolicy, origin: str, source: str) -> float:
    agent = policy.agent_confidence_cap
    if origin in ("rules", "heuristic"):
        return policy.user_confidence_cap if source == "user" else agent
    if origin == "llm":
        return policy.llm_confidence_cap if source == "user" else min(policy.llm_confidence_cap, agent)
    return min(policy.user_confidence_cap, agent, policy.llm_confidence_cap)


def _unit(x: float) -> float:
    """``x`` clamped to [0, 1]; anything that is not a finite number counts as 0."""
    if isinstance(x, bool) or not isinstance(x, (int, float)) or math.isnan(x):
        return 0.0
    return min(1.0, max(0.0, float(x)))
