"""MemoryRouter: which tiers a write goes to, which a read asks, and how merged hits rank. No I/O.

>>> from elastic_memory.federation.protocol import Entry
>>> router = MemoryRouter(private="P", global_="G", pools={"team": "T"})
>>> [t.name for t in router.tiers]
['private', 'shared:team', 'global']
>>> entry = Entry.create("Prod runs PostgreSQL 16.", importance=0.95, now=0.0, default_agent="ana")
>>> [(t.name, e.scope.value) for t, e in router.route_write(entry)]
[('private', 'private'), ('global', 'global')]
>>> [t.name for t in router.route_read("shared")]
['shared:team']
"""

from __future__ import annotations

import enum
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar

from .._validate import check_text
from ..errors import RoutingError, UsageError
from ..forgetting import HALF_LIVES, retention
from ..retrieval import scores
from ..types import Hit, MemoryType, RecallMode, Scope
from .protocol import Entry

__all__ = ["DecayProfile", "MemoryRouter", "MemoryWeights", "TierRef", "tier_name"]

S = TypeVar("S")
E = TypeVar("E", bound=enum.Enum)

#: Importance at or above which a private write is also copied to the global tier.
PROMOTE_AT = 0.9
#: Retention below which an unpinned memory has decayed out of federated reads
#: (the same floor the forgetting sweep archives chunks below).
CONSOLIDATE_BELOW = 0.01


def _enum(name: str, value: Any, kind: type[E]) -> E:
    try:
        return kind(value)
    except ValueError:
        msg = f"{name} must be one of {[m.value for m in kind]}, got {value!r}"
        raise UsageError(msg) from None


def tier_name(scope: Scope | str, pool: str | None = None) -> str:
    """The tier's name: ``"private"``, ``"shared:<pool>"`` or ``"global"``."""
    s = _enum("scope", scope, Scope)
    return f"shared:{pool}" if s is Scope.SHARED else s.value


def _unit(owner: str, name: str, value: Any, *, positive: bool = False) -> float:
    ok = not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)
    if not ok or value < 0 or (positive and value == 0) or (not positive and value > 1):
        want = "a positive finite number" if positive else "a number in [0, 1]"
        msg = f"{owner}.{name} must be {want}, got {value!r}"
        raise UsageError(msg)
    return float(value)


@dataclass(frozen=True, kw_only=True)
class MemoryWeights:
    """An agent's preference per memory type, each in [0, 1]; 0.5 everywhere is neutral.

    In listing (no query) the router's score is multiplied by the weight; with a query the
    relevance is scaled by ``weight / 0.5``, so neutral weights leave relevance untouched.
    """

    episodic: float = 0.5
    semantic: float = 0.5
    procedural: float = 0.5

    def __post_init__(self) -> None:
        for t in MemoryType:
            _unit("MemoryWeights", t.value, getattr(self, t.value))

    def for_type(self, memory_type: MemoryType | str) -> float:
        """The weight of ``memory_type``."""
        return float(getattr(self, MemoryType(memory_type).value))


@dataclass(frozen=True, kw_only=True)
class DecayProfile:
    """Half-lives in seconds per memory type, and the retention below which a memory drops out.

    Episodic memories fade in days, semantic ones in months, procedural ones in a year
    (the forgetting sweep's half-lives). A memory's half-life also grows with its importance.
    """

    episodic: float = HALF_LIVES["episodic"]
    semantic: float = HALF_LIVES["semantic"]
    procedural: float = HALF_LIVES["procedural"]
    consolidate_below: float = CONSOLIDATE_BELOW

    def __post_init__(self) -> None:
        for t in MemoryType:
            _unit("DecayProfile", t.value, getattr(self, t.value), positive=True)
        _unit("DecayProfile", "consolidate_below", self.consolidate_below)

    def half_life(self, memory_type: MemoryType | str) -> float:
        """The half-life of ``memory_type`` in seconds."""
        return float(getattr(self, MemoryType(memory_type).value))


