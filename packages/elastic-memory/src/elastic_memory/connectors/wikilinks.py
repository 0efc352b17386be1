"""Obsidian ``[[wikilinks]]`` of a Markdown folder as graph edges (deterministic: no model).

A link ``[[target#heading|alias]]`` (``![[...]]`` embeds) resolves within the folder: a
target with a ``/`` by root-relative path, a bare name by file name; both case-insensitive,
with or without the extension. Ambiguous, dangling and self links are counted, never guessed.

>>> [(link.target, link.heading, link.alias, link.embed) for link in parse_links("See [[Dogs#Beagle|b]], ![[x]]")]
[('Dogs', 'Beagle', 'b', False), ('x', None, None, True)]
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import re
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Protocol

from ..errors import UsageError
from ..types import Edge
from ._text import mask_code
from .markdown import MarkdownFolder

__all__ = [
    "SOURCE",
    "EdgeIndexReport",
    "EdgeSink",
    "Link",
    "LinkIndex",
    "WikilinkEdgeExtractor",
    "parse_links",
    "source_of",
]

#: The prefix of every wikilink edge's ``source`` (see :func:`source_of`).
SOURCE = "wikilinks"
_MAX_SOURCE = 1_000  # an edge's source, at most (graph tables)
_LINK = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")


@dataclass(frozen=True)
class Link:
    """One wikilink: ``target`` (empty for a link within the note), heading, block id, alias, embed."""

    target: str
    heading: str | None = None
    block: str | None = None
    alias: str | None = None
    embed: bool = False


def parse_links(text: str) -> list[Link]:
    """The wikilinks of Markdown ``text`` in order, ignoring those in code blocks and code spans.

    >>> parse_links("[[a/B.md#^x1]] `[[no]]`")
    [Link(target='a/B.md', heading=None, block='x1', alias=None, embed=False)]
    """
    links = []
    for match in _LINK.finditer(mask_code(text)):
        inner = match.group(2)
        target, bar, alias = inner.partition("|")
        target = target.removesuffix("\\")  # `[[a\|b]]`: a pipe escaped inside a table
        target, hash_, fragment = target.partition("#")
        heading = block = None
        if hash_:
            if fragment.startswith("^"):
                block = fragment[1:].strip() or None
            else:
                heading = fragment.strip() or None
        links.append(
            Link(target.strip(), heading, block, alias.strip() or None if bar else None, match.group(1) == "!")
        )
    return links


@dataclass(frozen=True)
class EdgeIndexReport:
    """What a scan found: links by outcome, and (after a reindex) the edges written."""

    notes_scanned: int = 0
    links_found: int = 0
    resolved: int = 0
    dangling: int = 0
    ambiguous: int = 0
    self_links: int = 0
    edges_written: int = 0


class EdgeSink(Protocol):
    """Where edges go: ``mem.graph`` of a store (sync), or of an async store (awaitable)."""

    def replace_source(self, source: str, edges: Sequence[Edge]) -> int | Awaitable[int]:
        """Replace every edge of ``source`` with ``edges``; return how many were written."""
        ...


class LinkIndex:
    """The names and wikilinks of a folder's notes, gathered one note at a time, then resolved.

    Only each note's path key and its links are kept, never its text, so an ingest can gather
    them while it streams the folder, under the ids the store holds (a renamed note keeps its
    old id).
    """

    def __init__(self, extensions: tuple[str, ...]) -> None:
        self._extensions = extensions
        self._by_path: dict[str, list[str]] = {}
        self._by_name: dict[str, list[str]] = {}
        self._links: list[tuple[str, str, bool]] = []
        self._notes = 0
        self._self_links = 0

    def add(self, rel_path: str, node_id: str, content: str) -> None:
        """Gather the note at ``rel_path``, stored as ``node_id``, and the links of its ``content``."""
        self._notes += 1
        stem = _strip_ext(rel_path, self._extensions).casefold()
        self._by_path.setdefault(stem, []).append(node_id)
        self._by_name.setdefault(stem.rsplit("/", 1)[-1], []).append(node_id)
        for link in parse_links(content):
            key = _strip_ext(link.target.replace("\\", "/").strip("/"), self._extensions).casefold()
            if key:
                self._links.append((node_id, key, link.embed))
            else:
                self._self_links += 1

    def resolve(self, source: str) -> tuple[list[Edge], EdgeIndexReport]:
        """Every gathered link resolved among the gathered notes, as edges of ``source``."""
        edges: dict[tuple[str, str, str], Edge] = {}
        resolved = dangling = ambiguous = 0
        self_links = self._self_links
        for src, key, embed in self._links:
            matches = (self._by_path if "/" in key else self._by_name).get(key, [])
            if not matches:
                dangling += 1
            elif len(matches) > 1:
                ambiguous += 1
            elif matches[0] == src:
                self_links += 1
            else:
                resolved += 1
                relation = "embeds" if embed else "references"
                edges.setdefault((src, matches[0], relation), Edge(src, matches[0], relation, source, 1.0))
        found = len(self._links) + self._self_links
        return list(edges.values()), EdgeIndexReport(self._notes, found, resolved, dangling, ambiguous, self_links)


def source_of(folder: MarkdownFolder | str) -> str:
    """The edge ``source`` of ``folder``'s wikilinks: ``"wikilinks:<folder path>"``, one per folder.

    ``folder`` is a :class:`MarkdownFolder` or its :attr:`~MarkdownFolder.key` (the
    ``source_folder`` of its ingested notes: how an ingest names the links of a folder that
    moved). Two folders ingested into one store each rewrite only their own links. A path too
    long for an edge's source is replaced by its SHA-256.
    """
    key = folder if isinstance(folder, str) else folder.key
    source = f"{SOURCE}:{key}"
    if len(source) > _MAX_SOURCE:
        source = f"{SOURCE}:sha256:{hashlib.sha256(key.encode('utf-8', 'surrogateescape')).hexdigest()}"
    return source


class WikilinkEdgeExtractor:
    """The wikilinks of a :class:`MarkdownFolder` as ``references``/``embeds`` edges between note ids.

    The edges' source is :func:`source_of` the folder, so reindexing one folder leaves the
    links of every other folder in the store as they are.
    """

    def __init__(self, folder: MarkdownFolder) -> None:
        if not isinstance(folder, MarkdownFolder):
            msg = f"pass a MarkdownFolder, got {type(folder).__name__}"
            raise UsageError(msg)
        self._folder = folder

    @property
    def source(self) -> str:
        """The ``source`` of the edges written (:func:`source_of` the folder)."""
        return source_of(self._folder)

    def scan(self) -> tuple[list[Edge], EdgeIndexReport]:
        """Read the folder's notes and resolve every link between their folder ids (no writes)."""
        index = LinkIndex(self._folder.extensions)
        for _, note in self._folder.iter_notes():
            if note is not None:
                index.add(note.rel_path, note.id, note.content)
        return index.resolve(self.source)

    def reindex(self, sink: EdgeSink) -> EdgeIndexReport:
        """Rewrite the folder's whole edge set in a sync ``sink`` (such as ``Memory.graph``).

        Raises:
            UsageError: The sink is async (use :meth:`areindex`).
        """
        edges, report = self.scan()
        written = sink.replace_source(self.source, edges)
        if inspect.isawaitable(written):
            if inspect.iscoroutine(written):
                written.close()  # never started: no "never awaited" warning
            msg = "this sink is async (AsyncMemory.graph); use `await extractor.areindex(sink)`"
            raise UsageError(msg)
        return _written(report, written)

    async def areindex(self, sink: EdgeSink) -> EdgeIndexReport:
        """Rewrite the folder's whole edge set in a sink, sync or async (``AsyncMemory.graph``)."""
        edges, report = self.scan()
        written = sink.replace_source(self.source, edges)
        if inspect.isawaitable(written):
            written = await written
        return _written(report, written)


def _strip_ext(path: str, extensions: tuple[str, ...]) -> str:
    suffix = PurePosixPath(path).suffix
    return path[: -len(suffix)] if suffix and suffix.lower() in extensions else path


def _written(report: EdgeIndexReport, written: object) -> EdgeIndexReport:
    if isinstance(written, bool) or not isinstance(written, int):
        msg = f"replace_source() must return the number of edges written, got {written!r}"
        raise UsageError(msg)
    return dataclasses.replace(report, edges_written=written)
