"""``mem.graph``: the knowledge graph's async view, and the sync one generated from it (tools/gen_sync.py)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import _runner, display
from .._validate import check_k, check_text
from ..errors import AccessDeniedError, UsageError
from ..graph.links import Links, Node
from ..loop.attach import loop_of
from ..types import Edge, Entity, Relation, ShownList

if TYPE_CHECKING:
    from ..core import MemoryCore

__all__ = ["AsyncGraph", "Cluster", "Graph", "Node", "Reached", "Traversal"]


@dataclass(frozen=True)
class Reached:
    """An entity a traversal reached: ``hops`` relations from the start, along ``path`` (names)."""

    name: str
    type: str
    hops: int
    path: tuple[str, ...]
    relation: str


class Traversal(ShownList[Reached]):
    """What :meth:`Graph.traverse` returns: a ``list`` of :class:`Reached`, nearest first, shown as a table.

    >>> Traversal() == [], isinstance(Traversal(), list)
    (True, True)
    """

    __slots__ = ()

    def _html(self) -> str:
        return display.traversal_html(self)

    def _text(self) -> str:
        return display.traversal_text(self)


@dataclass(frozen=True)
class Cluster:
    """A topic group: entities connected by relations (consolidation computes them)."""

    id: int
    label: str
    members: tuple[str, ...]


def _name(value: Any, what: str = "name") -> str:
    if not isinstance(value, str) or not value.strip():
        msg = f"{what} must be a non-empty string, got {value!r}"
        raise UsageError(msg)
    return check_text(value, what)


def _edges(edges: Any) -> list[Edge]:
    """``edges`` as a list; each item is checked where it is written."""
    if isinstance(edges, str | bytes | Mapping) or not isinstance(edges, Iterable):
        msg = f"edges must be an iterable of Edge values, got {type(edges).__name__}"
        raise UsageError(msg)
    return list(edges)


def _hops(hops: Any) -> int:
    if isinstance(hops, bool) or not isinstance(hops, int) or not 0 <= hops <= 3:
        msg = f"hops must be an integer from 0 to 3 (the governor uses 1, or 2 at FULL), got {hops!r}"
        raise UsageError(msg)
    return hops


#: The longest chain :meth:`AsyncGraph.path` looks for, and the traversal rows it reads.
_MAX_PATH_HOPS = 6
_PATH_ROWS = 1000


class _Ops:
    """The coroutines behind both views."""

    def __init__(self, core: MemoryCore) -> None:
        self.core = core
        self.store = loop_of(core).store.graph
        self.agent_id = core.agent_id
        self.links = Links(core, self.store)

    async def entities(self, limit: Any) -> list[Entity]:
        return await self.store.entities(self.agent_id, check_k(limit))

    async def entity(self, name: Any) -> Entity | None:
        return await self.store.entity(self.agent_id, _name(name))

    async def relations(self, name: Any, limit: Any) -> list[Relation]:
        return await self.store.relations(self.agent_id, None if name is None else _name(name), check_k(limit))

    async def traverse(self, name: Any, hops: Any, relation: Any, limit: Any) -> list[Reached]:
        depth, rows = _hops(hops), check_k(limit)
        if relation is not None:
            _name(relation, "relation")
        start = await self.store.entity(self.agent_id, _name(name))
        if start is None:
            return await self.link_walk(name, depth, relation, rows)
        steps = await self.store.traverse([start.id], hops=depth, limit=rows, relation=relation)
        found = await self.store.entities_by_id(list({i for s in steps for i in (s.entity_id, *s.path)} | {start.id}))
        return [
            Reached(
                found[s.entity_id].name,
                found[s.entity_id].type,
                s.hops,
                tuple(found[i].name for i in (*s.path, s.entity_id) if i in found),
                s.relation,
            )
            for s in steps
            if s.entity_id in found and s.hops > 0
        ]

    async def link_walk(self, name: str, hops: int, relation: str | None, limit: int) -> list[Reached]:
        """The memories within ``hops`` memory edges of the memory ``name`` names (no entity does)."""
        start = await self.links.find(name)
        if start is None:
            return []
        return [Reached(*step) for step in await self.links.walk(start, hops=hops, relation=relation, limit=limit)]

    async def nodes(self, limit: Any) -> list[Node]:
        return await self.links.nodes(check_k(limit))

    async def path(self, source: Any, target: Any, max_hops: Any) -> Reached | None:
        if isinstance(max_hops, bool) or not isinstance(max_hops, int) or not 1 <= max_hops <= _MAX_PATH_HOPS:
            msg = f"max_hops must be an integer from 1 to {_MAX_PATH_HOPS}, got {max_hops!r}"
            raise UsageError(msg)
        start, end = (await self.entity(source)), (await self.entity(target))
        if start is None or end is None:
            return None
        if start.id == end.id:
            return Reached(end.name, end.type, 0, (end.name,), "")
        steps = await self.store.traverse([start.id], hops=max_hops, limit=_PATH_ROWS)
        step = min((s for s in steps if s.entity_id == end.id), key=lambda s: s.hops, default=None)
        if step is None:
            return None
        found = await self.store.entities_by_id([*step.path, end.id])
        names = tuple(found[i].name for i in (*step.path, end.id) if i in found)
        return Reached(end.name, end.type, step.hops, names, step.relation)

    async def alias(self, name: Any, alias: Any) -> bool:
        return await self.store.add_alias(self.agent_id, _name(name), _name(alias, "alias"))

    # Memory edges link ids, not owners: a user's handle reaches only edges between its own memories.
    async def neighbors(self, node_id: Any, relation: Any) -> list[str]:
        node = _name(node_id, "node_id")
        if self.core.user_id is not None and not await self.core.owned([node]):
            return []
        found = await self.store.neighbors(node, None if relation is None else _name(relation, "relation"))
        return found if self.core.user_id is None else await self.core.owned(found)

    async def edges(self, node_id: Any) -> list[Edge]:
        node = _name(node_id, "node_id")
        if self.core.user_id is not None and not await self.core.owned([node]):
            return []
        found = await self.store.edges_of(node)
        if self.core.user_id is None:
            return found
        mine = set(await self.core.owned(list({i for e in found for i in (e.src_id, e.dst_id)})))
        return [e for e in found if e.src_id in mine and e.dst_id in mine]

    async def add_edges(self, edges: Any) -> int:
        checked = _edges(edges)
        if self.core.user_id is not None:
            ends = list(dict.fromkeys(i for e in checked if isinstance(e, Edge) for i in (e.src_id, e.dst_id)))
            foreign = sorted(set(ends) - set(await self.core.owned(ends)))
            if foreign:
                msg = f"a user's handle links only its own memories; {foreign} are not this user's. Nothing was added."
                raise AccessDeniedError(msg)
        return await self.store.upsert_edges(checked)

    async def replace_source(self, source: Any, edges: Any) -> int:
        if self.core.user_id is not None:
            msg = "replace_source() replaces every user's edges of a source: run it from the agent's own handle"
            raise UsageError(msg)
        return await self.store.replace_source(_name(source, "source"), _edges(edges))

    async def stats(self) -> dict[str, int]:
        out = await self.store.stats(self.agent_id)
        if self.core.user_id is not None:
            out.pop("memory_edges", None)  # counted over the whole store: not this user's to see
        return out

    async def clusters(self, limit: Any) -> list[Cluster]:
        found = await self.store.clusters(self.agent_id, check_k(limit))
        return [Cluster(cid, label, tuple(names)) for cid, label, names in found]


class AsyncGraph:
    """The knowledge graph of the agent (``amem.graph``), async API.

    Entities and relations come from the memory loop's extraction; memory edges (typed links
    between memory or note ids) from producers such as consolidation or the wikilink
    extractor, each owning its ``source``.
    """

    def __init__(self, core: MemoryCore) -> None:
        self._ops = _Ops(core)

    async def entities(self, limit: int = 100) -> list[Entity]:
        """The most mentioned entities first."""
        return await _runner.arun(self._ops.entities(limit))

    async def entity(self, name: str) -> Entity | None:
        """The entity ``name`` (or one of its aliases) refers to; case and punctuation do not matter."""
        return await _runner.arun(self._ops.entity(name))

    async def relations(self, name: str | None = None, limit: int = 100) -> list[Relation]:
        """Relations of the entity ``name`` (all when ``None``), most mentioned first."""
        return await _runner.arun(self._ops.relations(name, limit))

    async def traverse(self, name: str, hops: int = 1, relation: str | None = None, limit: int = 100) -> Traversal:
        """Entities within ``hops`` relations of ``name``, in either direction, nearest first.

        When no entity is named ``name``, the memory it names (its id, or a linked note's name or
        path) is the start, and its memory edges (a folder's ``[[wikilinks]]``) are followed.
        """
        return Traversal(await _runner.arun(self._ops.traverse(name, hops, relation, limit)))

    async def nodes(self, limit: int = 100) -> list[Node]:
        """Memories joined by memory edges (an ingested folder's notes), the most linked first, named."""
        return await _runner.arun(self._ops.nodes(limit))

    async def path(self, source: str, target: str, max_hops: int = 4) -> Reached | None:
        """The shortest chain of relations from ``source`` to ``target`` (either direction), or ``None``.

        The result is ``target`` as reached: ``hops`` relations along ``path`` (names, from
        ``source`` to ``target``; ``relation`` is the last one). ``max_hops`` is 1 to 6.
        """
        return await _runner.arun(self._ops.path(source, target, max_hops))

    async def alias(self, name: str, alias: str) -> bool:
        """Let ``alias`` also name the entity ``name``; ``False`` if there is no such entity."""
        return await _runner.arun(self._ops.alias(name, alias))

    async def neighbors(self, node_id: str, relation: str | None = None) -> list[str]:
        """Node ids one memory edge away, in either direction: outgoing first, deduplicated."""
        return await _runner.arun(self._ops.neighbors(node_id, relation))

    async def edges(self, node_id: str) -> list[Edge]:
        """Every memory edge touching ``node_id``."""
        return await _runner.arun(self._ops.edges(node_id))

    async def add_edges(self, edges: Iterable[Edge]) -> int:
        """Write memory edges; writing the same ``(src_id, dst_id, relation)`` again updates it."""
        return await _runner.arun(self._ops.add_edges(edges))

    async def replace_source(self, source: str, edges: Iterable[Edge]) -> int:
        """Replace every edge ``source`` owns with ``edges``, in one transaction."""
        return await _runner.arun(self._ops.replace_source(source, edges))

    async def stats(self) -> dict[str, int]:
        """Counts: entities, relations, clusters, memory edges."""
        return await _runner.arun(self._ops.stats())

    async def clusters(self, limit: int = 100) -> list[Cluster]:
        """Topic groups as of the last consolidation, largest first."""
        return await _runner.arun(self._ops.clusters(limit))


class Graph:
    """The knowledge graph of the agent (``mem.graph``).

    >>> from elastic_memory import Memory
    >>> with Memory.open(":memory:", embedder=None) as mem:
    ...     _ = mem.record_turn("I work at Acme Robotics.", "Nice!")
    ...     [(r.source, r.relation, r.target) for r in mem.graph.relations("Acme Robotics")]
    [('user', 'works_at', 'Acme Robotics')]
    """

    # ---- generated from AsyncGraph by packages/elastic-memory/tools/gen_sync.py: do not edit, run it ----

    def __init__(self, core: MemoryCore) -> None:
        self._ops = _Ops(core)

    def entities(self, limit: int = 100) -> list[Entity]:
        """The most mentioned entities first."""
        return _runner.run(self._ops.entities(limit), "graph.entities")

    def entity(self, name: str) -> Entity | None:
        """The entity ``name`` (or one of its aliases) refers to; case and punctuation do not matter."""
        return _runner.run(self._ops.entity(name), "graph.entity")

    def relations(self, name: str | None = None, limit: int = 100) -> list[Relation]:
        """Relations of the entity ``name`` (all when ``None``), most mentioned first."""
        return _runner.run(self._ops.relations(name, limit), "graph.relations")

    def traverse(self, name: str, hops: int = 1, relation: str | None = None, limit: int = 100) -> Traversal:
        """Entities within ``hops`` relations of ``name``, in either direction, nearest first.

        When no entity is named ``name``, the memory it names (its id, or a linked note's name or
        path) is the start, and its memory edges (a folder's ``[[wikilinks]]``) are followed.
        """
        return Traversal(_runner.run(self._ops.traverse(name, hops, relation, limit), "graph.traverse"))

    def nodes(self, limit: int = 100) -> list[Node]:
        """Memories joined by memory edges (an ingested folder's notes), the most linked first, named."""
        return _runner.run(self._ops.nodes(limit), "graph.nodes")

    def path(self, source: str, target: str, max_hops: int = 4) -> Reached | None:
        """The shortest chain of relations from ``source`` to ``target`` (either direction), or ``None``.

        The result is ``target`` as reached: ``hops`` relations along ``path`` (names, from
        ``source`` to ``target``; ``relation`` is the last one). ``max_hops`` is 1 to 6.
        """
        return _runner.run(self._ops.path(source, target, max_hops), "graph.path")

    def alias(self, name: str, alias: str) -> bool:
        """Let ``alias`` also name the entity ``name``; ``False`` if there is no such entity."""
        return _runner.run(self._ops.alias(name, alias), "graph.alias")

    def neighbors(self, node_id: str, relation: str | None = None) -> list[str]:
        """Node ids one memory edge away, in either direction: outgoing first, deduplicated."""
        return _runner.run(self._ops.neighbors(node_id, relation), "graph.neighbors")

    def edges(self, node_id: str) -> list[Edge]:
        """Every memory edge touching ``node_id``."""
        return _runner.run(self._ops.edges(node_id), "graph.edges")

    def add_edges(self, edges: Iterable[Edge]) -> int:
        """Write memory edges; writing the same ``(src_id, dst_id, relation)`` again updates it."""
        return _runner.run(self._ops.add_edges(edges), "graph.add_edges")

    def replace_source(self, source: str, edges: Iterable[Edge]) -> int:
        """Replace every edge ``source`` owns with ``edges``, in one transaction."""
        return _runner.run(self._ops.replace_source(source, edges), "graph.replace_source")

    def stats(self) -> dict[str, int]:
        """Counts: entities, relations, clusters, memory edges."""
        return _runner.run(self._ops.stats(), "graph.stats")

    def clusters(self, limit: int = 100) -> list[Cluster]:
        """Topic groups as of the last consolidation, largest first."""
        return _runner.run(self._ops.clusters(limit), "graph.clusters")

    # ---- end of generated code ----
