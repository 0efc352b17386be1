"""LangGraph's long-term memory store (:class:`~langgraph.store.base.BaseStore`) on elastic-memory.

Pass it as ``create_agent(..., store=ElasticMemoryStore(path="memory.db"))`` or to
``StateGraph.compile(store=...)``.

How items map onto core memories (all in one *collection*, a core ``agent_id``, by default
``"langgraph"``, so they never mix with the memory loop's rows):

- **id**: ``uuid5`` of (collection, namespace, key). A put is an upsert of that memory,
  a delete erases it (``forget(hard=True)``).
- **metadata**: ``{"namespace": [...], "key": key, "value": value, "ttl": minutes}``. The
  value is kept as JSON: it comes back equal (tuples come back as lists; dict key order is
  not kept). Values that JSON cannot hold are refused before anything is written.
- **tags**: ``lg:p:<a.b>`` for every prefix of the namespace (labels joined by ``.``,
  which labels cannot contain), ``lg:n:<a.b.c>`` for the namespace itself, ``lg:item`` on
  every item and ``lg:indexed`` on items with searchable text. Prefix search is the core's
  exact tag filter, so the prefix ``("a",)`` never matches ``("ab",)``. ``list_namespaces``
  reads the ``lg:n:`` tags (``Memory.tags``).
- **content**: the text at the index field paths (``IndexConfig["fields"]``, default
  ``["$"]``, the whole value as JSON; or the put's ``index=[...]``), read with LangGraph's
  ``get_text_at_path``: ``"a.b"``, ``"a[0]"``, ``"a[-1]"``, ``"a[*].b"``, ``"{a,b}"``;
  a ``[*]`` path gives one text per element, a list or dict without one is one JSON text.
  Items put with ``index=False`` (or with no text at those paths) keep a placeholder
  content and are left out of ranking.
- **one vector per field**, as LangGraph's stores: an item with one distinct text (the
  default ``["$"]``, or one field) is ranked by its own row, tagged ``lg:indexed``. An item
  with several keeps them joined as its content, untagged, and gets one hidden **field
  row** per distinct text: content the text, tags ``lg:field``, ``lg:indexed`` and the
  item's ``lg:p:`` prefixes, metadata ``{"item": <item id>, "field": "tags[*].1",
  "value": <the value>}`` (the value again, so value filters apply to it), pinned, no TTL.
  The item lists their ids (``metadata["fields"]``, new ids on every put). Field rows have
  no ``lg:item`` or ``lg:n:`` tag, so listings and ``list_namespaces`` never see them.
  A put erases the old field rows after writing the new ones, a delete erases them with
  the item, and a sweep erases those of the items it erases. An expired item's field rows
  rank nothing (a field row counts only for the live item that lists it), and refreshing a
  TTL touches the item's row only.
- **filters** on values become the core's metadata filters on ``value.<key>``: ``$eq $ne
  $gt $gte $lt $lte``, nested dicts and ``"a.b"`` keys as nested paths. They compare as
  ``InMemoryStore``'s: a scalar equals that scalar only, never a list holding it (the core's
  own ``$eq`` would match the list); ``None`` also equals a missing key; ``$ne`` is the
  negation, so it matches a missing key too, unless a parent of the key is not a dict;
  ``$gt $gte $lt $lte`` compare numbers with numbers and strings with strings. A bool is
  not a number here.
- **TTL** (minutes) becomes the core's ``ttl``/``expires_at`` and the tag ``lg:ttl``:
  expired items are hidden at once; :meth:`ElasticMemoryStore.sweep_ttl` (or the sweeper
  thread) erases them. Reads refresh the TTL of the items they return (``refresh_ttl``) with
  a core ``update``, which also moves their ``updated_at``.
- **times**: ``created_at``/``updated_at`` of the memory; items are pinned, so the core's
  ``prune`` never removes them.

Search: with a ``query``, the core ranks the indexed rows (``search_mode``: ``"semantic"``,
the default, ``"hybrid"`` or ``"keyword"``), best first; each field row counts for its item,
so an item scores by its best field (``InMemoryStore``'s max over its vectors). The core is
asked for more rows until ``offset + limit`` items come out or the rows run out (at most
1000 rows). The other matching items follow with ``score=None``. Without a query, items
come in insertion order (the core's ``list``). ``offset + limit`` is at most 1000.

>>> store = ElasticMemoryStore(path=":memory:")
>>> store.put(("users", "ana"), "prefs", {"units": "metric", "theme": "dark"})
>>> store.get(("users", "ana"), "prefs").value == {"units": "metric", "theme": "dark"}
True
>>> [item.key for item in store.search(("users",), filter={"units": "metric"})]
['prefs']
>>> store.list_namespaces(prefix=("users",))
[('users', 'ana')]
>>> store.close()
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import math
import uuid
from collections.abc import Generator, Iterable, Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal, TypeVar

from langchain_core.embeddings import Embeddings
from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    ensure_embeddings,
    get_text_at_path,
    validate_op_namespace,
)
from typing_extensions import Self

from elastic_memory import AsyncMemory, Memory, MemoryRecord, RecallMode, UsageError
from elastic_memory.adapters import StoreLifecycle, items_arg

from ._memory import LangChainEmbedder, Opened, open_memory
from ._store_checks import (
    NAMESPACE_TAG,
    PAGE,
    check_shape,
    checked_list,
    checked_search,
    json_value,
    listed_namespaces,
    tag_prefix,
    ttl_minutes,
)
from ._store_embeddings import callable_from_threads
from ._store_filters import value_filter
from ._store_sweeper import Sweeper, sweep_interval

__all__ = ["ElasticMemoryStore", "StoreSearchMode"]

#: How a search with a ``query`` ranks the items.
StoreSearchMode = Literal["semantic", "hybrid", "keyword"]
_MODES = ("semantic", "hybrid", "keyword")

_IDS = uuid.UUID("f830808f-e9b2-4e6d-8310-a3e4b1897400")
_ITEM = "lg:item"
_FIELD = "lg:field"
_INDEXED = "lg:indexed"
_TTL = "lg:ttl"
_PREFIX = "lg:p:"
#: The core's longest tag: a namespace's labels joined by "." fit in it after the tag prefix.
_MAX_TAG = 256
_MAX_NAMESPACE = _MAX_TAG - len(NAMESPACE_TAG)
#: The core's longest content; longer text is cut for the indexes (the value is kept whole).
_MAX_TEXT = 1_000_000
_UNINDEXED = "(not indexed)"
#: The id :meth:`ElasticMemoryStore.setup` reads to check that the store is open (no item has it).
_SETUP_PROBE = str(uuid.uuid5(_IDS, "setup"))

#: One call on the core: a method name of Memory/AsyncMemory, its arguments.
_Call = tuple[str, tuple[Any, ...], dict[str, Any]]
_T = TypeVar("_T")
_Plan = Generator[_Call, Any, _T]


class ElasticMemoryStore(StoreLifecycle, BaseStore):
    """LangGraph's ``BaseStore`` on one elastic-memory SQLite file.

    Args:
        path: a database file (created if missing) or ``":memory:"``; or else
        memory: an open elastic-memory ``Memory`` or ``AsyncMemory`` (not closed by the store).
        index: LangGraph's ``IndexConfig``. ``embed`` (an ``Embeddings``, a sync or async
            function, or a ``"provider:model"`` string) embeds items and queries, ``dims`` is
            checked against it, ``fields`` picks the searchable text (default ``["$"]``).
            Without ``embed`` the core's embedder (``embedder=`` option, default the
            built-in offline model) is used; without ``index`` there are no vectors.
            With ``memory=`` only ``fields`` applies.
        ttl: LangGraph's ``TTLConfig`` (``default_ttl`` minutes, ``refresh_on_read``,
            ``sweep_interval_minutes`` for :meth:`start_ttl_sweeper`). Expired items are
            always hidden (``omit_expired``) until a sweep erases them.
        collection: the core ``agent_id`` every item is written under and read from.
        search_mode: how a ``query`` ranks, and its ``score``: ``"semantic"`` (the default:
            the cosine similarity, negative values kept), ``"hybrid"`` (BM25 and cosine
            fused, the core's absolute score in [0, 1]) or ``"keyword"`` (BM25).
        **options: ``Memory.open`` options when the store opens ``path`` (``clock``,
            ``embedder``, ``vector_index``, ``timeout``...).

    Differences from LangGraph's ``InMemoryStore`` and ``SqliteStore`` (as docs/langchain.md
    lists them; ``tests/test_store_parity.py`` runs the same calls on all three):

    - Without vectors (no ``index``), a ``query`` still puts keyword matches first; every
      ``score`` is ``None`` there, as theirs (they ignore the query). ``search_mode="keyword"``
      gives BM25.
    - One vector per distinct text at the ``fields`` paths, the item scored by its best, as
      theirs; a text repeated within an item is embedded once (``InMemoryStore`` raises on
      it), a blank one not at all. Items with several texts add a hidden row per text (see
      the module docstring) and rank among at most 1000 rows per search.
    - Without a query: insertion order, and an update keeps its place, as ``InMemoryStore``
      (``SqliteStore``: last updated first); across namespaces too (``InMemoryStore`` groups them).
    - With a query, items put with ``index=False`` follow the ranked ones unscored, as
      ``InMemoryStore`` (``SqliteStore`` leaves them out).
    - A put again keeps ``created_at`` (they reset it); times are aware UTC (``SqliteStore``'s
      are naive).
    - Filters: ``$ne`` also matches items without the field, as ``InMemoryStore``; a nested
      dict and a ``"a.b"`` path both reach nested fields; lists and dicts cannot be compared.
      A bool is not a number (``True`` does not match ``1``; they take ``True == 1``), and
      ``$gt $gte $lt $lte`` never match a list, a bool, ``None``, a missing field or a string
      against a number (``InMemoryStore`` raises, ``SqliteStore`` casts). Below a non-empty
      list of numbers, dicts or lists, a nested ``None`` or ``$ne`` condition takes the list
      for a dict without the key (they: no match).
    - ``list_namespaces`` forgets a namespace with its last item, as ``SqliteStore``.
    - Expired items are hidden before a sweep (``SqliteStore`` returns them); reads refresh
      TTLs unless ``refresh_on_read`` is ``False`` (``SqliteStore``: only when it is ``True``).
    - :meth:`start_ttl_sweeper` runs without a ``ttl`` config too (a ``put(ttl=...)`` sets a
      TTL), and the lifecycle methods are sync (:meth:`asetup`, :meth:`asweep_ttl` and
      :meth:`aclose` for async code).
    - ``offset + limit`` is at most 1000.
    """

    supports_ttl: bool = True
    _opened: Opened

    def __init__(
        self,
        *,
        path: str | Path | None = None,
        memory: Memory | AsyncMemory | None = None,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        collection: str = "langgraph",
        search_mode: StoreSearchMode = "semantic",
        **options: Any,
    ) -> None:
        if search_mode not in _MODES:
            msg = f"search_mode must be one of {list(_MODES)}, got {search_mode!r}"
            raise UsageError(msg)
        if not isinstance(collection, str) or not collection or len(collection) > 256:
            msg = f"collection must be a non-empty string of at most 256 characters, got {collection!r}"
            raise UsageError(msg)
        unknown = sorted(set(index or {}) - {"dims", "embed", "fields"})
        if unknown:
            msg = f"index has unknown key(s) {unknown}; LangGraph's IndexConfig takes dims, embed and fields"
            raise UsageError(msg)
        self.collection = collection
        self.search_mode: StoreSearchMode = search_mode
        self.ttl_config: TTLConfig | None = ttl
        self.index_config: IndexConfig | None = IndexConfig(**index) if index else None
        self.embeddings: Embeddings | None = None
        self._fields: list[str] = list((index or {}).get("fields") or ["$"])
        self._sweeper: Sweeper | None = None
        self._opened = self._open(path, memory, index, options)

    @classmethod
    @contextlib.contextmanager
    def from_conn_string(
        cls, conn_string: str, *, index: IndexConfig | None = None, ttl: TTLConfig | None = None, **options: Any
    ) -> Iterator[Self]:
        """A store on the database ``conn_string`` (a file, ``":memory:"``), closed on exit, as ``SqliteStore``'s.

        ``options`` are the constructor's others (``collection``, ``search_mode``, ``Memory.open``'s).
        """
        store = cls(path=conn_string, index=index, ttl=ttl, **options)
        try:
            yield store
        finally:
            store.close()

    def _open(
        self, path: str | Path | None, memory: Memory | AsyncMemory | None, index: IndexConfig | None, options: Any
    ) -> Opened:
        embed = (index or {}).get("embed")
        if memory is not None:
            if embed is not None:
                msg = "index['embed'] applies when the store opens path=; an open memory= embeds with its own embedder"
                raise UsageError(msg)
            return open_memory(path, memory, **options)
        if embed is None:
            embedder = options.pop("embedder", None if index is None else "auto")
            return open_memory(path, memory, embedder=embedder, **options)
        if "embedder" in options:
            msg = "pass either index['embed'] (LangChain embeddings) or embedder= (the core's), not both"
            raise UsageError(msg)
        self.embeddings = callable_from_threads(ensure_embeddings(embed))
        chosen = LangChainEmbedder(self.embeddings)
        dims = (index or {}).get("dims")
        if dims is not None and dims != chosen.dimension:
            msg = f"index['dims'] is {dims} but the embeddings return {chosen.dimension}-dimensional vectors"
            raise UsageError(msg)
        return open_memory(path, None, embedder=chosen, **options)

    # ------------------------------------------------------------- lifecycle
    def setup(self) -> None:
        """Check that the store is open; idempotent (the core creates and migrates the file when it opens it)."""
        self._opened.sync.get(_SETUP_PROBE)

    async def asetup(self) -> None:
        """Async :meth:`setup`."""
        await self._opened.aio.get(_SETUP_PROBE)

    def close(self) -> None:
        """Stop the TTL sweeper, then close the database if this store opened it (``path=``); idempotent."""
        self.stop_ttl_sweeper()
        super().close()

    async def aclose(self) -> None:
        """Async :meth:`close`."""
        if self._sweeper is not None:
            await asyncio.to_thread(self.stop_ttl_sweeper)
        await super().aclose()

    def __del__(self) -> None:
        sweeper = getattr(self, "_sweeper", None)
        if sweeper is not None:
            sweeper.stop.set()

    # ------------------------------------------------------------------- TTL
    def sweep_ttl(self) -> int:
        """Erase the expired items of this store's collection; returns how many."""
        return self._run(self._sweep())

    async def asweep_ttl(self) -> int:
        """Async :meth:`sweep_ttl`."""
        return await self._arun(self._sweep())

    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> concurrent.futures.Future[None]:
        """Run :meth:`sweep_ttl` every ``sweep_interval_minutes`` on a daemon thread of the library.

        The interval defaults to the TTL config's ``sweep_interval_minutes``, else 5. The
        returned future ends when the sweeper stops (:meth:`stop_ttl_sweeper`, :meth:`close`,
        cancelling the future, the store being dropped or the interpreter exiting); while one
        runs, it is returned again.
        """
        minutes = sweep_interval(sweep_interval_minutes, (self.ttl_config or {}).get("sweep_interval_minutes"))
        self.setup()
        running = self._sweeper
        if running is not None and running.thread.is_alive() and not running.stop.is_set():
            return running.future
        self._sweeper = Sweeper(self, minutes * 60)
        return self._sweeper.future

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper and wait up to ``timeout`` seconds (``None``: until it ends).

        Returns whether it has stopped (``True`` too when none was running).
        """
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 <= timeout < math.inf
        ):
            msg = f"timeout must be a non-negative number of seconds or None, got {timeout!r:.100}"
            raise UsageError(msg)
        sweeper = self._sweeper
        if sweeper is None:
            return True
        stopped = sweeper.halt(timeout)
        if stopped:
            self._sweeper = None
        return stopped

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.memory!r}, collection={self.collection!r}, mode={self.search_mode!r})"

    # ----------------------------------------------------------------- batch
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops``: reads see the state before the batch's puts; the last put to a key wins."""
        return self._run(self._plan(ops))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch` on the core's ``AsyncMemory``."""
        return await self._arun(self._plan(ops))

    def _run(self, plan: _Plan[_T]) -> _T:
        """A plan's core calls on the sync facade."""
        memory = self._opened.sync
        reply: Any = None
        try:
            while True:
                name, args, kwargs = plan.send(reply)
                reply = getattr(memory, name)(*args, **kwargs)
        except StopIteration as done:
            result: _T = done.value
            return result
        finally:
            plan.close()

    async def _arun(self, plan: _Plan[_T]) -> _T:
        """A plan's core calls on the async facade."""
        memory = self._opened.aio
        reply: Any = None
        try:
            while True:
                name, args, kwargs = plan.send(reply)
                reply = await getattr(memory, name)(*args, **kwargs)
        except StopIteration as done:
            result: _T = done.value
            return result
        finally:
            plan.close()

    def _plan(self, ops: Iterable[Op]) -> _Plan[list[Result]]:
        """The batch as core calls: everything is validated first, then reads, TTL refreshes, writes."""
        listed = items_arg(ops, "ops")
        results: list[Result] = [None] * len(listed)
        gets: list[tuple[int, GetOp, str]] = []
        searches: list[tuple[int, SearchOp, dict[str, Any]]] = []
        lists: list[tuple[int, ListNamespacesOp]] = []
        puts: dict[str, list[dict[str, Any]] | None] = {}
        for i, op in enumerate(listed):
            check_shape(op)
            validate_op_namespace(op)
            if isinstance(op, GetOp):
                gets.append((i, op, self._id(op.namespace, op.key)))
            elif isinstance(op, SearchOp):
                searches.append((i, checked_search(op), value_filter(op.filter)))
            elif isinstance(op, ListNamespacesOp):
                lists.append((i, checked_list(op)))
            elif isinstance(op, PutOp):
                mid = self._id(op.namespace, op.key)
                puts.pop(mid, None)
                puts[mid] = self._rows(mid, op)
            else:
                msg = f"unknown store operation {type(op).__name__}; use GetOp, SearchOp, PutOp or ListNamespacesOp"
                raise UsageError(msg)
        refresh: dict[str, float] = {}
        if gets:
            records = yield ("get_many", ([mid for _, _, mid in gets],), {})
            live = self._live(records)
            for i, op, mid in gets:
                record = live.get(mid)
                results[i] = _item(record) if record is not None else None
                if record is not None and op.refresh_ttl:
                    self._to_refresh(record, refresh)
        for i, search, metadata in searches:
            results[i] = yield from self._search(search, metadata, refresh)
        for i, listing in lists:
            tags = yield ("tags", (), {"filters": {"agent_id": self.collection}, "prefix": tag_prefix(listing)})
            results[i] = listed_namespaces(listing, tags)
        for mid, minutes in refresh.items():
            yield ("update", (mid,), {"ttl": minutes * 60})
        if puts:
            yield from self._write(puts)
        return results

    # ----------------------------------------------------------------- reads
    def _live(self, records: Iterable[MemoryRecord]) -> dict[str, MemoryRecord]:
        """The records that are live items of this store, by id."""
        now = self._opened.sync.clock()
        return {
            r.id: r
            for r in records
            if r.agent_id == self.collection
            and _ITEM in r.tags
            and r.deleted_at is None
            and not r.archived
            and (r.expires_at is None or r.expires_at > now)
            and isinstance(r.metadata.get("value"), dict)
        }

    @staticmethod
    def _to_refresh(record: MemoryRecord, refresh: dict[str, float]) -> None:
        minutes = record.metadata.get("ttl")
        if isinstance(minutes, int | float) and minutes > 0:
            refresh[record.id] = float(minutes)

    def _search(self, op: SearchOp, metadata: dict[str, Any], refresh: dict[str, float]) -> _Plan[list[SearchItem]]:
        """Ranked items for the query (if any), then the other matching items in insertion order, one page."""
        prefix = tuple(op.namespace_prefix)
        want = op.offset + op.limit
        if op.limit == 0 or len(".".join(prefix)) > _MAX_NAMESPACE:
            return []
        scope = [_PREFIX + ".".join(prefix)] if prefix else []
        filters: dict[str, Any] = {"agent_id": self.collection, "tags_all": [*scope, _ITEM]}
        if metadata:
            filters["metadata"] = metadata
        ranked: dict[str, float | None] = {}
        records: dict[str, MemoryRecord] = {}
        if op.query is not None and op.query.strip():
            ranked = yield from self._rank(op.query, {**filters, "tags_all": [*scope, _INDEXED]}, want, records)
        records.update((yield from self._rest(filters, ranked, want)))
        page = list(ranked)[op.offset : want]
        missing = [mid for mid in page if mid not in records]
        if missing:
            records.update({r.id: r for r in (yield ("get_many", (missing,), {}))})
        live = self._live(records.values())
        out: list[SearchItem] = []
        for mid in page:
            record = live.get(mid)
            if record is None:
                continue
            out.append(_search_item(record, ranked[mid]))
            if op.refresh_ttl:
                self._to_refresh(record, refresh)
        return out

    def _rank(
        self, query: str, filters: dict[str, Any], want: int, records: dict[str, MemoryRecord]
    ) -> _Plan[dict[str, float | None]]:
        """The ``want`` best items for ``query``, best first, each scored by its best row; their records.

        The core ranks rows: items with one text and the field rows of the others. A field row
        counts for the live item that lists it; the core is asked for more rows until
        ``want`` items come out or the rows run out (at most 1000).
        """
        k = min(PAGE, want * max(1, len(self._fields)))
        while True:
            how = yield ("explain", (query,), {"k": k, "mode": self.search_mode, "filters": filters})
            # The mode's score when it ran; None when the core had no vectors and ranked by keywords.
            scored = how.effective_mode is RecallMode(self.search_mode)
            owners = {hit.id: _owner(hit.id, hit.tags, hit.metadata) for hit in how.hits}
            missing = sorted({mid for mid in owners.values() if mid is not None and mid not in records})
            if missing:
                records.update({r.id: r for r in (yield ("get_many", (missing,), {}))})
            live = self._live(records.values())
            ranked: dict[str, float | None] = {}
            for hit in how.hits:
                owner = owners[hit.id]
                item = live.get(owner) if owner is not None else None
                if item is None or owner in ranked:
                    continue
                if hit.id == owner or hit.id in _field_ids(item):
                    ranked[item.id] = hit.score if scored else None
            if len(ranked) >= want or len(how.hits) < k or k >= PAGE:
                return ranked
            k = min(PAGE, k * 4)

    @staticmethod
    def _rest(filters: dict[str, Any], ranked: dict[str, float | None], want: int) -> _Plan[dict[str, MemoryRecord]]:
        """Add unranked matching items to ``ranked`` in insertion order until it holds ``want``; their records."""
        records: dict[str, MemoryRecord] = {}
        queried = len(ranked)
        after: str | None = None
        while len(ranked) < want:
            limit = min(PAGE, want - len(ranked) + queried)
            listed = yield ("list", (filters,), {"limit": limit, "after": after})
            for record in listed.records:
                records[record.id] = record
                ranked.setdefault(record.id, None)
            if listed.next is None:
                break
            after = listed.next
        return records

    def _sweep(self) -> _Plan[int]:
        """Erase the expired items: those tagged with a TTL, checked again as the same transaction deletes them."""
        clock = self._opened.sync.clock
        expired: dict[str, list[str]] = {}
        after: str | None = None
        while True:
            listed = yield (
                "list",
                ({"agent_id": self.collection, "tags_all": [_TTL]},),
                {"state": "all", "limit": PAGE, "after": after},
            )
            now = clock()
            expired.update(
                {r.id: _field_ids(r) for r in listed.records if r.expires_at is not None and r.expires_at <= now}
            )
            if listed.next is None:
                break
            after = listed.next
        if not expired:
            return 0
        # One transaction checks and erases: an item a put or a TTL-refreshing read renewed meanwhile stays.
        count: int = yield ("purge", (), {"ids": list(expired)})
        fields = [mid for ids in expired.values() for mid in ids]
        if fields:
            # The field rows of the erased items go too; a renewed item keeps the ones it lists.
            kept = {mid for r in (yield ("get_many", (list(expired),), {})) for mid in _field_ids(r)}
            orphans = [mid for mid in fields if mid not in kept]
            if orphans:
                yield ("forget", (orphans,), {"hard": True})
        return count

    # ---------------------------------------------------------------- writes
    def _id(self, namespace: Iterable[str], key: str) -> str:
        return str(uuid.uuid5(_IDS, repr((self.collection, tuple(namespace), str(key)))))

    def _rows(self, mid: str, op: PutOp) -> list[dict[str, Any]] | None:
        """A put's remember_many() items, the item's row first (``None`` for a delete), refused before any write."""
        if op.value is None:
            return None
        namespace = tuple(op.namespace)
        if not namespace:
            msg = "Namespace cannot be empty."
            raise InvalidNamespaceError(msg)
        joined = ".".join(namespace)
        if len(joined) > _MAX_NAMESPACE:
            msg = (
                f"Namespace {namespace} is too long: its labels joined by '.' take {len(joined)} characters, "
                f"at most {_MAX_NAMESPACE}"
            )
            raise InvalidNamespaceError(msg)
        value = json_value(op.value)
        texts = self._texts(value, op.index)
        prefixes = [_PREFIX + ".".join(namespace[:n]) for n in range(1, len(namespace) + 1)]
        tags = [_ITEM, NAMESPACE_TAG + joined, *prefixes]
        # One text: the item's own row carries its vector. More: a hidden field row each.
        fields = [
            {
                "content": text[:_MAX_TEXT],
                "id": str(uuid.uuid4()),
                "agent_id": self.collection,
                "tags": [_FIELD, _INDEXED, *prefixes],
                "metadata": {"item": mid, "field": label, "value": value},
                "pinned": True,
            }
            for label, text in texts
        ]
        if len(texts) > 1:
            content = "\n".join(text for _, text in texts)[:_MAX_TEXT]
        elif texts:
            content = texts[0][1][:_MAX_TEXT]
            tags.append(_INDEXED)
            fields = []
        else:
            content = _UNINDEXED
        minutes = ttl_minutes(op.ttl)
        if minutes is not None:
            tags.append(_TTL)
        item = {
            "content": content,
            "id": mid,
            "agent_id": self.collection,
            "tags": tags,
            "metadata": {
                "namespace": list(namespace),
                "key": str(op.key),
                "value": value,
                "ttl": minutes,
                "fields": [row["id"] for row in fields],
            },
            "pinned": True,
            "ttl": None if minutes is None else minutes * 60,
        }
        return [item, *fields]

    def _texts(self, value: dict[str, Any], index: Literal[False] | list[str] | None) -> list[tuple[str, str]]:
        """The distinct texts to embed, each with its field label (LangGraph's: the path, ``path.i`` for several)."""
        if index is False:
            return []
        paths = self._fields if index is None else [index] if isinstance(index, str) else list(index)
        out: dict[str, str] = {}
        for path in paths:
            found = get_text_at_path(value, path)
            for n, text in enumerate(found):
                if text.strip():
                    out.setdefault(text, path if len(found) == 1 else f"{path}.{n}")
        return [(label, text) for text, label in out.items()]

    def _write(self, puts: dict[str, list[dict[str, Any]] | None]) -> _Plan[None]:
        """Erase hidden leftovers of re-put keys (a re-put starts fresh), upsert the puts, then delete.

        The upsert (where embedding can fail) comes before any visible change: if it fails, the
        batch has changed nothing a read can see. Field rows are new on every put; the old ones
        (of a re-put or deleted item) are erased after the upsert.
        """
        existing = yield ("get_many", (list(puts),), {})
        live = self._live(existing)
        leftovers = [
            mid for r in existing if r.id not in live and puts[r.id] is not None for mid in (r.id, *_field_ids(r))
        ]
        if leftovers:
            yield ("forget", (leftovers,), {"hard": True})
        rows = [row for put in puts.values() if put is not None for row in put]
        if rows:
            yield ("remember_many", (rows,), {"dedupe": False})
        stale = [
            mid
            for r in existing
            if puts[r.id] is None or r.id in live
            for mid in ((r.id, *_field_ids(r)) if puts[r.id] is None else _field_ids(r))
        ]
        if stale:
            yield ("forget", (stale,), {"hard": True})


# ---------------------------------------------------------------- helpers
def _time(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=timezone.utc)


def _fields(record: MemoryRecord) -> dict[str, Any]:
    meta = record.metadata
    return {
        "namespace": tuple(meta["namespace"]),
        "key": meta["key"],
        "value": meta["value"],
        "created_at": _time(record.created_at),
        "updated_at": _time(record.updated_at),
    }


def _owner(mid: str, tags: Iterable[str], metadata: Mapping[str, Any]) -> str | None:
    """The item a ranked row stands for: a field row's item, else the row itself."""
    if _FIELD not in tags:
        return mid
    item = metadata.get("item")
    return item if isinstance(item, str) else None


def _field_ids(record: MemoryRecord) -> list[str]:
    """The ids of an item's field rows (none for an item ranked by its own row)."""
    ids = record.metadata.get("fields")
    return [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []


def _item(record: MemoryRecord) -> Item:
    return Item(**_fields(record))


def _search_item(record: MemoryRecord, score: float | None) -> SearchItem:
    return SearchItem(**_fields(record), score=score)
