"""MemoryCore: the async implementation behind both facades. Lives on the library loop.

A core knows nothing above it: the memory loop attaches to it (:meth:`MemoryCore.attach`,
a :class:`CorePart`) and adds its recall steps (:data:`RecallStep`), its health and its close.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
import time
import warnings
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from . import _validate as v
from .config import RecallConfig
from .embedders import Embedder, resolve
from .embedders.checks import EmbedderSpec, checked_matrix, embedder_candidates, given_vector, supplied_vectors
from .embedders.gateway import order
from .embedders.preload import Preload, preload
from .embedders.query_batches import QueryBatches
from .errors import EmbedderError, RecallWarning, UsageError
from .extraction.flags import flag_of
from .filters import Filters, finite, with_scope
from .location import resolve_location
from .retrieval import recall, rerank
from .storage import KEEP, EmbeddingPin, PostgresStore, SQLiteStore, Store, is_url
from .storage.queries import MAX_PARAMS, live_by_hash
from .storage.sqlite.store import VectorTier, WriteMode
from .storage.vectors import ann as ann_index
from .storage.vectors.leg import DEFAULT_ANN_THRESHOLD, chunks
from .types import (
    UNRECALLED,
    CheckReport,
    Explanation,
    Hit,
    MemoryId,
    MemoryRecord,
    PruneAction,
    PrunePolicy,
    PruneReport,
    RecallMode,
)
from .users import scoped_filters

__all__ = ["REMEMBER_FIELDS", "SUPPLIED", "CorePart", "EmbedderSpec", "MemoryCore", "RecallStep"]

log = logging.getLogger("elastic_memory")

F32 = npt.NDArray[np.float32]
#: What a memory takes besides its content (``remember``'s keywords, an item's keys).
REMEMBER_FIELDS = (
    "id",
    "type",
    "importance",
    "confidence",
    "source",
    "tags",
    "metadata",
    "agent_id",
    "scope",
    "pool",
    "session_id",
    "pinned",
    "ttl",
    "expires_at",
    "kind",
    "user_id",
)

#: The model a database is pinned to when its first vectors come from the caller and no embedder is configured.
SUPPLIED = "supplied"

#: A step :meth:`MemoryCore.explain` applies after fusion: ``(explanation, filters, k)`` to the
#: explanation recall returns. A step that fails returns the explanation it was given (recall stands).
RecallStep = Callable[[Explanation, Filters, int], Awaitable[Explanation]]


class CorePart(Protocol):
    """A part attached to a core (the memory loop): see :meth:`MemoryCore.attach`."""

    @property
    def recall_steps(self) -> Sequence[RecallStep]:
        """Its steps of recall, applied in order after fusion."""

    def for_owner(self, core: MemoryCore) -> CorePart:
        """The part serving ``core``, a user's handle on this part's core (see :mod:`.user_core`)."""

    async def stats(self) -> dict[str, Any]:
        """Its counts for its core's owner (a user's handle's ``stats()`` shows them)."""

    async def health(self) -> dict[str, Any]:
        """Its state (``health()`` shows it); never raises."""

    async def close(self) -> None:
        """Finish its work: the core closes it before the store."""


