"""The contract every storage backend keeps (SQLite and PostgreSQL implement it).

Code above the storage layer (the memory loop's tables, the knowledge graph, repair, the
federation) talks to a backend through :class:`Backend` and the :class:`Transaction` it
opens, never through a backend's private members: ``tests/unit/test_private_names.py``
enforces it. Statements are written once with ``?`` placeholders; a backend translates them
to its driver's style. What a backend can do is declared in :class:`Capabilities`, not
discovered by calling a method that raises.

>>> Capabilities(engine="sqlite", vectors=True, ram_index=True, loop_tables=True, keyword_half=5.0).engine
'sqlite'
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from ..filters import Filters
from ..types import MemoryId, MemoryRecord, PrunePolicy, PruneReport
from .write_plan import WriteMode

__all__ = ["Backend", "Capabilities", "EmbeddingPin", "Transaction", "WriteMode"]

F32 = npt.NDArray[np.float32]


@dataclass(frozen=True)
class EmbeddingPin:
    """The model a database is pinned to by its first vector."""

    model_id: str
    dimension: int
    family: str


@dataclass(frozen=True)
class Capabilities:
    """What a backend offers, declared once at open."""

    #: ``"sqlite"`` or ``"postgresql"``.
    engine: str
    #: Vectors can be stored and searched (sqlite-vec loaded, pgvector installed).
    vectors: bool
    #: Vector searches may be served from RAM (a flat or ANN index beside the table).
    ram_index: bool
    #: The memory loop's tables (turns, sessions, facts, lessons, quarantine) and the graph's exist.
    loop_tables: bool
    #: The keyword score whose relevance is 0.5 (the score contract: BM25 on SQLite, ``ts_rank`` on PostgreSQL).
    keyword_half: float


class Transaction(Protocol):
    """An open write transaction: everything in it commits together or not at all.

    SQL uses ``?`` placeholders (the backend translates). Rows written with
    :meth:`write_rows` or :meth:`put_vector` reach the backend's RAM index after the commit.
    """

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement; the number of rows it changed."""
        ...

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement per parameter row."""
        ...

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """Run one statement (a query, or a write with ``RETURNING``); its rows."""
        ...

    async def write_rows(
        self, rows: Sequence[dict[str, Any]], vectors: Sequence[Any], dedupe: Sequence[bool], *, mode: WriteMode
    ) -> list[MemoryId]:
        """Insert or upsert memories (full column dicts), as :meth:`Backend.write` does, inside this transaction."""
        ...

    async def archive(self, ids: Sequence[str]) -> None:
        """Archive memories by id (hidden from recall, kept) inside this transaction."""
        ...

    async def put_vector(self, seq: int, row: Mapping[str, Any], vector: F32) -> None:
        """Store (or replace) the vector of memory ``seq``; ``row`` holds its agent_id, scope and type."""
        ...

    async def settle_pin(self, pin: EmbeddingPin) -> EmbeddingPin:
        """The database's pin as committed now: ``pin`` written if there is none, else the stored one."""
        ...


class Snapshot(Protocol):
    """A read-only view of a store in which every read sees the same committed state (for a dump)."""

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """Run one query (``?`` placeholders); its rows."""
        ...

    async def vectors(self, seqs: Sequence[int]) -> dict[int, F32]:
        """The stored vectors of memories ``seqs`` (those that have one), by seq."""
        ...