@dataclass(frozen=True)
class TierRef(Generic[S]):
    """One registered tier: its name, scope, pool and store, and its place in read order."""

    name: str
    scope: Scope
    pool: str | None
    store: S
    order: int = field(default=0, compare=False)


@dataclass(frozen=True)
class _Scored:
    hit: Hit
    tier: TierRef[Any]
    retention: float
    rank: float


class MemoryRouter(Generic[S]):
    """Routing policy over a private tier, named shared pools and an optional global tier.

    Pure: it holds the stores but never calls them. ``clock`` (seconds since the epoch)
    dates the decay; ``promote_at`` is the importance from which a private write is also
    copied to the global tier.
    """

    def __init__(
        self,
        *,
        private: S,
        global_: S | None = None,
        pools: Mapping[str, S] | None = None,
        weights: MemoryWeights | None = None,
        decay: DecayProfile | None = None,
        clock: Callable[[], float] = time.time,
        promote_at: float = PROMOTE_AT,
    ) -> None:
        if private is None:
            msg = "a federation needs a private tier: pass private=<store>"
            raise UsageError(msg)
        self.check_options(weights, decay, clock)
        self.weights = weights or MemoryWeights()
        self.decay = decay or DecayProfile()
        self.promote_at = _unit("MemoryRouter", "promote_at", promote_at)
        self._clock = clock
        self._private: TierRef[S] = TierRef("private", Scope.PRIVATE, None, private)
        self._global: TierRef[S] | None = None if global_ is None else TierRef("global", Scope.GLOBAL, None, global_)
        self._pools: dict[str, TierRef[S]] = {}
        for name, store in (pools or {}).items():
            self.add_pool(name, store)

    # ----------------------------------------------------------------- registry
    @staticmethod
    def check_options(weights: Any, decay: Any, clock: Any) -> None:
        """Validate the router's ``weights``, ``decay`` and ``clock`` (a federation does before it opens a tier)."""
        if weights is not None and not isinstance(weights, MemoryWeights):
            msg = f"weights must be a MemoryWeights, got {type(weights).__name__}"
            raise UsageError(msg)
        if decay is not None and not isinstance(decay, DecayProfile):
            msg = f"decay must be a DecayProfile, got {type(decay).__name__}"
            raise UsageError(msg)
        if not callable(clock):
            msg = f"clock must be a callable returning seconds since the epoch, got {clock!r}"
            raise UsageError(msg)

    @staticmethod
    def check_pool_name(name: Any) -> str:
        """``name`` if it is a usable pool name (what a shared memory's ``pool`` holds)."""
        if not isinstance(name, str) or not name.strip() or len(name) > 256 or any(ord(c) < 32 for c in name):
            msg = f"a pool name must be a non-empty printable string of at most 256 characters, got {name!r}"
            raise UsageError(msg)
        return check_text(name, "a pool name")

    def add_pool(self, name: str, store: S) -> None:
        """Register (or replace) the store serving the shared pool ``name``."""
        self._pools[self.check_pool_name(name)] = TierRef(tier_name(Scope.SHARED, name), Scope.SHARED, name, store)

    def remove_pool(self, name: str) -> S | None:
        """Unregister the pool ``name``; returns its store (``None`` if it was not registered).

        Reads already fanned out finish; later writes and named reads of the pool are
        routing errors. Closing the store is the caller's business.
        """
        ref = self._pools.pop(name, None)
        return None if ref is None else ref.store

    def set_global(self, store: S | None) -> None:
        """Register (or, with ``None``, drop) the global tier's store."""
        self._global = None if store is None else TierRef("global", Scope.GLOBAL, None, store)

    def replace_store(self, tier: str, store: S) -> None:
        """Swap the store behind the tier named ``tier`` (used to wrap stores for resilience)."""
        if tier == "private":
            self._private = replace(self._private, store=store)
        elif tier == "global" and self._global is not None:
            self._global = replace(self._global, store=store)
        elif tier.startswith("shared:") and tier[7:] in self._pools:
            self._pools[tier[7:]] = replace(self._pools[tier[7:]], store=store)
        else:
            msg = f"no tier named {tier!r}; tiers are {[t.name for t in self.tiers]}"
            raise RoutingError(msg)

    @property
    def pools(self) -> tuple[str, ...]:
        """The registered pool names, in registration order."""
        return tuple(self._pools)

    @property
    def has_global(self) -> bool:
        """Whether a global tier is registered."""
        return self._global is not None

    @property
    def tiers(self) -> list[TierRef[S]]:
        """Every tier in read order: private, the pools, global (``order`` numbers them)."""
        refs = [self._private, *self._pools.values(), *([self._global] if self._global else [])]
        return [replace(ref, order=i) for i, ref in enumerate(refs)]

    def tier(self, name: str) -> TierRef[S]:
        """The tier called ``name``.

        Raises:
            RoutingError: No such tier.
        """
        for ref in self.tiers:
            if ref.name == name:
                return ref
        msg = f"no tier named {name!r}; tiers are {[t.name for t in self.tiers]}"
        raise RoutingError(msg)

    # ------------------------------------------------------------------ routing
    def route_write(self, entry: Entry) -> list[tuple[TierRef[S], Entry]]:
        """The tiers ``entry`` is written to, each with the entry to write there.

        PRIVATE goes to the private tier, and, from ``promote_at`` importance with a global
        tier registered, also to the global tier as a copy with scope GLOBAL and the same
        id (listed second). SHARED goes to the pool it names; GLOBAL to the global tier.

        Raises:
            RoutingError: A shared entry names no registered pool, or a global entry has no global tier.
        """
        tiers = {t.name: t for t in self.tiers}
        if entry.scope is Scope.PRIVATE:
            out = [(tiers["private"], entry)]
            if self._global is not None and entry.importance >= self.promote_at:
                out.append((tiers["global"], entry.rescoped(Scope.GLOBAL)))
            return out
        if entry.scope is Scope.SHARED:
            ref = tiers.get(tier_name(Scope.SHARED, entry.pool)) if entry.pool in self._pools else None
            if ref is None:
                msg = (
                    f"no shared pool named {entry.pool!r} in this federation (pools: {list(self._pools)}); "
                    "register it with pools=[...] or write to another scope"
                )
                raise RoutingError(msg)
            return [(ref, entry)]
        if self._global is None:
            msg = "this federation has no global tier (it is built only with an embedder); write to 'private' or a pool"
            raise RoutingError(msg)
        return [(tiers["global"], entry)]

    def route_read(
        self, scope: Scope | str | Iterable[Scope | str] | None = None, pool: str | Iterable[str] | None = None
    ) -> list[TierRef[S]]:
        """The tiers a read asks, in read order (private, pools, global).

        No ``scope`` means every tier. ``"shared"`` without ``pool`` means every pool. A
        scope without a registered tier (no global tier) is skipped: reads degrade.

        Raises:
            RoutingError: ``pool`` names a pool that is not registered (a caller error).
            UsageError: ``scope`` is not ``"private"``, ``"shared"`` or ``"global"``.
        """
        given = None if scope is None else ([scope] if isinstance(scope, str | Scope) else scope)
        scopes = None if given is None else {_enum("scope", s, Scope) for s in given}
        pools = None if pool is None else ([pool] if isinstance(pool, str) else list(pool))
        for name in pools or ():
            if name not in self._pools:
                msg = f"no shared pool named {name!r} in this federation (pools: {list(self._pools)})"
                raise RoutingError(msg)
        out = []
        for ref in self.tiers:
            if scopes is not None and ref.scope not in scopes:
                continue
            if pools is not None and ref.scope is Scope.SHARED and ref.pool not in pools:
                continue
            if pools is not None and ref.scope is not Scope.SHARED and scopes is None:
                continue  # a pool named without a scope reads that pool only
            out.append(ref)
        return out

    # ------------------------------------------------------------------ ranking
    def retention_of(self, hit: Hit, now: float | None = None) -> float:
        """How much of ``hit`` is retained now (1.0 when pinned): the decay the router ranks with.

        Counted from the last access; recalls make a memory stronger (its ``retention_strength``),
        so what is used fades slower, as in the forgetting sweep.
        """
        if hit.pinned:
            return 1.0
        now = self._clock() if now is None else now
        last = hit.accessed_at if hit.accessed_at is not None else hit.created_at
        strength = hit.retention_strength if hit.retention_strength is not None else 1.0
        return retention(
            age_seconds=now - last,
            importance=hit.importance,
            strength=strength,
            half_life_seconds=self.decay.half_life(hit.type),
        )

    def score(self, hit: Hit, now: float | None = None) -> float:
        """The router's score: decayed effective importance x the agent's weight for the type."""
        return hit.importance * self.retention_of(hit, now) * self.weights.for_type(hit.type)

    def rank(
        self,
        candidates: Sequence[tuple[TierRef[Any], Hit]],
        *,
        query: str,
        k: int,
        mode: RecallMode | str = RecallMode.HYBRID,
        vector_weight: float = 0.5,
        owner: str | None = None,
    ) -> list[Hit]:
        """Merge per-tier hits: dedupe by id and author, drop the decayed, order, truncate to ``k``.

        The copy from the most local tier wins a duplicate id of one author (a promoted memory is
        shown once); rows of different authors under one id are all kept. ``owner`` (the agent whose
        private tier this is) authors every private row, whatever its ``agent_id`` says. Unpinned memories whose
        retention fell below ``decay.consolidate_below`` drop out. Without query text the
        order is pinned first, then :meth:`score`, then newest. With text it is relevance
        (scaled by the type weight), then :meth:`score`, then newest; relevance is the
        tier's own score when one tier served every hit, else each hit's absolute
        :attr:`~elastic_memory.Hit.relevance` as its tier computed it (the same [0, 1] scale
        in every tier), or, for a hit without one, the relevance of its BM25 and cosine
        (``scores.hybrid``: ``vector_weight`` for hybrid, 1 for semantic, 0 for keyword). Every hit carries ``tier``
        and, after such a re-fusion, that relevance as its ``score``.
        """
        now = self._clock()
        best: dict[tuple[str, str, str | None], tuple[TierRef[Any], Hit]] = {}
        for ref, hit in candidates:
            author = owner if owner is not None and ref.scope is Scope.PRIVATE else hit.agent_id
            key = (hit.id, author, hit.user_id)  # one row per author: nobody's row hides another's
            held = best.get(key)
            if held is None or ref.order < held[0].order:
                best[key] = (ref, hit)
        kept = []
        for ref, hit in best.values():
            kept_retention = self.retention_of(hit, now)
            if kept_retention < self.decay.consolidate_below:
                continue
            kept.append(_Scored(replace(hit, tier=ref.name), ref, kept_retention, hit.importance * kept_retention))
        if not query.strip():
            kept.sort(key=lambda s: (not s.hit.pinned, -s.rank * self.weights.for_type(s.hit.type), -s.hit.created_at))
            return [s.hit for s in kept[:k]]
        relevance = self._relevance(kept, _enum("mode", mode, RecallMode), vector_weight)
        order = sorted(
            range(len(kept)),
            key=lambda i: (
                -relevance[i] * self.weights.for_type(kept[i].hit.type) / 0.5,
                -kept[i].rank * self.weights.for_type(kept[i].hit.type),
                -kept[i].hit.created_at,
            ),
        )
        if len({s.tier.name for s in kept}) <= 1:
            return [kept[i].hit for i in order[:k]]
        return [replace(kept[i].hit, score=relevance[i], relevance=relevance[i]) for i in order[:k]]

    @staticmethod
    def _relevance(kept: Sequence[_Scored], mode: RecallMode, vector_weight: float) -> list[float]:
        if len({s.tier.name for s in kept}) <= 1:
            return [s.hit.score for s in kept]
        weight = {RecallMode.HYBRID: vector_weight, RecallMode.SEMANTIC: 1.0, RecallMode.KEYWORD: 0.0}[mode]
        return [
            s.hit.relevance
            if s.hit.relevance is not None
            else scores.hybrid(s.hit.keyword_score, s.hit.vector_score, vector_weight=weight)
            for s in kept
        ]
