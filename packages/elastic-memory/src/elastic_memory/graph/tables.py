"""I/O of the knowledge graph (entities, relations, mentions, memory edges) through a storage backend.

Writes run inside a caller's transaction (``put``) or in their own (``GraphStore`` methods);
reads are plain queries. Deduplication happens at write time with ``ON CONFLICT DO
UPDATE``: a repeated mention raises ``mention_count`` and moves ``confidence`` as a running
average. Traversal is one ``WITH RECURSIVE`` query, bounded in hops and rows.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from .._validate import check_text
from ..errors import UsageError
from ..storage.backend import Backend, Transaction
from ..storage.queries import MAX_PARAMS, encode_json, in_list
from ..storage.vectors.leg import chunks
from ..types import Edge, Entity, Relation
from .names import canonical
from .queries import TRAVERSE

__all__ = ["EntityWrite", "GraphStore", "GraphWrite", "RelationWrite", "Step"]

T = TypeVar("T")

#: Entities and relations an agent may hold; beyond, new ones are dropped at write (existing
#: ones are still reinforced).
ENTITY_CAP = 200_000
RELATION_CAP = 2_000_000

_UPSERT_ENTITY = (
    "INSERT INTO entities (agent_id, key, name, type, confidence, mention_count, created_at, reinforced_at) "
    "VALUES (?, ?, ?, ?, ?, 1, ?, ?) ON CONFLICT (agent_id, key) DO UPDATE SET "
    "confidence = (entities.confidence * entities.mention_count + excluded.confidence) / (entities.mention_count + 1), "
    "mention_count = entities.mention_count + 1, reinforced_at = excluded.reinforced_at, "
    "type = CASE WHEN entities.type = 'unknown' THEN excluded.type ELSE entities.type END"
)
_REINFORCE_ENTITY = (
    "UPDATE entities SET confidence = (confidence * mention_count + ?) / (mention_count + 1), "
    "mention_count = mention_count + 1, reinforced_at = ? WHERE id = ?"
)
_UPSERT_RELATION = (
    "INSERT INTO relations (agent_id, src, dst, type, confidence, mention_count, provenance, created_at, "
    "reinforced_at) VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?) ON CONFLICT (src, dst, type) DO UPDATE SET "
    "confidence = (relations.confidence * relations.mention_count + excluded.confidence) "
    "/ (relations.mention_count + 1), mention_count = relations.mention_count + 1, "
    "reinforced_at = excluded.reinforced_at"
)
_ENTITY_COLUMNS = "e.id, e.name, e.type, e.aliases, e.confidence, e.mention_count, e.cluster_id, e.cluster_label"


@dataclass(frozen=True)
class EntityWrite:
    """An entity mention to store (deduplicated by its canonical name)."""

    name: str
    type: str = "unknown"
    confidence: float = 0.5
    aliases: tuple[str, ...] = ()
    """Other names of the entity: each becomes one of its keys (an entity already named so is folded in)."""


@dataclass(frozen=True)
class RelationWrite:
    """A relation between two named entities (created if unknown)."""

    source: str
    target: str
    relation: str
    confidence: float = 0.5
    provenance: str = "heuristic"


@dataclass(frozen=True)
class GraphWrite:
    """What one exchange (or extraction) adds to the graph, and the memories that mention it."""

    entities: tuple[EntityWrite, ...] = ()
    relations: tuple[RelationWrite, ...] = ()
    memory_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Step:
    """An entity reached by a traversal: ``hops`` relations from a seed, along ``path`` (entity ids)."""

    entity_id: int
    hops: int
    path: tuple[int, ...]
    relation: str


def _entity(row: Sequence[Any]) -> Entity:
    return Entity(int(row[0]), row[1], row[2], tuple(json.loads(row[3])), float(row[4]), int(row[5]), row[6], row[7])


Execute = Callable[[str, Sequence[Any]], Awaitable[Any]]
Fetch = Callable[[str, Sequence[Any]], Awaitable[list[Any]]]


class GraphStore:
    """The graph's reads and writes for one store (in its transactions)."""

    def __init__(self, store: Backend) -> None:
        self.store = store
        self.traverse_sql = TRAVERSE[store.capabilities.engine]
        self._entity_count: dict[str, int] = {}
        self._relation_count: dict[str, int] = {}

    # ------------------------------------------------------------------- writes
    async def put(self, tx: Transaction, agent_id: str, write: GraphWrite, now: float) -> None:
        """Store ``write`` inside the caller's transaction ``tx``: a fixed number of statements."""
        named: dict[str, EntityWrite] = {}
        for e in write.entities:
            key = canonical(e.name)
            if key:
                named.setdefault(key, e)
        for r in write.relations:
            for name in (r.source, r.target):
                key = canonical(name)
                if key:
                    named.setdefault(key, EntityWrite(name, "unknown", r.confidence))
        if not named:
            return
        count = self._entity_count.get(agent_id)
        if count is None:
            rows = await tx.fetch("SELECT count(*) FROM entities WHERE agent_id = ?", [agent_id])
            count = int(rows[0][0])
        known = await self._resolve(tx, agent_id, list(named))  # names and aliases (merges, alias())
        fresh = [k for k in named if k not in known]
        if count + len(fresh) > ENTITY_CAP:  # full: only reinforce what exists
            fresh = []
        await tx.executemany(
            _UPSERT_ENTITY,
            [(agent_id, k, named[k].name[:200], named[k].type, _unit(named[k].confidence), now, now) for k in fresh],
        )
        reinforced = {known[k]: named[k] for k in named if k in known}  # one bump per entity, by id
        await tx.executemany(_REINFORCE_ENTITY, [(_unit(e.confidence), now, i) for i, e in reinforced.items()])
        self._entity_count[agent_id] = count + len(fresh)
        ids = {**known, **(await self._ids(tx, agent_id, fresh) if fresh else {})}
        await tx.executemany(
            "INSERT INTO entity_keys (agent_id, key, entity_id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            [(agent_id, k, ids[k]) for k in fresh if k in ids],
        )
        await self._alias(tx, agent_id, [(ids[k], e.aliases) for k, e in named.items() if e.aliases and k in ids])
        for alias in (canonical(a) for e in named.values() for a in e.aliases):
            ids.pop(alias, None)  # a name folded away: its mentions and relations go to the entity it now names
        ids.update(await self._resolve(tx, agent_id, [k for k in named if k not in ids]))
        await tx.executemany(
            "INSERT INTO entity_mentions (entity_id, memory_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
            [(ids[canonical(e.name)], m) for e in write.entities if canonical(e.name) in ids for m in write.memory_ids],
        )
        relation_count = self._relation_count.get(agent_id)
        if relation_count is None:
            rows = await tx.fetch("SELECT count(*) FROM relations WHERE agent_id = ?", [agent_id])
            relation_count = int(rows[0][0])
        if relation_count >= RELATION_CAP:  # full: only relations that exist are reinforced
            await tx.executemany(
                "UPDATE relations SET confidence = (confidence * mention_count + ?) / (mention_count + 1), "
                "mention_count = mention_count + 1, reinforced_at = ? WHERE src = ? AND dst = ? AND type = ?",
                [
                    (_unit(r.confidence), now, ids[canonical(r.source)], ids[canonical(r.target)], r.relation[:100])
                    for r in write.relations
                    if canonical(r.source) in ids and canonical(r.target) in ids
                ],
            )
            return
        relations = []
        for r in write.relations:
            src, dst = ids.get(canonical(r.source)), ids.get(canonical(r.target))
            if src is not None and dst is not None and src != dst and r.relation:
                relations.append((agent_id, src, dst, r.relation[:100], _unit(r.confidence), r.provenance, now, now))
        await tx.executemany(_UPSERT_RELATION, relations)
        self._relation_count[agent_id] = relation_count + len(relations)  # an upper bound (some reinforce)

    async def _alias(self, tx: Transaction, agent_id: str, named: Sequence[tuple[int, tuple[str, ...]]]) -> None:
        """Give entity ``i`` each of its ``aliases`` as a key; an entity those names were another's is folded in."""
        for entity_id, aliases in named:
            keys = [k for k in dict.fromkeys(canonical(a) for a in aliases) if k]
            held = await self._resolve(tx, agent_id, keys)
            for other in {i for i in held.values() if i != entity_id}:
                await self._fold(tx, entity_id, other)
            await tx.executemany(
                "INSERT INTO entity_keys (agent_id, key, entity_id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                [(agent_id, k, entity_id) for k in keys],
            )
            rows = await tx.fetch("SELECT aliases FROM entities WHERE id = ?", [entity_id])
            if rows:
                names = list(dict.fromkeys([*json.loads(rows[0][0]), *(a[:200] for a in aliases)]))[:50]
                await tx.execute("UPDATE entities SET aliases = ? WHERE id = ?", [encode_json(names), entity_id])

    async def _resolve(self, tx: Transaction, agent_id: str, keys: Sequence[str]) -> dict[str, int]:
        """The entity each key (a canonical name or alias) refers to; the most mentioned one if several."""
        out: dict[str, tuple[int, int]] = {}
        for chunk in chunks(list(keys)):
            sql, params = in_list("k.key", chunk)
            rows = await tx.fetch(
                "SELECT k.key, k.entity_id, e.mention_count FROM entity_keys AS k "
                f"JOIN entities AS e ON e.id = k.entity_id WHERE k.agent_id = ? AND {sql}",
                [agent_id, *params],
            )
            for key, entity_id, mentions in rows:
                if key not in out or int(mentions) > out[key][1]:
                    out[key] = (int(entity_id), int(mentions))
        return {k: v[0] for k, v in out.items()}

    async def _ids(self, tx: Transaction, agent_id: str, keys: Sequence[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for chunk in chunks(list(keys)):
            sql, params = in_list("key", chunk)
            rows = await tx.fetch(f"SELECT key, id FROM entities WHERE agent_id = ? AND {sql}", [agent_id, *params])
            out.update((k, int(i)) for k, i in rows)
        return out

    async def _write(self, what: str, work: Callable[[Transaction], Awaitable[T]]) -> T:
        async with self.store.transaction(what, bump=False) as tx:
            return await work(tx)

    def forget_counts(self, agent_id: str) -> None:
        """Drop the cached entity and relation counts of an agent (after a write was rolled back)."""
        self._entity_count.pop(agent_id, None)
        self._relation_count.pop(agent_id, None)

    async def add(self, agent_id: str, write: GraphWrite) -> None:
        """Store entities, relations and mentions in their own transaction."""
        now = self.store.clock()

        async def work(tx: Transaction) -> None:
            await self.put(tx, agent_id, write, now)

        await self._write("write the graph", work)

    async def add_alias(self, agent_id: str, name: str, alias: str) -> bool:
        """Let ``alias`` name the entity ``name``; ``False`` if there is no such entity."""
        key, alias_key = canonical(name), canonical(alias)

        async def work(tx: Transaction) -> bool:
            ids = await self._ids(tx, agent_id, [key])
            if key not in ids or not alias_key:
                return False
            await tx.execute(
                "INSERT INTO entity_keys (agent_id, key, entity_id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                [agent_id, alias_key, ids[key]],
            )
            rows = await tx.fetch("SELECT aliases FROM entities WHERE id = ?", [ids[key]])
            aliases = list(dict.fromkeys([*json.loads(rows[0][0]), alias[:200]]))
            await tx.execute("UPDATE entities SET aliases = ? WHERE id = ?", [encode_json(aliases), ids[key]])
            return True

        result: bool = await self._write("add an alias", work)
        return result

    # -------------------------------------------------------------------- edges
    async def upsert_edges(self, edges: Iterable[Edge]) -> int:
        """Insert or update memory edges (idempotent on ``(src_id, dst_id, relation)``)."""
        rows = [_edge_row(e, self.store.clock()) for e in edges]

        async def work(tx: Transaction) -> int:
            await tx.executemany(
                "INSERT INTO memory_edges (src_id, dst_id, relation, source, confidence, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (src_id, dst_id, relation) DO UPDATE SET "
                "source = excluded.source, confidence = excluded.confidence",
                rows,
            )
            return len(rows)

        count: int = await self._write("write edges", work)
        return count

    async def replace_source(self, source: str, edges: Iterable[Edge]) -> int:
        """Atomically replace every edge ``source`` owns with ``edges`` (whose source must match)."""
        now = self.store.clock()
        rows = [_edge_row(e, now) for e in edges]
        if any(r[3] != source for r in rows):
            msg = f"replace_source({source!r}, ...) got edges of another source; every edge must have source={source!r}"
            raise UsageError(msg)

        async def work(tx: Transaction) -> int:
            await tx.execute("DELETE FROM memory_edges WHERE source = ?", [source])
            await tx.executemany(
                "INSERT INTO memory_edges (src_id, dst_id, relation, source, confidence, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (src_id, dst_id, relation) DO UPDATE SET "
                "source = excluded.source, confidence = excluded.confidence, created_at = excluded.created_at",
                rows,
            )
            return len(rows)

        count: int = await self._write("replace edges", work)
        return count

    async def neighbors(self, node_id: str, relation: str | None = None, limit: int = 1_000) -> list[str]:
        """Node ids one edge away in either direction, deduped, outgoing first then incoming."""
        rows = await self.store.read(
            "SELECT dst_id, 0 AS o, relation FROM memory_edges WHERE src_id = ? "
            "AND (CAST(? AS TEXT) IS NULL OR relation = ?) UNION ALL SELECT src_id, 1, relation FROM memory_edges "
            "WHERE dst_id = ? AND (CAST(? AS TEXT) IS NULL OR relation = ?) "
            "ORDER BY o, 1 LIMIT ?",
            [node_id, relation, relation, node_id, relation, relation, limit],
        )
        return list(dict.fromkeys(r[0] for r in rows))

    async def neighbors_many(self, node_ids: Sequence[str], limit: int = 1_000) -> dict[str, list[str]]:
        """:meth:`neighbors` of several nodes in one query (each node's list as :meth:`neighbors` gives it)."""
        out: dict[str, list[str]] = {n: [] for n in node_ids}
        if not node_ids:
            return out
        for chunk in chunks(list(dict.fromkeys(node_ids)), MAX_PARAMS // 2):
            src, params = in_list("src_id", chunk)
            dst, more = in_list("dst_id", chunk)
            rows = await self.store.read(
                "SELECT node, other FROM (SELECT node, other, o, "
                "row_number() OVER (PARTITION BY node ORDER BY o, other) AS r FROM ("
                f"SELECT src_id AS node, dst_id AS other, 0 AS o FROM memory_edges WHERE {src} "
                f"UNION ALL SELECT dst_id, src_id, 1 FROM memory_edges WHERE {dst}) AS edges) AS ranked "
                "WHERE r <= ? ORDER BY node, o, other",
                [*params, *more, limit],
            )
            for node, other in rows:
                if other not in out[node]:
                    out[node].append(other)
        return out

    async def edges_of(self, node_id: str) -> list[Edge]:
        """Every memory edge touching ``node_id``."""
        rows = await self.store.read(
            "SELECT src_id, dst_id, relation, source, confidence FROM memory_edges WHERE src_id = ? OR dst_id = ? "
            "ORDER BY src_id, dst_id, relation",
            [node_id, node_id],
        )
        return [Edge(r[0], r[1], r[2], r[3], float(r[4])) for r in rows]

    async def edge_nodes(self, limit: int) -> list[tuple[str, int]]:
        """``(node id, edges touching it)`` of every memory-edge node, the most linked first, at most ``limit``."""
        rows = await self.store.read(
            "SELECT node, count(*) AS n FROM (SELECT src_id AS node FROM memory_edges "
            "UNION ALL SELECT dst_id FROM memory_edges) AS ends GROUP BY node ORDER BY n DESC, node LIMIT ?",
            [limit],
        )
        return [(r[0], int(r[1])) for r in rows]

    # -------------------------------------------------------------------- reads
    async def entity(self, agent_id: str, name: str) -> Entity | None:
        """The entity ``name`` (or an alias) refers to."""
        rows = await self.store.read(
            f"SELECT {_ENTITY_COLUMNS} FROM entity_keys AS k JOIN entities AS e ON e.id = k.entity_id "
            "WHERE k.agent_id = ? AND k.key = ? ORDER BY e.mention_count DESC LIMIT 1",
            [agent_id, canonical(name)],
        )
        return _entity(rows[0]) if rows else None

    async def entities(self, agent_id: str, limit: int = 100) -> list[Entity]:
        """The most mentioned entities first."""
        rows = await self.store.read(
            f"SELECT {_ENTITY_COLUMNS} FROM entities AS e WHERE e.agent_id = ? "
            "ORDER BY e.mention_count DESC, e.id LIMIT ?",
            [agent_id, limit],
        )
        return [_entity(r) for r in rows]

    async def entities_by_id(self, ids: Sequence[int]) -> dict[int, Entity]:
        """Entities by id."""
        out: dict[int, Entity] = {}
        for chunk in chunks(list(ids)):
            sql, params = in_list("e.id", chunk)
            out.update(
                (int(r[0]), _entity(r))
                for r in await self.store.read(f"SELECT {_ENTITY_COLUMNS} FROM entities AS e WHERE {sql}", params)
            )
        return out

    async def relations(self, agent_id: str, name: str | None = None, limit: int = 100) -> list[Relation]:
        """Relations (of the entity ``name`` when given), most mentioned first."""
        where, params = "r.agent_id = ?", [agent_id]
        params_any: list[Any] = list(params)
        if name is not None:
            found = await self.entity(agent_id, name)
            if found is None:
                return []
            where += " AND (r.src = ? OR r.dst = ?)"
            params_any += [found.id, found.id]
        rows = await self.store.read(
            "SELECT s.name, d.name, r.type, r.confidence, r.mention_count, r.provenance FROM relations AS r "
            f"JOIN entities AS s ON s.id = r.src JOIN entities AS d ON d.id = r.dst WHERE {where} "
            "ORDER BY r.mention_count DESC, r.id LIMIT ?",
            [*params_any, limit],
        )
        return [Relation(r[0], r[1], r[2], float(r[3]), int(r[4]), r[5]) for r in rows]

    async def detect(self, agent_id: str, keys: Sequence[str]) -> list[tuple[Entity, str]]:
        """Entities whose name or alias is one of ``keys`` (query n-grams), with the key that matched."""
        out: list[tuple[Entity, str]] = []
        for chunk in chunks(list(keys)):
            sql, params = in_list("k.key", chunk)
            rows = await self.store.read(
                f"SELECT {_ENTITY_COLUMNS}, k.key FROM entity_keys AS k JOIN entities AS e ON e.id = k.entity_id "
                f"WHERE k.agent_id = ? AND {sql}",
                [agent_id, *params],
            )
            out += [(_entity(r), r[-1]) for r in rows]
        return out

    async def traverse(self, seeds: Sequence[int], *, hops: int, limit: int, relation: str | None = None) -> list[Step]:
        """Entities within ``hops`` relations of ``seeds`` (both directions), nearest first, at most ``limit`` rows."""
        if not seeds or limit <= 0:
            return []
        fanout = max(8, limit // 4)
        rows = await self.store.read(*self.traverse_sql(seeds, relation, fanout, hops, limit))
        return [Step(int(r[0]), int(r[1]), tuple(int(p) for p in r[2].split(",") if p), r[3]) for r in rows]

    async def mentions(self, entity_ids: Sequence[int], limit: int) -> dict[int, list[str]]:
        """Memory ids mentioning each entity (at most ``limit`` rows in all)."""
        out: dict[int, list[str]] = {}
        if not entity_ids:
            return out
        sql, params = in_list("entity_id", list(entity_ids)[:900])
        rows = await self.store.read(
            f"SELECT entity_id, memory_id FROM entity_mentions WHERE {sql} LIMIT ?", [*params, limit]
        )
        for entity_id, memory_id in rows:
            out.setdefault(int(entity_id), []).append(memory_id)
        return out

    # -------------------------------------------------------------- maintenance
    async def decayed(
        self, agent_id: str, *, now: float, half_life: float, floor: float
    ) -> tuple[list[int], list[int]]:
        """Entity and relation ids whose decayed confidence fell below ``floor``.

        Confidence halves every ``half_life`` seconds since the row was last reinforced.
        """

        def faded(confidence: float, reinforced_at: float) -> bool:
            return bool(confidence * 2.0 ** (-max(0.0, now - reinforced_at) / half_life) < floor)

        entities = await self.store.read(
            "SELECT id, confidence, reinforced_at FROM entities WHERE agent_id = ?", [agent_id]
        )
        relations = await self.store.read(
            "SELECT id, confidence, reinforced_at FROM relations WHERE agent_id = ?", [agent_id]
        )
        return (
            [int(r[0]) for r in entities if faded(float(r[1]), float(r[2]))],
            [int(r[0]) for r in relations if faded(float(r[1]), float(r[2]))],
        )

    async def delete(self, agent_id: str, entity_ids: Sequence[int], relation_ids: Sequence[int]) -> None:
        """Hard-delete entities (with their names, mentions and relations) and relations."""

        async def work(tx: Transaction) -> None:
            for chunk in chunks(list(relation_ids)):
                sql, params = in_list("id", chunk)
                await tx.execute(f"DELETE FROM relations WHERE {sql}", params)
            for chunk in chunks(list(entity_ids)):
                for table, column in (("entity_keys", "entity_id"), ("entity_mentions", "entity_id")):
                    sql, params = in_list(column, chunk)
                    await tx.execute(f"DELETE FROM {table} WHERE {sql}", params)
                sql, params = in_list("src", chunk)
                await tx.execute(f"DELETE FROM relations WHERE {sql}", params)
                sql, params = in_list("dst", chunk)
                await tx.execute(f"DELETE FROM relations WHERE {sql}", params)
                sql, params = in_list("id", chunk)
                await tx.execute(f"DELETE FROM entities WHERE {sql}", params)
            self.forget_counts(agent_id)

        if entity_ids or relation_ids:
            await self._write("forget graph rows", work)

    async def links(self, agent_id: str) -> tuple[list[tuple[int, str, int]], list[tuple[int, int]]]:
        """``(id, name, mention_count)`` of every entity and ``(src, dst)`` of every relation."""
        entities = await self.store.read("SELECT id, name, mention_count FROM entities WHERE agent_id = ?", [agent_id])
        relations = await self.store.read("SELECT src, dst FROM relations WHERE agent_id = ?", [agent_id])
        return [(int(a), b, int(c)) for a, b, c in entities], [(int(a), int(b)) for a, b in relations]

    async def set_clusters(self, assignments: Sequence[tuple[int | None, str | None, int]]) -> None:
        """Store ``(cluster_id, cluster_label, entity_id)`` for each entity."""

        async def work(tx: Transaction) -> None:
            await tx.executemany(
                "UPDATE entities SET cluster_id = ?, cluster_label = ? WHERE id = ?", list(assignments)
            )

        await self._write("store clusters", work)

    async def clusters(self, agent_id: str, limit: int = 100) -> list[tuple[int, str, list[str]]]:
        """``(cluster_id, label, member names)``, largest first."""
        rows = await self.store.read(
            "SELECT cluster_id, cluster_label, name FROM entities WHERE agent_id = ? AND cluster_id IS NOT NULL "
            "ORDER BY cluster_id, mention_count DESC, id",
            [agent_id],
        )
        groups: dict[int, tuple[str, list[str]]] = {}
        for cluster_id, label, name in rows:
            groups.setdefault(int(cluster_id), (label or "", []))[1].append(name)
        ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1][1]), kv[0]))[:limit]
        return [(cid, label, names) for cid, (label, names) in ordered]

    async def merge_entities(self, keep: int, drop: int) -> None:
        """Fold entity ``drop`` into ``keep``: names, mentions and relations re-pointed, then ``drop`` deleted."""

        async def work(tx: Transaction) -> None:
            await self._fold(tx, keep, drop)

        await self._write("merge entities", work)

    async def _fold(self, tx: Transaction, keep: int, drop: int) -> None:
        """:meth:`merge_entities` inside the caller's transaction ``tx``."""
        rows = await tx.fetch("SELECT id, name, aliases, mention_count FROM entities WHERE id IN (?, ?)", [keep, drop])
        found = {int(r[0]): r for r in rows}
        if keep not in found or drop not in found or keep == drop:
            return
        aliases = [*json.loads(found[keep][2]), found[drop][1], *json.loads(found[drop][2])]
        await tx.execute(
            "UPDATE entities SET aliases = ?, mention_count = mention_count + ? WHERE id = ?",
            [encode_json(list(dict.fromkeys(aliases))[:50]), int(found[drop][3]), keep],
        )
        # Re-point what ``keep`` does not have yet; the rest (already ``keep``'s) goes with ``drop``.
        for table, other in (("entity_keys", "agent_id, key"), ("entity_mentions", "memory_id")):
            await tx.execute(
                f"UPDATE {table} SET entity_id = ? WHERE entity_id = ? AND ({other}) NOT IN "
                f"(SELECT {other} FROM {table} WHERE entity_id = ?)",
                [keep, drop, keep],
            )
            await tx.execute(f"DELETE FROM {table} WHERE entity_id = ?", [drop])
        for column, other in (("src", "dst"), ("dst", "src")):
            await tx.execute(
                f"UPDATE relations SET {column} = ? WHERE {column} = ? AND ({other}, type) NOT IN "
                f"(SELECT {other}, type FROM relations WHERE {column} = ?)",
                [keep, drop, keep],
            )
        await tx.execute("DELETE FROM relations WHERE src = ? OR dst = ? OR src = dst", [drop, drop])
        await tx.execute("DELETE FROM entities WHERE id = ?", [drop])
        self._entity_count.clear()

    async def set_label(self, cluster_id: int, label: str) -> None:
        """Name a cluster (every member carries the label)."""

        async def work(tx: Transaction) -> None:
            await tx.execute("UPDATE entities SET cluster_label = ? WHERE cluster_id = ?", [label[:80], cluster_id])

        await self._write("label a cluster", work)

    async def stats(self, agent_id: str) -> dict[str, int]:
        """Counts of the agent's graph."""
        row = (
            await self.store.read(
                "SELECT (SELECT count(*) FROM entities WHERE agent_id = ?), "
                "(SELECT count(*) FROM relations WHERE agent_id = ?), "
                "(SELECT count(DISTINCT cluster_id) FROM entities WHERE agent_id = ? AND cluster_id IS NOT NULL), "
                "(SELECT count(*) FROM memory_edges)",
                [agent_id] * 3,
            )
        )[0]
        return dict(zip(("entities", "relations", "clusters", "memory_edges"), (int(v) for v in row), strict=True))


def _unit(value: float) -> float:
    return min(1.0, max(0.0, float(value)))


def _edge_row(edge: Edge, now: float) -> tuple[str, str, str, str, float, float]:
    if not isinstance(edge, Edge):
        msg = f"edges must be Edge(src_id, dst_id, relation, source, confidence) values, got {edge!r}"
        raise UsageError(msg)
    for name in ("src_id", "dst_id", "relation", "source"):
        value = getattr(edge, name)
        if not isinstance(value, str) or not value.strip() or len(value) > 1_000 or "\x00" in value:
            msg = f"Edge.{name} must be non-empty text (at most 1,000 characters, no NUL), got {value!r}"
            raise UsageError(msg)
        check_text(value, f"Edge.{name}")
    return (edge.src_id, edge.dst_id, edge.relation, edge.source, _unit(edge.confidence), now)
