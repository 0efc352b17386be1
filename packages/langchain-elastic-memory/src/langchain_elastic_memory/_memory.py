"""Opening the core from an adapter's ``path=`` / ``memory=`` arguments, and LangChain embeddings as a core embedder."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from elastic_memory import AsyncMemory, Embedder, Memory, UsageError
from elastic_memory.adapters import Opened
from elastic_memory.adapters import aopen_memory as core_aopen
from elastic_memory.adapters import open_memory as core_open

from .embeddings import builtin_embedder

__all__ = ["LangChainEmbedder", "Opened", "aopen_memory", "open_memory"]


class LangChainEmbedder:
    """A LangChain :class:`~langchain_core.embeddings.Embeddings` as an elastic-memory embedder.

    Documents go through ``embed_documents``, queries through ``embed_query``. The width is
    measured once, on construction. ``model_id`` names the class and its settings, so a
    database pinned to one model refuses another (pass ``model_id`` to name it yourself).
    """

    def __init__(self, embeddings: Embeddings, *, model_id: str | None = None) -> None:
        if not isinstance(embeddings, Embeddings):
            msg = f"embedding must be a LangChain Embeddings, got {type(embeddings).__name__}"
            raise UsageError(msg)
        self.embeddings = embeddings
        self.model_id = model_id or _model_id(embeddings)
        self.family = self.model_id
        probe = embeddings.embed_query("dimension probe")
        self.dimension = len(probe)
        if self.dimension < 1:
            msg = f"{type(embeddings).__name__} returned an empty vector; it cannot be used for search"
            raise UsageError(msg)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Document vectors (``embed_documents``)."""
        return self.embeddings.embed_documents(list(texts))

    def embed_query(self, text: str) -> list[float]:
        """A query vector (``embed_query``)."""
        return self.embeddings.embed_query(text)


def _model_id(embeddings: Embeddings) -> str:
    name = type(embeddings).__name__
    settings: Any = {}
    dump = getattr(embeddings, "model_dump", None)
    if callable(dump):
        try:
            settings = dump()
        except Exception:  # noqa: BLE001 - settings are only a naming aid
            settings = {}
    model = next((str(settings[k]) for k in ("model", "model_name", "model_id") if settings.get(k)), None)
    if model:
        return f"langchain:{name}:{model}"
    digest = hashlib.sha256(repr(sorted((k, repr(v)) for k, v in settings.items())).encode()).hexdigest()[:12]
    return f"langchain:{name}:{digest}"


def _chosen(memory: Memory | AsyncMemory | None, embedding: Embeddings | None, embedder: Any) -> Any:
    """The core embedder to open with: LangChain's ``embedding``, else ``embedder`` (``"auto"``: the shared one)."""
    if embedding is not None and memory is None:
        return LangChainEmbedder(embedding)
    if isinstance(embedder, str) and embedder == "auto":
        return builtin_embedder()  # one loaded model per process, whatever the number of stores
    return embedder


def open_memory(
    path: str | Path | None,
    memory: Memory | AsyncMemory | None,
    *,
    embedding: Embeddings | None = None,
    embedder: Embedder | str | None = "auto",
    **options: Any,
) -> Opened:
    """The store an adapter works on (see :func:`elastic_memory.adapters.open_memory`).

    ``embedding`` (a LangChain Embeddings) wins over ``embedder`` (the core's, ``"auto"`` is
    the built-in offline model, one instance shared by the process, ``None`` keyword only).
    Exactly one of ``path``/``memory``.
    """
    chosen = _chosen(memory, embedding, embedder)
    return core_open(path, memory, embedder=chosen, embedder_arg=None if embedding is None else "embedding", **options)


async def aopen_memory(
    path: str | Path | None,
    memory: Memory | AsyncMemory | None,
    *,
    embedding: Embeddings | None = None,
    embedder: Embedder | str | None = "auto",
    **options: Any,
) -> Opened:
    """:func:`open_memory` for async code: a file is opened with ``AsyncMemory.open``, off the caller's loop."""
    chosen = _chosen(memory, embedding, embedder)
    return await core_aopen(
        path, memory, embedder=chosen, embedder_arg=None if embedding is None else "embedding", **options
    )