class MemoryCore:
    """Wires validation, embedding, storage and fusion: the operations (``MemoryOps``) of one store."""

    def __init__(
        self,
        store: Store,
        candidates: list[Embedder],
        *,
        agent_id: str,
        recall_config: RecallConfig,
        clock: Callable[[], float],
    ) -> None:
        self.store = store
        self.agent_id = agent_id
        self.recall_config = recall_config
        self.clock = clock
        self._candidates = candidates
        self._embedder: Embedder | None = None
        self._resolved = False
        self._resolved_pin: EmbeddingPin | None = None
        self._warned: set[str] = set()
        self._resolve_lock = asyncio.Lock()
        self._quiet = False
        #: The model load started when the store opened (until the gateway has resolved).
        self._preload: Preload | None = None
        #: Why no configured embedder could be used, when none could (the last resolution's reason).
        self.embedder_problem: str | None = None
        self._query_batches = QueryBatches()
        #: What is attached to this core (:meth:`attach`), in order.
        self.parts: list[CorePart] = []
        #: The handles of this agent's users (:func:`~elastic_memory.user_core.user_core`), least recent first.
        self.user_handles: dict[str, MemoryCore] = {}
        #: Set by a federation: the memory loop's relevance recall goes through it.
        self.recall_hook: Callable[[str, int, str], Awaitable[list[Hit]]] | None = None

    @classmethod
    async def open(
        cls,
        path: str | Path,
        *,
        agent_id: str = "default",
        embedder: EmbedderSpec = "auto",
        recall: RecallConfig | None = None,
        vector_index: VectorTier = "auto",
        ram_budget_bytes: int | None = None,
        ann_threshold: int = DEFAULT_ANN_THRESHOLD,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.time,
    ) -> MemoryCore:
        """Validate the options, open the store and migrate it (nothing is attached yet)."""
        agent, candidates = cls._checked(
            path=path,
            agent_id=agent_id,
            embedder=embedder,
            recall=recall,
            vector_index=vector_index,
            ram_budget_bytes=ram_budget_bytes,
            ann_threshold=ann_threshold,
            timeout=timeout,
            clock=clock,
        )
        store: Store
        if isinstance(path, str) and is_url(path):
            store = await PostgresStore.open(
                path, timeout=float(timeout), clock=clock, vector_tier=vector_index, ann_threshold=ann_threshold
            )
        else:
            store = await SQLiteStore.open(
                resolve_location(path),
                timeout=float(timeout),
                clock=clock,
                vector_tier=vector_index,
                ram_budget_bytes=ram_budget_bytes,
                ann_threshold=ann_threshold,
            )
        return cls(store, candidates, agent_id=agent, recall_config=recall or RecallConfig(), clock=clock)

    @classmethod
    def check_options(cls, options: Mapping[str, Any]) -> None:
        """Validate :meth:`open`'s keyword ``options`` without opening anything.

        A federation checks them before it creates a folder; an unknown name is a :class:`UsageError`.
        """
        known = [name for name in inspect.signature(cls.open).parameters if name != "path"]
        unknown = sorted(set(options) - set(known), key=str)
        if unknown:
            msg = f"unknown option(s) {unknown}; the options are {known}"
            raise UsageError(msg)
        bound = inspect.signature(cls.open).bind(":memory:", **options)
        bound.apply_defaults()
        cls._checked(**bound.arguments)

    @staticmethod
    def _checked(
        *,
        path: Any,
        agent_id: Any,
        embedder: Any,
        recall: Any,
        vector_index: Any,
        ram_budget_bytes: Any,
        ann_threshold: Any,
        timeout: Any,
        clock: Any,
    ) -> tuple[str, list[Embedder]]:
        """The agent id and embedder candidates, once every option of :meth:`open` is checked."""
        if not isinstance(path, str | Path) or not str(path):
            msg = f"path must be a file path, ':memory:' or a postgresql:// URL, got {path!r}"
            raise UsageError(msg)
        v.check_path(path, "path")
        agent = v.check_id(agent_id, "agent_id")
        candidates = embedder_candidates(embedder)
        if recall is not None and not isinstance(recall, RecallConfig):
            msg = f"recall must be a RecallConfig, got {type(recall).__name__}"
            raise UsageError(msg)
        if vector_index not in ("auto", "ram", "vec0", "ann"):
            msg = f"vector_index must be 'auto', 'ram', 'vec0' or 'ann', got {vector_index!r}"
            raise UsageError(msg)
        if vector_index == "ann" and not ann_index.available():
            msg = "vector_index='ann' needs faiss: pip install 'elastic-memory[ann]' (or use 'auto', 'ram' or 'vec0')"
            raise UsageError(msg)
        if isinstance(ann_threshold, bool) or not isinstance(ann_threshold, int) or ann_threshold < 0:
            msg = f"ann_threshold must be a non-negative integer (vectors), got {ann_threshold!r}"
            raise UsageError(msg)
        if finite(timeout) is None or timeout < 0:
            msg = f"timeout must be a non-negative number of seconds, got {timeout!r}"
            raise UsageError(msg)
        if ram_budget_bytes is not None and (
            isinstance(ram_budget_bytes, bool) or not isinstance(ram_budget_bytes, int) or ram_budget_bytes < 0
        ):
            msg = f"ram_budget_bytes must be a non-negative integer or None, got {ram_budget_bytes!r}"
            raise UsageError(msg)
        if not callable(clock):
            msg = f"clock must be a callable returning seconds since the epoch, got {clock!r}"
            raise UsageError(msg)
        return agent, candidates

    def attach(self, part: CorePart) -> None:
        """Attach ``part`` (the memory loop) to this core.

        Its recall steps run in :meth:`explain` after fusion, :meth:`health` shows its state,
        :meth:`close` closes it before the store, and a user's handle gets ``part.for_owner(handle)``.
        """
        self.parts.append(part)

    @property
    def recall_steps(self) -> list[RecallStep]:
        """The attached parts' recall steps, in order (:meth:`explain` applies them after fusion)."""
        return [step for part in self.parts for step in part.recall_steps]

    async def close(self) -> None:
        """Close the attached parts (the background queue finishes), then the store (idempotent)."""
        if not self.store.closed:
            for part in self.parts:
                await part.close()
        await self.store.close()

    @property
    def core(self) -> MemoryCore:
        """This core: one store is its own private store (see :class:`~elastic_memory.facade.ops.MemoryOps`)."""
        return self

    @property
    def root(self) -> MemoryCore:
        """The agent's own core, which reads every owner of the store (a user's handle returns its agent's)."""
        return self

    #: The user this core serves: ``None`` for the agent's own core (see :class:`~._user_core.UserCore`).
    user_id: str | None = None

    async def owned(self, ids: list[str]) -> list[str]:
        """Those of ``ids`` this core may read and change by id: all of them on the agent's own core."""
        return ids

    @property
    def federation(self) -> None:
        """No federation: one store (see :class:`~elastic_memory.facade.ops.MemoryOps`)."""
        return None

    @property
    def embeds(self) -> bool:
        """Whether an embedder is configured (``False``: keyword-only by choice, ``embedder=None``)."""
        return bool(self._candidates)

    @property
    def embedder_in_use(self) -> Embedder | None:
        """The embedder resolved for this database, or ``None`` before it is (nothing is loaded here)."""
        return self._embedder if self._resolved else None

    @property
    def configured_embedder(self) -> Embedder | None:
        """The embedder in use, or else the first one configured (``None`` when keyword-only)."""
        if self._resolved:
            return self._embedder
        return self._candidates[0] if self._candidates else None

    # ---------------------------------------------------------------- embedding
    def _warn_once(self, key: str, message: str) -> None:
        if self._quiet:
            return
        if key not in self._warned:
            self._warned.add(key)
            warnings.warn(message, RecallWarning, stacklevel=4)

    def preload(self) -> None:
        """Start loading the model the gateway will try first, on a thread of its own (see :mod:`.embedders.preload`).

        Nothing when that embedder has no ``load()`` or the store cannot hold vectors. The first
        :meth:`embedder` call waits for this load instead of loading the model itself.
        """
        if self._resolved or not self.store.has_vec:
            return
        first = next(iter(order(self.store.pin, self._candidates)), None)
        if first is not None:
            self._preload = preload(first)

    @property
    def loading(self) -> bool:
        """Whether the model started at open is still loading (and no embedder is resolved yet)."""
        return not self._resolved and self._preload is not None and not self._preload.done

    async def embedder(self, *, quiet: bool = False) -> Embedder | None:
        """The embedder this database may use now (resolved through the gateway).

        Resolved once per pin: when another process pins the database to a model, the
        choice is made again. ``quiet`` reports no :class:`RecallWarning` (the loop degrades
        silently and reports through ``health()``). While the model started at open loads,
        it waits for that load (a failed load makes the embedder unhealthy, as a failed
        first embedding would).
        """
        async with self._resolve_lock:
            self._quiet = quiet
            pin = self.store.pin
            if self._resolved and (pin == self._resolved_pin or self._fits(self._embedder, pin)):
                self._resolved_pin = pin
                return self._embedder
            if not self.store.has_vec:
                if self._candidates:
                    self._warn_once("novec", "sqlite-vec cannot be loaded by any SQLite driver: keyword-only recall")
                self._resolved = True
                return None
            failures: list[str] = []
            preloaded = self._preload

            def healthy(e: Embedder) -> bool:
                try:
                    if preloaded is not None and preloaded.embedder is e:
                        preloaded.wait()
                    checked_matrix(e.embed(["health check"]), 1, e.dimension, e.model_id)
                except Exception as exc:  # noqa: BLE001 - any failure makes the embedder unhealthy
                    failures.append(f"{e.model_id}: {exc}")
                    return False
                return True

            pin = self.store.pin
            self._embedder = await asyncio.to_thread(resolve, pin, self._candidates, healthy)
            # The load's outcome counts once: a choice made again (another pin) loads anew.
            self._resolved, self._resolved_pin, self._preload = True, pin, None
            if self._embedder is None and self._candidates:
                why = "; ".join(failures) or (
                    f"the database is pinned to {pin.model_id!r} (family {pin.family!r}, {pin.dimension}-d) "
                    "and no configured embedder matches it"
                    if pin
                    else "no embedder is healthy"
                )
                self.embedder_problem = why
                self._warn_once("noembed", f"no usable embedder, recall is keyword-only: {why}")
            return self._embedder

    @staticmethod
    def _fits(embedder: Embedder | None, pin: EmbeddingPin | None) -> bool:
        """True when ``embedder`` may write to a database pinned to ``pin``."""
        if embedder is None or pin is None or embedder.dimension != pin.dimension:
            return False
        return embedder.model_id == pin.model_id or embedder.family == pin.family

    async def embed_texts(self, embedder: Embedder, texts: Sequence[str]) -> F32:
        """``texts`` embedded by ``embedder`` on a worker thread, as checked unit vectors."""
        try:
            raw = await asyncio.to_thread(embedder.embed, list(texts))
        except EmbedderError:
            raise
        except Exception as e:
            msg = f"embedder {embedder.model_id!r} failed: {e}"
            raise EmbedderError(msg) from e
        return checked_matrix(raw, len(texts), embedder.dimension, repr(embedder.model_id))

    async def query_vector(self, embedder: Embedder, text: str) -> F32:
        """The query's vector, remembered for the last few queries (one plan recalls several times).

        Queries asked at the same moment (concurrent recalls, a federation's tiers) are
        embedded together, in one call, and the same query once. An embedder with an
        ``embed_query(text)`` method (models that embed questions differently from
        documents) is asked through it, one query at a time.
        """
        key = (embedder.model_id, text)
        return await self._query_batches.vector(key, lambda texts: self._embed_queries(embedder, texts))

    @staticmethod
    def background_embedder(embedder: Embedder) -> Embedder:
        """The embedder background jobs use: ``embedder.for_background()`` when it offers one, else ``embedder``.

        An embedder may give the worker its own instance (its own session and threads, as
        the built-in one does) so that host queries never queue behind background batches;
        one for another model or width is ignored.
        """
        twin_of = getattr(embedder, "for_background", None)
        if not callable(twin_of):
            return embedder
        try:
            twin = twin_of()
        except Exception as e:  # noqa: BLE001 - the embedder itself still serves
            log.warning("elastic-memory: %r.for_background() failed (%s); background work shares it", embedder, e)
            return embedder
        same = getattr(twin, "model_id", None) == embedder.model_id and getattr(twin, "dimension", None) == (
            embedder.dimension
        )
        return twin if same and callable(getattr(twin, "embed", None)) else embedder

    def share_query_memo(self, other: MemoryCore) -> None:
        """Use ``other``'s memo of query vectors (keyed by model): the tiers of a federation embed a query once."""
        self._query_batches = other._query_batches

    async def _embed_queries(self, embedder: Embedder, texts: Sequence[str]) -> list[F32]:
        """The vectors of ``texts`` as queries: one call, or one ``embed_query`` call each."""
        if not callable(getattr(embedder, "embed_query", None)):
            return list(await self.embed_texts(embedder, texts))
        return [await self._embed_query(embedder, text) for text in texts]

    async def _embed_query(self, embedder: Embedder, text: str) -> F32:
        embed_query = embedder.embed_query  # type: ignore[attr-defined]
        try:
            raw = await asyncio.to_thread(embed_query, text)
        except EmbedderError:
            raise
        except Exception as e:
            msg = f"embedder {embedder.model_id!r} failed: {e}"
            raise EmbedderError(msg) from e
        vector: F32 = checked_matrix([raw], 1, embedder.dimension, repr(embedder.model_id))[0]
        return vector

    async def embed_query(self, text: Any) -> list[float]:
        """The unit vector recall searches with for ``text`` (the embedder's query embedding)."""
        if not isinstance(text, str) or not text.strip():
            msg = f"text must be a non-empty str, got {text!r}"
            raise UsageError(msg)
        await self.store.refresh()  # another process may have pinned a model
        embedder = await self.embedder()
        if embedder is None:
            msg = "no usable embedder: open the store with embedder='auto' or an Embedder to embed queries"
            raise UsageError(msg)
        return [float(x) for x in await self.query_vector(embedder, v.clean_query(text))]

    async def vectors(self, ids: Any) -> dict[str, list[float]]:
        """The stored unit vectors of the memories among ``ids`` that have one."""
        found = await self.store.vectors_of(v.check_ids(ids))
        return {key: vector.tolist() for key, vector in found.items()}

    async def generation(self) -> int | None:
        """The store's write counter; see :meth:`AsyncMemory.generation`."""
        return await self.store.generation()

    async def tags(self, *, filters: Any = None, prefix: Any = None) -> dict[str, int]:
        """Tag counts over live memories; see :meth:`AsyncMemory.tags`."""
        parsed = Filters.parse(self.scoped(filters))
        start = v.check_prefix(prefix)
        await self.store.refresh()  # another process may have written
        return await self.store.tag_counts(parsed, start)

    def scoped(self, filters: Any) -> Any:
        """``filters`` as this handle reads them: a ``user_id`` key folded into owner keys (see :mod:`.users`)."""
        return scoped_filters(filters, self.agent_id, pinned=False)

    def pin_for(self, embedder: Embedder) -> EmbeddingPin:
        """The pin a store records for ``embedder``'s vectors."""
        return EmbeddingPin(embedder.model_id, embedder.dimension, embedder.family)

    # ------------------------------------------------------------------- writes
    def make_row(self, content: Any, fields: Mapping[str, Any], *, library: bool = False) -> dict[str, Any]:
        """The row of a write; the metadata's reserved ``em_`` keys are refused unless ``library`` (its own writers)."""
        unknown = sorted(set(fields) - set(REMEMBER_FIELDS))
        if unknown:
            msg = f"unknown field(s) {unknown}; a memory takes content plus {list(REMEMBER_FIELDS)}"
            raise UsageError(msg)
        return v.build_row(
            content, now=self.clock(), default_agent=self.agent_id, refuse_reserved=not library, **fields
        )

    async def remember(self, content: Any, *, dedupe: bool = True, **fields: Any) -> MemoryId:
        """Store one memory; see :meth:`AsyncMemory.remember`."""
        given = fields.get("id") is not None
        return (await self.write_rows([self.make_row(content, fields)], dedupe=[dedupe and not given], flag=dedupe))[0]

    async def remember_many(self, items: Iterable[Any], *, dedupe: bool = True, vectors: Any = None) -> list[MemoryId]:
        """Store many memories in one transaction; see :meth:`AsyncMemory.remember_many`."""
        rows, per_row = self.rows_of(items, dedupe)
        given = supplied_vectors(vectors, len(rows))
        return await self.write_rows(rows, dedupe=per_row, flag=dedupe, vectors=given)

    def rows_of(self, items: Iterable[Any], dedupe: bool) -> tuple[list[dict[str, Any]], list[bool]]:
        """Validated rows for :meth:`remember_many`'s items, and whether each may be deduplicated."""
        if isinstance(items, str | bytes | Mapping) or not isinstance(items, Iterable):
            msg = "items must be a list of strings or of dicts with a 'content' key"
            raise UsageError(msg)
        rows = []
        per_row: list[bool] = []
        for n, item in enumerate(items):
            if isinstance(item, str):
                rows.append(self.make_row(item, {}))
                per_row.append(dedupe)
            elif isinstance(item, Mapping):
                if "content" not in item:
                    msg = f"items[{n}] has no 'content' key"
                    raise UsageError(msg)
                fields = {k: val for k, val in item.items() if k != "content"}
                try:
                    rows.append(self.make_row(item["content"], fields))
                    per_row.append(dedupe and fields.get("id") is None)
                except UsageError as e:
                    msg = f"items[{n}]: {e}"
                    raise type(e)(msg) from e  # an AccessDeniedError stays one
            else:
                msg = f"items[{n}] is a {type(item).__name__}; use a string or a dict with 'content'"
                raise UsageError(msg)
        return rows, per_row

    async def write_entries(self, entries: Sequence[Any]) -> list[MemoryId]:
        """Write validated :class:`~elastic_memory.federation.Entry` values, ids kept, in one transaction."""
        rows = [  # checked as entries already (Entry.create), or the federation's own copies of stored rows
            self.make_row(e.content, {k: val for k, val in e.fields().items() if k != "content"}, library=True)
            for e in entries
        ]
        return await self.write_rows(rows, dedupe=[bool(e.dedupe) for e in entries])

    async def write_rows(
        self,
        rows: list[dict[str, Any]],
        *,
        dedupe: list[bool],
        flag: Any = True,
        mode: WriteMode = "upsert",
        vectors: list[Any] | None = None,
        pin: EmbeddingPin | None = None,
    ) -> list[MemoryId]:
        """Embed (unless ``vectors`` are given) and write ``rows``; ``dedupe[i]`` per row.

        A vector given for a row is stored as it is (the caller vouches that it comes from the
        database's model); without an embedder, given vectors pin an unpinned database to
        ``pin`` (an export's model) or else :data:`SUPPLIED`, and rows without one are stored
        without a vector.
        """
        if not isinstance(flag, bool):
            msg = f"dedupe must be True or False, got {flag!r}"
            raise UsageError(msg)
        if not rows:
            return []
        vectors = list(vectors) if vectors is not None else [None] * len(rows)
        # chat messages are never embedded: a write of messages alone never waits for the model
        messages_only = all(row["kind"] in UNRECALLED for row in rows)
        embedder = None if messages_only else await self.embedder()
        pin = self.pin_for(embedder) if embedder is not None else pin
        first = next((vector for vector in vectors if isinstance(vector, np.ndarray)), None)
        if pin is None and first is not None:
            pin = EmbeddingPin(SUPPLIED, int(first.shape[0]), SUPPLIED)
        for i, row in enumerate(rows):
            if row["kind"] in UNRECALLED:  # a chat message is never embedded (nor recalled unless asked)
                vectors[i] = None
        missing = [i for i, vector in enumerate(vectors) if vector is None and rows[i]["kind"] not in UNRECALLED]
        if embedder is not None and missing:
            duplicates = await self._stored_duplicates([i for i in missing if dedupe[i]], rows)
            missing = [i for i in missing if i not in duplicates]  # not written: nothing to embed
        if embedder is not None and missing:
            embedded = await self.embed_texts(embedder, [rows[i]["content"] for i in missing])
            for i, vector in zip(missing, embedded, strict=True):
                vectors[i] = vector
        return await self.store.write(rows, vectors, dedupe=dedupe, mode=mode, pin=pin)

    async def _stored_duplicates(self, candidates: list[int], rows: list[dict[str, Any]]) -> set[int]:
        """Which of ``rows[candidates]`` repeat a visible memory's text (same namespace, another id).

        The write will report them as duplicates and store nothing, so they are not embedded:
        remembering the same texts again costs a lookup, not a model run.
        """
        if not candidates:
            return set()
        hashes = sorted({rows[i]["content_hash"] for i in candidates})
        live: dict[tuple[Any, ...], str] = {}
        for chunk in chunks(hashes, MAX_PARAMS // 2):
            for content_hash, agent, scope, pool, mid in await self.store.read(*live_by_hash(chunk, now=self.clock())):
                live.setdefault((content_hash, agent, scope, pool), str(mid))
        out = set()
        for i in candidates:
            row = rows[i]
            found = live.get((row["content_hash"], row["agent_id"], row["scope"], row["pool"]))
            if found is not None and found != row["id"]:
                out.add(i)
        return out

    async def update(self, id: Any, **changes: Any) -> MemoryRecord:
        """Change some fields of a memory; see :meth:`AsyncMemory.update`."""
        mid = v.check_id(id)
        allowed = set(REMEMBER_FIELDS) - {"id"} | {"content"}
        unknown = sorted(set(changes) - allowed)
        if unknown:
            msg = f"update() cannot change {unknown}; it changes {sorted(allowed)}"
            raise UsageError(msg)
        current = (await self.store.get([mid])).get(mid)
        if current is None or current.deleted_at is not None:
            msg = f"no memory with id {mid!r} (deleted memories can be restored with restore())"
            raise UsageError(msg)
        merged = self._fields_of(current)
        content = changes.pop("content", current.content)
        if isinstance(changes.get("metadata"), Mapping):  # the library's own keys (em_flagged, ...) stay
            v.check_reserved(changes["metadata"])
            changes["metadata"] = {**changes["metadata"], **v.library_keys(current.metadata)}
        if "ttl" in changes:
            merged.pop("expires_at")
        merged.update(changes)
        row = self.make_row(content, merged, library=True)
        embedder = await self.embedder()
        vector: Any = KEEP
        if embedder is not None and (row["content_hash"] != current.content_hash or not current.has_vector):
            vector = (await self.embed_texts(embedder, [row["content"]]))[0]
        elif row["content_hash"] != current.content_hash:
            vector = None  # the old vector no longer describes the content
        pin = self.pin_for(embedder) if embedder is not None else None
        await self.store.write([row], [vector], dedupe=[False], mode="update", pin=pin)
        return (await self.store.get([mid]))[mid]

    async def set_metadata_key(self, ids: Sequence[str], key: str, value: str | None) -> int:
        """Set one metadata key of stored memories (``None`` removes it); nothing else changes, no model runs.

        The memory loop marks a turn's chunks with it (flagged, or waiting to be screened).
        Returns how many memories changed.
        """
        found = await self.store.get(list(ids))
        rows = []
        for record in found.values():
            metadata = {k: val for k, val in record.metadata.items() if k != key}
            if value is not None:
                metadata[key] = value
            if metadata != dict(record.metadata) and record.deleted_at is None:
                fields = {**self._fields_of(record), "metadata": metadata}
                rows.append(self.make_row(record.content, fields, library=True))
        if rows:
            await self.store.write(rows, [KEEP] * len(rows), dedupe=[False] * len(rows), mode="update", pin=None)
        return len(rows)

    @staticmethod
    def _fields_of(current: MemoryRecord) -> dict[str, Any]:
        """The fields of a stored memory, as ``make_row`` takes them."""
        return {
            "id": current.id,
            "type": current.type,
            "importance": current.importance,
            "confidence": current.confidence,
            "source": current.source,
            "tags": list(current.tags),
            "metadata": current.metadata,
            "agent_id": current.agent_id,
            "user_id": current.user_id,
            "scope": current.scope,
            "pool": current.pool,
            "session_id": current.session_id,
            "pinned": current.pinned,
            "expires_at": current.expires_at,
            "kind": current.kind,
        }

    async def get(self, id: Any) -> MemoryRecord | None:
        """One memory by id, or ``None``; a pure read (no access is recorded)."""
        mid = v.check_id(id)
        return (await self.store.get([mid])).get(mid)

    async def get_many(self, ids: Any) -> list[MemoryRecord]:
        """The memories that exist among ``ids``, in the order given."""
        wanted = v.check_ids(ids)
        found = await self.store.get(wanted)
        return [found[i] for i in dict.fromkeys(wanted) if i in found]

    async def forget(self, ids: Any, *, hard: bool = False) -> int:
        """Soft-delete (recoverable) or hard-delete; returns how many memories changed."""
        wanted = v.check_ids(ids)
        if not isinstance(hard, bool):
            msg = f"hard must be True or False, got {hard!r}"
            raise UsageError(msg)
        if hard:
            return len(await self.store.hard_delete(wanted))
        return len(await self.store.set_flags(wanted, deleted=True))

    async def restore(self, ids: Any) -> int:
        """Undo a soft delete; returns how many memories came back."""
        return len(await self.store.set_flags(v.check_ids(ids), deleted=False))

    async def archive(self, ids: Any, *, archived: bool = True) -> int:
        """Hide (or, with ``archived=False``, unhide) memories from recall without deleting them."""
        if not isinstance(archived, bool):
            msg = f"archived must be True or False, got {archived!r}"
            raise UsageError(msg)
        return len(await self.store.set_flags(v.check_ids(ids), archived=archived))

    async def purge(self, older_than: float = 0.0, *, ids: Any = None) -> int:
        """Hard-delete memories soft-deleted, or expired, at least ``older_than`` seconds ago (of ``ids`` if given)."""
        seconds = finite(older_than)
        if seconds is None or seconds < 0:
            msg = f"older_than must be a non-negative number of seconds, got {older_than!r}"
            raise UsageError(msg)
        wanted = None if ids is None else v.check_ids(ids)
        if wanted == []:
            return 0
        return len(await self.store.purge(seconds, wanted))

    async def prune(self, policy: PrunePolicy | None = None, **kwargs: Any) -> PruneReport:
        """Archive or purge low-value memories; see :class:`PrunePolicy`."""
        return await self.store.prune(self.prune_policy(policy, **kwargs))

    @staticmethod
    def prune_policy(policy: PrunePolicy | None = None, **kwargs: Any) -> PrunePolicy:
        """A validated :class:`PrunePolicy` from a policy or its fields."""
        if policy is None:
            try:
                policy = PrunePolicy(**kwargs)
            except TypeError as e:
                msg = f"prune() takes a PrunePolicy or its fields (min_importance, max_entries, action, dry_run): {e}"
                raise UsageError(msg) from e
        elif kwargs:
            msg = "pass either a PrunePolicy or keyword fields to prune(), not both"
            raise UsageError(msg)
        if not isinstance(policy, PrunePolicy):
            msg = f"policy must be a PrunePolicy, got {type(policy).__name__}"
            raise UsageError(msg)
        if policy.min_importance is None and policy.max_entries is None:
            msg = "a prune policy needs min_importance, max_entries, or both"
            raise UsageError(msg)
        floor = None if policy.min_importance is None else v.unit("min_importance", policy.min_importance)
        if policy.max_entries is not None and (
            isinstance(policy.max_entries, bool) or not isinstance(policy.max_entries, int) or policy.max_entries < 0
        ):
            msg = f"max_entries must be a non-negative integer, got {policy.max_entries!r}"
            raise UsageError(msg)
        action = v.check_enum("action", policy.action, PruneAction)
        return PrunePolicy(floor, policy.max_entries, action, bool(policy.dry_run))

    async def health(self) -> dict[str, Any]:
        """The attached parts' state (the memory loop's) and the store's; see :meth:`AsyncMemory.health`."""
        out: dict[str, Any] = {}
        for part in self.parts:
            out.update(await part.health())
        out["read_only"], out["damaged"] = self.store.read_only, self.store.damaged
        checked = self.store.open_check if isinstance(self.store, SQLiteStore) else None
        out["unclean_shutdown"] = isinstance(self.store, SQLiteStore) and self.store.unclean_shutdown
        out["open_check"] = None if checked is None else dataclasses.asdict(checked)
        return out

    async def check(self, *, full: Any = False) -> CheckReport:
        """Check the file for damage; see :meth:`AsyncMemory.check`."""
        if not isinstance(full, bool):
            msg = f"full must be True or False, got {full!r}"
            raise UsageError(msg)
        if not isinstance(self.store, SQLiteStore):
            msg = "check() reads an SQLite file; a PostgreSQL server checks its own pages (see its amcheck module)"
            raise UsageError(msg)
        return await self.store.integrity_check(full=full)

    async def load_index(self) -> str:
        """Load the vector index now; see :meth:`AsyncMemory.load_index`."""
        return await self.store.load_index()

    async def stats(self) -> dict[str, Any]:
        """Counts and facts about the store; see :meth:`AsyncMemory.stats`."""
        out = await self.store.stats()
        out["read_only"], out["damaged"] = self.store.read_only, self.store.damaged
        out["vectors_pending"] = await self.store.unembedded()
        out["agent_id"], out["user_id"] = self.agent_id, None
        out["embedder"] = self._embedder.model_id if self._embedder else None
        return out

    # ------------------------------------------------------------------- recall
    async def recall(
        self,
        query: Any = "",
        *,
        k: Any = 10,
        mode: Any = "hybrid",
        filters: Any = None,
        touch: Any = None,
        scope: Any = None,
        pool: Any = None,
        vector: Any = None,
        vector_weight: Any = None,
    ) -> list[Hit]:
        """Recall memories; see :meth:`AsyncMemory.recall` (:meth:`explain` without counting the backlog)."""
        explanation = await self._explained(
            query, k, mode, filters, touch, scope, pool, vector, vector_weight, backlog=False
        )
        return explanation.hits

    async def explain(
        self,
        query: Any = "",
        *,
        k: Any = 10,
        mode: Any = "hybrid",
        filters: Any = None,
        touch: Any = False,
        scope: Any = None,
        pool: Any = None,
        vector: Any = None,
        vector_weight: Any = None,
    ) -> Explanation:
        """Recall, and say how: legs, candidates, tier, fusion, timings.

        ``vector`` is a query vector searched instead of embedding ``query`` (semantic or
        hybrid mode; with an empty query only the vector leg runs). ``vector_weight``
        replaces the store's :attr:`RecallConfig.vector_weight` for this recall.
        ``details["flagged"]`` counts the hits from flagged turns (which plans withhold);
        ``details["vectors_pending"]`` (when the vector leg ran) the store's live memories it
        could not see, having no vector yet (0: semantic search covered every memory).
        """
        return await self._explained(query, k, mode, filters, touch, scope, pool, vector, vector_weight, backlog=True)

    async def _explained(
        self,
        query: Any,
        k: Any,
        mode: Any,
        filters: Any,
        touch: Any,
        scope: Any,
        pool: Any,
        vector: Any,
        vector_weight: Any,
        *,
        backlog: bool,
    ) -> Explanation:
        """:meth:`explain`; ``backlog``: count the memories the vector leg could not see (``recall`` drops it)."""
        filters = self.scoped(with_scope(filters, scope, pool))
        if query is None:
            query = ""
        if not isinstance(query, str):
            msg = f"query must be a str, got {type(query).__name__}"
            raise UsageError(msg)
        query = v.clean_query(query)
        k = v.check_k(k)
        mode = v.check_mode(mode)
        parsed = Filters.parse(filters).for_recall()
        if touch is None:
            touch = self.recall_config.touch
        if not isinstance(touch, bool):
            msg = f"touch must be True, False or None, got {touch!r}"
            raise UsageError(msg)
        config = self.recall_config
        if vector_weight is not None:
            config = dataclasses.replace(config, vector_weight=vector_weight)  # validated by RecallConfig
        given = None
        if vector is not None:
            if mode is RecallMode.KEYWORD:
                msg = "vector= is searched by the vector leg: use mode='semantic' or 'hybrid', not 'keyword'"
                raise UsageError(msg)
            given = given_vector(vector)
        embed = None
        if self.store.pin is None:
            await self.store.refresh()  # another process may have pinned a model (the vector leg syncs itself)
        if given is None and mode is not RecallMode.KEYWORD and query.strip():
            embedder = await self.embedder()
            if embedder is not None:
                chosen = embedder

                async def embed(text: str) -> F32:
                    return await self.query_vector(chosen, text)

        reranker = config.reranker if query.strip() else None
        wanted = k if reranker is None else max(k, config.rerank_candidates)
        result = await recall.run(
            self.store,
            config,
            query=query,
            k=wanted,
            mode=mode,
            filters=parsed,
            touch=touch and reranker is None,
            embed=embed,
            vector=given,
            backlog=backlog,
        )
        for step in self.recall_steps:  # the memory loop's graph nudge
            result = await step(result, parsed, wanted)
        if reranker is not None:  # last: the hits it orders are final, and its scores feed no other step
            result, problem = await rerank.reranked(result, reranker, k, config.rerank_weight)
            if problem is not None:
                self._warn_once(f"rerank:{rerank.reranker_name(reranker)}", f"{problem}; recall keeps its order")
            if touch:
                await self.store.touch_ids([h.id for h in result.hits])
        flagged = sum(1 for h in result.hits if flag_of(h.metadata) is not None)
        return dataclasses.replace(result, details={**result.details, "flagged": flagged})
