"""The host protocol: what the memory loop uses of the core it serves.

The loop attaches to a core (:class:`~elastic_memory.core.MemoryCore`, a user's
:class:`~elastic_memory.user_core.UserCore`) through these members alone: the store, who it
writes for, recall and a few writes, and the embedder its jobs and plans use.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from ..config import RecallConfig
from ..embedders import Embedder
from ..storage.backend import Backend, EmbeddingPin
from ..types import Hit, MemoryId, MemoryRecord

__all__ = ["F32", "LoopHost"]

F32 = npt.NDArray[np.float32]


class LoopHost(Protocol):
    """The core's members the loop calls back."""

    @property
    def agent_id(self) -> str:
        """The owner the loop reads and writes for (an agent, or an agent's user)."""

    @property
    def store(self) -> Backend:
        """The store the core and the loop share."""

    @property
    def root(self) -> LoopHost:
        """The agent's own core (a user's handle returns its agent's)."""

    @property
    def recall_config(self) -> RecallConfig:
        """The recall settings (the graph nudge reads ``graph_boost``)."""

    @property
    def recall_hook(self) -> Callable[[str, int, str], Awaitable[list[Hit]]] | None:
        """Set by a federation: the plan's relevance recall goes through it."""

    @property
    def embeds(self) -> bool:
        """Whether an embedder is configured."""

    @property
    def loading(self) -> bool:
        """Whether the model started at open is still loading."""

    @property
    def configured_embedder(self) -> Embedder | None:
        """The embedder in use, or else the first one configured."""

    @property
    def embedder_problem(self) -> str | None:
        """Why no configured embedder could be used, when none could."""

    async def embedder(self, *, quiet: bool = False) -> Embedder | None:
        """The embedder the store may use now."""

    def background_embedder(self, embedder: Embedder) -> Embedder:
        """The embedder background jobs use."""

    async def embed_texts(self, embedder: Embedder, texts: Sequence[str]) -> F32:
        """``texts`` embedded as checked unit vectors."""

    def pin_for(self, embedder: Embedder) -> EmbeddingPin:
        """The pin a store records for ``embedder``'s vectors."""

    async def recall(
        self, query: str, *, k: int, mode: str = "hybrid", filters: Mapping[str, Any] | None = None, touch: bool
    ) -> list[Hit]:
        """Recall memories."""

    async def remember(self, content: Any, **fields: Any) -> MemoryId:
        """Store one memory."""

    async def get_many(self, ids: Sequence[str]) -> list[MemoryRecord]:
        """The memories that exist among ``ids``."""

    async def archive(self, ids: Sequence[str]) -> int:
        """Hide memories from recall."""

    async def set_metadata_key(self, ids: Sequence[str], key: str, value: str | None) -> int:
        """Set (``None``: remove) one metadata key of stored memories."""
