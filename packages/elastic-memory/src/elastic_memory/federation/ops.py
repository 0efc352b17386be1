"""FederatedOps: what :class:`~elastic_memory.Memory` calls when it sits on a federation.

The memory loop (facts, lessons, turns, the graph, plans) lives in the agent's private
file; memories are written and recalled through the federation, and the loop's relevance
recall reads every tier.
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Iterable, Iterator
from functools import partial
from typing import Any

from .. import _validate as v
from ..config import RecallConfig
from ..core import MemoryCore
from ..errors import AccessDeniedError, ReadOnlyError, RecallWarning, TierWriteError, UsageError
from ..filters import with_scope
from ..loop.attach import loop_of
from ..retrieval import rerank
from ..types import (
    Explanation,
    Hit,
    Hits,
    MemoryId,
    MemoryRecord,
    PrunePolicy,
    PruneReport,
    RecallMode,
    Scope,
)
from ..users import SEPARATOR
from .core_store import CoreStore, own_rows_only, serving_user, touching
from .federation import MemoryFederation
from .protocol import Entry

__all__ = ["FederatedOps"]

log = logging.getLogger("elastic_memory.federation")


class FederatedOps:
    """The facades' operations (``MemoryOps``) over ``federation``; ``core`` is the private tier's."""

    #: The user this handle serves (``None``: the agent): set in the context of every tier read.
    serving: str | None = None

    def __init__(self, federation: MemoryFederation, core: MemoryCore) -> None:
        self.federation = federation
        self.core = core
        self._rerank_warned: set[str] = set()
        core.recall_hook = self._plan_recall
        #: The handles of the agent's users (:class:`~.user_ops.UserFederatedOps`), least recent first.
        self.user_ops: dict[str, FederatedOps] = {}

    @property
    def agent_id(self) -> str:
        """The agent whose private tier this is."""
        return self.core.agent_id

    @contextlib.contextmanager
    def _as_owner(self, *, own_rows: bool = False) -> Iterator[None]:
        """Tier reads in this block serve this handle's owner (the agent, or one of its users)."""
        tokens = serving_user.set(self.serving), own_rows_only.set(own_rows)
        try:
            yield
        finally:
            serving_user.reset(tokens[0])
            own_rows_only.reset(tokens[1])

    async def _plan_recall(self, query: str, k: int, mode: str) -> list[Hit]:
        config = self.federation.rerank if query.strip() else None
        token = touching.set(False)  # a plan is not an access, as on one file
        try:
            with self._as_owner(own_rows=True):  # the private tier's candidates are the owner's own
                hits = await self.federation.search(
                    query, k=k if config is None else max(k, config.rerank_candidates), mode=mode
                )
        finally:
            touching.reset(token)
        if config is None:
            return hits
        recall_mode = RecallMode(mode)
        return list((await self._reranked(Explanation(query, recall_mode, recall_mode, hits, {}), config, k)).hits)

    async def _reranked(self, explanation: Explanation, config: RecallConfig, k: int) -> Explanation:
        """The merged hits in the reranker's order, cut to ``k`` (a failure warns once per reranker)."""
        explanation, problem = await rerank.reranked(explanation, config.reranker, k, config.rerank_weight)
        name = rerank.reranker_name(config.reranker)
        if problem is not None and name not in self._rerank_warned:
            self._rerank_warned.add(name)
            warnings.warn(f"{problem}; recall keeps its order", RecallWarning, stacklevel=4)
        return explanation

    def _entry(self, row: dict[str, Any], dedupe: bool) -> Entry:
        if SEPARATOR in row["agent_id"]:  # a user's row must never be promoted to tiers other agents read
            msg = "user_id= is not taken by the agent's federated handle: write through memory.for_user(user_id)"
            raise UsageError(msg)
        return Entry.from_row(row, dedupe=dedupe)

    # ------------------------------------------------------------------- writes
    async def _model_ready(self) -> None:
        """Resolve the embedder, waiting for the model to load: a write's time budget is for the write, not the load."""
        await self.core.embedder(quiet=True)

    async def remember(self, content: Any, *, dedupe: bool = True, **fields: Any) -> MemoryId:
        """Store one memory in the tier its scope routes to (private ones may be promoted)."""
        if not isinstance(dedupe, bool):
            msg = f"dedupe must be True or False, got {dedupe!r}"
            raise UsageError(msg)
        row = self.core.make_row(content, fields)
        await self._model_ready()
        return (await self.federation.write([self._entry(row, dedupe and fields.get("id") is None)]))[0]

    async def remember_many(self, items: Iterable[Any], *, dedupe: bool = True, vectors: Any = None) -> list[MemoryId]:
        """Store many memories; each tier's share is one transaction."""
        if vectors is not None:
            msg = "vectors= is not available on a federation (Memory.for_agent): each tier embeds with its own model"
            raise UsageError(msg)
        if not isinstance(dedupe, bool):
            msg = f"dedupe must be True or False, got {dedupe!r}"
            raise UsageError(msg)
        rows, per_row = self.core.rows_of(items, dedupe)
        await self._model_ready()
        return await self.federation.write([self._entry(r, d) for r, d in zip(rows, per_row, strict=True)])

    async def update(self, id: Any, **changes: Any) -> MemoryRecord:
        """Change a memory in every tier holding it; a private one reaching the promotion importance is promoted.

        In pools and the global tier only its author or a moderator may (see :class:`MemoryFederation`).
        """
        mid = v.check_id(id)
        if changes.get("agent_id", self.agent_id) != self.agent_id:
            msg = (
                f"agent {self.agent_id!r} may not hand a memory to another agent: update() keeps its author. "
                "Nothing was changed."
            )
            raise AccessDeniedError(msg)
        if "scope" in changes or "pool" in changes:
            msg = (
                "a federation cannot move a memory between tiers with update(); "
                "remember it in the new scope and forget the old one"
            )
            raise UsageError(msg)

        async def change(store: Any, held: list[str]) -> int:
            if not hasattr(store, "update"):
                return 0
            await store.update(mid, **changes)
            return 1

        records = await self.federation.get([mid])
        if not records or records[0].deleted_at is not None:
            msg = f"no memory with id {mid!r} (deleted memories can be restored with restore())"
            raise UsageError(msg)
        await self._model_ready()
        if not await self.federation.mutate([mid], "update", change):
            msg = f"the memory {mid!r} is in a read-only tier (a Markdown folder): edit its note instead"
            raise ReadOnlyError(msg)
        record = (await self.federation.get([mid]))[0]
        router = self.federation.router
        promotes = record.scope is Scope.PRIVATE and record.importance >= router.promote_at and router.has_global
        if promotes and record.user_id is None:  # a user's memory is that user's: never copied to global
            copy = Entry.create(
                record.content,
                now=record.updated_at,
                default_agent=record.agent_id,
                dedupe=False,
                **{k: val for k, val in _fields(record).items()},
            )
            await self.federation.promote([copy.rescoped(Scope.GLOBAL)], [MemoryId(mid)])
        return record

    async def forget(self, ids: Any, *, hard: bool = False) -> int:
        """Soft- or hard-delete in every tier, promoted copies included."""
        if not isinstance(hard, bool):
            msg = f"hard must be True or False, got {hard!r}"
            raise UsageError(msg)
        return await self.federation.delete(v.check_ids(ids), hard=hard)

    async def restore(self, ids: Any) -> int:
        """Undo a soft delete in every tier."""
        return await self.federation.mutate(v.check_ids(ids), "restore", lambda s, held: s.restore(held))

    async def archive(self, ids: Any, *, archived: bool = True) -> int:
        """Hide or unhide in every tier."""
        if not isinstance(archived, bool):
            msg = f"archived must be True or False, got {archived!r}"
            raise UsageError(msg)
        return await self.federation.mutate(
            v.check_ids(ids), "archive", lambda s, held: s.archive(held, archived=archived)
        )

    async def purge(self, older_than: float = 0.0, *, ids: Any = None) -> int:
        """Erase old soft-deleted or expired memories (only ``ids``, if given) of the private tier.

        Shared files belong to every agent.
        """
        return await self.core.purge(older_than, ids=ids)

    async def prune(self, policy: PrunePolicy | None = None, **fields: Any) -> PruneReport:
        """Prune the private tier: pools and the global tier hold other agents' memories too.

        An operator prunes every tier with :meth:`MemoryFederation.prune`.
        """
        return await self.core.prune(policy, **fields)

    # -------------------------------------------------------------------- reads
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
        """Merged recall over the tiers ``scope``/``pool`` (or the filters') route to."""
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
        return Hits(explanation.hits, degraded=explanation.degraded)

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
        """Merged recall, and per tier how many hits, how long, and which tiers degraded."""
        if vector is not None:
            msg = "vector= search is not available on a federation (Memory.for_agent): recall by query text"
            raise UsageError(msg)
        if vector_weight is not None:
            msg = "vector_weight= is not available on a federation (Memory.for_agent): each tier fuses with its own"
            raise UsageError(msg)
        if query is None:
            query = ""
        if not isinstance(query, str):
            msg = f"query must be a str, got {type(query).__name__}"
            raise UsageError(msg)
        query = v.clean_query(query)
        k = v.check_k(k)
        recall_mode = v.check_mode(mode)
        merged = with_scope(filters, scope, pool)
        if touch is not None and not isinstance(touch, bool):
            msg = f"touch must be True, False or None, got {touch!r}"
            raise UsageError(msg)
        if recall_mode is not RecallMode.KEYWORD and query.strip():
            await self._embed_once(query)
        config = self.federation.rerank if query.strip() else None
        wanted = k if config is None else max(k, config.rerank_candidates)
        token = touching.set(False)  # tiers return more than the merge keeps: touch only what is returned
        try:
            with self._as_owner():
                found, details = await self.federation.search_tiers(
                    query, k=wanted, mode=recall_mode.value, filters=merged
                )
        finally:
            touching.reset(token)
        explanation = Explanation(query, recall_mode, recall_mode, found, {"federation": details})
        if config is not None:  # the merged hits, ordered once (the tiers rerank nothing)
            explanation = await self._reranked(explanation, config, k)
        if touch is None:
            touch = self.core.recall_config.touch
        if touch:
            await self._touch(list(explanation.hits))
        return explanation

    async def _embed_once(self, query: str) -> None:
        """Embed the query once for every tier: the tiers share the query memo (see build_federation)."""
        try:
            embedder = await self.core.embedder(quiet=True)
            if embedder is not None:
                await self.core.query_vector(embedder, query)
        except Exception:
            log.debug("embedding the query once for the federation failed", exc_info=True)

    async def _touch(self, hits: list[Hit]) -> None:
        by_tier: dict[str, list[str]] = {}
        for hit in hits:
            by_tier.setdefault(hit.tier or "private", []).append(hit.id)
        for ref in self.federation.router.tiers:
            inner = ref.store.inner
            if ref.name in by_tier and isinstance(inner, CoreStore):
                try:
                    await ref.store.call_write(partial(inner.touch, by_tier[ref.name]), "record access")
                except TierWriteError as e:  # bookkeeping: never fails a recall
                    log.warning("recording access in the %s tier failed: %s", ref.name, e)

    async def get(self, id: Any) -> MemoryRecord | None:
        """The memory ``id`` or ``None``: this agent's own copy, else the id's first holder."""
        wanted = v.check_id(id)
        with self._as_owner():
            found = await self.federation.get([wanted])
        return found[0] if found else None

    async def get_many(self, ids: Any) -> list[MemoryRecord]:
        """The memories that exist among ``ids``, in the order given."""
        wanted = v.check_ids(ids)
        with self._as_owner():
            return await self.federation.get(wanted)

    async def vectors(self, ids: Any) -> dict[str, list[float]]:
        """The stored vectors of ``ids``, from the most local SQLite tier holding each."""
        wanted = v.check_ids(ids)
        out: dict[str, list[float]] = {}
        for ref in self.federation.router.tiers:
            inner = ref.store.inner
            missing = [i for i in wanted if i not in out]
            if missing and isinstance(inner, CoreStore):
                for key, vector in (await inner.core.vectors(missing)).items():
                    out.setdefault(key, vector)
        return out

    async def generation(self) -> None:
        """``None``: a federation's tiers each keep their own (see :meth:`AsyncMemory.generation`)."""

    async def tags(self, *, filters: Any = None, prefix: Any = None) -> dict[str, int]:
        """Tag counts summed over every SQLite tier."""
        out: dict[str, int] = {}
        for ref in self.federation.router.tiers:
            inner = ref.store.inner
            if isinstance(inner, CoreStore):
                for tag, count in (await inner.core.tags(filters=filters, prefix=prefix)).items():
                    out[tag] = out.get(tag, 0) + count
        return dict(sorted(out.items()))

    async def load_index(self) -> str:
        """Load every open SQLite tier's vector index; the private tier's vector tier."""
        for ref in self.federation.router.tiers:
            inner = ref.store.inner
            if isinstance(inner, CoreStore) and inner.core is not self.core and not inner.core.store.closed:
                try:
                    await inner.core.load_index()
                except Exception as e:  # noqa: BLE001 - a broken tier is reported by health(), not raised here
                    log.warning("elastic-memory: tier %s could not load its vector index: %s", ref.name, e)
        return await self.core.load_index()

    async def stats(self) -> dict[str, Any]:
        """The private tier's stats, plus ``tiers``: every SQLite tier's counts."""
        out = await self.core.stats()
        tiers: dict[str, Any] = {}
        for ref in self.federation.router.tiers:
            inner = ref.store.inner
            if isinstance(inner, CoreStore) and not inner.core.store.closed:
                try:
                    s = await inner.stats()
                except Exception as e:  # noqa: BLE001 - a broken tier is reported, not raised
                    tiers[ref.name] = {"error": f"{type(e).__name__}: {e}"}
                    continue
                tiers[ref.name] = {k: s[k] for k in ("active_memories", "total_memories", "vectors", "path") if k in s}
            else:
                tiers[ref.name] = {"store": getattr(inner, "name", type(inner).__name__)}
        out["tiers"] = tiers
        return out

    async def health(self) -> dict[str, Any]:
        """The loop's health plus ``federation``: each tier's state, breaker and degraded reads."""
        out = await loop_of(self.core).health()
        health = await self.federation.health_check()
        out["federation"] = {"ok": health.ok, "reason": health.reason, **dict(health.detail)}
        return out

    async def close(self) -> None:
        """Close the federation: the loop and every tier (idempotent)."""
        await self.federation.aclose()


def _fields(record: MemoryRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "type": record.type,
        "importance": record.importance,
        "confidence": record.confidence,
        "source": record.source,
        "tags": list(record.tags),
        "metadata": record.metadata,
        "agent_id": record.agent_id,
        "session_id": record.session_id,
        "pinned": record.pinned,
        "expires_at": record.expires_at,
        "kind": record.kind,
    }
