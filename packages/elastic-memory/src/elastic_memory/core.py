"""MemoryCore: the async implementation behind both facades. Lives on the library loop."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import inspect
import itertools
import json
import logging
import os
import stat
import time
import warnings
from collections.abc import Awaitable, Callable, Generator, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from . import _validate as v
from .config import RecallConfig
from .embedders import Embedder, MiniLMEmbedder, check_embedder, resolve, unit_vectors
from .embedders.gateway import order
from .embedders.preload import Preload, preload
from .errors import EmbedderError, RecallWarning, StorageError, UsageError
from .extraction.flags import flag_of
from .filters import Filters, finite, with_scope
from .location import resolve_location
from .loop import LoopConfig, MemoryLoop, check_loop_args
from .maintenance import export as _dump
from .retrieval import recall
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
    ImportReport,
    MemoryId,
    MemoryRecord,
    PruneAction,
    PrunePolicy,
    PruneReport,
    RecallMode,
)
from .users import scoped_filters

__all__ = ["EmbedderSpec", "MemoryCore"]

log = logging.getLogger("elastic_memory")

F32 = npt.NDArray[np.float32]
EmbedderSpec = str | Embedder | Sequence[Embedder] | None
_REMEMBER_FIELDS = (
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

#: What every exported record holds (``import_jsonl`` refuses a line without one of them).
_IMPORT_FIELDS = (
    "content",
    "created_at",
    "updated_at",
    "accessed_at",
    "retention_strength",
    "access_count",
    "archived",
)

#: Query vectors remembered (a plan recalls the same query for several sections).
_QUERY_MEMO = 32
#: The model a database is pinned to when its first vectors come from the caller and no embedder is configured.
SUPPLIED = "supplied"


def embedder_candidates(spec: EmbedderSpec) -> list[Embedder]:
    if spec is None:
        return []
    if isinstance(spec, str):
        if spec != "auto":
            msg = f"embedder must be 'auto', None, an Embedder or a list of them, got {spec!r}"
            raise UsageError(msg)
        return [MiniLMEmbedder()]
    if isinstance(spec, Sequence):
        return [check_embedder(e) for e in spec]
    return [check_embedder(spec)]


def _file_path(path: Any, doing: str) -> Path:
    """``path`` (a str or ``os.PathLike``) as a :class:`Path`, or a :class:`UsageError`."""
    if isinstance(path, str | os.PathLike) and str(path).strip():
        return Path(v.check_path(path, "path"))
    msg = f"cannot {doing} {path!r}: pass a file path (a str or pathlib.Path)"
    raise UsageError(msg)


def _kind(path: Path, doing: str) -> str | None:
    """``"dir"``, ``"file"``, ``"other"`` (a device, a pipe) or ``None`` (missing); a path the OS refuses raises."""
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:
        if e.errno == errno.ENAMETOOLONG:
            msg = f"cannot {doing} {path}: {e.strerror}; pass a shorter path"
            raise UsageError(msg) from e
        msg = f"cannot {doing} {path}: {e.strerror or e}; check the path and its permissions"
        raise StorageError(msg) from e
    return "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"


def _json_lines(source: Path) -> Generator[tuple[int, Any]]:
    """The non-blank lines of an export, parsed, numbered; a :class:`UsageError` names a line that is not JSON."""
    try:
        fh = source.open("rb")
    except OSError as e:
        msg = f"cannot read {source}: {e.strerror or e}; check that the file is readable"
        raise StorageError(msg) from e
    with fh:
        for line_no, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                yield line_no, json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError as e:
                msg = f"{source}:{line_no}: not UTF-8 text; pass an export made by export_jsonl(); nothing was imported"
                raise UsageError(msg) from e
            except (ValueError, RecursionError) as e:  # RecursionError: nested too deep to read
                msg = f"{source}:{line_no}: not JSON ({e}); nothing was imported"
                raise UsageError(msg) from e


def tmp_of(target: Path) -> Path:
    """Where an export is written before it is renamed over ``target``."""
    return target.with_name(target.name + ".partial")


def _is_store_file(target: Path, store_path: str) -> bool:
    """Whether ``target`` is the SQLite file at ``store_path`` or one of its side files (WAL, shm, journal)."""
    if not store_path or store_path == ":memory:" or store_path.startswith("file:") or is_url(store_path):
        return False
    base = Path(store_path)
    for candidate in (base, *(base.with_name(base.name + side) for side in ("-wal", "-shm", "-journal"))):
        if os.path.abspath(target) == os.path.abspath(candidate):
            return True
        with contextlib.suppress(OSError):
            if target.exists() and candidate.exists() and os.path.samefile(target, candidate):
                return True
    return False


def _export_error(target: Path, error: OSError) -> StorageError:
    """The library error for an OS error while exporting to ``target``: the path and what to do."""
    if error.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):  # EDQUOT: not on Windows
        hint = "the disk is full; free some space or export to another disk"
    elif error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        hint = f"the folder {target.parent} is not writable; export to a folder you can write to"
    else:
        hint = "check the path and its permissions, then export again"
    return StorageError(f"could not export to {target}: {error.strerror or error}; {hint}")


def _as_matrix(vectors: Any, count: int, dimension: int, who: str) -> F32:
    try:
        matrix = np.asarray(vectors, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as e:
        msg = f"embedder {who} returned something that is not a list of float vectors: {e}"
        raise EmbedderError(msg) from e
    if matrix.shape != (count, dimension):
        msg = f"embedder {who} returned shape {matrix.shape}, expected ({count}, {dimension})"
        raise EmbedderError(msg)
    if not np.isfinite(matrix).all():
        msg = f"embedder {who} returned NaN or infinite values"
        raise EmbedderError(msg)
    unit, _ = unit_vectors(matrix)  # a zero row stays zero (no direction): the vector leg leaves it out
    return unit


def _given_vector(vector: Any, name: str = "vector") -> F32:
    """recall()'s ``vector=`` (or a supplied write vector) as a unit float32 vector, or a :class:`UsageError`."""
    if isinstance(vector, str | bytes | Mapping) or not isinstance(vector, Sequence | np.ndarray):
        msg = f"{name} must be a list of floats, got {type(vector).__name__}"
        raise UsageError(msg)
    try:
        array = np.asarray(vector, dtype=np.float64)
    except (TypeError, ValueError) as e:
        msg = f"{name} must be a list of floats: {e}"
        raise UsageError(msg) from e
    except OverflowError as e:  # an int past float range, e.g. 10**400
        msg = f"{name} holds a number too large for a float vector: {e}"
        raise UsageError(msg) from e
    if array.ndim != 1 or array.size == 0:
        msg = f"{name} must be one non-empty list of floats, got shape {array.shape}"
        raise UsageError(msg)
    if not np.isfinite(array).all():
        msg = f"{name} holds NaN or infinite values"
        raise UsageError(msg)
    unit, zero = unit_vectors(array[None])
    if zero[0]:
        msg = f"{name} is all zeros: it has no direction"
        raise UsageError(msg)
    first: F32 = unit[0]
    return first


