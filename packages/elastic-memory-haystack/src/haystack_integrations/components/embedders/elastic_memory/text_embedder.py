"""A Haystack text embedder over the core's built-in offline model (or any elastic-memory Embedder).

>>> from elastic_memory.testing import FakeEmbedder
>>> embedder = ElasticMemoryTextEmbedder(embedder=FakeEmbedder())
>>> result = embedder.run("What is my dog called?")
>>> len(result["embedding"]), result["meta"]["model"]
(16, 'fake-hash')
"""

from __future__ import annotations

import asyncio
from typing import Any

from haystack import component, default_from_dict, default_to_dict

from elastic_memory import Embedder, UsageError

from ._model import builtin_embedder, class_path, embed, embedder_from, load

__all__ = ["ElasticMemoryTextEmbedder"]


@component
class ElasticMemoryTextEmbedder:
    """Embed a query string: ``run(text)`` returns ``{"embedding": [...], "meta": {"model": ...}}``.

    Without ``embedder=`` it runs the core's built-in model (all-MiniLM-L6-v2 int8, 384
    dimensions, offline: nothing is downloaded), one instance per process shared by every
    component. ``embedder=`` takes any elastic-memory ``Embedder`` (``to_dict`` records its
    class, which ``from_dict`` constructs without arguments). ``prefix`` and ``suffix`` wrap
    the text. Use the same model as the documents' (``ElasticMemoryDocumentEmbedder``).
    """

    def __init__(self, *, embedder: Embedder | str | None = None, prefix: str = "", suffix: str = "") -> None:
        for name, value in (("prefix", prefix), ("suffix", suffix)):
            if not isinstance(value, str):
                msg = f"{name} must be a string, got {value!r}"
                raise UsageError(msg)
        self.embedder = embedder_from(embedder)
        self.prefix = prefix
        self.suffix = suffix

    @property
    def model_id(self) -> str:
        """The model's id (what a store pins)."""
        return (self.embedder or builtin_embedder()).model_id

    def warm_up(self) -> None:
        """Load the model now rather than on the first run."""
        load(self.embedder)

    def to_dict(self) -> dict[str, Any]:
        """Serialise: the model (``"builtin"`` or an Embedder's class) and the prefix and suffix."""
        return default_to_dict(self, embedder=class_path(self.embedder), prefix=self.prefix, suffix=self.suffix)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ElasticMemoryTextEmbedder:
        """Rebuild from :meth:`to_dict`."""
        embedder: ElasticMemoryTextEmbedder = default_from_dict(cls, data)
        return embedder

    def _embed(self, text: Any) -> dict[str, Any]:
        if not isinstance(text, str):
            msg = (
                "ElasticMemoryTextEmbedder expects a string as input; "
                "to embed documents use ElasticMemoryDocumentEmbedder"
            )
            raise TypeError(msg)
        [vector] = embed(self.embedder, [self.prefix + text + self.suffix])
        return {"embedding": vector, "meta": {"model": self.model_id}}

    @component.output_types(embedding=list[float], meta=dict[str, Any])
    def run(self, text: str) -> dict[str, Any]:
        """The text's embedding (a unit vector with the built-in model)."""
        return self._embed(text)

    @component.output_types(embedding=list[float], meta=dict[str, Any])
    async def run_async(self, text: str) -> dict[str, Any]:
        """:meth:`run` on a worker thread (the model is CPU-bound)."""
        return await asyncio.to_thread(self._embed, text)
