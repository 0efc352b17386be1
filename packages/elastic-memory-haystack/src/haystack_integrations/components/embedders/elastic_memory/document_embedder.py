"""A Haystack document embedder over the core's built-in offline model (or any elastic-memory Embedder).

>>> from haystack import Document
>>> from elastic_memory.testing import FakeEmbedder
>>> embedder = ElasticMemoryDocumentEmbedder(embedder=FakeEmbedder(), meta_fields_to_embed=["title"])
>>> [doc] = embedder.run([Document(content="Biscuit is a dog.", meta={"title": "Pets"})])["documents"]
>>> len(doc.embedding)
16
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from haystack import Document, component, default_from_dict, default_to_dict

from elastic_memory import Embedder, UsageError

from ._model import builtin_embedder, class_path, embed, embedder_from, load

__all__ = ["ElasticMemoryDocumentEmbedder"]


@component
class ElasticMemoryDocumentEmbedder:
    """Embed documents: ``run(documents)`` returns them with ``embedding`` set, in order.

    The text embedded is ``prefix + separator.join(meta values of meta_fields_to_embed +
    [content]) + suffix``, as Haystack's document embedders build it. Without ``embedder=``
    it runs the core's built-in model (all-MiniLM-L6-v2 int8, 384 dimensions, offline), one
    instance per process shared by every component; ``embedder=`` takes any elastic-memory
    ``Embedder``. The input documents are not changed: new ones come back.
    ``batch_size`` texts go to the model at a time.
    """

    def __init__(
        self,
        *,
        embedder: Embedder | str | None = None,
        prefix: str = "",
        suffix: str = "",
        batch_size: int = 64,
        meta_fields_to_embed: list[str] | None = None,
        embedding_separator: str = "\n",
    ) -> None:
        for name, value in (("prefix", prefix), ("suffix", suffix), ("embedding_separator", embedding_separator)):
            if not isinstance(value, str):
                msg = f"{name} must be a string, got {value!r}"
                raise UsageError(msg)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            msg = f"batch_size must be a positive integer, got {batch_size!r}"
            raise UsageError(msg)
        fields = list(meta_fields_to_embed or [])
        if not all(isinstance(f, str) for f in fields):
            msg = f"meta_fields_to_embed must be a list of strings, got {meta_fields_to_embed!r}"
            raise UsageError(msg)
        self.embedder = embedder_from(embedder)
        self.prefix = prefix
        self.suffix = suffix
        self.batch_size = batch_size
        self.meta_fields_to_embed = fields
        self.embedding_separator = embedding_separator

    @property
    def model_id(self) -> str:
        """The model's id (what a store pins)."""
        return (self.embedder or builtin_embedder()).model_id

    def warm_up(self) -> None:
        """Load the model now rather than on the first run."""
        load(self.embedder)

    def to_dict(self) -> dict[str, Any]:
        """Serialise: the model (``"builtin"`` or an Embedder's class) and the text settings."""
        return default_to_dict(
            self,
            embedder=class_path(self.embedder),
            prefix=self.prefix,
            suffix=self.suffix,
            batch_size=self.batch_size,
            meta_fields_to_embed=self.meta_fields_to_embed,
            embedding_separator=self.embedding_separator,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ElasticMemoryDocumentEmbedder:
        """Rebuild from :meth:`to_dict`."""
        embedder: ElasticMemoryDocumentEmbedder = default_from_dict(cls, data)
        return embedder

    def _text(self, doc: Document) -> str:
        values = [str(doc.meta[k]) for k in self.meta_fields_to_embed if doc.meta.get(k) is not None]
        return self.prefix + self.embedding_separator.join([*values, doc.content or ""]) + self.suffix

    def _embed(self, documents: Any) -> dict[str, Any]:
        if not isinstance(documents, list) or any(not isinstance(d, Document) for d in documents):
            msg = (
                "ElasticMemoryDocumentEmbedder expects a list of Documents as input; "
                "to embed a string use ElasticMemoryTextEmbedder"
            )
            raise TypeError(msg)
        texts = [self._text(d) for d in documents]
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            vectors += embed(self.embedder, texts[start : start + self.batch_size])
        out = [replace(d, embedding=v) for d, v in zip(documents, vectors, strict=True)]
        return {"documents": out, "meta": {"model": self.model_id}}

    @component.output_types(documents=list[Document], meta=dict[str, Any])
    def run(self, documents: list[Document]) -> dict[str, Any]:
        """The documents with their embeddings (new Document objects, same ids)."""
        return self._embed(documents)

    @component.output_types(documents=list[Document], meta=dict[str, Any])
    async def run_async(self, documents: list[Document]) -> dict[str, Any]:
        """:meth:`run` on a worker thread (the model is CPU-bound)."""
        return await asyncio.to_thread(self._embed, documents)
