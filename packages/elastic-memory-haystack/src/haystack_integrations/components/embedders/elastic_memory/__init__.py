"""Haystack embedders over elastic-memory's built-in offline model (one per process) or any core Embedder."""

from ._model import builtin_embedder
from .document_embedder import ElasticMemoryDocumentEmbedder
from .text_embedder import ElasticMemoryTextEmbedder

__all__ = ["ElasticMemoryDocumentEmbedder", "ElasticMemoryTextEmbedder", "builtin_embedder"]
