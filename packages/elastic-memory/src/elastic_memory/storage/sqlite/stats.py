"""What :meth:`.SQLiteStore.stats` reports: the memories' counts, the indexes held in RAM, the file."""

from __future__ import annotations

import os
from typing import Any

from ...filters import Filters
from .. import queries as q
from ..backend import Backend
from ..vectors.leg import Query, VectorLeg
from . import migrations
from .driver import Driver
from .frequent_terms import FrequentTerms

__all__ = ["file_stats"]


async def file_stats(
    store: Backend, read: Query, *, drv: Driver, vectors: VectorLeg, frequent: FrequentTerms
) -> dict[str, Any]:
    """Counts, index and file facts of ``store``; ``read`` runs one query; ``vectors``, ``frequent``: its RAM tiers."""
    now = store.clock()
    live, params = q.live_filter(Filters(), now=now)
    total = int((await read("SELECT count(*) FROM memories", []))[0][0])
    by_state = await read(
        "SELECT sum(deleted_at IS NOT NULL), sum(deleted_at IS NULL AND archived = 1), "
        "sum(deleted_at IS NULL AND expires_at IS NOT NULL AND expires_at <= ?), sum(has_vector) FROM memories",
        [now],
    )
    deleted, archived, expired, stored_vectors = (int(v or 0) for v in by_state[0])
    by_type = dict(await read(f"SELECT type, count(*) FROM memories AS m WHERE {live} GROUP BY type", params))
    by_scope = dict(await read(f"SELECT scope, count(*) FROM memories AS m WHERE {live} GROUP BY scope", params))
    active = sum(int(v) for v in by_type.values())
    page = await read("SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()", [])
    size = int(page[0][0])
    path = store.path
    if path not in ("", ":memory:") and os.path.exists(path):
        size = os.path.getsize(path) + (os.path.getsize(path + "-wal") if os.path.exists(path + "-wal") else 0)
    ram, ann = vectors.ram, vectors.ann
    pin = store.pin
    return {
        "path": store.path,
        "total_memories": total,
        "active_memories": active,
        "deleted_memories": deleted,
        "archived_memories": archived,
        "expired_memories": expired,
        "by_type": by_type,
        "by_scope": by_scope,
        "vectors": stored_vectors,
        "vector_index": store.vector_tier(),
        "vector_index_loaded": len(ram) if ram is not None else 0,
        "vector_index_bytes": (ram.nbytes if ram is not None else 0) + (ann.nbytes if ann is not None else 0),
        "vector_index_dimension": ram.dimension if ram is not None else None,
        "vector_index_skipped": vectors.skipped,
        "vector_index_half": ram.half if ram is not None else False,
        "ann_vectors": len(ann) if ann is not None else 0,
        "ann_type": f"IVF{ann.nlist},SQ8 nprobe={ann.nprobe}" if ann is not None else None,
        "ann_building": vectors.building,
        "ann_threshold": vectors.ann_threshold,
        "ann_error": vectors.ann_error,
        "keyword_tier_terms": frequent.terms,
        "keyword_tier_bytes": frequent.nbytes,
        "keyword_tier_error": frequent.error,
        "embedding_model": pin.model_id if pin else None,
        "embedding_dimension": pin.dimension if pin else None,
        "embedding_family": pin.family if pin else None,
        "schema_version": migrations.LATEST,
        "sqlite_driver": drv.name,
        "sqlite_version": drv.sqlite_version,
        "sqlite_vec_version": drv.vec_version,
        "db_size_bytes": size,
    }
