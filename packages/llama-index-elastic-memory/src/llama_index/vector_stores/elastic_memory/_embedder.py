"""A LlamaIndex embedding model as an elastic-memory embedder (shared by the package's modules).

:func:`core_embedder` is what every class of the package hands the core for ``embed_model=``,
and :func:`core_choice` what it hands it for ``embedder=``: the built-in model (``"auto"``)
is the process's one shared instance, so however many stores a process opens, the model is
loaded once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from llama_index.core.base.embeddings.base import BaseEmbedding

from elastic_memory import Embedder, UsageError
from llama_index.embeddings.elastic_memory.base import ElasticMemoryEmbedding, core_choice

__all__ = ["LlamaIndexEmbedder", "core_choice", "core_embedder"]


def core_embedder(embed_model: BaseEmbedding) -> Embedder:
    """The core embedder for a LlamaIndex model: an :class:`ElasticMemoryEmbedding`'s own, else a wrapper."""
    if isinstance(embed_model, ElasticMemoryEmbedding):
        return embed_model.embedder
    return LlamaIndexEmbedder(embed_model)


class LlamaIndexEmbedder:
    """A LlamaIndex :class:`BaseEmbedding` as an elastic-memory embedder.

    Documents go through ``get_text_embedding_batch``, queries through ``get_query_embedding``.
    The width is measured once, on construction. ``model_id`` is the model's class and name, so a
    database pinned to one model refuses another (pass ``model_id`` to name it yourself).
    """

    def __init__(self, embed_model: BaseEmbedding, *, model_id: str | None = None) -> None:
        if not isinstance(embed_model, BaseEmbedding):
            msg = f"embed_model must be a LlamaIndex BaseEmbedding, got {type(embed_model).__name__}"
            raise UsageError(msg)
        self.embed_model = embed_model
        name = getattr(embed_model, "model_name", "") or ""
        if not model_id:
            settings = repr(sorted((k, repr(v)) for k, v in embed_model.to_dict().items()))
            digest = hashlib.sha256(settings.encode()).hexdigest()[:12]
            model_id = f"llama_index:{embed_model.class_name()}:{name or digest}"
        self.model_id = model_id
        self.family = model_id
        self.dimension = len(embed_model.get_query_embedding("dimension probe"))
        if self.dimension < 1:
            msg = f"{type(embed_model).__name__} returned an empty vector; it cannot be used for search"
            raise UsageError(msg)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Document vectors."""
        return self.embed_model.get_text_embedding_batch(list(texts))

    def embed_query(self, text: str) -> list[float]:
        """A query vector."""
        return self.embed_model.get_query_embedding(text)
