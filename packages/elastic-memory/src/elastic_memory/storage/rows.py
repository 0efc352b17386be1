"""Conversions between stored rows and public values (pure)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import numpy.typing as npt

from ..types import Hit, MemoryRecord, MemoryType, Scope, Source
from ..users import split_owner
from .queries import COLUMNS

__all__ = ["from_blob", "hit_from_record", "record_from_row", "session_key", "to_blob"]

_INDEX = {name: i for i, name in enumerate(COLUMNS)}
# Lookups instead of Enum calls: a recall converts every hit's row.
_SCOPES = {s.value: s for s in Scope}
_TYPES = {t.value: t for t in MemoryType}
_SOURCES = {s.value: s for s in Source}


def _json(text: str, empty: Any) -> Any:
    return empty if text in ("[]", "{}") else json.loads(text)


def record_from_row(row: Any) -> MemoryRecord:
    """A :class:`MemoryRecord` from a row of :data:`queries.COLUMNS`."""
    get = row.__getitem__
    deleted_at = get(_INDEX["deleted_at"])
    expires_at = get(_INDEX["expires_at"])
    agent_id, user_id = split_owner(get(_INDEX["agent_id"]))
    return MemoryRecord(
        id=get(_INDEX["id"]),
        content=get(_INDEX["content"]),
        agent_id=agent_id,
        scope=_SCOPES.get(get(_INDEX["scope"])) or Scope(get(_INDEX["scope"])),
        pool=get(_INDEX["pool"]),
        type=_TYPES.get(get(_INDEX["type"])) or MemoryType(get(_INDEX["type"])),
        content_hash=get(_INDEX["content_hash"]),
        importance=float(get(_INDEX["importance"])),
        confidence=float(get(_INDEX["confidence"])),
        source=_SOURCES.get(get(_INDEX["source"])) or Source(get(_INDEX["source"])),
        pinned=bool(get(_INDEX["pinned"])),
        tags=tuple(_json(get(_INDEX["tags"]), ())),
        metadata=_json(get(_INDEX["metadata"]), {}),
        session_id=get(_INDEX["session_id"]),
        created_at=float(get(_INDEX["created_at"])),
        updated_at=float(get(_INDEX["updated_at"])),
        accessed_at=float(get(_INDEX["accessed_at"])),
        access_count=int(get(_INDEX["access_count"])),
        retention_strength=float(get(_INDEX["retention_strength"])),
        archived=bool(get(_INDEX["archived"])),
        deleted_at=None if deleted_at is None else float(deleted_at),
        expires_at=None if expires_at is None else float(expires_at),
        has_vector=bool(get(_INDEX["has_vector"])),
        kind=get(_INDEX["kind"]),
        user_id=user_id,
    )


def seq_of(row: Any) -> int:
    """The ``seq`` (rowid) of a row of :data:`queries.COLUMNS`."""
    return int(row[_INDEX["seq"]])


def hit_from_record(
    record: MemoryRecord,
    score: float,
    keyword_score: float | None = None,
    vector_score: float | None = None,
    relevance: float | None = None,
) -> Hit:
    """A :class:`Hit` for ``record`` with its scores."""
    return Hit(
        id=record.id,
        content=record.content,
        score=score,
        type=record.type,
        metadata=record.metadata,
        tags=record.tags,
        agent_id=record.agent_id,
        scope=record.scope,
        pool=record.pool,
        session_id=record.session_id,
        importance=record.importance,
        confidence=record.confidence,
        pinned=record.pinned,
        source=record.source,
        created_at=record.created_at,
        keyword_score=keyword_score,
        vector_score=vector_score,
        kind=record.kind,
        accessed_at=record.accessed_at,
        retention_strength=record.retention_strength,
        relevance=relevance,
        user_id=record.user_id,
    )


def to_blob(vector: npt.NDArray[np.float32]) -> bytes:
    """Little-endian float32 bytes, the format sqlite-vec reads."""
    return np.ascontiguousarray(vector, dtype="<f4").tobytes()


def from_blob(blob: bytes) -> npt.NDArray[np.float32]:
    """The inverse of :func:`to_blob`."""
    return np.frombuffer(blob, dtype="<f4").astype(np.float32)


def session_key(agent_id: object, session_id: object) -> str:
    """One session of one agent as a string: two agents' sessions of one name are two sessions.

    The agent's length comes first, so no two (agent, session) pairs make one key.

    >>> session_key("ann", "s1"), session_key("an", "n:s1")
    ('3:ann:s1', '2:an:n:s1')
    """
    agent = str(agent_id)
    return f"{len(agent)}:{agent}:{session_id}"
