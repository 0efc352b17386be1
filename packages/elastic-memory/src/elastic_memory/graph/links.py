"""Memory edges (a folder's ``[[wikilinks]]``, a merged memory's links) as named nodes: listed and walked.

Entities and relations live in their own tables; memory edges link memory ids. Here the
memories an edge joins get names (a note's file name, else the first line of the memory), so
``graph entities`` and ``graph neighbors`` reach an ingested folder's links. Only the handle's
own memories (same agent and user) are nodes of its graph.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from ..types import MemoryRecord
from ..users import owner_key
from .tables import GraphStore

if TYPE_CHECKING:
    from ..core import MemoryCore

__all__ = ["NODE_SCAN", "Links", "Node", "label"]

#: The most linked nodes read when listing nodes or looking one up by name.
NODE_SCAN = 10_000
_NAME_CHARS = 80

#: A walk's step: the name reached, its kind, hops, the names on the way, the relation followed.
Step = tuple[str, str, int, tuple[str, ...], str]


@dataclass(frozen=True)
class Node:
    """A memory joined to others by memory edges: its ``id``, ``name`` and how many ``links`` touch it."""

    id: str
    name: str
    links: int


def label(record: MemoryRecord) -> str:
    r"""A memory's name in the graph: a note's file name without extension, else its first line (80 characters).

    >>> from elastic_memory import Memory
    >>> with Memory.open(":memory:", embedder=None) as mem:
    ...     note = mem.get(mem.remember("# Flour\nStrong.", metadata={"source_path": "bread/Flour.md"}))
    ...     other = mem.get(mem.remember("Feed the starter.\nDaily."))
    >>> label(note), label(other)
    ('Flour', 'Feed the starter.')
    """
    path = record.metadata.get("source_path")
    if isinstance(path, str) and path.strip():
        return PurePosixPath(path).stem or path
    first = record.content.strip().splitlines()[0] if record.content.strip() else record.id
    return first[:_NAME_CHARS]


def _names_of(record: MemoryRecord) -> set[str]:
    """What finds ``record`` by name: its label, and a note's path with and without extension (case-folded)."""
    names = {label(record).casefold()}
    path = record.metadata.get("source_path")
    if isinstance(path, str):
        names |= {path.casefold(), str(PurePosixPath(path).with_suffix("")).casefold()}
    return names


class Links:
    """The memory edges of one handle's memories, in ``graph`` (the tables of the handle's memory loop)."""

    def __init__(self, core: MemoryCore, graph: GraphStore) -> None:
        self.core = core
        self.graph = graph

    async def mine(self, ids: Sequence[str]) -> dict[str, MemoryRecord]:
        """The live records among ``ids`` that are this handle's own (its agent, its user)."""
        found = await self.core.store.get(list(dict.fromkeys(ids))) if ids else {}
        return {
            i: r
            for i, r in found.items()
            if r.deleted_at is None and owner_key(r.agent_id, r.user_id) == self.core.agent_id
        }

    async def nodes(self, limit: int) -> list[Node]:
        """This handle's linked memories, the most linked first."""
        counted = await self.graph.edge_nodes(NODE_SCAN)
        records = await self.mine([i for i, _ in counted])
        return [Node(i, label(records[i]), n) for i, n in counted if i in records][:limit]

    async def find(self, name: str) -> MemoryRecord | None:
        """The linked memory ``name`` names: its id, else a note's name or path (the most linked first)."""
        by_id = await self.mine([name])
        if name in by_id and await self.graph.edges_of(name):
            return by_id[name]
        counted = await self.graph.edge_nodes(NODE_SCAN)
        records = await self.mine([i for i, _ in counted])
        key = name.strip().casefold()
        return next((records[i] for i, _ in counted if i in records and key in _names_of(records[i])), None)

    async def walk(self, start: MemoryRecord, *, hops: int, relation: str | None, limit: int) -> list[Step]:
        """The memories within ``hops`` edges of ``start`` (either direction), nearest first."""
        seen, out = {start.id}, list[Step]()
        frontier: list[tuple[str, tuple[str, ...]]] = [(start.id, (label(start),))]
        for hop in range(1, hops + 1):
            found = []
            for node, path in frontier:
                for edge in await self.graph.edges_of(node):
                    if relation is None or edge.relation == relation:
                        found.append((edge.dst_id if edge.src_id == node else edge.src_id, path, edge.relation))
            records = await self.mine([other for other, _, _ in found])
            frontier = []
            for other, path, kind in found:
                if other in seen or other not in records:
                    continue
                seen.add(other)
                reached: tuple[str, ...] = (*path, label(records[other]))
                out.append((reached[-1], records[other].kind, hop, reached, kind))
                frontier.append((other, reached))
                if len(out) >= limit:
                    return out
        return out