def _given_matrix(vectors: Sequence[Any] | npt.NDArray[Any]) -> list[F32 | None] | None:
    """Many supplied vectors checked at once (what :func:`_given_vector` checks one by one), or ``None``.

    ``None`` means: not a clean batch of equal-width numeric vectors; the caller then checks
    each vector on its own, which names the first bad one.
    """
    if not len(vectors) or any(
        v is None or isinstance(v, str | bytes | Mapping) or not isinstance(v, Sequence | np.ndarray) for v in vectors
    ):
        return None
    try:
        matrix = np.asarray(vectors, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        return None
    if matrix.ndim != 2 or matrix.shape[1] == 0:
        return None
    if not np.isfinite(matrix).all():
        return None
    unit, zero = unit_vectors(matrix)
    if zero.any():
        return None
    return list(unit)


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
        self._query_batches = _QueryBatches()
        self.loop: MemoryLoop
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
        llm: Callable[..., str] | None = None,
        context_tokens: int = 8_192,
        loop: LoopConfig | None = None,
        ram_probe: Callable[[], int] | None = None,
    ) -> MemoryCore:
        """Validate the options, open the store and migrate it."""
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
            llm=llm,
            context_tokens=context_tokens,
            loop=loop,
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
        core = cls(store, candidates, agent_id=agent, recall_config=recall or RecallConfig(), clock=clock)
        core.loop = MemoryLoop(core, loop or LoopConfig(), llm=llm, context_tokens=context_tokens, probe=ram_probe)
        if core.loop.config.background and core.loop.may_embed():  # the governor's tier may rule the model out
            core.preload()
        await core.loop.resume()  # memories an earlier process left without a vector: embedded in the background
        return core

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
        args = dict(bound.arguments)
        del args["ram_probe"]
        cls._checked(**args)

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
        llm: Any,
        context_tokens: Any,
        loop: Any,
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
        if loop is not None and not isinstance(loop, LoopConfig):
            msg = f"loop must be a LoopConfig, got {type(loop).__name__}"
            raise UsageError(msg)
        check_loop_args(llm, context_tokens)
        return agent, candidates

    async def close(self) -> None:
        """Finish the background queue, then close the store (idempotent)."""
        if not self.store.closed:
            await self.loop.close()
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
                    _as_matrix(e.embed(["health check"]), 1, e.dimension, e.model_id)
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
        return _as_matrix(raw, len(texts), embedder.dimension, repr(embedder.model_id))

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
        vector: F32 = _as_matrix([raw], 1, embedder.dimension, repr(embedder.model_id))[0]
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
        unknown = sorted(set(fields) - set(_REMEMBER_FIELDS))
        if unknown:
            msg = f"unknown field(s) {unknown}; a memory takes content plus {list(_REMEMBER_FIELDS)}"
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
        given = self.supplied_vectors(vectors, len(rows))
        return await self.write_rows(rows, dedupe=per_row, flag=dedupe, vectors=given)

    @staticmethod
    def supplied_vectors(vectors: Any, count: int) -> list[F32 | None] | None:
        """remember_many()'s ``vectors``: one unit vector (or ``None``: embed it) per item, all of one width."""
        if vectors is None:
            return None
        if isinstance(vectors, str | bytes | Mapping) or not isinstance(vectors, Sequence | np.ndarray):
            msg = f"vectors must be a list with one vector (or None) per item, got {type(vectors).__name__}"
            raise UsageError(msg)
        if len(vectors) != count:
            msg = f"got {len(vectors)} vectors for {count} items; pass one per item (None to embed that item)"
            raise UsageError(msg)
        out = _given_matrix(vectors)
        if out is None:  # ragged, None entries or odd types: one by one, for the exact message
            out = [None if v is None else _given_vector(v, f"vectors[{n}]") for n, v in enumerate(vectors)]
        widths = sorted({vector.shape[0] for vector in out if vector is not None})
        if len(widths) > 1:
            msg = f"vectors have different widths {widths}; one store holds vectors of one width"
            raise UsageError(msg)
        return out

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
        allowed = set(_REMEMBER_FIELDS) - {"id"} | {"content"}
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
        """The memory loop's state; see :meth:`AsyncMemory.health`."""
        out = await self.loop.health()
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
        """Recall memories; see :meth:`AsyncMemory.recall`."""
        explanation = await self.explain(
            query,
            k=k,
            mode=mode,
            filters=filters,
            touch=touch,
            scope=scope,
            pool=pool,
            vector=vector,
            vector_weight=vector_weight,
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
            given = _given_vector(vector)
        embed = None
        if self.store.pin is None:
            await self.store.refresh()  # another process may have pinned a model (the vector leg syncs itself)
        if given is None and mode is not RecallMode.KEYWORD and query.strip():
            embedder = await self.embedder()
            if embedder is not None:
                chosen = embedder

                async def embed(text: str) -> F32:
                    return await self.query_vector(chosen, text)

        result = await recall.run(
            self.store,
            config,
            query=query,
            k=k,
            mode=mode,
            filters=parsed,
            touch=touch,
            embed=embed,
            vector=given,
        )
        result = await self.loop.graph_nudge(result, parsed, k)
        flagged = sum(1 for h in result.hits if flag_of(h.metadata) is not None)
        return dataclasses.replace(result, details={**result.details, "flagged": flagged})

    # ----------------------------------------------------------- export/import
    async def export_jsonl(self, path: Any, *, vectors: bool = False) -> int:
        """Write the whole store as JSON lines (format 2, see :mod:`._dump`); returns the number of memories.

        One snapshot is read, so the file is consistent while writers go on. The lines go to
        ``<path>.partial``, renamed over ``path`` once all are written; on any failure that
        file is removed and ``path`` is left as it was.
        """
        target = _file_path(path, "export to")
        if _kind(target, "export to") == "dir":
            msg = f"cannot export to {target}: it is a folder; pass a file path such as {target / 'memories.jsonl'}"
            raise UsageError(msg)
        if _kind(target.parent, "export to") != "dir":
            msg = f"cannot export to {target}: the folder {target.parent} does not exist"
            raise UsageError(msg)
        if not isinstance(vectors, bool):
            msg = f"vectors must be True or False, got {vectors!r}"
            raise UsageError(msg)
        if _is_store_file(target, self.store.path) or _is_store_file(tmp_of(target), self.store.path):
            msg = f"cannot export to {target}: it is this store's own database file; pass another path"
            raise UsageError(msg)
        tmp = tmp_of(target)
        try:
            with tmp.open("w", encoding="utf-8") as fh:
                async with self.store.snapshot() as snap:
                    engine, pin = self.store.capabilities.engine, self.store.pin
                    count = await _dump.write_export(snap, fh, backend=engine, pin=pin, vectors=vectors)
            tmp.replace(target)
        except OSError as e:
            raise _export_error(target, e) from e
        finally:
            with contextlib.suppress(OSError):  # gone after the rename; a failure must not leave it behind
                tmp.unlink(missing_ok=True)
        return count

    async def import_jsonl(
        self, path: Any, *, batch: int = _dump.MEMORY_BATCH, progress: Any = None, owner: str | None = None
    ) -> ImportReport:
        """Read an export back, ids and times included (an upsert); one transaction per batch.

        The whole file is checked before anything is written: a bad line or a file cut short
        changes nothing. Format 2 files carry every table; format 1 files (memories only)
        still import. With ``owner`` (a federation's private tier) every row must be that
        agent's, and every memory private: an :class:`AccessDeniedError` names the first that is not.
        """
        source = _file_path(path, "import from")
        if _kind(source, "import from") != "file":
            msg = f"{source} is not a file; pass the path of a JSONL export"
            raise UsageError(msg)
        if progress is not None and not callable(progress):
            msg = f"progress must be a callable (done, total) or None, got {type(progress).__name__}"
            raise UsageError(msg)
        with contextlib.closing(_json_lines(source)) as lines:
            first = next(lines, None)
        if first is not None and isinstance(first[1], dict) and first[1].get("record") == "header":
            return await self._import_v2(source, first, progress, owner)
        return await self._import_v1(source, batch, progress, owner)

    async def _import_v2(self, source: Path, header: tuple[int, Any], progress: Any, owner: str | None) -> ImportReport:
        data = header[1]
        if data.get("format") != _dump.FORMAT or data.get("version") != _dump.VERSION:
            msg = (
                f"{source}:{header[0]}: an export of format {data.get('format')!r} version {data.get('version')!r}; "
                f"this release reads {_dump.FORMAT!r} versions 1 and 2: upgrade elastic-memory to import it"
            )
            raise UsageError(msg)
        where = lambda n: f"{source}:{n}"  # noqa: E731 - a name for the two passes
        try:
            importer = _dump.Importer(self, data, where=where, progress=progress)
            checker = _dump.Checker(self, where=where, owner=owner)
            with contextlib.closing(_json_lines(source)) as lines:
                for line_no, record in itertools.islice(lines, 1, None):
                    checker.check(line_no, record)
            checker.done(source)
            importer.total = sum(checker.read.values())
        except UsageError:
            raise
        except ValueError as e:
            msg = f"{e}; nothing was imported"
            raise UsageError(msg) from e
        with contextlib.closing(_json_lines(source)) as lines:
            for line_no, record in itertools.islice(lines, 1, None):
                await importer.add(line_no, record)
        totals = await importer.finish()
        total = totals.created + totals.updated + totals.duplicates
        return ImportReport(totals.created, totals.updated, totals.duplicates, total, dict(totals.records))

    async def _import_v1(self, source: Path, batch: int, progress: Any, owner: str | None) -> ImportReport:
        embedder = await self.embedder()
        family = embedder.family if embedder is not None else None
        count = 0
        with contextlib.closing(_json_lines(source)) as lines:
            for line_no, data in lines:  # the whole file first: a bad line writes nothing
                row, _ = self._v1_row(source, line_no, data, family)
                _dump.check_owner(f"{source}:{line_no}", owner, row["agent_id"], row["scope"])
                count += 1
        created = updated = dup = 0
        pending: list[dict[str, Any]] = []
        pending_vectors: list[Any] = []

        async def flush() -> None:
            nonlocal created, updated, dup
            vectors = await self.stored_vectors_kept(pending, pending_vectors)
            ids = await self.write_rows(pending, dedupe=[False] * len(pending), mode="import", vectors=vectors)
            created += sum(i.status == "created" for i in ids)
            updated += sum(i.status == "updated" for i in ids)
            dup += sum(i.status == "duplicate" for i in ids)
            pending.clear()
            pending_vectors.clear()
            if progress is not None:
                progress(created + updated + dup, count)

        with contextlib.closing(_json_lines(source)) as lines:
            for line_no, data in lines:
                row, vector = self._v1_row(source, line_no, data, family)
                pending.append(row)
                pending_vectors.append(vector)
                if len(pending) >= batch:
                    await flush()
        if pending:
            await flush()
        total = created + updated + dup
        return ImportReport(created, updated, dup, total, {"memory": total} if total else {})

    async def stored_vectors_kept(self, rows: list[dict[str, Any]], vectors: list[Any]) -> list[Any]:
        """``vectors`` with :data:`KEEP` for rows without one whose id is stored with the same text and a vector.

        A re-run of an import (or of an interrupted one) then embeds nothing it already did.
        """
        wanted = [row["id"] for row, vector in zip(rows, vectors, strict=True) if vector is None]
        if not wanted:
            return vectors
        held = await self.store.get(wanted)
        out = list(vectors)
        for i, row in enumerate(rows):
            record = held.get(row["id"]) if out[i] is None else None
            if record is not None and record.has_vector and record.content_hash == row["content_hash"]:
                out[i] = KEEP
        return out

    def _v1_row(self, source: Path, line_no: int, data: Any, family: str | None) -> tuple[dict[str, Any], F32 | None]:
        try:
            return self.import_row(data, family)
        except (ValueError, KeyError, TypeError, RecursionError) as e:
            msg = f"{source}:{line_no}: not a memory record ({e}); nothing was imported"
            raise UsageError(msg) from e

    def import_row(self, data: Any, family: str | None) -> tuple[dict[str, Any], F32 | None]:
        """A row to write, and the exported vector if it is of ``family`` (else it is re-embedded)."""
        if not isinstance(data, dict):
            msg = f"a JSON object per line is expected, got a JSON {type(data).__name__}"
            raise TypeError(msg)
        missing = [key for key in _IMPORT_FIELDS if key not in data]
        if missing:
            msg = f"missing field {missing[0]!r}" if len(missing) == 1 else f"missing fields {missing}"
            raise ValueError(msg)
        fields = {k: data[k] for k in _REMEMBER_FIELDS if k in data and k not in ("ttl",)}
        # A note is what remember() wrote: its em_ keys are refused as there. The other kinds (turn
        # chunks, summaries, lessons) only the library writes: an export of them keeps its flags.
        row = self.make_row(data["content"], fields, library=fields.get("kind", "note") != "note")
        for column in ("created_at", "updated_at", "accessed_at", "retention_strength"):
            row[column] = float(data[column])
        row["access_count"] = int(data["access_count"])
        row["archived"] = int(bool(data["archived"]))
        row["deleted_at"] = None if data.get("deleted_at") is None else float(data["deleted_at"])
        vector, model = data.get("vector"), data.get("vector_model")
        if vector is None or family is None or not isinstance(model, dict) or model.get("family") != family:
            return row, None
        try:
            vec = _as_matrix([vector], 1, len(vector), "of the export")[0]
        except EmbedderError as e:
            raise ValueError(str(e)) from e
        self.store.check_vector(vec)
        return row, vec


class _QueryBatches:
    """Embeds queries asked at the same moment together; one batch in flight at a time; each query once.

    The first query of a batch schedules it for the loop's next turn, so every recall
    started meanwhile (``asyncio.gather``) joins it; queries that arrive while a batch is
    being embedded wait for it and go together in the next.
    """

    def __init__(self) -> None:
        #: The last few queries' vectors, by ``(model_id, text)``.
        self.memo: dict[tuple[str, str], F32] = {}
        self._flights: dict[tuple[str, str], asyncio.Future[F32]] = {}
        self._batch: list[tuple[tuple[str, str], asyncio.Future[F32]]] = []
        self._embed: Callable[[list[str]], Awaitable[list[F32]]] | None = None
        self._running = False

    async def vector(self, key: tuple[str, str], embed: Callable[[list[str]], Awaitable[list[F32]]]) -> F32:
        known = self.memo.get(key)
        if known is not None:
            return known
        flight = self._flights.get(key)
        if flight is None:
            loop = asyncio.get_running_loop()
            flight = loop.create_future()
            self._flights[key] = flight
            if self._batch and key[0] != self._batch[0][0][0]:
                self._start(force=True)  # another model: the batch so far goes now
            if not self._batch and not self._running:
                loop.call_soon(self._start)
            self._batch.append((key, flight))
            self._embed = embed
        return await asyncio.shield(flight)  # a cancelled caller leaves the batch to the others

    def _start(self, *, force: bool = False) -> None:
        if self._running and not force:
            return  # the running batch starts this one when it ends
        batch, embed = self._batch, self._embed
        self._batch, self._embed = [], None
        if batch and embed is not None:
            self._running = True
            task = asyncio.get_running_loop().create_task(self._run(batch, embed))
            _BACKGROUND.add(task)
            task.add_done_callback(_BACKGROUND.discard)

    async def _run(
        self,
        batch: list[tuple[tuple[str, str], asyncio.Future[F32]]],
        embed: Callable[[list[str]], Awaitable[list[F32]]],
    ) -> None:
        try:
            vectors = await embed([key[1] for key, _ in batch])
        except BaseException as e:
            self._next()
            for key, flight in batch:
                self._flights.pop(key, None)
                if not flight.done():
                    flight.set_exception(e)
                    flight.exception()  # retrieved here: a caller that went away logs nothing
            if not isinstance(e, Exception):
                raise
            return
        self._next()
        for (key, flight), vector in zip(batch, vectors, strict=True):
            self.memo[key] = vector  # before the flight ends: a query asked from now on finds it
            self._flights.pop(key, None)
            if not flight.done():
                flight.set_result(vector)
        while len(self.memo) > _QUERY_MEMO:
            self.memo.pop(next(iter(self.memo)))

    def _next(self) -> None:
        """A batch ended: start the queries that waited for it."""
        self._running = False
        if self._batch:
            self._start()


#: Batch tasks in flight (a task nobody references may be collected before it ends).
_BACKGROUND: set[asyncio.Task[None]] = set()
