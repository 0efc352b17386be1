"""A LlamaIndex vector store (:class:`BasePydanticVectorStore`) over one elastic-memory SQLite file.

>>> from llama_index.core.schema import TextNode
>>> from llama_index.core.vector_stores.types import MetadataFilters, VectorStoreQuery
>>> store = ElasticMemoryVectorStore(path=":memory:")
>>> store.add([
...     TextNode(id_="cat", text="The cat sat on the mat.", embedding=[1.0, 0.0], metadata={"topic": "pets"}),
...     TextNode(id_="paris", text="Paris is in France.", embedding=[0.0, 1.0], metadata={"topic": "geo"}),
... ])
['cat', 'paris']
>>> result = store.query(VectorStoreQuery(query_embedding=[0.1, 1.0], similarity_top_k=1))
>>> result.ids, [n.get_content() for n in result.nodes], [round(s, 3) for s in result.similarities]
(['paris'], ['Paris is in France.'], [0.995])
>>> pets = MetadataFilters.from_dicts([{"key": "topic", "value": "pets"}])
>>> store.query(VectorStoreQuery(query_embedding=[0.1, 1.0], similarity_top_k=2, filters=pets)).ids
['cat']
>>> store.close()
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.schema import BaseNode, MetadataMode
from llama_index.core.vector_stores.types import (
    BasePydanticVectorStore,
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
    VectorStoreQueryResult,
)
from llama_index.core.vector_stores.utils import metadata_dict_to_node, node_to_metadata_dict

from elastic_memory import AsyncMemory, Hit, Memory, MemoryRecord, UsageError, resolve_location
from elastic_memory.adapters import Opened, StoreLifecycle
from llama_index.storage.chat_store.elastic_memory._users import open_for_user

from ._embedder import core_embedder

__all__ = ["NODE_ID_KEY", "ElasticMemoryVectorStore"]

#: The metadata key holding the node id: it marks the notes this store wrote, and lets filters name nodes.
NODE_ID_KEY = "_node_id"
#: The most memories one core recall returns.
_PAGE = 1000
#: get_nodes() without ids lists at most this many nodes (each page excludes the ids already seen).
_LIST_LIMIT = 20_000
#: MMR fetches this many times ``similarity_top_k`` candidates unless told otherwise.
_MMR_PREFETCH_FACTOR = 4.0
#: The text embedded once to prove that the core's embedder can embed nodes that arrive without one.
_PROBE = "elastic-memory embedder check"
_MODES = {
    VectorStoreQueryMode.DEFAULT: "semantic",
    VectorStoreQueryMode.TEXT_SEARCH: "keyword",
    VectorStoreQueryMode.SPARSE: "keyword",
    VectorStoreQueryMode.HYBRID: "hybrid",
    VectorStoreQueryMode.MMR: "semantic",
}
_QUERY_KWARGS = ("mmr_threshold", "mmr_prefetch_k", "mmr_prefetch_factor")
#: How deep MetadataFilters may nest (each level becomes up to two of the core's 32 logical levels).
_MAX_NESTING = 15
#: A metadata condition no node meets (``$in`` an empty list).
_NOTHING: dict[str, Any] = {NODE_ID_KEY: {"$in": []}}
F64 = npt.NDArray[np.float64]


# ------------------------------------------------------------------ filters
def _scalar(f: MetadataFilter, *, strings_only: bool = False, orderable: bool = False) -> Any:
    value = f.value
    kinds = "a string" if strings_only else "a string or a number" if orderable else "a string, a number or a bool"
    bad = (
        value is None
        or isinstance(value, list | tuple | set | dict)
        or (strings_only and not isinstance(value, str))
        or (orderable and isinstance(value, bool))
        or not isinstance(value, str | int | float)
    )
    if bad:
        hint = " (use FilterOperator.IS_EMPTY to match missing or empty values)" if value is None else ""
        msg = f"filter on {f.key!r} with operator {f.operator.value!r} takes {kinds}, got {value!r}{hint}"
        raise UsageError(msg)
    if isinstance(value, float) and not math.isfinite(value):
        msg = f"filter on {f.key!r}: {value!r} is not a finite number"
        raise UsageError(msg)
    return value


def _values(f: MetadataFilter) -> list[Any]:
    if not isinstance(f.value, list | tuple):
        msg = f"filter on {f.key!r} with operator {f.operator.value!r} takes a list of values, got {f.value!r}"
        raise UsageError(msg)
    return [_scalar(MetadataFilter.model_construct(key=f.key, value=v, operator=f.operator)) for v in f.value]


def _condition(f: MetadataFilter) -> dict[str, Any]:
    """One LlamaIndex filter as a core metadata filter (the semantics of ``build_metadata_filter_fn``)."""
    if not isinstance(f.key, str) or not f.key:
        msg = f"filter key must be a non-empty string, got {f.key!r}"
        raise UsageError(msg)
    key, op = f.key, f.operator
    simple = {
        FilterOperator.EQ: "$eq",
        FilterOperator.NE: "$ne",
        FilterOperator.CONTAINS: "$contains",
    }
    ordered = {
        FilterOperator.GT: "$gt",
        FilterOperator.GTE: "$gte",
        FilterOperator.LT: "$lt",
        FilterOperator.LTE: "$lte",
    }
    if op in simple:
        return {key: {simple[op]: _scalar(f)}}
    if op in ordered:
        return {key: {ordered[op]: _scalar(f, orderable=True)}}
    if op == FilterOperator.IN:
        return {key: {"$in": _values(f)}}
    if op == FilterOperator.NIN:
        return {key: {"$nin": _values(f)}}
    if op == FilterOperator.ANY:
        values = _values(f)
        return {"$or": [{key: {"$contains": v}} for v in values]} if values else _NOTHING
    if op == FilterOperator.ALL:
        values = _values(f)
        return {"$and": [{key: {"$contains": v}} for v in values]} if values else {key: {"$ne": None}}
    if op == FilterOperator.TEXT_MATCH:
        return {key: {"$contains": _scalar(f, strings_only=True), "$gte": ""}}  # $gte "": the value is a string
    if op == FilterOperator.TEXT_MATCH_INSENSITIVE:
        return {key: {"$icontains": _scalar(f, strings_only=True), "$gte": ""}}
    if op == FilterOperator.IS_EMPTY:
        return {key: {"$empty": True}}
    msg = f"filter operator {op!r} is not supported"
    raise UsageError(msg)


def _compile(filters: MetadataFilters, depth: int = 0) -> dict[str, Any] | None:
    """``filters`` as a core metadata filter; ``None`` when it matches every node (no filters)."""
    if depth > _MAX_NESTING:
        msg = f"MetadataFilters nest more than {_MAX_NESTING} levels deep; flatten them"
        raise UsageError(msg)
    parts: list[dict[str, Any] | None] = []
    for item in filters.filters:
        if isinstance(item, MetadataFilters):
            parts.append(_compile(item, depth + 1))
        elif isinstance(item, MetadataFilter):
            parts.append(_condition(item))
        else:
            msg = f"MetadataFilters.filters holds a {type(item).__name__}; use MetadataFilter or MetadataFilters"
            raise UsageError(msg)
    if not parts:
        return None  # LlamaIndex: no filters match everything, whatever the condition
    condition = filters.condition or FilterCondition.AND
    if condition == FilterCondition.AND:
        kept = [p for p in parts if p is not None]
        return None if not kept else kept[0] if len(kept) == 1 else {"$and": kept}
    if condition not in (FilterCondition.OR, FilterCondition.NOT):
        msg = f"filter condition {condition!r} is not supported; use and, or, not"
        raise UsageError(msg)
    kept = [p for p in parts if p is not None]
    if len(kept) < len(parts):  # an empty nested MetadataFilters matches everything
        return None if condition == FilterCondition.OR else _NOTHING
    anyof = kept[0] if len(kept) == 1 else {"$or": kept}
    return anyof if condition == FilterCondition.OR else {"$not": anyof}


def _all_of(conditions: Sequence[dict[str, Any] | None]) -> dict[str, Any] | None:
    kept = [c for c in conditions if c is not None]
    return None if not kept else kept[0] if len(kept) == 1 else {"$and": kept}


def _narrowed(condition: dict[str, Any] | None, ids: list[str] | None) -> list[dict[str, Any] | None]:
    """``condition`` alone, or AND-ed with each page-sized slice of ``ids``."""
    if ids is None:
        return [condition]
    return [_all_of([condition, {NODE_ID_KEY: {"$in": ids[i : i + _PAGE]}}]) for i in range(0, len(ids), _PAGE)]


def _ids(name: str, values: Any) -> list[str]:
    if isinstance(values, str) or not isinstance(values, Sequence):
        msg = f"{name} must be a list of strings, got {values!r}"
        raise UsageError(msg)
    bad = [v for v in values if not isinstance(v, str) or not v]
    if bad:
        msg = f"{name} must hold non-empty strings, got {bad[:3]!r}"
        raise UsageError(msg)
    return list(dict.fromkeys(values))


def _no_extra(kwargs: Mapping[str, Any], method: str, allowed: Sequence[str] = ()) -> None:
    extra = sorted(set(kwargs) - set(allowed))
    if extra:
        takes = f"keyword arguments {list(allowed)}" if allowed else "no other keyword arguments"
        msg = f"{method}() got unexpected argument(s) {extra}; it takes {takes}"
        raise UsageError(msg)


# -------------------------------------------------------------------- nodes
def _node(found: Hit | MemoryRecord) -> BaseNode:
    """The node a stored note holds (its text is the note's content)."""
    return metadata_dict_to_node(dict(found.metadata), text=found.content)


def _embedding(node: BaseNode) -> list[float] | None:
    raw = node.embedding
    if raw is None:
        return None
    try:
        vector = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as e:
        msg = f"node {node.node_id!r} has an embedding that is not a list of floats: {e}"
        raise UsageError(msg) from e
    if vector.ndim != 1 or vector.size == 0 or not np.isfinite(vector).all() or not vector.any():
        msg = f"node {node.node_id!r} has an unusable embedding (empty, not flat, NaN/infinite or all zeros)"
        raise UsageError(msg)
    return [float(x) for x in vector]


@dataclass
class _Batch:
    """What one add() writes: core items, the vectors given with the nodes, and which nodes have none."""

    ids: list[str]
    items: list[dict[str, Any]]
    vectors: list[list[float] | None]
    nodes: list[BaseNode]

    @property
    def missing(self) -> list[int]:
        return [i for i, v in enumerate(self.vectors) if v is None]


@dataclass
class _Search:
    """One validated query: the core recall to run, and what to do with its hits."""

    mode: VectorStoreQueryMode
    k: int
    fetch: int
    text: str
    vector: list[float] | None
    weight: float | None
    filters: dict[str, Any]
    mmr_threshold: float
    empty: bool = False

    @property
    def needs_vector(self) -> bool:
        return _MODES[self.mode] != "keyword"


def _unit_interval(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        msg = f"{name} must be a number from 0 to 1, got {value!r}"
        raise UsageError(msg)
    return float(value)


def _top_k(name: str, value: Any, least: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= _PAGE:
        msg = f"{name} must be an integer from {least} to {_PAGE}, got {value!r}"
        raise UsageError(msg)
    return value


def _result_count(query: VectorStoreQuery, mode: VectorStoreQueryMode) -> int:
    """Results asked for: ``hybrid_top_k``/``sparse_top_k`` in their modes, else ``similarity_top_k``."""
    if mode == VectorStoreQueryMode.HYBRID and query.hybrid_top_k is not None:
        return _top_k("hybrid_top_k", query.hybrid_top_k, 0)
    if _MODES[mode] == "keyword" and query.sparse_top_k is not None:
        return _top_k("sparse_top_k", query.sparse_top_k, 0)
    return _top_k("similarity_top_k", query.similarity_top_k, 0)


def _mmr(query: F64, matrix: F64, k: int, threshold: float) -> list[tuple[int, float]]:
    """Maximal marginal relevance over unit rows, each pick with its MMR score.

    A pick scores ``threshold * sim(query) - (1 - threshold) * redundancy``, the redundancy
    being its highest similarity to a row picked before (0 for the first pick).
    """
    relevance = matrix @ query
    chosen: list[tuple[int, float]] = []
    redundancy = np.zeros(len(matrix))
    while len(chosen) < min(k, len(matrix)):
        score = threshold * relevance - (1.0 - threshold) * redundancy
        score[[i for i, _ in chosen]] = -np.inf
        best = int(np.argmax(score))
        chosen.append((best, float(score[best])))
        picked = matrix @ matrix[best]
        redundancy = picked if len(chosen) == 1 else np.maximum(redundancy, picked)
    return chosen


class ElasticMemoryVectorStore(StoreLifecycle, BasePydanticVectorStore):
    """LlamaIndex's vector store on one elastic-memory SQLite file (``stores_text=True``).

    Args:
        path: a database file (created if missing) or ``":memory:"``; or else
        memory: an open elastic-memory ``Memory`` or ``AsyncMemory`` (left open by the store).
        embed_model: a LlamaIndex ``BaseEmbedding`` (with ``path=``), used for nodes that arrive
            without an embedding and for queries that arrive without ``query_embedding``; the
            file is pinned to it. Optional: nodes normally arrive embedded by the index.
        collection: the agent id the nodes are written under and searched in (default: the
            Memory's ``agent_id``, ``"default"`` for a file the store opens).
        flat_metadata: refuse node metadata that is not flat (str, int, float, None values).
        **options: ``Memory.open`` options when the store opens ``path`` (``vector_index``,
            ``timeout``...; ``agent_id`` sets the Memory's own agent).

    **Collection.** Every node is one note (``kind="note"``) of the collection's agent id whose
    metadata carries :data:`NODE_ID_KEY`. The store reads, deletes and clears only such notes,
    so it shares a database with the memory loop (turns, facts, lessons) and with notes written
    through ``Memory.remember`` without touching them. Node ids are unique across the database:
    an id held by anything else is refused.

    **What is stored.** The note's content is the node's text (``MetadataMode.NONE``): BM25
    searches it. Its metadata is LlamaIndex's usual payload (``node_to_metadata_dict``): the
    node's own metadata at the top level, so filters address its keys, plus ``_node_content``
    (the node serialised without text and embedding, with relationships), ``_node_type``,
    ``doc_id``/``ref_doc_id``/``document_id`` and ``_node_id``. Nodes come back from that payload
    exactly (id, text, metadata, relationships, type), without their embedding. Vectors are the
    ones the nodes carry (kept as unit float32; cosine is what search uses); a file without
    ``embed_model`` is pinned to the model ``"supplied"`` by the first vectors it stores.

    **Queries.** ``similarity_top_k`` results, best first; ``filters`` take every
    ``FilterOperator`` with LlamaIndex's semantics (a missing key matches only ``!=``, ``nin``
    and ``is_empty``), ``and``/``or``/``not`` and nested ``MetadataFilters``, all evaluated in
    SQL, so filtered queries never return fewer results than exist. Keys are letters, digits,
    ``_`` and ``-``; dots reach into nested metadata. ``doc_ids`` keep nodes of those documents;
    a non-empty ``node_ids`` keeps those nodes (an empty list, which
    ``VectorStoreIndex.as_retriever`` passes, restricts nothing).
    Modes and the similarities they report (the core's score contract, docs/concepts.md):

    - ``DEFAULT``: vector search, cosine similarity in [-1, 1] (negative values kept);
    - ``TEXT_SEARCH`` and ``SPARSE``: BM25 on the text (``query_str``), the BM25 score
      (positive, higher is better); ``sparse_top_k`` overrides the result count;
    - ``HYBRID``: both legs fused, the core's hybrid score in [0, 1] (absolute, so an
      unrelated query scores low), ``alpha`` the vector weight (``None``: the store's
      ``RecallConfig``); ``hybrid_top_k`` overrides the result count;
    - ``MMR``: vector search re-ranked for diversity among ``mmr_prefetch_k`` (or
      ``mmr_prefetch_factor`` x k, default 4 x k) candidates, ``mmr_threshold`` (query field or
      keyword, default 0.5) trading relevance (1) for diversity (0); results in MMR order, each
      with its MMR score, as ``SimpleVectorStore`` reports: ``threshold * cosine - (1 -
      threshold) * redundancy``, the redundancy being the highest cosine to a result before it.

    A result count of 0 returns no results. Other modes are refused. Reads record no access.

    **Writes.** ``add`` upserts by node id in one transaction after validating every node
    (nothing is stored when one is refused); a node without an embedding is embedded by
    ``embed_model`` (else by the core's embedder with ``memory=``; else refused). ``delete``,
    ``delete_nodes`` and ``clear`` erase for good. The ``a*`` methods run on the core's
    ``AsyncMemory`` (and ``embed_model``'s async methods), never through the sync ones.

    **Serialisation.** ``to_dict()`` holds ``path`` (absolute), ``collection`` and ``flat_metadata``:
    ``from_dict(store.to_dict())`` reopens the same file (an in-memory store reopens empty);
    pass ``embed_model=`` to ``from_dict`` again when it is needed.
    """

    stores_text: bool = True
    is_embedding_query: bool = True
    flat_metadata: bool = False
    path: str
    collection: str

    _opened: Opened = PrivateAttr()
    _embed_model: BaseEmbedding | None = PrivateAttr(default=None)
    _embeds: bool = PrivateAttr(default=False)

    def __init__(
        self,
        *,
        path: str | Path | None = None,
        memory: Memory | AsyncMemory | None = None,
        embed_model: BaseEmbedding | None = None,
        collection: str | None = None,
        flat_metadata: bool = False,
        stores_text: bool = True,
        is_embedding_query: bool = True,
        **options: Any,
    ) -> None:
        _check_settings(collection, flat_metadata, stores_text, options)
        if embed_model is not None and not isinstance(embed_model, BaseEmbedding):
            msg = f"embed_model must be a LlamaIndex BaseEmbedding, got {type(embed_model).__name__}"
            raise UsageError(msg)
        embedder = core_embedder(embed_model) if embed_model is not None and memory is None else None
        opened = open_for_user(
            path,
            memory,
            None,
            embedder=embedder,
            embedder_arg="embed_model" if embed_model is not None else None,
            **options,
        )
        fields: dict[str, Any] = {
            "stores_text": True,
            "is_embedding_query": is_embedding_query,
            "flat_metadata": flat_metadata,
            "path": _absolute(opened.sync.path),
            "collection": collection if collection is not None else opened.sync.agent_id,
        }
        try:
            super().__init__(**fields)
        except BaseException:
            opened.close()
            raise
        self._opened = opened
        self._embed_model = embed_model
        self._embeds = embed_model is not None

    @classmethod
    def class_name(cls) -> str:
        """The name LlamaIndex serialises the store under."""
        return "ElasticMemoryVectorStore"

    # ------------------------------------------------------------- lifecycle
    @property
    def client(self) -> Memory:
        """The core store (sync facade)."""
        return self._opened.sync

    @property
    def embed_model(self) -> BaseEmbedding | None:
        """The LlamaIndex embedding model given to the constructor, if any."""
        return self._embed_model

    def __repr__(self) -> str:
        return f"{type(self).__name__}(path={self.path!r}, collection={self.collection!r})"

    # ----------------------------------------------------------------- scope
    def _base(self, metadata: dict[str, Any] | None = None) -> dict[str, Any]:
        """Core filters of the collection's nodes, narrowed by a metadata condition."""
        mine = {NODE_ID_KEY: {"$exists": True}}
        return {"agent_id": self.collection, "kind": "note", "metadata": _all_of([mine, metadata])}

    def _owns(self, record: MemoryRecord) -> bool:
        return record.agent_id == self.collection and record.kind == "note" and NODE_ID_KEY in record.metadata

    def _live(self, record: MemoryRecord) -> bool:
        expired = record.expires_at is not None and record.expires_at <= self.memory.clock()
        return self._owns(record) and record.deleted_at is None and not record.archived and not expired

    def _filters(self, filters: Any) -> dict[str, Any] | None:
        if filters is None:
            return None
        if not isinstance(filters, MetadataFilters):
            msg = f"filters must be LlamaIndex MetadataFilters, got {type(filters).__name__}"
            raise UsageError(msg)
        return _compile(filters)

    # ---------------------------------------------------------------- writes
    def _batch(self, nodes: Sequence[BaseNode]) -> _Batch:
        """Validate every node and build the core items (the last node of a repeated id wins)."""
        if isinstance(nodes, BaseNode) or not isinstance(nodes, Sequence):
            msg = f"nodes must be a list of LlamaIndex nodes, got {type(nodes).__name__}"
            raise UsageError(msg)
        latest: dict[str, int] = {}
        for n, node in enumerate(nodes):
            if not isinstance(node, BaseNode):
                msg = f"nodes[{n}] is a {type(node).__name__}, not a LlamaIndex node"
                raise UsageError(msg)
            latest[node.node_id] = n
        batch = _Batch([node.node_id for node in nodes], [], [], [])
        for n in latest.values():
            node = nodes[n]
            text = node.get_content(metadata_mode=MetadataMode.NONE)
            if not isinstance(text, str) or not text.strip():
                msg = f"node {node.node_id!r} has no text; this store keeps and searches text nodes"
                raise UsageError(msg)
            try:
                metadata = node_to_metadata_dict(node, remove_text=True, flat_metadata=self.flat_metadata)
            except ValueError as e:
                msg = f"node {node.node_id!r}: {e}"
                raise UsageError(msg) from e
            metadata[NODE_ID_KEY] = node.node_id
            item = {"content": text, "id": node.node_id, "metadata": metadata, "agent_id": self.collection}
            batch.items.append({**item, "kind": "note", "pinned": True})  # prune never archives nodes
            batch.vectors.append(_embedding(node))
            batch.nodes.append(node)
        return batch

    def _cannot_embed(self, batch: _Batch, cause: Exception | None = None) -> UsageError:
        missing = [batch.ids[i] for i in batch.missing][:5]
        msg = (
            f"node(s) {missing} have no embedding and this store cannot make one ({cause or 'no embedder'}); "
            "embed the nodes first (VectorStoreIndex does) or pass embed_model= with path="
        )
        return UsageError(msg)

    def _texts_to_embed(self, batch: _Batch) -> list[str]:
        return [batch.nodes[i].get_content(metadata_mode=MetadataMode.EMBED) for i in batch.missing]

    def _refuse_foreign(self, existing: list[MemoryRecord]) -> None:
        foreign = sorted({r.id for r in existing if not self._owns(r)})
        if foreign:
            msg = (
                f"id(s) {foreign[:5]} already name memories outside collection {self.collection!r} "
                "(ids are unique across the database); give the nodes other ids"
            )
            raise UsageError(msg)

    def _fill(self, batch: _Batch, embedded: Sequence[Sequence[float]]) -> None:
        for i, vector in zip(batch.missing, embedded, strict=True):
            batch.vectors[i] = [float(x) for x in vector]

    def add(self, nodes: Sequence[BaseNode], **add_kwargs: Any) -> list[str]:
        """Store ``nodes`` (upsert by node id, one transaction) and return their ids."""
        _no_extra(add_kwargs, "add")
        batch = self._batch(nodes)
        if not batch.items:
            return []
        self._refuse_foreign(self.memory.get_many([i["id"] for i in batch.items]))
        if batch.missing:
            if self._embed_model is not None:
                self._fill(batch, self._embed_model.get_text_embedding_batch(self._texts_to_embed(batch)))
            elif not self._embeds:
                try:
                    self.memory.embed_query(_PROBE)
                except UsageError as e:
                    raise self._cannot_embed(batch, e) from e
                self._embeds = True
        self.memory.remember_many(batch.items, dedupe=False, vectors=batch.vectors)
        return batch.ids

    async def async_add(self, nodes: Sequence[BaseNode], **add_kwargs: Any) -> list[str]:
        """Async :meth:`add`."""
        _no_extra(add_kwargs, "async_add")
        batch = self._batch(nodes)
        if not batch.items:
            return []
        self._refuse_foreign(await self.amemory.get_many([i["id"] for i in batch.items]))
        if batch.missing:
            if self._embed_model is not None:
                self._fill(batch, await self._embed_model.aget_text_embedding_batch(self._texts_to_embed(batch)))
            elif not self._embeds:
                try:
                    await self.amemory.embed_query(_PROBE)
                except UsageError as e:
                    raise self._cannot_embed(batch, e) from e
                self._embeds = True
        await self.amemory.remember_many(batch.items, dedupe=False, vectors=batch.vectors)
        return batch.ids

    def _erase(self, filters: dict[str, Any]) -> None:
        while True:
            page = self.memory.recall("", k=_PAGE, filters=filters, touch=False)
            if page:
                self.memory.forget([h.id for h in page], hard=True)
            if len(page) < _PAGE:
                return

    async def _aerase(self, filters: dict[str, Any]) -> None:
        while True:
            page = await self.amemory.recall("", k=_PAGE, filters=filters, touch=False)
            if page:
                await self.amemory.forget([h.id for h in page], hard=True)
            if len(page) < _PAGE:
                return

    def _ref_doc(self, ref_doc_id: Any, kwargs: Mapping[str, Any], method: str) -> dict[str, Any]:
        _no_extra(kwargs, method)
        if not isinstance(ref_doc_id, str) or not ref_doc_id:
            msg = f"ref_doc_id must be a non-empty string, got {ref_doc_id!r}"
            raise UsageError(msg)
        return self._base({"ref_doc_id": ref_doc_id})

    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        """Erase every node of the document ``ref_doc_id`` (the nodes' SOURCE relationship)."""
        self._erase(self._ref_doc(ref_doc_id, delete_kwargs, "delete"))

    async def adelete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        """Async :meth:`delete`."""
        await self._aerase(self._ref_doc(ref_doc_id, delete_kwargs, "adelete"))

    def _selection(self, node_ids: Any, filters: Any) -> tuple[list[str] | None, dict[str, Any] | None]:
        ids = None if node_ids is None else _ids("node_ids", node_ids)
        return ids, self._filters(filters)

    def _to_delete(self, node_ids: Any, filters: Any, kwargs: Mapping[str, Any], method: str) -> dict[str, Any] | None:
        """Core filters of the nodes to erase; ``None`` when ``node_ids`` is an empty list."""
        _no_extra(kwargs, method)
        if node_ids is None and filters is None:
            msg = f"{method}() needs node_ids or filters; clear() erases every node"
            raise UsageError(msg)
        ids, condition = self._selection(node_ids, filters)
        if ids is not None and not ids:
            return None
        return self._base(_all_of([condition, None if ids is None else {NODE_ID_KEY: {"$in": ids}}]))

    def delete_nodes(
        self,
        node_ids: list[str] | None = None,
        filters: MetadataFilters | None = None,
        **delete_kwargs: Any,
    ) -> None:
        """Erase the nodes among ``node_ids`` that match ``filters`` (either may be ``None``, not both)."""
        selected = self._to_delete(node_ids, filters, delete_kwargs, "delete_nodes")
        if selected is not None:
            self._erase(selected)

    async def adelete_nodes(
        self,
        node_ids: list[str] | None = None,
        filters: MetadataFilters | None = None,
        **delete_kwargs: Any,
    ) -> None:
        """Async :meth:`delete_nodes`."""
        selected = self._to_delete(node_ids, filters, delete_kwargs, "adelete_nodes")
        if selected is not None:
            await self._aerase(selected)

    def clear(self) -> None:
        """Erase every node of the collection (nothing else in the database)."""
        self._erase(self._base())

    async def aclear(self) -> None:
        """Async :meth:`clear`."""
        await self._aerase(self._base())

    # ----------------------------------------------------------------- reads
    def _listing(self, condition: dict[str, Any] | None, seen: list[str]) -> dict[str, Any]:
        """Core filters of the next page of a listing: ``condition``, minus the ids already listed."""
        if len(seen) >= _LIST_LIMIT:
            msg = f"more than {_LIST_LIMIT} nodes match; narrow the filters or pass node_ids"
            raise UsageError(msg)
        return self._base(_all_of([condition, {NODE_ID_KEY: {"$nin": seen}} if seen else None]))

    @staticmethod
    def _in_order(found: list[Hit], ids: list[str] | None) -> list[BaseNode]:
        if ids is None:
            return [_node(h) for h in found]
        by_id = {h.id: h for h in found}
        return [_node(by_id[i]) for i in ids if i in by_id]

    def get_nodes(self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None) -> list[BaseNode]:
        """The collection's nodes among ``node_ids`` (in that order) that match ``filters``; all without either."""
        ids, condition = self._selection(node_ids, filters)
        if ids is not None and condition is None:
            return [_node(r) for r in (self.memory.get_many(ids) if ids else []) if self._live(r)]
        found: list[Hit] = []
        for narrowed in _narrowed(condition, ids):
            seen: list[str] = []
            while True:
                listing = self._listing(narrowed, seen)
                page = self.memory.recall("", k=_PAGE, filters=listing, touch=False)
                found += page
                seen += [h.id for h in page]
                if len(page) < _PAGE:
                    break
        return self._in_order(found, ids)

    async def aget_nodes(
        self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None
    ) -> list[BaseNode]:
        """Async :meth:`get_nodes`."""
        ids, condition = self._selection(node_ids, filters)
        if ids is not None and condition is None:
            return [_node(r) for r in (await self.amemory.get_many(ids) if ids else []) if self._live(r)]
        found: list[Hit] = []
        for narrowed in _narrowed(condition, ids):
            seen: list[str] = []
            while True:
                listing = self._listing(narrowed, seen)
                page = await self.amemory.recall("", k=_PAGE, filters=listing, touch=False)
                found += page
                seen += [h.id for h in page]
                if len(page) < _PAGE:
                    break
        return self._in_order(found, ids)

    # ---------------------------------------------------------------- search
    def _search(self, query: Any, kwargs: Mapping[str, Any]) -> _Search:
        """Validate ``query`` (nothing is read yet)."""
        if not isinstance(query, VectorStoreQuery):
            msg = f"query must be a LlamaIndex VectorStoreQuery, got {type(query).__name__}"
            raise UsageError(msg)
        _no_extra(kwargs, "query", _QUERY_KWARGS)
        mode = query.mode
        if mode not in _MODES:
            supported = ", ".join(m.value for m in _MODES)
            msg = f"query mode {getattr(mode, 'value', mode)!r} is not supported by this store; use one of {supported}"
            raise UsageError(msg)
        mode = VectorStoreQueryMode(mode)
        k = _result_count(query, mode)
        weight = None
        if mode == VectorStoreQueryMode.HYBRID and query.alpha is not None:
            weight = _unit_interval("alpha", query.alpha)
        threshold = query.mmr_threshold if query.mmr_threshold is not None else kwargs.get("mmr_threshold", 0.5)
        fetch = k
        if mode == VectorStoreQueryMode.MMR:
            threshold = _unit_interval("mmr_threshold", threshold)
            fetch = self._prefetch(k, kwargs)
        text = query.query_str if query.query_str is not None else ""
        if not isinstance(text, str):
            msg = f"query_str must be a string, got {type(text).__name__}"
            raise UsageError(msg)
        if query.query_embedding is not None and not isinstance(query.query_embedding, Sequence | np.ndarray):
            msg = f"query_embedding must be a list of floats, got {type(query.query_embedding).__name__}"
            raise UsageError(msg)
        doc_ids = _ids("doc_ids", query.doc_ids) if query.doc_ids else None
        node_ids = _ids("node_ids", query.node_ids) if query.node_ids else None
        condition = _all_of(
            [
                self._filters(query.filters),
                None if doc_ids is None else {"ref_doc_id": {"$in": doc_ids}},
                None if node_ids is None else {NODE_ID_KEY: {"$in": node_ids}},
            ]
        )
        try:
            vector = None if query.query_embedding is None else [float(x) for x in query.query_embedding]
        except (TypeError, ValueError, OverflowError) as e:
            msg = f"query_embedding must be a list of floats: {e}"
            raise UsageError(msg) from e
        search = _Search(mode, k, fetch, text, vector, weight, self._base(condition), float(threshold))
        if not search.needs_vector:
            if query.query_str is None:
                msg = f"{mode.value} needs query_str"
                raise UsageError(msg)
            search.empty = not text.strip()
        elif vector is None and not text.strip():
            msg = f"a {mode.value} query needs query_embedding (or query_str and an embedder to embed it)"
            raise UsageError(msg)
        search.empty = search.empty or k == 0
        return search

    @staticmethod
    def _prefetch(k: int, kwargs: Mapping[str, Any]) -> int:
        given = kwargs.get("mmr_prefetch_k")
        if given is not None:
            return max(k, _top_k("mmr_prefetch_k", given))
        factor = kwargs.get("mmr_prefetch_factor", _MMR_PREFETCH_FACTOR)
        if isinstance(factor, bool) or not isinstance(factor, int | float) or not math.isfinite(factor) or factor < 1:
            msg = f"mmr_prefetch_factor must be a number of at least 1, got {factor!r}"
            raise UsageError(msg)
        return min(_PAGE, max(k, math.ceil(k * factor)))

    def _cannot_embed_query(self, cause: Exception) -> UsageError:
        msg = (
            f"the query has no query_embedding and this store cannot embed query_str ({cause}); "
            "pass query_embedding, or embed_model= with path="
        )
        return UsageError(msg)

    def _recall_args(self, search: _Search) -> dict[str, Any]:
        return {
            "k": search.fetch,
            "mode": _MODES[search.mode],
            "filters": search.filters,
            "touch": False,
            "vector": search.vector if search.needs_vector else None,
            "vector_weight": search.weight,
        }

    def _result(self, search: _Search, hits: list[Hit], vectors: Mapping[str, list[float]]) -> VectorStoreQueryResult:
        if search.mode == VectorStoreQueryMode.MMR:
            candidates = [h for h in hits if h.id in vectors and h.vector_score is not None]
            if candidates:
                query = np.asarray(search.vector, dtype=np.float64)
                query /= np.abs(query).max()  # first to at most 1: a huge vector's square would overflow
                query /= np.linalg.norm(query)
                matrix = np.asarray([vectors[h.id] for h in candidates], dtype=np.float64)
                scored = [(candidates[i], mmr) for i, mmr in _mmr(query, matrix, search.k, search.mmr_threshold)]
            else:
                scored = []
        elif search.mode == VectorStoreQueryMode.DEFAULT:
            cosines = [(h, h.vector_score) for h in hits if h.vector_score is not None]
            scored = sorted(cosines, key=lambda pair: -pair[1])[: search.k]
        else:
            scored = [(h, float(h.score)) for h in hits[: search.k]]
        return VectorStoreQueryResult(
            nodes=[_node(h) for h, _ in scored],
            similarities=[float(s) for _, s in scored],
            ids=[h.id for h, _ in scored],
        )

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        """The ``similarity_top_k`` nodes best matching ``query``, with similarities (see the class docs)."""
        search = self._search(query, kwargs)
        if search.empty:
            return VectorStoreQueryResult(nodes=[], similarities=[], ids=[])
        if search.needs_vector and search.vector is None:
            try:
                if self._embed_model is not None:
                    search.vector = list(self._embed_model.get_query_embedding(search.text))
                else:
                    search.vector = self.memory.embed_query(search.text)
            except UsageError as e:
                raise self._cannot_embed_query(e) from e
        hits = self.memory.recall(search.text, **self._recall_args(search))
        vectors = self.memory.vectors([h.id for h in hits]) if hits and search.mode == VectorStoreQueryMode.MMR else {}
        return self._result(search, hits, vectors)

    async def aquery(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        """Async :meth:`query`."""
        search = self._search(query, kwargs)
        if search.empty:
            return VectorStoreQueryResult(nodes=[], similarities=[], ids=[])
        if search.needs_vector and search.vector is None:
            try:
                if self._embed_model is not None:
                    search.vector = list(await self._embed_model.aget_query_embedding(search.text))
                else:
                    search.vector = await self.amemory.embed_query(search.text)
            except UsageError as e:
                raise self._cannot_embed_query(e) from e
        hits = await self.amemory.recall(search.text, **self._recall_args(search))
        mmr = hits and search.mode == VectorStoreQueryMode.MMR
        vectors = await self.amemory.vectors([h.id for h in hits]) if mmr else {}
        return self._result(search, hits, vectors)


def _absolute(path: str) -> str:
    """``path`` made absolute (a server URL as given), so a serialised store reopens the same store."""
    return resolve_location(path)


def _check_settings(collection: Any, flat_metadata: Any, stores_text: Any, options: Mapping[str, Any]) -> None:
    if collection is not None and (not isinstance(collection, str) or not collection.strip() or len(collection) > 256):
        msg = f"collection must be a non-empty agent id of at most 256 characters, got {collection!r}"
        raise UsageError(msg)
    if not isinstance(flat_metadata, bool):
        msg = f"flat_metadata must be True or False, got {flat_metadata!r}"
        raise UsageError(msg)
    if stores_text is not True:
        msg = "ElasticMemoryVectorStore always stores text (stores_text=True)"
        raise UsageError(msg)
    if "embedder" in options:
        msg = "pass a LlamaIndex embedding model as embed_model= (the core's embedder= is set from it)"
        raise UsageError(msg)
