"""Obsidian ``[[wikilinks]]`` of a Markdown folder as graph edges (deterministic: no model).

A link ``[[target#heading|alias]]`` (``![[...]]`` embeds) resolves within the folder: a
target with a ``/`` by root-relative path, a bare name by file name; both case-insensitive,
with or without the extension. Ambiguous, dangling and self links are counted, never guessed.

>>> [(link.target, link.heading, link.alias, link.embed) for link in parse_links("See [[Dogs#Beagle|b]], ![[x]]")]
[('Dogs', 'Beagle', 'b', False), ('x', None, None, True)]
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Protocol

from ..errors import UsageError
from ..types import Edge
from ._text import mask_code
from .markdown import MarkdownFolder, Note

__all__ = ["SOURCE", "EdgeIndexReport", "EdgeSink", "Link", "WikilinkEdgeExtractor", "parse_links"]

#: The ``source`` of every wikilink edge: :meth:`WikilinkEdgeExtractor.reindex` rewrites exactly these.
SOURCE = "wikilinks"
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


class WikilinkEdgeExtractor:
    """The wikilinks of a :class:`MarkdownFolder` as ``references``/``embeds`` edges between note ids."""

    def __init__(self, folder: MarkdownFolder) -> None:
        if not isinstance(folder, MarkdownFolder):
            msg = f"pass a MarkdownFolder, got {type(folder).__name__}"
            raise UsageError(msg)
        self._folder = folder

    def scan(self) -> tuple[list[Edge], EdgeIndexReport]:
        """Read the folder's notes and resolve every link (no writes)."""
        notes = self._folder.notes()
        by_path: dict[str, list[Note]] = {}
        by_name: dict[str, list[Note]] = {}
        for note in notes:
            stem = _strip_ext(note.rel_path, self._extensions()).casefold()
            by_path.setdefault(stem, []).append(note)
            by_name.setdefault(stem.rsplit("/", 1)[-1], []).append(note)
        edges: dict[tuple[str, str, str], Edge] = {}
        found = resolved = dangling = ambiguous = self_links = 0
        for note in notes:
            for link in parse_links(note.content):
                found += 1
                key = _strip_ext(link.target.replace("\\", "/").strip("/"), self._extensions()).casefold()
                if not key:
                    self_links += 1
                    continue
                matches = (by_path if "/" in key else by_name).get(key, [])
                if not matches:
                    dangling += 1
                elif len(matches) > 1:
                    ambiguous += 1
                elif matches[0].id == note.id:
                    self_links += 1
                else:
                    resolved += 1
                    relation = "embeds" if link.embed else "references"
                    edge = Edge(note.id, matches[0].id, relation, SOURCE, 1.0)
                    edges.setdefault((edge.src_id, edge.dst_id, relation), edge)
        report = EdgeIndexReport(len(notes), found, resolved, dangling, ambiguous, self_links)
        return list(edges.values()), report

    def reindex(self, sink: EdgeSink) -> EdgeIndexReport:
        """Rewrite the whole ``"wikilinks"`` edge set of a sync ``sink`` (such as ``Memory.graph``).

        Raises:
            UsageError: The sink is async (use :meth:`areindex`).
        """
        edges, report = self.scan()
        written = sink.replace_source(SOURCE, edges)
        if inspect.isawaitable(written):
            if inspect.iscoroutine(written):
                written.close()  # never started: no "never awaited" warning
            msg = "this sink is async (AsyncMemory.graph); use `await extractor.areindex(sink)`"
            raise UsageError(msg)
        return _written(report, written)

    async def areindex(self, sink: EdgeSink) -> EdgeIndexReport:
        """Rewrite the whole ``"wikilinks"`` edge set of a sink, sync or async (``AsyncMemory.graph``)."""
        edges, report = self.scan()
        written = sink.replace_source(SOURCE, edges)
        if inspect.isawaitable(written):
            written = await written
        return _written(report, written)

    def _extensions(self) -> tuple[str, ...]:
        return self._folder.extensions


def _strip_ext(path: str, extensions: tuple[str, ...]) -> str:
    suffix = PurePosixPath(path).suffix
    return path[: -len(suffix)] if suffix and suffix.lower() in extensions else path


def _written(report: EdgeIndexReport, written: object) -> EdgeIndexReport:
    if isinstance(written, bool) or not isinstance(written, int):
        msg = f"replace_source() must return the number of edges written, got {written!r}"
        raise UsageError(msg)
    return dataclasses.replace(report, edges_written=written)
