"""Copy a Markdown folder into a store (what ``elastic-memory ingest`` does), from Python.

>>> from elastic_memory.ingest import IngestReport, ingest_folder
"""

from .connectors.ingest import IngestReport, ingest_folder

__all__ = ["IngestReport", "ingest_folder"]
