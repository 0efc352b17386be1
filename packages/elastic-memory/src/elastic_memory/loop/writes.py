"""What an extraction writes (pure): memory rows, fact writes, the quarantine's entries, what a turn wrote."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from typing import Any

from .. import _validate as v
from ..extraction import Extraction, FactCandidate, MemoryCandidate, Rejection
from ..types import KINDS
from .tables import FactWrite, Quarantined

__all__ = ["Written", "fact_write", "memory_rows", "quarantined"]

#: What a turn wrote: its chunks' ids, its memories' ids, the keys of the facts it created.
Written = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]


def fact_write(fact: Any, session: str | None, observed_at: float) -> FactWrite:
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


def memory_rows(agent_id: str, found: Extraction, session: str | None, now: float) -> list[dict[str, Any]]:
    """Rows for the semantic and procedural memories an extraction proposes."""
    return [
        v.build_row(
            m.content,
            now=now,
            default_agent=agent_id,
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


def quarantined(rejected: Iterable[Rejection], session: str | None, observed_at: float) -> list[Quarantined]:
    """What to keep of refused candidates: a fact or memory with the write releasing it would make."""
    out = []
    for r in rejected:
        payload: dict[str, Any] | None = None
        if isinstance(r.candidate, FactCandidate):
            payload = {"fact": dataclasses.asdict(fact_write(r.candidate, session, observed_at))}
        elif isinstance(r.candidate, MemoryCandidate) and r.candidate.type in ("semantic", "procedural"):
            m = r.candidate
            fields = {"type": m.type, "importance": m.importance, "confidence": m.confidence, "kind": m.kind}
            payload = {"memory": {"content": m.content, "session_id": session, **fields}}
        text = None if payload is None else json.dumps(payload, ensure_ascii=False)
        out.append(Quarantined(r.reason, r.what, r.text, r.origin, text))
    return out
