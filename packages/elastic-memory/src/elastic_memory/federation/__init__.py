"""The federation of memory tiers: private, shared pools, global, presented as one store.

Most users call :meth:`Memory.for_agent`; the pieces are here for wiring tiers by hand:
the store protocol (:class:`MemoryStore`, :class:`Entry`), one store as a tier
(:class:`CoreStore`), the pure routing policy (:class:`MemoryRouter`), the resilience wrapper
(:class:`ResilientTier`) and :class:`MemoryFederation` itself.
"""

from .assembly import PoolConfig, build_federation
from .config import MemorySettings, load_budgets, load_settings
from .core_store import CoreStore
from .federation import MemoryFederation
from .protocol import Entry, MemoryStore, PrunableStore, TierHealth
from .resilience import BreakerState, CircuitBreaker, DegradedEvent, ResilientTier, TierBudget
from .router import DecayProfile, MemoryRouter, MemoryWeights, TierRef, tier_name

#: The former name of :class:`CoreStore`, kept for compatibility.
SQLiteMemoryStore = CoreStore

__all__ = [
    "BreakerState",
    "CircuitBreaker",
    "CoreStore",
    "DecayProfile",
    "DegradedEvent",
    "Entry",
    "MemoryFederation",
    "MemoryRouter",
    "MemorySettings",
    "MemoryStore",
    "MemoryWeights",
    "PoolConfig",
    "PrunableStore",
    "ResilientTier",
    "SQLiteMemoryStore",
    "TierBudget",
    "TierHealth",
    "TierRef",
    "build_federation",
    "load_budgets",
    "load_settings",
    "tier_name",
]
