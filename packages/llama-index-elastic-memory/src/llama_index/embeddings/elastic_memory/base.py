"""A LlamaIndex embedding model (:class:`BaseEmbedding`) over elastic-memory's built-in offline model.

LlamaIndex embeds with ``Settings.embed_model`` unless told otherwise, and its default is
OpenAI's hosted model: ``VectorStoreIndex.from_documents(...)`` without ``embed_model=`` needs
``llama-index-embeddings-openai`` and an API key. :class:`ElasticMemoryEmbedding` is the
model the core ships instead (all-MiniLM-L6-v2, int8, 384 dimensions, offline: nothing is
downloaded), or any core :class:`~elastic_memory.Embedder` you pass:

>>> from elastic_memory.testing import FakeEmbedder
>>> embed_model = ElasticMemoryEmbedding(embedder=FakeEmbedder())
>>> len(embed_model.get_text_embedding("The cat sat on the mat."))
16
>>> embed_model.model_name
'fake-hash'

Every :class:`ElasticMemoryEmbedding()` built without ``embedder=`` shares one built-in model
per process (:func:`shared_embedder`), loaded on first use; so do the package's stores opened
with ``path=`` and the default ``embedder="auto"``: one model in memory, however many indexes,
chat engines and stores a process builds. The model is never set globally on import; to make
it LlamaIndex's default, say so once: ``Settings.embed_model = ElasticMemoryEmbedding()``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding, Embedding
from llama_index.core.bridge.pydantic import Field, PrivateAttr

from elastic_memory import Embedder, MiniLMEmbedder, UsageError
from elastic_memory.embedders import check_embedder, shared_builtin

__all__ = ["DEFAULT_BATCH_SIZE", "ElasticMemoryEmbedding", "core_choice", "shared_embedder"]

#: Texts per call to the model: the built-in model batches by length within a token budget itself.
DEFAULT_BATCH_SIZE = 64


def shared_embedder() -> MiniLMEmbedder:
    """The process's built-in model (one instance, loaded on first use, shared by every user).

    >>> shared_embedder() is shared_embedder()
    True
    """
    return shared_builtin()


def core_choice(embedder: Any) -> Any:
    """``embedder`` as ``Memory.open`` takes it, ``"auto"`` being the process's shared built-in model.

    >>> core_choice("auto") is shared_embedder(), core_choice(None)
    (True, None)
    """
    return shared_embedder() if isinstance(embedder, str) and embedder == "auto" else embedder


def _rows(vectors: Any, count: int) -> list[list[float]]:
    """The embedder's output as LlamaIndex embeddings (lists of floats), one per text."""
    rows = [[float(x) for x in np.asarray(v, dtype=np.float64).ravel()] for v in vectors]
    if len(rows) != count:
        msg = f"the embedder returned {len(rows)} vectors for {count} texts"
        raise UsageError(msg)
    return rows


class ElasticMemoryEmbedding(BaseEmbedding):
    """elastic-memory's built-in offline model (or any core ``Embedder``) as a LlamaIndex embedding model.

    Args:
        embedder: A core :class:`~elastic_memory.Embedder` (``None``: the built-in
            all-MiniLM-L6-v2, shared per process, see :func:`shared_embedder`).
        **kwargs: ``BaseEmbedding`` fields (``embed_batch_size``, ``callback_manager``, ...);
            ``model_name`` is the embedder's ``model_id``.

    Queries go through the embedder's ``embed_query`` when it has one, texts through
    ``embed``; the async methods run them on a worker thread, so the event loop never waits
    for the model. Given to elastic-memory's vector store, memory or retriever as
    ``embed_model=``, the store uses the core embedder itself: the file is pinned to the
    model's own id, the same as a store opened with the core's default ``embedder="auto"``.
    """

    model_name: str = Field(default=MiniLMEmbedder.model_id, description="The model id the core pins files to.")
    embed_batch_size: int = Field(default=DEFAULT_BATCH_SIZE, gt=0, le=2048, description="Texts per model call.")

    _embedder: Embedder = PrivateAttr()

    def __init__(self, *, embedder: Embedder | None = None, **kwargs: Any) -> None:
        chosen: Embedder = shared_embedder() if embedder is None else check_embedder(embedder)
        given = kwargs.pop("model_name", None)
        if given is not None and given != chosen.model_id:
            msg = f"model_name is the embedder's model_id ({chosen.model_id!r}), got {given!r}"
            raise UsageError(msg)
        super().__init__(model_name=chosen.model_id, **kwargs)
        self._embedder = chosen

    @classmethod
    def class_name(cls) -> str:
        """The name LlamaIndex serialises the model under."""
        return "ElasticMemoryEmbedding"

    @property
    def embedder(self) -> Embedder:
        """The core embedder underneath."""
        return self._embedder

    @property
    def dimension(self) -> int:
        """The width of the vectors (known without loading the model)."""
        return self._embedder.dimension

    def _get_query_embedding(self, query: str) -> Embedding:
        embed_query = getattr(self._embedder, "embed_query", None)
        if callable(embed_query):
            return _rows([embed_query(query)], 1)[0]
        return _rows(self._embedder.embed([query]), 1)[0]

    def _get_text_embedding(self, text: str) -> Embedding:
        return _rows(self._embedder.embed([text]), 1)[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return _rows(self._embedder.embed(list(texts)), len(texts)) if texts else []

    async def _aget_query_embedding(self, query: str) -> Embedding:
        return await asyncio.to_thread(self._get_query_embedding, query)

    async def _aget_text_embedding(self, text: str) -> Embedding:
        return await asyncio.to_thread(self._get_text_embedding, text)

    async def _aget_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return await asyncio.to_thread(self._get_text_embeddings, texts)
