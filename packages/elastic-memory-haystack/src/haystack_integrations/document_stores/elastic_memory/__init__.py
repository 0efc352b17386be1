"""Haystack document store over elastic-memory: ``ElasticMemoryDocumentStore``."""

from .document_store import DEFAULT_COLLECTION, DOCUMENT_TAG, ElasticMemoryDocumentStore

__all__ = ["DEFAULT_COLLECTION", "DOCUMENT_TAG", "ElasticMemoryDocumentStore"]
