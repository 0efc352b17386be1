"""Read-only memory sources outside a store: a folder of Markdown notes and its wikilinks.

:class:`FolderStore` (``folder.as_store()``) serves a folder through the async store protocol.

>>> import pathlib, tempfile
>>> from elastic_memory.connectors import MarkdownFolder, WikilinkEdgeExtractor
>>> with tempfile.TemporaryDirectory() as vault:
...     _ = (pathlib.Path(vault) / "Biscuit.md").write_text("My dog, a beagle. His vet: [[Vets/Okonkwo]].")
...     (pathlib.Path(vault) / "Vets").mkdir()
...     _ = (pathlib.Path(vault) / "Vets" / "Okonkwo.md").write_text("Dr. Okonkwo, Estrela clinic.")
...     folder = MarkdownFolder(vault)
...     hits = folder.search("beagle vet")
...     edges, report = WikilinkEdgeExtractor(folder).scan()
>>> [h.metadata["source_path"] for h in hits]
['Biscuit.md']
>>> edges[0].relation, edges[0].src_id == hits[0].id, report.resolved
('references', True, 1)
"""

from .markdown import NAMESPACE, FolderStore, MarkdownFolder, Note, ReadOnlyError, ScanReport, note_id
from .wikilinks import EdgeIndexReport, EdgeSink, Link, WikilinkEdgeExtractor, parse_links

__all__ = [
    "NAMESPACE",
    "EdgeIndexReport",
    "EdgeSink",
    "FolderStore",
    "Link",
    "MarkdownFolder",
    "Note",
    "ReadOnlyError",
    "ScanReport",
    "WikilinkEdgeExtractor",
    "note_id",
    "parse_links",
]
