"""A LlamaIndex retriever over everything an elastic-memory store holds.

Unlike the vector store (one collection of nodes), the retriever recalls any memory (notes,
conversation turns, summaries, lessons) that ``filters`` admit, keyword, semantic or hybrid,
and says where each came from in the node's metadata.

>>> from elastic_memory import Memory
>>> from elastic_memory.testing import FakeEmbedder
>>> mem = Memory.open(":memory:", embedder=FakeEmbedder())
>>> _ = mem.remember("The user prefers metric units.", metadata={"from": "onboarding"})
>>> [hit] = ElasticMemoryRetriever(memory=mem, similarity_top_k=1, mode="keyword").retrieve("metric units")
>>> hit.node.get_content(), hit.node.metadata["type"], hit.node.metadata["metadata"]
('The user prefers metric units.', 'semantic', {'from': 'onboarding'})
>>> mem.close()
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.callbacks.base import CallbackManager
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from elastic_memory import AsyncMemory, Filters, Hit, Memory, UsageError
from elastic_memory.adapters import Opened, StoreLifecycle, provenance
from llama_index.storage.chat_store.elastic_memory._users import open_for_user
from llama_index.vector_stores.elastic_memory._embedder import core_choice, core_embedder

__all__ = ["ElasticMemoryRetriever"]

_MODES = ("keyword", "semantic", "hybrid")


class ElasticMemoryRetriever(StoreLifecycle, BaseRetriever):
    """Recall from an elastic-memory store as LlamaIndex nodes, best first.

    Keyword-only ``path=`` (a database file or ``":memory:"``, opened with ``embed_model=`` or
    the core's built-in model) or ``memory=`` (an open ``Memory``/``AsyncMemory``, left open).
    ``similarity_top_k`` nodes come back, ranked by ``mode`` (``"keyword"``, ``"semantic"``,
    ``"hybrid"``); ``filters`` is the core's filter dict. Recalled memories count as accessed
    unless ``touch=False``. ``aretrieve`` runs on the core's ``AsyncMemory``.
    """

    _opened: Opened

    def __init__(
        self,
        *,
        path: str | Path | None = None,
        memory: Memory | AsyncMemory | None = None,
        embed_model: BaseEmbedding | None = None,
        similarity_top_k: int = 4,
        mode: str = "hybrid",
        filters: dict[str, Any] | None = None,
        touch: bool | None = None,
        callback_manager: CallbackManager | None = None,
        **options: Any,
    ) -> None:
        if mode not in _MODES:
            msg = f"mode must be one of {list(_MODES)}, got {mode!r}"
            raise UsageError(msg)
        if (
            isinstance(similarity_top_k, bool)
            or not isinstance(similarity_top_k, int)
            or not 1 <= similarity_top_k <= 1000
        ):
            msg = f"similarity_top_k must be an integer in [1, 1000], got {similarity_top_k!r}"
            raise UsageError(msg)
        Filters.parse(filters)  # a bad filter fails here, not at the first query
        super().__init__(callback_manager=callback_manager)
        embedder: Any = core_choice("auto") if embed_model is None or memory is not None else core_embedder(embed_model)
        arg = None if embed_model is None else "embed_model"
        self._opened = open_for_user(path, memory, None, embedder=embedder, embedder_arg=arg, **options)
        self.similarity_top_k = similarity_top_k
        self.mode = mode
        self.filters = filters
        self.touch = touch

    @staticmethod
    def _nodes(hits: list[Hit]) -> list[NodeWithScore]:
        out = []
        for h in hits:
            meta = provenance(h)
            # Provenance is for the application: the LLM and embedding views see the text only.
            node = TextNode(
                id_=h.id,
                text=h.content,
                metadata=meta,
                excluded_llm_metadata_keys=list(meta),
                excluded_embed_metadata_keys=list(meta),
            )
            out.append(NodeWithScore(node=node, score=h.score))
        return out

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        hits = self._opened.sync.recall(
            query_bundle.query_str, k=self.similarity_top_k, mode=self.mode, filters=self.filters, touch=self.touch
        )
        return self._nodes(hits)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        hits = await self._opened.aio.recall(
            query_bundle.query_str, k=self.similarity_top_k, mode=self.mode, filters=self.filters, touch=self.touch
        )
        return self._nodes(hits)
