"""SQL of the graph's walk, sans-IO: one statement per engine (``(sql, params)``, values bound).

One step of a walk follows relations in either direction. Each node expands through at most
``fanout`` relations per direction (an index range that stops at the limit, so a hub with
50,000 relations costs no more than a leaf), and the rows of the walk are bounded in all.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from ..storage.queries import Prepared

__all__ = ["TRAVERSE", "Traverse"]

_TRAVERSE_SQLITE = """
WITH RECURSIVE walk(id, hops, path, rel) AS (
    SELECT j.value, 0, '', '' FROM json_each(?) AS j
    UNION
    SELECT r.dst, w.hops + 1, w.path || w.id || ',', r.type
    FROM walk AS w JOIN relations AS r ON r.id IN (
        SELECT x.id FROM relations AS x WHERE x.src = w.id AND (? IS NULL OR x.type = ?) LIMIT ?
    )
    WHERE w.hops < ?
    UNION
    SELECT r.src, w.hops + 1, w.path || w.id || ',', r.type
    FROM walk AS w JOIN relations AS r ON r.id IN (
        SELECT x.id FROM relations AS x WHERE x.dst = w.id AND (? IS NULL OR x.type = ?) LIMIT ?
    )
    WHERE w.hops < ?
    LIMIT ?
)
SELECT id, min(hops), path, rel FROM walk GROUP BY id ORDER BY min(hops), id
"""
# PostgreSQL allows one recursive reference (both directions in one LATERAL step) and no
# LIMIT inside the recursion: the walk is evaluated lazily, as far as ``bounded`` reads it.
_TRAVERSE_POSTGRES = """
WITH RECURSIVE walk(id, hops, path, rel) AS (
    SELECT s.id, 0, '', '' FROM unnest(CAST(? AS BIGINT[])) AS s(id)
    UNION
    SELECT n.id, w.hops + 1, w.path || w.id || ',', n.type
    FROM walk AS w CROSS JOIN LATERAL (
        (SELECT x.dst AS id, x.type FROM relations AS x
         WHERE x.src = w.id AND (CAST(? AS TEXT) IS NULL OR x.type = ?) LIMIT ?)
        UNION ALL
        (SELECT x.src AS id, x.type FROM relations AS x
         WHERE x.dst = w.id AND (CAST(? AS TEXT) IS NULL OR x.type = ?) LIMIT ?)
    ) AS n
    WHERE w.hops < ?
), bounded AS (SELECT * FROM walk LIMIT ?)
SELECT id, hops, path, rel FROM (
    SELECT DISTINCT ON (id) id, hops, path, rel FROM bounded ORDER BY id, hops
) AS nearest ORDER BY hops, id
"""


def _traverse_sqlite(seeds: Sequence[int], relation: str | None, fanout: int, hops: int, limit: int) -> Prepared:
    return _TRAVERSE_SQLITE, [json.dumps([int(s) for s in seeds]), *(relation, relation, fanout, hops) * 2, limit]


def _traverse_postgres(seeds: Sequence[int], relation: str | None, fanout: int, hops: int, limit: int) -> Prepared:
    return _TRAVERSE_POSTGRES, [[int(s) for s in seeds], *(relation, relation, fanout) * 2, hops, limit]


#: ``(seeds, relation, fanout, hops, limit)`` -> ``(entity id, hops, path, relation)``, nearest first.
Traverse = Callable[[Sequence[int], str | None, int, int, int], Prepared]
#: The walk of each :attr:`.Capabilities.engine`.
TRAVERSE: dict[str, Traverse] = {"sqlite": _traverse_sqlite, "postgresql": _traverse_postgres}
