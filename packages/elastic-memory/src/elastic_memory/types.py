"""Plain data: the values that cross the public API. No I/O; the one internal import is the pure display."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, SupportsIndex, TypeVar, overload

from . import display

#: What wrote a memory (:attr:`MemoryRecord.kind`). ``"message"`` is a chat message an adapter's
#: chat history stores: never embedded, and left out of recall unless ``filters["kind"]`` names it.
KINDS = ("note", "chunk", "lesson", "preference", "howto", "summary", "merged", "message")
#: The kinds recall leaves out unless its filters name them.
UNRECALLED = ("message",)


class Scope(str, enum.Enum):
    """Who may read a memory: its agent, a named pool of agents, or every agent."""

    PRIVATE = "private"
    SHARED = "shared"
    GLOBAL = "global"


class MemoryType(str, enum.Enum):
    """What kind of memory: something that happened, a fact, or a how-to."""

    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    PROCEDURAL = "procedural"


class Source(str, enum.Enum):
    """Where a memory came from: confirmed by the user, said by the agent, extracted, imported."""

    USER_CONFIRMED = "user_confirmed"
    AGENT = "agent"
    EXTRACTED = "extracted"
    IMPORTED = "imported"


class RecallMode(str, enum.Enum):
    """How :meth:`Memory.recall` ranks: BM25, vector cosine, or both fused."""

    KEYWORD = "keyword"
    SEMANTIC = "semantic"
    HYBRID = "hybrid"


class Fusion(str, enum.Enum):
    """How the hybrid mode fuses its keyword and vector legs.

    ``CONVEX`` (the default) gives every candidate of either leg its cosine similarity and
    its BM25 score (0 beyond the keyword leg's candidates), min-max normalises each over all
    candidates and takes a convex combination (vector weight 0.5 unless configured).
    ``WEIGHTED`` is min-max within each leg's own list, a leg that did not find a memory
    giving it 0 (0.7 vector / 0.3 keyword unless configured). ``RRF`` is weighted
    reciprocal rank fusion (k = 60).
    """

    CONVEX = "convex"
    WEIGHTED = "weighted"
    RRF = "rrf"


class PruneAction(str, enum.Enum):
    """What :meth:`Memory.prune` does with its victims."""

    ARCHIVE = "archive"
    PURGE = "purge"


class MemoryId(str):
    """The id of a written memory (a ``str``), with how the write went in ``status``.

    ``status`` is ``"created"``, ``"updated"`` (the id existed: upsert) or ``"duplicate"``
    (the same content already existed, and this is that memory's id).

    >>> mid = MemoryId("abc", "created")
    >>> mid == "abc", mid.status
    (True, 'created')
    """

    status: str

    def __new__(cls, value: str, status: str = "created") -> MemoryId:  # noqa: D102 - documented on the class
        self = super().__new__(cls, value)
        self.status = status
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (MemoryId, (str(self), self.status))


@dataclass(frozen=True)
class MemoryRecord:
    """One stored memory, every column of it.

    ``kind`` says what wrote it: ``"note"`` (:meth:`Memory.remember`), ``"chunk"`` (a turn
    of :meth:`Memory.record_turn`), ``"lesson"``, ``"preference"``, ``"howto"``,
    ``"summary"`` (a session summary) or ``"merged"`` (near-duplicates consolidated).
    """

    id: str
    content: str
    agent_id: str
    scope: Scope
    pool: str | None
    type: MemoryType
    content_hash: str
    importance: float
    confidence: float
    source: Source
    pinned: bool
    tags: tuple[str, ...]
    metadata: dict[str, Any]
    session_id: str | None
    created_at: float
    updated_at: float
    accessed_at: float
    access_count: int
    retention_strength: float
    archived: bool
    deleted_at: float | None
    expires_at: float | None
    has_vector: bool
    kind: str = "note"
    user_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (enums as their values), as written by ``export_jsonl``."""
        out = {name: getattr(self, name) for name in self.__dataclass_fields__}
        for name in ("scope", "type", "source"):
            out[name] = out[name].value
        out["tags"] = list(self.tags)
        out["metadata"] = dict(self.metadata)
        return out


@dataclass(frozen=True)
class Hit:
    """One recalled memory with its scores (the score contract: docs/concepts.md, "Scores").

    ``score`` ranks the recall, in the scale of the mode that ran: cosine similarity in
    [-1, 1] (semantic), BM25 (keyword: positive, higher is better), an absolute score in
    [0, 1] (hybrid), or the importance when there was no query text. ``relevance`` is how
    well the memory itself matches, on one scale, [0, 1], for thresholds (``None`` without
    query text; in hybrid mode without the neighbour boost, which only ranks).
    ``keyword_score`` (BM25) and ``vector_score`` (cosine similarity) are the raw scores of
    each leg, ``None`` where that leg did not score the memory.
    ``tier`` says which federation tier served it (``"private"``, ``"shared:<pool>"``,
    ``"global"``, or a store's name); ``None`` from a single store. ``user_id`` is the
    user of the agent it belongs to (``None``: the agent's own).
    """

    id: str
    content: str
    score: float
    type: MemoryType
    metadata: dict[str, Any]
    tags: tuple[str, ...]
    agent_id: str
    scope: Scope
    pool: str | None
    session_id: str | None
    importance: float
    confidence: float
    pinned: bool
    source: Source
    created_at: float
    keyword_score: float | None = None
    vector_score: float | None = None
    kind: str = "note"
    accessed_at: float | None = None
    tier: str | None = None
    retention_strength: float | None = None
    relevance: float | None = None
    user_id: str | None = None

    def _repr_html_(self) -> str:
        return display.hits_html([self])

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(display.hits_text([self]))


_T = TypeVar("_T")
_L = TypeVar("_L", bound="ShownList[Any]")


class ShownList(list[_T], Generic[_T]):
    """A ``list`` that a notebook shows as a table (IPython as text columns); a slice keeps the class.

    The results that are lists (:class:`Hits`, :class:`FactHistory`, ``Traversal``) derive from
    it and say how they are shown (``_html``, ``_text``); one holding more than its items (the
    degraded tiers of :class:`Hits`) also says how a slice keeps it (``_sliced``).

    >>> FactHistory() == [], isinstance(FactHistory(), list), type(FactHistory()[:1]).__name__
    (True, True, 'FactHistory')
    """

    __slots__ = ()

    @overload
    def __getitem__(self, index: SupportsIndex, /) -> _T: ...
    @overload
    def __getitem__(self: _L, index: slice, /) -> _L: ...
    def __getitem__(self: _L, index: SupportsIndex | slice, /) -> Any:
        """An item, or a slice of the same class (still shown as a table)."""
        if isinstance(index, slice):
            return self._sliced(super().__getitem__(index))
        return super().__getitem__(index)

    def _sliced(self: _L, items: list[Any]) -> _L:
        return type(self)(items)

    def _html(self) -> str:
        raise NotImplementedError

    def _text(self) -> str:
        raise NotImplementedError

    def _repr_html_(self) -> str:
        return self._html()

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(f"{type(self).__name__}([...])" if cycle else self._text())


class Hits(ShownList[Hit]):
    """What :meth:`Memory.recall` returns: a ``list`` of :class:`Hit`, best first, shown as a table.

    It is a list in every way (indexing, slicing, ``==`` with a plain list, JSON); a notebook
    shows it as a table of ranks, relevances, scores and contents, IPython as text columns.

    On a federation ``degraded`` names the tiers that did not answer this recall, each with
    why (``"timeout"``, ``"breaker_open"``, ``"backend_error"``, ``"corruption"``): the hits
    are what the other tiers had. It is empty when every tier answered, and on one file.

    >>> Hits() == [], isinstance(Hits(), list), Hits().degraded
    (True, True, {})
    """

    __slots__ = ("degraded",)

    def __init__(self, hits: Iterable[Hit] = (), *, degraded: Mapping[str, str] | None = None) -> None:
        super().__init__(hits)
        self.degraded: dict[str, str] = dict(degraded or {})

    def _sliced(self, items: list[Hit]) -> Hits:
        return Hits(items, degraded=self.degraded)

    def _html(self) -> str:
        return display.hits_html(self)

    def _text(self) -> str:
        return display.hits_text(self)


@dataclass(frozen=True)
class PrunePolicy:
    """Which memories :meth:`Memory.prune` removes, as one victim set.

    Victims are the unpinned live memories with ``importance < min_importance``, plus,
    when more than ``max_entries`` would remain, the lowest-priority ones beyond the cap
    (lowest importance first, then least recently used). Pinned memories are never touched.
    """

    min_importance: float | None = None
    max_entries: int | None = None
    action: PruneAction = PruneAction.ARCHIVE
    dry_run: bool = False


@dataclass(frozen=True)
class PruneReport:
    """What a prune did (or, with ``dry_run``, would do)."""

    action: PruneAction
    ids: tuple[str, ...]
    below_importance: int
    over_cap: int
    dry_run: bool

    @property
    def count(self) -> int:
        """How many memories were (or would be) pruned."""
        return len(self.ids)


@dataclass(frozen=True)
class CheckReport:
    """What an integrity check of a store's file found (:meth:`Memory.check`, ``elastic-memory check``).

    ``ok`` is true when the check found no damage; ``problems`` are SQLite's findings (at
    most 100), such as ``"Tree 12 page 345 cell 0: invalid page number 0"``. ``full`` tells
    ``PRAGMA integrity_check`` (also compares every index with its table) from
    ``PRAGMA quick_check`` (pages and records only, several times faster). ``complete`` is
    false when the check was stopped before its end (a check at open past its time limit,
    or a store closed meanwhile): then ``ok`` covers only what it read. ``seconds`` is how
    long it took.
    """

    ok: bool
    problems: tuple[str, ...]
    seconds: float
    full: bool
    complete: bool = True


@dataclass(frozen=True)
class ImportReport:
    """What an import wrote: memories created, updated or deduplicated, and rows per record type.

    ``records`` counts the file's records by type (``"memory"``, ``"turn"``, ``"fact"``,
    ``"entity"``, ...), each imported (written or found already there).
    """

    created: int
    updated: int
    duplicates: int
    total: int
    records: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Explanation:
    """How one recall was served: the legs, their candidates, and the fusion.

    ``details`` holds per-leg facts such as the FTS5 MATCH expression, the vector index
    tier (``"ram"`` or ``"vec0"``), candidate counts, fusion weights and timings in ms.
    """

    query: str
    mode: RecallMode
    effective_mode: RecallMode
    hits: list[Hit]
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def degraded(self) -> dict[str, str]:
        """The tiers of a federation that did not answer this recall, each with why (empty when all did)."""
        tiers = self.details.get("federation", {}).get("tiers", {})
        return {name: str(tier.get("reason") or "degraded") for name, tier in tiers.items() if tier.get("degraded")}

    def _repr_html_(self) -> str:
        return display.explanation_html(self)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(display.explanation_text(self))


@dataclass(frozen=True)
class Fact:
    """One version of a fact: ``key`` (dotted, e.g. ``user.dog_name``) held ``value``.

    ``valid_from``/``valid_to`` say when it held in the world; ``recorded_at`` and
    ``invalidated_at`` when the store learnt it and when a newer version replaced it
    (``None``: this is the current version). ``category`` is ``"profile"`` (always shown to
    the model) or ``"note"`` (shown when relevant). ``origin`` says which path wrote it:
    ``"explicit"`` (:meth:`Facts.set`), ``"rules"``, ``"heuristic"``, ``"llm"`` or ``"merge"``.
    A forgotten key's current version is a tombstone with ``forgotten`` set.
    """

    id: int
    agent_id: str
    key: str
    value: str
    category: str
    source: Source
    origin: str
    confidence: float
    importance: float
    session_id: str | None
    valid_from: float
    valid_to: float | None
    recorded_at: float
    invalidated_at: float | None
    invalidated_by: int | None
    forgotten: bool
    archived: bool
    access_count: int
    user_id: str | None = None


class FactHistory(ShownList[Fact]):
    """What :meth:`Facts.history` returns: a ``list`` of :class:`Fact` versions, oldest first, shown as a table.

    >>> FactHistory() == [], isinstance(FactHistory(), list)
    (True, True)
    """

    __slots__ = ()

    def _html(self) -> str:
        return display.facts_html(self)

    def _text(self) -> str:
        return display.facts_text(self)


@dataclass(frozen=True)
class QuarantinedItem:
    """Something a guard refused to store, kept for review (never shown to the model).

    ``reason`` is the guard's (``"instruction"``, ``"placeholder"``, ...), ``what`` the kind
    of candidate (``fact``, ``memory``, ``entity``, ``relation``), ``turn_seq`` the turn it
    came from (``None`` when it came from several or from none). ``releasable`` says whether
    :meth:`Memory.release_quarantined` can write it as it would have been.
    """

    id: int
    agent_id: str
    reason: str
    what: str
    text: str
    origin: str
    session_id: str | None
    created_at: float
    turn_seq: int | None = None
    releasable: bool = False
    user_id: str | None = None


@dataclass(frozen=True)
class TurnReceipt:
    """What :meth:`Memory.record_turn` stored.

    ``ok`` is ``False`` when the turn could not be stored; ``error`` then says why (the
    call never raises). ``facts`` are the keys captured inline by the rules,
    ``quarantined`` how many candidates the guards refused.
    """

    ok: bool
    session_id: str
    turn: int | None = None
    chunk_ids: tuple[str, ...] = ()
    facts: tuple[str, ...] = ()
    quarantined: int = 0
    error: str | None = None


@dataclass(frozen=True)
class Edge:
    """A typed, directed edge ``src_id -> dst_id`` between two nodes (memory or note ids).

    ``source`` names the producer that owns the edge (``"wikilinks"``, ``"consolidation"``,
    ...): a producer rewrites exactly its own edges with ``replace_source``. The triple
    ``(src_id, dst_id, relation)`` is the edge's identity, so writing it again is idempotent.
    """

    src_id: str
    dst_id: str
    relation: str
    source: str
    confidence: float = 1.0


@dataclass(frozen=True)
class Entity:
    """An entity of the knowledge graph: a person, place, organisation, ... that memories mention.

    ``aliases`` are other names that refer to it; ``mention_count`` how often it was mentioned
    and ``confidence`` the running average of those mentions' confidence; ``cluster_id`` and
    ``cluster_label`` its topic group once consolidation ran.
    """

    id: int
    name: str
    type: str
    aliases: tuple[str, ...]
    confidence: float
    mention_count: int
    cluster_id: int | None
    cluster_label: str | None


@dataclass(frozen=True)
class Relation:
    """A typed, directed relation between two entities (by name), e.g. ``user -works_at-> Acme``."""

    source: str
    target: str
    relation: str
    confidence: float
    mention_count: int
    provenance: str
