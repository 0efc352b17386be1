"""MemoryOps: the operations the facades call, over one store or a federation.

:class:`~elastic_memory.core.MemoryCore` implements it for one store and
:class:`~elastic_memory.federation.ops.FederatedOps` for a federation, so
:class:`~elastic_memory.AsyncMemory` and :class:`~elastic_memory.Memory` never ask which one
they hold. Arguments arrive as the caller passed them (each implementation validates them);
the facades document them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

from ..types import Explanation, Hit, MemoryId, MemoryRecord, PrunePolicy, PruneReport

if TYPE_CHECKING:
    from ..core import MemoryCore
    from ..federation.federation import MemoryFederation

__all__ = ["MemoryOps"]


class MemoryOps(Protocol):
    """One store's or one federation's operations; every method is a coroutine of the library loop."""

    @property
    def core(self) -> MemoryCore:
        """The private store's core: the memory loop, the embedder, the clock."""

    @property
    def federation(self) -> MemoryFederation | None:
        """The federation underneath, or ``None`` for one store."""

    async def close(self) -> None:
        """Close everything (idempotent)."""

    async def remember(self, content: Any, *, dedupe: bool = True, **fields: Any) -> MemoryId:
        """Store one memory."""

    async def remember_many(self, items: Iterable[Any], *, dedupe: bool = True, vectors: Any = None) -> list[MemoryId]:
        """Store many memories."""

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
        """The best memories for ``query``."""

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
        """Recall, and how it was made."""

    async def get(self, id: Any) -> MemoryRecord | None:
        """One memory, or ``None``."""

    async def get_many(self, ids: Any) -> list[MemoryRecord]:
        """The memories that exist among ``ids``."""

    async def update(self, id: Any, **changes: Any) -> MemoryRecord:
        """Change a live memory."""

    async def forget(self, ids: Any, *, hard: bool = False) -> int:
        """Soft- or hard-delete."""

    async def restore(self, ids: Any) -> int:
        """Undo a soft delete."""

    async def archive(self, ids: Any, *, archived: bool = True) -> int:
        """Hide or unhide."""

    async def purge(self, older_than: float = 0.0, *, ids: Any = None) -> int:
        """Erase old soft-deleted or expired memories (only ``ids``, if given)."""

    async def prune(self, policy: PrunePolicy | None = None, **fields: Any) -> PruneReport:
        """Archive or purge by a policy."""

    async def stats(self) -> dict[str, Any]:
        """Counts and facts about the store."""

    async def load_index(self) -> str:
        """Load the vector index now."""

    async def tags(self, *, filters: Any = None, prefix: Any = None) -> dict[str, int]:
        """Tag counts."""

    async def generation(self) -> int | None:
        """The store's write counter, or ``None``."""

    async def vectors(self, ids: Any) -> dict[str, list[float]]:
        """Stored vectors by id."""

    async def health(self) -> dict[str, Any]:
        """The loop's (and the federation's) state."""
