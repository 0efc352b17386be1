"""Embedders: the port (:class:`Embedder`), the built-in offline model, and the gateway."""

from .base import Embedder, check_embedder, unit_vectors
from .builtin import FastEmbedEmbedder, MiniLMEmbedder, shared_builtin
from .gateway import resolve

__all__ = [
    "Embedder",
    "FastEmbedEmbedder",
    "MiniLMEmbedder",
    "check_embedder",
    "resolve",
    "shared_builtin",
    "unit_vectors",
]
