"""The plain values of extraction (a :class:`Turn` in, an :class:`Extraction` out) and the :class:`Extractor` protocol.

Nothing here writes anything: an :class:`Extraction` is a proposal that the caller persists.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..errors import UsageError

__all__ = [
    "EntityCandidate",
    "Extraction",
    "Extractor",
    "FactCandidate",
    "MemoryCandidate",
    "Rejection",
    "RelationCandidate",
    "Turn",
]


@dataclass(frozen=True)
class Turn:
    """One exchange: what the user said and what the assistant replied."""

    user: str
    reply: str
    session_id: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.user, str) or not isinstance(self.reply, str):
            msg = "Turn(user, reply) takes two str; pass '' for a side that is missing"
            raise UsageError(msg)
        if self.session_id is not None and not isinstance(self.session_id, str):
            msg = "Turn.session_id must be a str or None"
            raise UsageError(msg)


@dataclass(frozen=True)
class FactCandidate:
    """A key -> value fact proposed for semantic memory."""

    key: str
    value: str
    confidence: float
    category: str
    """``profile`` (always shown to the model: name, location, allergies, ...) or ``note``."""
    evidence: str
    """The sentence the fact came from ('' if unknown)."""
    origin: str
    """``rules``, ``heuristic`` or ``llm``."""
    source: str = "user"
    """Whose words it came from: ``user`` or ``reply`` (the assistant's); a reply is trusted less."""


@dataclass(frozen=True)
class MemoryCandidate:
    """A memory proposed for the semantic (``preference``) or procedural (``howto``) layer."""

    type: str
    """``episodic``, ``semantic`` or ``procedural``."""
    content: str
    importance: float
    confidence: float
    kind: str
    """``preference`` (semantic), ``howto`` (procedural) or ``episode``."""
    source: str = "user"
    """``user`` or ``reply``, as for facts."""
    evidence: str = ""
    """The sentence it was distilled from ('' if unknown); an injection there rejects the memory too."""


@dataclass(frozen=True)
class EntityCandidate:
    """A node proposed for the knowledge graph."""

    name: str
    type: str
    confidence: float


@dataclass(frozen=True)
class RelationCandidate:
    """A directed edge proposed for the knowledge graph; ``source`` ``"user"`` is the user themselves."""

    source: str
    target: str
    relation: str
    confidence: float


@dataclass(frozen=True)
class Rejection:
    """A candidate a guard refused; the caller may keep it in quarantine for inspection."""

    reason: str
    """One of :class:`~elastic_memory.extraction.guards.GuardReason`."""
    what: str
    """``fact``, ``memory``, ``entity`` or ``relation``."""
    text: str
    """What was refused, shortened: ``key=value``, the content, the name or ``a -relation-> b``."""
    origin: str
    candidate: FactCandidate | MemoryCandidate | None = None
    """The refused fact or memory itself, so a reviewer can release it as it would have been."""


@dataclass(frozen=True)
class Extraction:
    """Everything one extractor proposes for one turn."""

    facts: tuple[FactCandidate, ...] = ()
    memories: tuple[MemoryCandidate, ...] = ()
    entities: tuple[EntityCandidate, ...] = ()
    relations: tuple[RelationCandidate, ...] = ()
    rejected: tuple[Rejection, ...] = ()
    episode_importance: float = 0.3
    """How much the exchange itself matters, in [0, 1]."""
    origin: str = "rules"
    """``rules``, ``heuristic`` or ``llm``: which extractor produced it."""


@runtime_checkable
class Extractor(Protocol):
    """Anything that turns a turn into an :class:`Extraction` without a model call (the worker's fallback)."""

    def extract(self, turn: Turn) -> Extraction:
        """Propose facts, memories, entities and relations for ``turn``."""
        ...
