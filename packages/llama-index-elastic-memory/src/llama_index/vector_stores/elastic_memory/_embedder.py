"""A LlamaIndex embedding model as an elastic-memory embedder (shared by the package's modules)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from llama_index.core.base.embeddings.base import BaseEmbedding

from elastic_memory import UsageError

__all__ = ["LlamaIndexEmbedder"]


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
