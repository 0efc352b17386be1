"""What a batch write does, decided apart from the database it runs on (pure).

Both stores read the rows a batch touches (:func:`existing`, :func:`live_by_hash`), let
:func:`plan` decide, row by row, what is created, updated or a duplicate, then run the
planned INSERTs and UPDATEs in their own dialect, inside their own transaction.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ..types import MemoryId
from . import queries as q
from .vectors.leg import KEEP

__all__ = ["EXISTING", "Plan", "WriteMode", "plan"]

WriteMode = Literal["upsert", "update", "import"]

_writable = operator.itemgetter(*q.WRITABLE)
#: The columns :func:`plan` needs of a batch's rows already stored (``FROM memories WHERE id IN ...``).
EXISTING = "seq, id, has_vector, content_hash, agent_id, scope, pool, deleted_at, archived"


@dataclass
class Plan:
    """The statements' values and what the write returns."""

    #: ``[seq, *WRITABLE]`` per new row.
    inserts: list[list[Any]] = field(default_factory=list)
    #: ``[*update_columns, seq]`` per rewritten row.
    updates: list[list[Any]] = field(default_factory=list)
    update_columns: list[str] = field(default_factory=list)
    #: Each written seq's final row and vector (a later row of the batch with the same id wins).
    final: dict[int, tuple[dict[str, Any], Any]] = field(default_factory=dict)
    #: Seqs that existed before the batch.
    rewritten: list[int] = field(default_factory=list)
    ids: list[MemoryId] = field(default_factory=list)
    #: ``(seq, row as written, vector)`` per written row, in order.
    changed: list[tuple[int, dict[str, Any], Any]] = field(default_factory=list)


def plan(
    rows: Sequence[dict[str, Any]],
    vectors: Sequence[Any],
    dedupe: Sequence[bool],
    *,
    stored: Iterable[Sequence[Any]],
    live: Iterable[Sequence[Any]],
    new_seq: Callable[[], int],
    mode: WriteMode,
    pinned: bool,
    now: float,
) -> Plan:
    """Decide a batch: ``stored`` rows have :data:`EXISTING`'s columns, ``live`` rows :func:`queries.live_by_hash`'s.

    Later rows of the batch see earlier ones (same id: update; same text: duplicate).
    ``new_seq`` gives the seq of each created row. ``mode`` says what an upsert of an
    existing id overwrites: ``"upsert"`` keeps the created and access bookkeeping,
    ``"update"`` also keeps the deleted/archived flags, ``"import"`` overwrites every column.
    """
    known: dict[str, tuple[int, bool]] = {}
    key_of: dict[str, tuple[Any, ...]] = {}
    flags: dict[str, tuple[Any, int]] = {}
    for seq, mid, has_vector, *stored_key, deleted_at, archived in stored:
        known[mid] = (int(seq), bool(has_vector))
        key_of[mid] = tuple(stored_key)
        flags[mid] = (deleted_at, archived)
    out = Plan(rewritten=[seq for seq, _ in known.values()])
    live_by_key: dict[tuple[Any, ...], str] = {}
    for content_hash, agent, scope, pool, mid in live:
        live_by_key.setdefault((content_hash, agent, scope, pool), mid)
    keep: tuple[str, ...] = ()
    if mode != "import":
        keep = ("created_at", "accessed_at", "access_count", "retention_strength")
    if mode == "update":
        keep = (*keep, "deleted_at", "archived")
    out.update_columns = [c for c in q.WRITABLE if c not in keep and c != "id"]
    for given, vector, check in zip(rows, vectors, dedupe, strict=True):
        key = (given["content_hash"], given["agent_id"], given["scope"], given["pool"])
        if check and live_by_key.get(key, given["id"]) != given["id"]:
            out.ids.append(MemoryId(live_by_key[key], "duplicate"))
            continue
        prior = known.get(given["id"])
        has_vector = pinned and (isinstance(vector, np.ndarray) or (vector is KEEP and prior is not None and prior[1]))
        row = {**given, "has_vector": int(has_vector)}
        if mode == "update" and given["id"] in flags:
            row["deleted_at"], row["archived"] = flags[given["id"]]
        old_key = key_of.pop(given["id"], None)
        if old_key is not None and live_by_key.get(old_key) == given["id"]:
            del live_by_key[old_key]
        key_of[given["id"]] = key
        if prior is None:
            seq, status = new_seq(), "created"
            out.inserts.append([seq, *_writable(row)])
        else:
            seq, status = prior[0], "updated"
            out.updates.append([*(row[c] for c in out.update_columns), seq])
        known[row["id"]] = (seq, has_vector)
        expired = row["expires_at"] is not None and row["expires_at"] <= now
        if row["deleted_at"] is None and not row["archived"] and not expired:
            live_by_key[key] = row["id"]
        out.final[seq] = (row, vector)
        out.ids.append(MemoryId(row["id"], status))
        out.changed.append((seq, row, vector))
    return out