class Backend(Protocol):
    """A memory store on one storage engine. Create with the backend's ``open``."""

    #: Where the store lives (a file path, or a URL without its password).
    path: str
    #: The embedding model the stored vectors come from, or ``None`` before the first vector.
    pin: EmbeddingPin | None
    closed: bool
    #: Transactions this store committed (rows read before it moved may be stale).
    writes: int
    #: Why writes are refused (a read-only file), or ``None``.
    read_only: str | None
    #: The first corruption a read or write met, or ``None``.
    damaged: str | None
    #: The time source (seconds since the epoch) every timestamp of this store comes from.
    clock: Callable[[], float]

    @property
    def capabilities(self) -> Capabilities:
        """What this backend offers."""
        ...

    @property
    def has_vec(self) -> bool:
        """True when vectors can be stored."""
        ...

    def transaction(self, what: str, *, bump: bool = True) -> AbstractAsyncContextManager[Transaction]:
        """A write transaction under the store's writer lock; ``what`` names it in errors.

        ``bump=False`` for bookkeeping that does not change what recall sees (access counts,
        sessions, facts).
        """
        ...

    async def read(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """One read statement (``?`` placeholders): its rows."""
        ...

    def claim(self, name: str) -> AbstractAsyncContextManager[bool]:
        """Hold ``name`` for the block against other processes on this store; ``False``: another holds it.

        Background jobs take one so that two processes serving one agent do not do the same
        work twice (an advisory lock on PostgreSQL). A backend whose writers are one process
        yields ``True``; work two processes did anyway is dropped at write (see
        ``LoopStore.finish_extraction``).
        """
        ...

    async def close(self) -> None:
        """Release the connection(s) (idempotent)."""
        ...

    # ----------------------------------------------------------------- memories
    def check_vector(self, vector: F32) -> None:
        """Raise :class:`~elastic_memory.EmbeddingMismatchError` when ``vector`` does not fit the pin."""
        ...

    async def write(
        self,
        rows: Sequence[dict[str, Any]],
        vectors: Sequence[F32 | Any | None],
        *,
        dedupe: Sequence[bool],
        mode: WriteMode,
        pin: EmbeddingPin | None,
    ) -> list[MemoryId]:
        """Insert or upsert ``rows`` in one transaction."""
        ...

    async def set_flags(
        self, ids: Sequence[str], *, deleted: bool | None = None, archived: bool | None = None
    ) -> list[str]:
        """Soft-delete/restore or archive/unarchive; the ids that changed."""
        ...

    async def hard_delete(self, ids: Sequence[str]) -> list[str]:
        """Erase memories (and their vectors); the ids erased."""
        ...

    async def purge(self, older_than: float, ids: Sequence[str] | None = None) -> list[str]:
        """Erase memories soft-deleted or expired ``older_than`` seconds ago or more (of ``ids`` if given); the ids."""
        ...

    async def prune(self, policy: PrunePolicy) -> PruneReport:
        """Apply a retention policy."""
        ...

    async def touch(self, seqs: Sequence[int]) -> None:
        """Record an access (best effort)."""
        ...

    async def touch_ids(self, ids: Sequence[str]) -> None:
        """Record an access on memories by id (best effort)."""
        ...

    async def get(self, ids: Sequence[str], *, include_hidden: bool = True) -> dict[str, MemoryRecord]:
        """Records by id."""
        ...

    async def records_matching(self, ids: Sequence[str], filters: Filters) -> list[MemoryRecord]:
        """The live records among ``ids`` that match ``filters``."""
        ...

    async def rows_for(
        self, seqs: Sequence[int], filters: Filters, *, known: Mapping[int, MemoryRecord] | None = None
    ) -> dict[int, MemoryRecord]:
        """The live records among ``seqs`` that match ``filters``, keyed by seq."""
        ...

    async def browse(self, filters: Filters, limit: int) -> list[tuple[int, MemoryRecord]]:
        """Live records, pinned first, then by importance, then newest."""
        ...

    async def page(self, filters: Filters, *, state: str, after: int, limit: int) -> list[tuple[int, MemoryRecord]]:
        """Up to ``limit`` records in ``state`` matching ``filters`` with a seq above ``after``, by seq."""
        ...

    async def tag_counts(self, filters: Filters, prefix: str | None = None) -> dict[str, int]:
        """How many live memories matching ``filters`` carry each tag."""
        ...

    async def unembedded(self) -> int:
        """How many live memories, in every agent's rows, have no vector yet (the embedding backlog)."""
        ...

    async def session_neighbors(self, seqs: Sequence[int]) -> dict[int, tuple[int | None, int | None, str]]:
        """For each memory with a session: the live memories just before and after it there, and the session key.

        A session is one agent's: two agents' sessions of one name are two sessions (the key names both).
        """
        ...

    async def keyword(
        self, match: str, filters: Filters, limit: int, notes: dict[str, Any] | None = None
    ) -> list[tuple[int, float]]:
        """``(seq, relevance)`` of a full-text search, best first.

        A backend whose scores have a per-query scale of relevance 1 puts it in
        ``notes["keyword_scale"]`` (SQLite: ``bm25.scale``); else relevance uses
        :attr:`Capabilities.keyword_half`.
        """
        ...

    async def vector(
        self, vector: F32, filters: Filters, limit: int, *, records: dict[int, MemoryRecord] | None = None
    ) -> tuple[list[tuple[int, float]], dict[str, Any]]:
        """``(seq, similarity)`` of a vector search, best first, and how it was served."""
        ...

    async def vector_scores(self, vector: F32, seqs: Sequence[int]) -> dict[int, float]:
        """Similarity of ``vector`` to the stored vectors of ``seqs``."""
        ...

    async def vectors_of(self, ids: Sequence[str]) -> dict[str, F32]:
        """Stored vectors by memory id."""
        ...

    def iter_records(self, batch: int = 500) -> AsyncIterator[tuple[MemoryRecord, F32 | None]]:
        """Every record with its vector, in insertion order."""
        ...

    def snapshot(self) -> AbstractAsyncContextManager[Snapshot]:
        """One consistent read-only view for the block; writers are not blocked where the engine allows."""
        ...

    async def stats(self) -> dict[str, Any]:
        """Counts and sizes."""
        ...

    async def check(self) -> None:
        """Raise :class:`~elastic_memory.StorageError` when the store cannot serve."""
        ...

    async def refresh(self) -> None:
        """Pick up what other connections committed."""
        ...

    async def generation(self) -> int | None:
        """A number that moves on with every write changing memories, any connection's; ``None`` if none is kept."""
        ...

    def allow_ram_index(self, allowed: bool, *, ann: bool = True) -> None:
        """The governor's decision on RAM tiers (a no-op where there are none)."""
        ...

    async def load_index(self) -> str:
        """Load the vector index now; the tier that serves searches."""
        ...

    def vector_tier(self) -> str:
        """What serves vector searches now (``"none"`` without vectors)."""
        ...
