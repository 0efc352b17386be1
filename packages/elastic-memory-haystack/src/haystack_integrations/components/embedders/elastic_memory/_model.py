"""The model the embedders share: the core's built-in offline MiniLM, loaded once per process, or any core Embedder."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from haystack.core.serialization import import_class_by_name

from elastic_memory import Embedder, MiniLMEmbedder, UsageError
from elastic_memory.embedders import check_embedder, shared_builtin

__all__ = ["BUILTIN", "builtin_embedder", "class_path", "embed", "embedder_from"]

#: What ``embedder=`` serialises as for the built-in model.
BUILTIN = "builtin"


def builtin_embedder() -> MiniLMEmbedder:
    """The process's one instance of the core's built-in model (all-MiniLM-L6-v2 int8, 384-d, offline).

    Every embedder component built without ``embedder=`` uses it, so the model loads once per
    process (on first use, or at ``warm_up()``).

    >>> builtin_embedder() is builtin_embedder()
    True
    """
    return shared_builtin()


def class_path(embedder: Embedder | None) -> str:
    """How a component serialises its model: ``"builtin"``, or the ``module.Class`` of an own Embedder."""
    if embedder is None:
        return BUILTIN
    cls = type(embedder)
    return f"{cls.__module__}.{cls.__qualname__}"


def embedder_from(spec: Embedder | str | None) -> Embedder | None:
    """The component's model (``None``: the shared built-in one).

    ``spec``: ``None`` or ``"builtin"``, an Embedder, or the ``module.Class`` path of an
    Embedder constructed without arguments (what ``from_dict`` gets back; its module must be on
    Haystack's deserialization allowlist, as every class a pipeline loads).
    """
    if spec is None or spec == BUILTIN:
        return None
    if isinstance(spec, str):
        try:
            cls: Any = import_class_by_name(spec)
        except ImportError as e:  # a module off the allowlist raises DeserializationError
            msg = f"embedder {spec!r} is not an importable class (module.Class): {e}"
            raise UsageError(msg) from e
        return check_embedder(cls())
    return check_embedder(spec)


def embed(embedder: Embedder | None, texts: Sequence[str]) -> list[list[float]]:
    """One vector per text (``[]`` for no texts), as lists of floats."""
    if not texts:
        return []
    model = embedder if embedder is not None else builtin_embedder()
    vectors = np.asarray(model.embed(list(texts)), dtype=np.float32)
    if vectors.shape != (len(texts), model.dimension):
        msg = f"{type(model).__name__}.embed returned shape {vectors.shape}, not ({len(texts)}, {model.dimension})"
        raise UsageError(msg)
    out: list[list[float]] = vectors.tolist()
    return out


def load(embedder: Embedder | None) -> None:
    """Load the model now (``warm_up``), when it loads lazily."""
    model: Any = embedder if embedder is not None else builtin_embedder()
    loader = getattr(model, "load", None)
    if callable(loader):
        loader()
