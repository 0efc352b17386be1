"""MemoryFederation: many tiers presented as one store (the same protocol). It does the I/O; the router decides.

A federation built for one agent (``agent_id``, as :meth:`Memory.for_agent` builds it)
speaks only for that agent: every entry it writes is that agent's, and in pools and the
global tier it changes only the memories that agent wrote, unless the agent moderates the
tier (``moderators``). Anything else raises :class:`~elastic_memory.AccessDeniedError`
before a single tier is written. A federation built without ``agent_id`` is an operator's:
it may change anything.

Writes fan out (not transactional across tiers): a failed private write raises
:class:`~elastic_memory.MemoryWriteError`; a failed shared or global write degrades (its id
comes back with status ``"degraded"``) and a degraded global tier pauses promotion. Reads
fan out concurrently, a failed tier is dropped (partial memory beats none), and the router
merges what came back.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import replace
from typing import Any

from ..config import RecallConfig
from ..errors import AccessDeniedError, MemoryWriteError, TierWriteError, UsageError
from ..filters import Filters
from ..types import Hit, MemoryId, MemoryRecord, PrunePolicy, PruneReport, Scope
from .protocol import Entry, MemoryStore, PrunableStore, TierHealth
from .resilience import DegradedEvent, ResilientTier, TierBudget
from .router import MemoryRouter, TierRef

__all__ = ["MemoryFederation"]

log = logging.getLogger("elastic_memory.federation")

#: How many degraded events :attr:`MemoryFederation.events` keeps.
_EVENTS = 200
#: The degraded events of the tier call running in this task (each fanned-out read is its own
#: task), so a read is flagged by its own failures, never by a concurrent read's.
_call_events: ContextVar[list[DegradedEvent] | None] = ContextVar("elastic_memory_call_events", default=None)


def _read_only(store: Any) -> bool:
    inner = getattr(store, "inner", store)
    return bool(getattr(inner, "read_only", False))


class MemoryFederation:
    """Private, shared and global tiers as one :class:`~elastic_memory.federation.MemoryStore`.

    Every tier is wrapped in a :class:`ResilientTier` with its budget from ``budgets``
    (tier name -> :class:`TierBudget`; ``"shared:*"`` is the default for pools).
    ``on_degraded`` observes every :class:`DegradedEvent`; the last ones are in
    :attr:`events`. ``vector_weight`` is the hybrid weight used when merged hits are fused again.
    ``agent_id`` is the identity the federation acts for (``None``: an operator, unrestricted);
    ``moderators`` maps a tier name (``"global"``, ``"shared:<pool>"``) to the agents who may
    change other agents' memories there.
    """

    name = "federation"

    def __init__(
        self,
        router: MemoryRouter[Any],
        *,
        budgets: Mapping[str, TierBudget] | None = None,
        on_degraded: Callable[[DegradedEvent], None] | None = None,
        vector_weight: float = 0.5,
        monotonic: Callable[[], float] = time.monotonic,
        agent_id: str | None = None,
        moderators: Mapping[str, Iterable[str]] | None = None,
        rerank: RecallConfig | None = None,
    ) -> None:
        if not isinstance(router, MemoryRouter):
            msg = f"router must be a MemoryRouter, got {type(router).__name__}"
            raise UsageError(msg)
        self.router: MemoryRouter[ResilientTier] = router  # every store is wrapped just below
        self._budgets = dict(budgets or {})
        self._observer = on_degraded
        self._monotonic = monotonic
        self.vector_weight = vector_weight
        #: The recall settings whose reranker orders the merged hits (the tiers rerank nothing).
        self.rerank = rerank if rerank is not None and rerank.reranker is not None else None
        self.events: collections.deque[DegradedEvent] = collections.deque(maxlen=_EVENTS)
        self._closed = False
        if agent_id is not None and (not isinstance(agent_id, str) or not agent_id):
            msg = f"agent_id must be a non-empty string or None, got {agent_id!r}"
            raise UsageError(msg)
        #: The agent this federation speaks for; ``None`` for an operator's federation.
        self.agent_id = agent_id
        self._moderators: dict[str, frozenset[str]] = {}
        for tier, names in (moderators or {}).items():
            self.set_moderators(tier, names)
        for ref in router.tiers:
            router.replace_store(ref.name, self._wrap(ref.name, ref.scope, ref.store))

    # ----------------------------------------------------------------- registry
    def _budget(self, tier: str) -> TierBudget:
        if tier in self._budgets:
            return self._budgets[tier]
        if tier.startswith("shared:") and "shared:*" in self._budgets:
            return self._budgets["shared:*"]
        return TierBudget()

    def _wrap(self, tier: str, scope: Scope, store: Any) -> ResilientTier:
        if isinstance(store, ResilientTier):
            return store
        if not isinstance(store, MemoryStore):
            msg = f"the {tier} tier's store {store!r} does not implement the store protocol (see MemoryStore)"
            raise UsageError(msg)
        return ResilientTier(
            store, tier=tier, scope=scope, budget=self._budget(tier), on_degraded=self._record, clock=self._monotonic
        )

    def _record(self, event: DegradedEvent) -> None:
        self.events.append(event)
        seen = _call_events.get()
        if seen is not None:
            seen.append(event)
        if self._observer is not None:
            try:
                self._observer(event)
            except Exception:
                log.exception("on_degraded observer failed")

    def add_pool(
        self, name: str, store: MemoryStore, *, budget: TierBudget | None = None, moderators: Iterable[str] = ()
    ) -> None:
        """Register (or replace) the shared pool ``name`` (``moderators`` may change anyone's memories there)."""
        tier = f"shared:{MemoryRouter.check_pool_name(name)}"
        if budget is not None:
            self._budgets[tier] = budget
        self.set_moderators(tier, moderators)
        self.router.add_pool(name, self._wrap(tier, Scope.SHARED, store))

    # -------------------------------------------------------------- permissions
    def set_moderators(self, tier: str, agents: Iterable[str]) -> None:
        """Name the agents who may change other agents' memories in ``tier`` (``"global"``, ``"shared:<pool>"``)."""
        if not isinstance(tier, str) or not (tier == "global" or tier.startswith("shared:")):
            msg = f'moderators are named for "global" or "shared:<pool>", got {tier!r}'
            raise UsageError(msg)
        if isinstance(agents, str):
            msg = f"the moderators of {tier} must be a list of agent ids, got the string {agents!r}"
            raise UsageError(msg)
        names = frozenset(agents)
        if any(not isinstance(n, str) or not n for n in names):
            msg = f"the moderators of {tier} must be non-empty agent ids, got {sorted(map(repr, names))}"
            raise UsageError(msg)
        self._moderators[tier] = names

    def moderators(self, tier: str) -> frozenset[str]:
        """The agents who may change other agents' memories in ``tier``."""
        return self._moderators.get(tier, frozenset())

    def may_change(self, tier: TierRef[Any], record: MemoryRecord) -> bool:
        """Whether this federation's agent may update, forget, archive or restore ``record`` in ``tier``.

        Its private tier is its own; in a pool or the global tier only the author (the record's
        ``agent_id``) and the tier's moderators may. An operator's federation may change anything.
        """
        if self.agent_id is None or tier.scope is Scope.PRIVATE:
            return True
        return record.agent_id == self.agent_id or self.agent_id in self.moderators(tier.name)

    def _deny(self, what: str, ids: Iterable[str]) -> AccessDeniedError:
        shown = ", ".join(repr(i) for i in list(dict.fromkeys(ids))[:5])
        msg = (
            f"agent {self.agent_id!r} may not {what} {shown}: in pools and the global tier an agent changes only "
            "the memories it wrote (or, as a moderator of the tier, any); ask the author or a moderator. "
            "Nothing was changed."
        )
        return AccessDeniedError(msg)

    def _check_authors(self, entries: Sequence[Entry]) -> None:
        """Every entry is written as this federation's agent: nobody writes in another's name."""
        if self.agent_id is None:
            return
        foreign = [e.id for e in entries if e.agent_id != self.agent_id]
        if foreign:
            msg = (
                f"agent {self.agent_id!r} may not write memories as another agent: remember() without agent_id "
                "(or with your own) writes as you. Nothing was written."
            )
            raise AccessDeniedError(msg)

    def _shared(self) -> list[TierRef[ResilientTier]]:
        """The pools and the global tier: where an id belongs to the author who wrote it there first."""
        return [ref for ref in self.router.tiers if ref.scope is not Scope.PRIVATE]

    async def _taken(self, target: TierRef[ResilientTier], ids: Sequence[str]) -> list[str]:
        """Ids among ``ids`` another author holds in a shared tier this agent reads, which it may not change.

        An id written to ``target`` (a pool or the global tier) must be free in every shared tier:
        a second author's row under the same id would stand beside the first one in merged reads
        and let a squatter's text pass for the owner's. ``target`` is read first and must answer;
        another tier that cannot be read now is skipped with a warning (it cannot be overwritten,
        and merged reads keep one row per author).

        Raises:
            TierWriteError: ``target`` could not be read (the write to it degrades: never written unchecked).
        """
        if self.agent_id is None or not ids:
            return []
        wanted = list(dict.fromkeys(ids))
        others = [ref for ref in self._shared() if ref.name != target.name]

        async def read(ref: TierRef[ResilientTier]) -> list[MemoryRecord]:
            return await ref.store.call_write(lambda: ref.store.inner.get(wanted), "check authors", len(wanted))

        held = await read(target)
        taken = {r.id for r in held if not self.may_change(target, r)}
        mine = {r.id for r in held if self.may_change(target, r)}  # an upsert of one's own row is never blocked
        found = await asyncio.gather(*(read(ref) for ref in others), return_exceptions=True)
        for ref, records in zip(others, found, strict=True):
            if isinstance(records, TierWriteError):
                log.warning("the %s tier could not be read to check ids before a write: %s", ref.name, records)
                continue
            if isinstance(records, BaseException):
                raise records
            taken.update(r.id for r in records if not self.may_change(ref, r) and r.id not in mine)
        return [i for i in wanted if i in taken]

    def remove_pool(self, name: str) -> MemoryStore | None:
        """Unregister the pool ``name`` and return its store (not closed); ``None`` if unknown."""
        wrapped = self.router.remove_pool(name)
        return None if wrapped is None else wrapped.inner

    @property
    def tiers(self) -> list[TierRef[ResilientTier]]:
        """The tiers in read order."""
        return self.router.tiers

    def _degrade(self, ref: TierRef[ResilientTier], op: str, error: TierWriteError) -> None:
        cause = error.__cause__
        detail = None if cause is None else f"{type(cause).__name__}: {cause}"
        log.warning("memory tier %s degraded (%s %s): %s", ref.name, op, error.reason, detail or "")
        self._record(DegradedEvent(ref.name, ref.scope, op, error.reason, detail))

    def _check_open(self) -> None:
        if self._closed:
            msg = "this federation is closed; build a new one"
            raise UsageError(msg)

    # ------------------------------------------------------------------- writes
    async def write(self, entries: Sequence[Entry]) -> list[MemoryId]:
        """Write each entry to the tiers the router picks; ids in input order.

        Direct legs (one transaction per tier) run concurrently; promotion copies follow,
        written with the id the private tier settled on (a duplicate keeps one id).

        Raises:
            RoutingError: An entry names a pool or scope without a tier (nothing is written).
            AccessDeniedError: An entry names another agent, or would overwrite a shared memory
                this agent may not change (nothing is written).
            MemoryWriteError: The private tier failed; nothing of this call was promoted.
        """
        self._check_open()
        entries = list(entries)
        if any(not isinstance(e, Entry) for e in entries):
            msg = "write() takes Entry values; build them with Entry.create(content, ...)"
            raise UsageError(msg)
        self._check_authors(entries)
        legs: dict[str, tuple[TierRef[ResilientTier], list[int]]] = {}
        promote: list[int] = []
        for i, entry in enumerate(entries):
            routes = self.router.route_write(entry)  # every entry is routed before anything is written
            ref = routes[0][0]
            legs.setdefault(ref.name, (ref, []))[1].append(i)
            if len(routes) > 1:
                promote.append(i)
        out: list[MemoryId | None] = [None] * len(entries)
        unreadable = await self._check_overwrites(legs, entries)
        names = [n for n in legs if n not in unreadable]

        async def unwritten(name: str) -> list[MemoryId]:
            raise unreadable[name]

        results = await asyncio.gather(
            *(legs[n][0].store.write([entries[i] for i in legs[n][1]]) for n in names),
            *(unwritten(n) for n in unreadable),
            return_exceptions=True,
        )
        names += list(unreadable)
        private_error: TierWriteError | None = None
        for name, result in zip(names, results, strict=True):
            ref, indices = legs[name]
            if isinstance(result, TierWriteError):
                if ref.scope is Scope.PRIVATE:
                    private_error = result
                else:
                    self._degrade(ref, "write", result)
                for i in indices:
                    out[i] = MemoryId(entries[i].id, "degraded")
            elif isinstance(result, BaseException):
                raise result  # a caller error (UsageError) or a bug: not a tier failure
            else:
                for i, mid in zip(indices, result, strict=True):
                    out[i] = mid
        if private_error is not None:
            msg = f"the private tier could not keep this write: {private_error}"
            raise MemoryWriteError(msg) from private_error
        await self.promote([entries[i].rescoped(Scope.GLOBAL) for i in promote], [out[i] for i in promote])
        return [mid if mid is not None else MemoryId("", "degraded") for mid in out]

    async def _check_overwrites(
        self, legs: Mapping[str, tuple[TierRef[ResilientTier], list[int]]], entries: Sequence[Entry]
    ) -> dict[str, TierWriteError]:
        """Refuse the whole write if a shared leg would overwrite a memory this agent may not change.

        Returns the legs whose tier could not be read for the check: they are not written (they degrade).
        """
        shared = [n for n, (ref, _) in legs.items() if ref.scope is not Scope.PRIVATE and self.agent_id is not None]
        found = await asyncio.gather(
            *(self._taken(legs[n][0], [entries[i].id for i in legs[n][1]]) for n in shared),
            return_exceptions=True,
        )
        unreadable: dict[str, TierWriteError] = {}
        denied: list[str] = []
        for name, result in zip(shared, found, strict=True):
            if isinstance(result, TierWriteError):
                unreadable[name] = result
            elif isinstance(result, BaseException):
                raise result
            else:
                denied += result
        if denied:
            error = self._deny("overwrite", denied)
            raise error
        return unreadable

    async def promote(self, copies: list[Entry], ids: Sequence[MemoryId | None]) -> None:
        """Write the global copies of promoted memories; a copy takes its original's id from ``ids`` (same order).

        A copy's author is this federation's agent, whatever the private row says (a row written
        into the private file by other means cannot promote itself in another agent's name). A
        copy whose id another author holds in a shared tier is not written (a degraded event says so).
        """
        if not copies or not self.router.has_global:
            return
        ref = self.router.tier("global")
        final = [
            replace(copy, id=str(mid) if mid else copy.id, dedupe=False, agent_id=self.agent_id or copy.agent_id)
            for copy, mid in zip(copies, ids, strict=True)
        ]
        try:
            taken = set(await self._taken(ref, [copy.id for copy in final]))
            if taken:  # another author already holds these ids in a shared tier: never overwritten or shadowed
                log.warning("promotion of %d memories skipped: their ids are another author's", len(taken))
                self._record(DegradedEvent(ref.name, ref.scope, "promote", "access_denied", f"ids {sorted(taken)}"))
                final = [copy for copy in final if copy.id not in taken]
            if final:
                await ref.store.write(final)
        except TierWriteError as e:
            self._degrade(ref, "promote", e)

    async def _each(
        self, refs: Sequence[TierRef[ResilientTier]], call: Callable[[TierRef[ResilientTier]], Awaitable[Any]]
    ) -> list[Any]:
        return await asyncio.gather(*(call(ref) for ref in refs), return_exceptions=True)

    def _writable(self) -> list[TierRef[ResilientTier]]:
        return [ref for ref in self.router.tiers if not _read_only(ref.store)]

    async def _holders(self, ids: Sequence[str]) -> dict[str, tuple[TierRef[ResilientTier], list[MemoryRecord]]]:
        refs = self._writable()
        found = await self._each(refs, lambda ref: ref.store.get(ids))
        return {
            ref.name: (ref, records)
            for ref, records in zip(refs, found, strict=True)
            if isinstance(records, list) and records
        }

    async def mutate(self, ids: Sequence[str], what: str, make: Callable[[Any, list[str]], Awaitable[int]]) -> int:
        """Apply one mutation to every writable tier holding any of ``ids``; how many distinct ids changed.

        ``make(inner_store, ids_it_holds)`` runs under that tier's write budget. Every tier is
        tried; then a private failure raises :class:`MemoryWriteError` and another tier's
        failure raises its :class:`TierWriteError` (retrying is idempotent).

        Raises:
            AccessDeniedError: A pool or the global tier holds one of ``ids`` by another author
                and this agent does not moderate it; nothing was changed.
        """
        self._check_open()
        found = await self._holders(ids)
        mine = {r.id for ref, records in found.values() for r in records if self.may_change(ref, r)}
        denied = [r.id for ref, records in found.values() for r in records if r.id not in mine]
        if denied:
            error = self._deny(what, denied)
            raise error
        # another author's copy under one of the caller's ids is left alone: it never blocks the call
        holders = {
            name: (ref, kept)
            for name, (ref, records) in found.items()
            if (kept := [r for r in records if self.may_change(ref, r)])
        }
        names = list(holders)

        async def one(name: str) -> int:
            ref, records = holders[name]
            held = [r.id for r in records]
            return await ref.store.call_write(lambda: make(ref.store.inner, held), what, len(held))

        results = await asyncio.gather(*(one(n) for n in names), return_exceptions=True)
        changed: set[str] = set()
        failure: BaseException | None = None
        for name, result in zip(names, results, strict=True):
            ref, records = holders[name]
            if isinstance(result, BaseException):
                if isinstance(result, TierWriteError) and ref.scope is Scope.PRIVATE:
                    msg = f"the private tier could not {what}: {result}"
                    failure = MemoryWriteError(msg)
                    failure.__cause__ = result
                elif failure is None:
                    failure = result
            elif result:
                changed.update(r.id for r in records)
        if failure is not None:
            raise failure
        return len(changed)

    async def delete(self, ids: Sequence[str], *, hard: bool = False) -> int:
        """Soft-delete (or erase) ``ids`` in every writable tier that holds them, promoted copies included."""
        return await self.mutate(ids, "delete", lambda store, held: store.delete(held, hard=hard))

    # -------------------------------------------------------------------- reads
    def _read_scope(
        self, filters: Mapping[str, Any] | None, scope: Any, pool: Any
    ) -> tuple[list[TierRef[ResilientTier]], dict[str, Any] | None]:
        parsed = Filters.parse(filters)  # a bad filter is a UsageError before anything else
        scopes: Any = scope if scope is not None else (parsed.scopes or None)
        pools: Any = pool if pool is not None else (parsed.pools or None)
        merged = None if filters is None else dict(filters)
        for key, value in (("scope", scope), ("pool", pool)):
            if value is not None:
                merged = {**(merged or {}), key: getattr(value, "value", value)}
        return self.router.route_read(scopes, pools), merged

    async def search_tiers(
        self,
        query: str = "",
        *,
        k: int = 10,
        mode: str = "hybrid",
        filters: Mapping[str, Any] | None = None,
        scope: str | None = None,
        pool: str | None = None,
    ) -> tuple[list[Hit], dict[str, Any]]:
        """Merged hits and how they were made: per-tier counts, timings and degraded tiers."""
        self._check_open()
        refs, merged = self._read_scope(filters, scope, pool)
        want = min(1000, max(k, 2 * k))
        started = time.perf_counter()

        async def ask(ref: TierRef[ResilientTier]) -> tuple[list[Hit], float, str | None]:
            t0 = time.perf_counter()
            seen: list[DegradedEvent] = []
            token = _call_events.set(seen)  # gather runs each ask in its own task and context
            try:
                hits = await ref.store.search(query, k=want, mode=mode, filters=merged)
            finally:
                _call_events.reset(token)
            return hits, (time.perf_counter() - t0) * 1000, seen[-1].reason if seen else None

        answers = await asyncio.gather(*(ask(ref) for ref in refs))
        candidates = [(ref, hit) for ref, (hits, _, _) in zip(refs, answers, strict=True) for hit in hits]
        ranked = self.router.rank(
            candidates, query=query, k=k, mode=mode, vector_weight=self.vector_weight, owner=self.agent_id
        )
        details = {
            "tiers": {
                ref.name: {"hits": len(hits), "ms": round(ms, 3), "degraded": bool(failed), "reason": failed}
                for ref, (hits, ms, failed) in zip(refs, answers, strict=True)
            },
            "degraded": [ref.name for ref, (_, _, failed) in zip(refs, answers, strict=True) if failed],
            "merge_ms": round((time.perf_counter() - started) * 1000, 3),
        }
        return ranked, details

    async def search(
        self, query: str = "", *, k: int = 10, mode: str = "hybrid", filters: Mapping[str, Any] | None = None
    ) -> list[Hit]:
        """The ``k`` best hits over the tiers the filters' scope and pool route to.

        Raises:
            RoutingError: ``filters["pool"]`` names a pool this federation does not have.
        """
        return (await self.search_tiers(query, k=k, mode=mode, filters=filters))[0]

    async def stream_search(
        self, query: str = "", *, k: int = 10, mode: str = "hybrid", filters: Mapping[str, Any] | None = None
    ) -> AsyncIterator[Hit]:
        """The same hits as :meth:`search`, best first, one at a time (stop whenever a budget is full).

        Ranking needs every tier's candidates, so the fan-out happens before the first hit.
        """
        for hit in await self.search(query, k=k, mode=mode, filters=filters):
            yield hit

    async def copies(self, ids: Sequence[str]) -> list[tuple[TierRef[ResilientTier], MemoryRecord]]:
        """Every tier's record of each of ``ids``, in read order (a tier that fails is left out)."""
        self._check_open()
        wanted = list(dict.fromkeys(ids))
        refs = self.router.tiers
        found = await asyncio.gather(*(ref.store.get(wanted) for ref in refs))
        return [(ref, record) for ref, records in zip(refs, found, strict=True) for record in records]

    async def get(self, ids: Sequence[str]) -> list[MemoryRecord]:
        """The records among ``ids`` in the order given, one per id.

        Of several copies of an id, this agent's own comes first, then the id's first holder
        (the oldest copy: a later row of another author under the same id never hides it),
        then the most local tier (a promoted memory is read as private).
        """
        best: dict[str, tuple[tuple[bool, float, int], MemoryRecord]] = {}
        for ref, record in await self.copies(ids):
            own = ref.scope is Scope.PRIVATE or record.agent_id == self.agent_id  # the private file is the agent's
            rank = (not own, record.created_at, ref.order)
            held = best.get(record.id)
            if held is None or rank < held[0]:
                best[record.id] = (rank, record)
        return [best[i][1] for i in dict.fromkeys(ids) if i in best]

    # ------------------------------------------------------------- maintenance
    async def health_check(self) -> TierHealth:
        """Every tier's health; usable while at least one tier is. Never raises."""
        refs = self.router.tiers
        healths = await asyncio.gather(*(ref.store.health_check() for ref in refs))
        down = [h.name for h in healths if not h.ok]
        ok = len(down) < len(healths)
        reason = None if not down else f"degraded tiers: {', '.join(down)}"
        detail = {
            "writable": "private" not in down,  # a private write fails while the private tier is down
            "tiers": {h.name: {"ok": h.ok, "reason": h.reason, **dict(h.detail)} for h in healths},
            "promotion": "paused" if "global" in down else ("on" if self.router.has_global else "off"),
            "recent_degraded": [e.__dict__ for e in list(self.events)[-10:]],
        }
        return TierHealth(self.name, ok, reason, detail)

    async def prune(self, policy: PrunePolicy) -> PruneReport:
        """Prune every tier that can (read-only ones are skipped), past the resilience wrappers.

        Failures propagate: a destructive operation that half-failed must be seen. The report
        merges the tiers' (ids once each, counts summed).
        """
        self._check_open()
        reports: list[PruneReport] = []
        for ref in self.router.tiers:
            inner = ref.store.inner
            if isinstance(inner, PrunableStore) and not _read_only(inner):
                reports.append(await inner.prune(policy))
        ids = tuple(dict.fromkeys(i for r in reports for i in r.ids))
        return PruneReport(
            policy.action,
            ids,
            sum(r.below_importance for r in reports),
            sum(r.over_cap for r in reports),
            policy.dry_run,
        )

    async def aclose(self) -> None:
        """Close each tier's store once (idempotent)."""
        if self._closed:
            return
        self._closed = True
        seen: set[int] = set()
        for ref in self.router.tiers:
            inner = ref.store.inner
            if id(inner) in seen:
                continue
            seen.add(id(inner))
            try:
                await inner.aclose()
            except Exception:
                log.exception("closing the %s tier failed", ref.name)

    @property
    def closed(self) -> bool:
        """Whether :meth:`aclose` ran."""
        return self._closed
