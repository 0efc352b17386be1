"""A Haystack ``DocumentStore`` over one elastic-memory SQLite file.

>>> from haystack import Document
>>> store = ElasticMemoryDocumentStore(path=":memory:")
>>> store.write_documents([
...     Document(id="cat", content="The cat sat on the mat.", embedding=[1.0, 0.0], meta={"topic": "pets"}),
...     Document(id="paris", content="Paris is in France.", embedding=[0.0, 1.0], meta={"topic": "geo"}),
... ])
2
>>> [d.id for d in store.filter_documents({"field": "meta.topic", "operator": "==", "value": "pets"})]
['cat']
>>> [d.id for d in store.embedding_retrieval([0.1, 1.0], top_k=1)]
['paris']
>>> [d.id for d in store.bm25_retrieval("cat mat")]
['cat']
>>> store.close()
"""

from __future__ import annotations

import base64
import math
import time
from collections.abc import Coroutine, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal, TypeVar

import numpy as np
from haystack import Document, default_from_dict, default_to_dict
from haystack.document_stores.errors import DocumentStoreError, DuplicateDocumentError
from haystack.document_stores.types import DuplicatePolicy
from haystack.errors import FilterError
from haystack.utils.misc import expit

from elastic_memory import AsyncMemory, Hit, Memory, MemoryRecord, resolve_location
from elastic_memory.adapters import Opened, StoreLifecycle, open_memory, run_sync, text_arg
from elastic_memory.embedders import unit_vectors

from .filters import DOC_KEY, ID_KEY, Compiled, compile_filters, select, validate_filters

__all__ = ["DEFAULT_COLLECTION", "DOCUMENT_TAG", "ElasticMemoryDocumentStore"]

T = TypeVar("T")

#: The agent id documents are written under unless told otherwise.
DEFAULT_COLLECTION = "haystack"
#: The tag every document note carries: with the agent id and ``kind="note"`` it marks the store's rows.
DOCUMENT_TAG = "haystack-document"
#: Metadata keys of a document note: the Haystack id, the insertion sequence, the exact document
#: (without its embedding), and where its exact embedding is. Most embeddings are kept only in
#: the store's vector table: a model's output (float32, of length about one) is exactly the unit
#: vector the store keeps times a length, ``_NORM`` (1.0: the unit vector itself), checked when the
#: document is written. Any other embedding (float64 values, no direction, a vector the store
#: would round) is also kept in the note, ``_EMB``: base64 of little-endian float64, or of float32
#: after :data:`_F32` when every value is a float32. A note stays small, so SQL filters past it fast.
_ID, _SEQ, _DOC, _EMB, _NORM = ID_KEY, "_hs_seq", DOC_KEY, "_hs_emb", "_hs_norm"
#: The most memories one core recall returns.
_PAGE = 1000
#: The note content of documents without text (the core needs some; the document keeps ``content=None``).
_NO_TEXT = "\u200b"
#: The prefix of an embedding packed as float32.
_F32 = "f4:"
#: ``scale_score`` of BM25 scores, as Haystack's reference store does it.
_BM25_SCALING = 8
_Mode = Literal["keyword", "semantic", "hybrid"]


def _absolute(path: str) -> str:
    """``path`` made absolute (a server URL as given), so a serialised store reopens the same store."""
    return resolve_location(path)


def _array(document: Document) -> np.ndarray[Any, Any] | None:
    """The document's embedding as float64 (``None`` without one)."""
    if document.embedding is None:
        return None
    try:
        array = np.asarray(document.embedding, dtype="<f8")
    except (TypeError, ValueError, OverflowError) as e:
        msg = f"document {document.id!r} has an embedding that is not a list of floats: {e}"
        raise ValueError(msg) from e
    if array.ndim != 1:
        msg = f"document {document.id!r} has an embedding that is not a flat list of floats"
        raise ValueError(msg)
    return array


def _indexable(array: np.ndarray[Any, Any] | None) -> np.ndarray[Any, Any] | None:
    """The vector to index: ``None`` when it has no direction or is not finite (the document keeps it anyway).

    An array, not a list: the core reads a batch of arrays as one matrix.
    """
    if array is None or array.size == 0 or not np.isfinite(array).all() or not array.any():
        return None
    return array


def _vector(embedding: Sequence[float] | None) -> list[float] | None:
    """The vector to index for ``embedding``: ``None`` when it has no direction (the document keeps it anyway)."""
    if embedding is None or len(embedding) == 0:
        return None
    try:
        values = [float(x) for x in embedding]
    except (TypeError, ValueError, OverflowError):  # OverflowError: an int past float range
        return None
    if not all(math.isfinite(x) for x in values) or not any(values):
        return None
    return values


def _pack(array: np.ndarray[Any, Any]) -> str:
    """``array`` (float64) as base64, as float32 when that is exact (half the bytes)."""
    with np.errstate(over="ignore"):  # past float32 range: inf, never equal, kept as float64
        single = array.astype("<f4")
    if np.array_equal(single, array):  # NaN never equal: kept as float64
        return _F32 + base64.b64encode(single.tobytes()).decode("ascii")
    return base64.b64encode(array.tobytes()).decode("ascii")


def _unpack(packed: str) -> list[float]:
    if packed.startswith(_F32):
        single: list[float] = np.frombuffer(base64.b64decode(packed[len(_F32) :]), dtype="<f4").tolist()
        return single
    values: list[float] = np.frombuffer(base64.b64decode(packed), dtype="<f8").tolist()
    return values


def _kept(arrays: list[np.ndarray[Any, Any] | None]) -> list[float | None]:
    """Per indexable array: the ``_NORM`` rebuilding it exactly from the unit vector the store keeps, else ``None``."""
    out: list[float | None] = [None] * len(arrays)
    by_width: dict[int, list[int]] = {}
    for n, array in enumerate(arrays):
        if array is not None:
            by_width.setdefault(array.size, []).append(n)
    for rows in by_width.values():
        matrix = np.stack([arrays[n] for n in rows])  # type: ignore[misc]
        with np.errstate(all="ignore"):  # past float32 range: not kept this way
            single = (matrix.astype("<f4").astype("<f8") == matrix).all(axis=1)
            unit, _ = unit_vectors(matrix)
            wide = unit.astype("<f8")
            norms = np.linalg.norm(matrix, axis=1)
            rebuilt = (wide * norms[:, None]).astype("<f4").astype("<f8")
        same = single & (wide == matrix).all(axis=1)
        scaled = single & np.isfinite(norms) & (rebuilt == matrix).all(axis=1)
        for n, row in enumerate(rows):
            if same[n]:
                out[row] = 1.0
            elif scaled[n] and float(norms[n]) != 1.0:
                out[row] = float(norms[n])
    return out


def _rebuilt(unit: list[float], norm: float) -> list[float]:
    """The embedding a document note's ``_NORM`` says the stored unit vector ``unit`` stands for (see :func:`_kept`)."""
    if norm == 1.0:
        return unit
    rebuilt: list[float] = (np.asarray(unit, dtype="<f8") * norm).astype("<f4").tolist()
    return rebuilt


def _check_documents(documents: Any) -> list[Document]:
    if not isinstance(documents, Iterable) or isinstance(documents, str | bytes | Mapping):
        msg = "Please provide a list of Documents."
        raise ValueError(msg)
    docs = list(documents)  # a generator is read once, here
    if any(not isinstance(d, Document) for d in docs):
        msg = "Please provide a list of Documents."
        raise ValueError(msg)
    return docs


def _check_required(filters: Any) -> None:
    """delete_by_filter and update_by_filter need a real filter: an empty one never means "everything"."""
    if not filters:
        msg = (
            f"'operator' key missing in {filters!r}: pass a filter (to delete every document, use delete_all_documents)"
        )
        raise FilterError(msg)


def _meta_key(field: Any) -> str:
    return text_arg(field, "metadata_field").removeprefix("meta.")


def _hashable(value: Any) -> Any:
    """A hashable stand-in for a metadata value (lists, tuples and dicts by content), as the reference's."""
    if isinstance(value, list):
        return ("list", tuple(_hashable(item) for item in value))
    if isinstance(value, tuple):
        return ("tuple", tuple(_hashable(item) for item in value))
    if isinstance(value, dict):
        return ("dict", frozenset((_hashable(k), _hashable(v)) for k, v in value.items()))
    return value


class ElasticMemoryDocumentStore(StoreLifecycle):
    """Haystack's ``DocumentStore`` on one elastic-memory SQLite file, sync and truly async.

    Args:
        path: a database file (created if missing) or ``":memory:"``, opened and closed by the
            store (keyword search, and vector search over the embeddings the documents carry); or else
        memory: an open elastic-memory ``Memory`` or ``AsyncMemory`` (left open by the store).
        collection: the agent id documents are written under (default ``"haystack"``).
        strict_datetime_comparison: as ``InMemoryDocumentStore``'s: refuse comparing naive and
            aware datetimes in filters instead of reconciling them.

    **Collection.** Every document is one note (``kind="note"``) of the collection's agent id,
    tagged :data:`DOCUMENT_TAG` and pinned (so forgetting and consolidation never archive it).
    The store reads, counts, deletes and clears only such notes, so it shares a database with
    the memory loop (turns, facts, lessons) and with ``Memory.remember`` notes without touching
    them. Memory ids are unique across the database: a document id held by another memory is
    refused with ``DocumentStoreError``.

    **What is stored.** The note's content is the document's text (BM25 searches it); its
    metadata holds the document exactly (``Document.to_dict(flatten=False)``: meta, blob, sparse
    embedding; the embedding beside it as the original float64 values, base64-encoded), its id
    and an insertion sequence. The
    embedding is also indexed as a unit float32 vector for search (a file opened by the store
    is pinned to the model ``"supplied"`` by the first embedding it indexes; all embeddings of
    one file share its width). Documents come back exactly as written, in insertion order,
    with ``score=None`` from :meth:`filter_documents`.

    **Filters.** Haystack's filter DSL is evaluated with Haystack's own
    ``document_matches_filter`` over the collection's documents (see ``filters.py``): exact
    semantics and the reference's errors (``ValueError`` for the legacy syntax,
    ``FilterError`` for malformed conditions). Retrieval narrows the core's search to the
    matching ids.
    """

    _opened: Opened

    def __init__(
        self,
        *,
        path: str | Path | None = None,
        memory: Memory | AsyncMemory | None = None,
        collection: str = DEFAULT_COLLECTION,
        strict_datetime_comparison: bool = False,
    ) -> None:
        if not isinstance(collection, str) or not collection.strip() or len(collection) > 256:
            msg = f"collection must be a non-empty agent id of at most 256 characters, got {collection!r}"
            raise ValueError(msg)
        self.collection = collection
        self.strict_datetime_comparison = bool(strict_datetime_comparison)
        self._opened = open_memory(path, memory, embedder=None)
        self.path = _absolute(self._opened.sync.path)
        self._last_seq = 0
        self._vector_table: bool | None = None  # whether the store keeps vectors: known at the first write

    # ------------------------------------------------------------- plumbing
    def _run(self, coro: Coroutine[Any, Any, T], name: str) -> T:
        """Run one of the async implementations to completion from sync code (on the core's loop)."""
        return run_sync(coro, name)

    async def close_async(self) -> None:
        """:meth:`aclose` under Haystack's name for it, which its ``Agent`` and ``DocumentWriter`` call."""
        await self.aclose()

    def to_dict(self) -> dict[str, Any]:
        """Serialise the store: its (absolute) database path and collection."""
        return default_to_dict(
            self,
            path=self.path,
            collection=self.collection,
            strict_datetime_comparison=self.strict_datetime_comparison,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ElasticMemoryDocumentStore:
        """Rebuild a store from :meth:`to_dict` (opening the file at its path)."""
        return default_from_dict(cls, data)

    def _base(self, metadata: dict[str, Any] | None = None) -> dict[str, Any]:
        """Core filters of the collection's document notes (those also matching ``metadata`` when given)."""
        return {
            "agent_id": self.collection,
            "kind": "note",
            "tags": [DOCUMENT_TAG],
            # Only document notes (never a stray note of the collection), then the filter's conditions.
            "metadata": {**(metadata or {}), _DOC: {"$exists": True}},
        }

    def _compile(self, filters: dict[str, Any] | None) -> Compiled:
        validate_filters(filters)
        return compile_filters(filters)

    def _check(self, docs: list[Document], filters: dict[str, Any] | None, compiled: Compiled) -> list[Document]:
        """``docs`` (the SQL's candidates) that match ``filters``: checked in Python unless the SQL was exact."""
        if compiled.exact:
            return docs
        return select(docs, filters, strict_datetime_comparison=self.strict_datetime_comparison)

    def _ours(self, record: MemoryRecord | Hit) -> bool:
        return (
            record.agent_id == self.collection
            and record.kind == "note"
            and DOCUMENT_TAG in record.tags
            and isinstance(record.metadata.get(_DOC), dict)
        )

    @staticmethod
    def _has_embedding(found: MemoryRecord | Hit) -> bool:
        return found.metadata.get(_EMB) is not None or _NORM in found.metadata

    async def _vectors(self, found: Sequence[MemoryRecord | Hit]) -> dict[str, list[float]]:
        """The embeddings of ``found`` kept only in the vector table (see :data:`_NORM`), by memory id."""
        ids = [f.id for f in found if f.metadata.get(_EMB) is None and _NORM in f.metadata]
        if not ids:
            return {}
        units = await self.amemory.vectors(ids)
        return {f.id: _rebuilt(units[f.id], float(f.metadata[_NORM])) for f in found if f.id in units}

    @staticmethod
    def _document(
        found: MemoryRecord | Hit, score: float | None = None, *, vectors: Mapping[str, list[float]] | None = None
    ) -> Document:
        """The Haystack document of a note; its embedding from the note or ``vectors`` (``None``: without it)."""
        data = found.metadata[_DOC]
        vector = None
        if vectors is not None:
            packed = found.metadata.get(_EMB)
            vector = _unpack(packed) if packed is not None else vectors.get(found.id)
        if data.get("blob") is None and data.get("sparse_embedding") is None:
            meta = data.get("meta")
            return Document(
                id=data["id"],
                content=data.get("content"),
                meta=meta if isinstance(meta, dict) else {},
                score=score,
                embedding=vector,
            )
        data = dict(data)
        data["score"] = score
        data["embedding"] = vector
        return Document.from_dict(data)

    def _next_seq(self, count: int) -> int:
        base = max(time.time_ns(), self._last_seq + 1)
        self._last_seq = base + count
        return base

    def _item(
        self, document: Document, seq: int, array: np.ndarray[Any, Any] | None, norm: float | None
    ) -> dict[str, Any]:
        """The core item of ``document`` (its embedding as ``array``; ``norm``: see :func:`_kept`)."""
        packed = None if array is None or norm is not None else _pack(array)
        # Document.to_dict(flatten=False) without the embedding and the score, and without its deep
        # copies (the core serialises the item at once).
        payload = {
            "id": document.id,
            "content": document.content,
            "blob": None if document.blob is None else document.blob.to_dict(),
            "meta": document.meta,
            "score": None,
            "embedding": None,
            "sparse_embedding": None if document.sparse_embedding is None else document.sparse_embedding.to_dict(),
        }
        text = document.content if isinstance(document.content, str) and document.content.strip() else _NO_TEXT
        item: dict[str, Any] = {
            "content": text,
            "id": document.id,
            "agent_id": self.collection,
            "tags": [DOCUMENT_TAG],
            "pinned": True,
            "metadata": {_ID: document.id, _SEQ: seq, _DOC: payload},
        }
        item["metadata"].update({_EMB: packed} if norm is None else {_NORM: norm})
        return item

    # ----------------------------------------------------------------- reads
    async def _hits(self, metadata: dict[str, Any] | None = None) -> list[MemoryRecord]:
        """The live document notes of the collection (those matching ``metadata``), in insertion order."""
        found: list[MemoryRecord] = []
        after: str | None = None
        while True:
            page = await self.amemory.list(self._base(metadata), limit=_PAGE, after=after)
            found += [r for r in page.records if self._ours(r)]
            if page.next is None:
                break
            after = page.next
        found.sort(key=lambda r: r.metadata.get(_SEQ, 0))
        return found

    async def _all(self, *, embeddings: bool = True) -> list[Document]:
        records = await self._hits()
        vectors = await self._vectors(records) if embeddings else None
        return [self._document(h, vectors=vectors) for h in records]

    async def _matching(
        self, filters: dict[str, Any] | None, *, embeddings: bool = True
    ) -> list[tuple[MemoryRecord, Document]]:
        """The notes and documents matching ``filters``: the SQL selects, Python checks what SQL cannot."""
        compiled = self._compile(filters)
        if compiled.never:
            return []
        records = await self._hits(compiled.sql)
        # A filter Python checks may read any field (the embedding too): it sees whole documents.
        vectors = await self._vectors(records) if embeddings or not compiled.exact else None
        pairs = [(r, self._document(r, vectors=vectors)) for r in records]
        if compiled.exact:
            return pairs
        keep = {id(d) for d in self._check([d for _, d in pairs], filters, compiled)}
        return [(r, d) for r, d in pairs if id(d) in keep]

    async def _select(self, filters: dict[str, Any] | None, *, embeddings: bool = True) -> list[Document]:
        return [d for _, d in await self._matching(filters, embeddings=embeddings)]

    async def _count(self, filters: dict[str, Any] | None = None) -> int:
        compiled = self._compile(filters)
        if compiled.never:
            return 0
        if not compiled.exact:
            return len(await self._select(filters))
        counts = await self.amemory.tags(filters=self._base(compiled.sql), prefix=DOCUMENT_TAG)
        return counts.get(DOCUMENT_TAG, 0)

    # ---------------------------------------------------------------- writes
    async def _write(self, documents: Any, policy: DuplicatePolicy) -> int:
        docs = _check_documents(documents)
        if policy == DuplicatePolicy.NONE:
            policy = DuplicatePolicy.FAIL
        if not docs:
            return 0
        chosen: dict[str, Document] = {}
        for doc in docs:
            if doc.id in chosen:
                if policy == DuplicatePolicy.FAIL:
                    msg = f"ID '{doc.id}' already exists."
                    raise DuplicateDocumentError(msg)
                if policy == DuplicatePolicy.SKIP:
                    continue
                del chosen[doc.id]  # OVERWRITE: the last one wins, and is the newest
            chosen[doc.id] = doc
        existing = await self.amemory.get_many(list(chosen))
        for record in existing:
            if not self._ours(record):
                msg = f"ID '{record.id}' is held by another memory of this database (not a document of this store)."
                raise DocumentStoreError(msg)
            if record.deleted_at is not None or record.archived:
                continue  # hidden: replaced like a new document
            if policy == DuplicatePolicy.FAIL:
                msg = f"ID '{record.id}' already exists."
                raise DuplicateDocumentError(msg)
            if policy == DuplicatePolicy.SKIP:
                del chosen[record.id]
        written = list(chosen.values())
        if written:
            seq = self._next_seq(len(written))
            await self._remember_documents([(doc, seq + n) for n, doc in enumerate(written)])
        return len(docs) if policy == DuplicatePolicy.OVERWRITE else len(written)

    async def _remember_documents(self, documents: list[tuple[Document, int]]) -> None:
        """Write documents (with their insertion sequence) through the core's batch path, one transaction."""
        if not documents:
            return
        arrays = [_array(doc) for doc, _ in documents]
        vectors = [_indexable(a) for a in arrays]
        if self._vector_table is None:  # SQLite without sqlite-vec keeps no vectors (PostgreSQL always does)
            self._vector_table = (await self.amemory.stats()).get("sqlite_vec_version", "pgvector") is not None
        norms = _kept(vectors) if self._vector_table else [None] * len(vectors)
        items = [self._item(doc, seq, a, n) for (doc, seq), a, n in zip(documents, arrays, norms, strict=True)]
        await self.amemory.remember_many(items, dedupe=False, vectors=vectors)  # type: ignore[arg-type]  # arrays

    async def _delete_ids(self, ids: Any) -> int:
        if isinstance(ids, str | bytes) or not isinstance(ids, Iterable):
            msg = f"document_ids must be a list of strings, got {type(ids).__name__}"
            raise ValueError(msg)
        wanted = list(dict.fromkeys(i for i in ids if isinstance(i, str) and i))
        if not wanted:
            return 0
        ours = [r.id for r in await self.amemory.get_many(wanted) if self._ours(r)]
        await self._forget(ours)
        return len(ours)

    async def _forget(self, ids: list[str]) -> None:
        for start in range(0, len(ids), _PAGE):
            await self.amemory.forget(ids[start : start + _PAGE], hard=True)

    async def _delete_all(self) -> None:
        await self._forget([h.id for h in await self._hits()])

    async def _delete_by_filter(self, filters: dict[str, Any]) -> int:
        _check_required(filters)
        matching = await self._matching(filters)
        await self._forget([r.id for r, _ in matching])
        return len(matching)

    async def _update_by_filter(self, filters: dict[str, Any], meta: dict[str, Any]) -> int:
        _check_required(filters)
        validate_filters(filters)
        if not isinstance(meta, Mapping):
            msg = f"meta must be a dict, got {type(meta).__name__}"
            raise ValueError(msg)
        matching = await self._matching(filters)
        # In place: same ids and insertion positions.
        await self._remember_documents(
            [(replace(d, meta={**d.meta, **meta}), int(r.metadata.get(_SEQ, 0))) for r, d in matching]
        )
        return len(matching)

    # ------------------------------------------------------- metadata reports
    async def _count_unique(self, filters: dict[str, Any] | None, metadata_fields: list[str]) -> dict[str, int]:
        docs = await self._select(filters, embeddings=False)
        result: dict[str, int] = {}
        for field in metadata_fields:
            key = _meta_key(field)
            result[key] = len({_hashable(d.meta[key]) for d in docs if d.meta.get(key) is not None})
        return result

    async def _fields_info(self) -> dict[str, dict[str, str]]:
        types: dict[str, str] = {}
        for doc in await self._all(embeddings=False):
            for key, value in doc.meta.items():
                if value is None:
                    continue
                if isinstance(value, bool):
                    types[key] = "boolean"
                elif isinstance(value, int):
                    types[key] = "int"
                elif isinstance(value, float):
                    types[key] = "float"
                else:
                    types[key] = "keyword"
        return {k: {"type": v} for k, v in types.items()}

    async def _min_max(self, metadata_field: str) -> dict[str, Any]:
        key = _meta_key(metadata_field)
        values = [
            d.meta[key]
            for d in await self._all(embeddings=False)
            if d.meta.get(key) is not None and isinstance(d.meta[key], int | float | str)
        ]
        if not values:
            return {"min": None, "max": None}
        try:
            return {"min": min(values), "max": max(values)}
        except TypeError:
            return {"min": None, "max": None}

    async def _unique_values(
        self, metadata_field: str, search_term: str | None, from_: int, size: int, filters: dict[str, Any] | None
    ) -> tuple[list[Any], int]:
        key = _meta_key(metadata_field)
        for name, number in (("from_", from_), ("size", size)):
            if isinstance(number, bool) or not isinstance(number, int) or number < 0:
                msg = f"{name} must be a non-negative integer, got {number!r}"
                raise ValueError(msg)
        if search_term is not None:
            text_arg(search_term, "search_term")
        unique: dict[tuple[str, Any], Any] = {}
        for doc in await self._select(filters, embeddings=False):
            value = doc.meta.get(key)
            if value is not None:
                unique.setdefault((type(value).__name__, _hashable(value)), value)
        if search_term:
            term = search_term.lower()
            unique = {k: v for k, v in unique.items() if term in str(v).lower()}
        ordered = sorted(unique, key=lambda k: (str(unique[k]), k[0]))
        return [unique[k] for k in ordered[from_ : from_ + size]], len(ordered)

    # ------------------------------------------------------------- retrieval
    async def _retrieve(
        self,
        mode: _Mode,
        query: str,
        vector: list[float] | None,
        filters: dict[str, Any] | None,
        top_k: int,
        scale_score: bool,
        return_embedding: bool,
        vector_weight: float | None = None,
    ) -> list[Document]:
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 0:
            msg = f"top_k must be a non-negative integer, got {top_k!r}"
            raise ValueError(msg)
        if top_k == 0:
            return []  # as InMemoryDocumentStore: no documents, not an error
        compiled = self._compile(filters)
        if compiled.never:
            return []
        metadata, k = compiled.sql, top_k
        while True:
            hits = await self.amemory.recall(
                query,
                k=min(k, _PAGE),
                mode=mode,
                filters=self._base(metadata),
                touch=False,
                vector=vector,
                vector_weight=vector_weight,
            )
            vectors = await self._vectors(hits) if return_embedding else None
            found = self._scored(hits, mode, scale_score, vectors)
            if compiled.exact:
                break
            found = self._check(found, filters, compiled)
            if len(found) >= top_k or len(hits) < min(k, _PAGE):
                break
            if k < _PAGE:
                k *= 8  # the SQL let through documents Python refused: look further down the ranking
                continue
            # Still short a page down: narrow to the ids of every matching document (checked in Python).
            ids = [d.id for d in await self._select(filters, embeddings=False)]
            if not ids:
                return []
            metadata = {_ID: {"$in": ids}}
            compiled = Compiled(metadata, never=False, exact=True)
        found.sort(key=lambda d: -(d.score or 0.0))
        return found[:top_k]

    def _scored(
        self, hits: list[Hit], mode: _Mode, scale_score: bool, vectors: Mapping[str, list[float]] | None
    ) -> list[Document]:
        """The documents of ``hits`` with Haystack's scores: BM25, cosine similarity, or the fused score.

        ``vectors``: the embeddings read for ``hits`` (``None``: documents without them).
        """
        out: list[Document] = []
        for hit in hits:
            if not self._ours(hit):
                continue
            if mode == "keyword":
                raw = hit.keyword_score
                score = None if raw is None else (expit(raw / _BM25_SCALING) if scale_score else raw)
            elif mode == "semantic":
                raw = hit.vector_score
                score = None if raw is None else ((raw + 1) / 2 if scale_score else raw)
                if not self._has_embedding(hit):
                    continue  # a document without an embedding is never a semantic hit
            else:
                score = hit.score
            if score is None:
                continue
            out.append(self._document(hit, float(score), vectors=vectors))
        return out

    @staticmethod
    def _query(query: Any) -> str:
        if not isinstance(query, str) or not query.strip():
            msg = "Query should be a non-empty string"
            raise ValueError(msg)
        return query

    @staticmethod
    def _query_vector(query_embedding: Any, *, optional: bool = False) -> list[float] | None:
        if query_embedding is None and optional:
            return None
        if isinstance(query_embedding, str | bytes) or not isinstance(query_embedding, Sequence):
            msg = "query_embedding should be a non-empty list of floats."
            raise ValueError(msg)
        vector = _vector(query_embedding)
        if vector is None:
            msg = "query_embedding should be a non-empty list of finite floats, not all zero."
            raise ValueError(msg)
        return vector

    # ============================================================ public API
    def count_documents(self) -> int:
        """How many documents the store holds."""
        return self._run(self._count(), "count_documents")

    async def count_documents_async(self) -> int:
        """Async :meth:`count_documents`."""
        return await self._count()

    def filter_documents(self, filters: dict[str, Any] | None = None) -> list[Document]:
        """The documents matching ``filters`` (all without), in insertion order, ``score=None``."""
        return self._run(self._select(filters), "filter_documents")

    async def filter_documents_async(self, filters: dict[str, Any] | None = None) -> list[Document]:
        """Async :meth:`filter_documents`."""
        return await self._select(filters)

    def write_documents(self, documents: list[Document], policy: DuplicatePolicy = DuplicatePolicy.NONE) -> int:
        """Write ``documents`` in one transaction; returns how many were written.

        ``policy``: ``NONE`` and ``FAIL`` raise ``DuplicateDocumentError`` (nothing written) when
        an id exists or repeats; ``SKIP`` keeps the stored document (and the first of repeated
        ids); ``OVERWRITE`` replaces it (the last of repeated ids wins) and returns ``len(documents)``.
        """
        return self._run(self._write(documents, policy), "write_documents")

    async def write_documents_async(
        self, documents: list[Document], policy: DuplicatePolicy = DuplicatePolicy.NONE
    ) -> int:
        """Async :meth:`write_documents`."""
        return await self._write(documents, policy)

    def delete_documents(self, document_ids: list[str]) -> None:
        """Delete the documents with these ids (unknown ids are ignored)."""
        self._run(self._delete_ids(document_ids), "delete_documents")

    async def delete_documents_async(self, document_ids: list[str]) -> None:
        """Async :meth:`delete_documents`."""
        await self._delete_ids(document_ids)

    def delete_all_documents(self, recreate_index: bool = False) -> None:
        """Delete every document of the collection (nothing else in the database).

        ``recreate_index`` is accepted for Haystack's protocol; there is no index to recreate
        (the database's vector pin stays).
        """
        self._run(self._delete_all(), "delete_all_documents")

    async def delete_all_documents_async(self, recreate_index: bool = False) -> None:
        """Async :meth:`delete_all_documents`."""
        await self._delete_all()

    def delete_by_filter(self, filters: dict[str, Any]) -> int:
        """Delete the documents matching ``filters``; returns how many."""
        return self._run(self._delete_by_filter(filters), "delete_by_filter")

    async def delete_by_filter_async(self, filters: dict[str, Any]) -> int:
        """Async :meth:`delete_by_filter`."""
        return await self._delete_by_filter(filters)

    def update_by_filter(self, filters: dict[str, Any], meta: dict[str, Any]) -> int:
        """Merge ``meta`` into the metadata of the documents matching ``filters``; returns how many."""
        return self._run(self._update_by_filter(filters, meta), "update_by_filter")

    async def update_by_filter_async(self, filters: dict[str, Any], meta: dict[str, Any]) -> int:
        """Async :meth:`update_by_filter`."""
        return await self._update_by_filter(filters, meta)

    def count_documents_by_filter(self, filters: dict[str, Any]) -> int:
        """How many documents match ``filters`` (all without)."""
        return self._run(self._count(filters), "count_documents_by_filter")

    async def count_documents_by_filter_async(self, filters: dict[str, Any]) -> int:
        """Async :meth:`count_documents_by_filter`."""
        return await self._count(filters)

    def count_unique_metadata_by_filter(self, filters: dict[str, Any], metadata_fields: list[str]) -> dict[str, int]:
        """How many distinct non-null values each field (``meta.`` optional) has among the matching documents."""
        return self._run(self._count_unique(filters, metadata_fields), "count_unique_metadata_by_filter")

    async def count_unique_metadata_by_filter_async(
        self, filters: dict[str, Any], metadata_fields: list[str]
    ) -> dict[str, int]:
        """Async :meth:`count_unique_metadata_by_filter`."""
        return await self._count_unique(filters, metadata_fields)

    def get_metadata_fields_info(self) -> dict[str, dict[str, str]]:
        """Each metadata field's type (``keyword``, ``int``, ``float``, ``boolean``), from the stored values."""
        return self._run(self._fields_info(), "get_metadata_fields_info")

    async def get_metadata_fields_info_async(self) -> dict[str, dict[str, str]]:
        """Async :meth:`get_metadata_fields_info`."""
        return await self._fields_info()

    def get_metadata_field_min_max(self, metadata_field: str) -> dict[str, Any]:
        """``{"min": ..., "max": ...}`` of a metadata field (``None``s when it has no values)."""
        return self._run(self._min_max(metadata_field), "get_metadata_field_min_max")

    async def get_metadata_field_min_max_async(self, metadata_field: str) -> dict[str, Any]:
        """Async :meth:`get_metadata_field_min_max`."""
        return await self._min_max(metadata_field)

    def get_metadata_field_unique_values(
        self,
        metadata_field: str,
        search_term: str | None = None,
        from_: int = 0,
        size: int = 10,
        filters: dict[str, Any] | None = None,
    ) -> tuple[list[Any], int]:
        """A page of a field's distinct values (optionally containing ``search_term``), and how many there are."""
        return self._run(
            self._unique_values(metadata_field, search_term, from_, size, filters), "get_metadata_field_unique_values"
        )

    async def get_metadata_field_unique_values_async(
        self,
        metadata_field: str,
        search_term: str | None = None,
        from_: int = 0,
        size: int = 10,
        filters: dict[str, Any] | None = None,
    ) -> tuple[list[Any], int]:
        """Async :meth:`get_metadata_field_unique_values`."""
        return await self._unique_values(metadata_field, search_term, from_, size, filters)

    def bm25_retrieval(
        self, query: str, filters: dict[str, Any] | None = None, top_k: int = 10, scale_score: bool = False
    ) -> list[Document]:
        """The ``top_k`` documents best matching ``query`` by BM25 (SQLite FTS5), best first.

        ``score`` is BM25; ``scale_score=True``: ``expit(score / 8)``, as ``InMemoryDocumentStore``.
        """
        return self._run(
            self._retrieve("keyword", self._query(query), None, filters, top_k, scale_score, True), "bm25_retrieval"
        )

    async def bm25_retrieval_async(
        self, query: str, filters: dict[str, Any] | None = None, top_k: int = 10, scale_score: bool = False
    ) -> list[Document]:
        """Async :meth:`bm25_retrieval`."""
        return await self._retrieve("keyword", self._query(query), None, filters, top_k, scale_score, True)

    def embedding_retrieval(
        self,
        query_embedding: list[float],
        filters: dict[str, Any] | None = None,
        top_k: int = 10,
        scale_score: bool = False,
        return_embedding: bool = False,
    ) -> list[Document]:
        """The ``top_k`` documents most cosine-similar to ``query_embedding``, best first.

        ``score`` is the cosine similarity; ``scale_score=True``: ``(score + 1) / 2``, as ``InMemoryDocumentStore``.
        """
        vector = self._query_vector(query_embedding)
        return self._run(
            self._retrieve("semantic", "", vector, filters, top_k, scale_score, return_embedding),
            "embedding_retrieval",
        )

    async def embedding_retrieval_async(
        self,
        query_embedding: list[float],
        filters: dict[str, Any] | None = None,
        top_k: int = 10,
        scale_score: bool = False,
        return_embedding: bool = False,
    ) -> list[Document]:
        """Async :meth:`embedding_retrieval`."""
        vector = self._query_vector(query_embedding)
        return await self._retrieve("semantic", "", vector, filters, top_k, scale_score, return_embedding)

    def hybrid_retrieval(
        self,
        query: str,
        query_embedding: list[float] | None = None,
        filters: dict[str, Any] | None = None,
        top_k: int = 10,
        vector_weight: float | None = None,
        return_embedding: bool = False,
    ) -> list[Document]:
        """The ``top_k`` documents by the core's hybrid recall, best first.

        With ``query_embedding`` the BM25 and vector legs are fused (``vector_weight`` in [0, 1]
        weighs the vector leg; ``score`` is the fused score); without it the search is BM25 only.
        """
        text, vector = self._query(query), self._query_vector(query_embedding, optional=True)
        mode: _Mode = "hybrid" if vector is not None else "keyword"
        return self._run(
            self._retrieve(mode, text, vector, filters, top_k, False, return_embedding, vector_weight),
            "hybrid_retrieval",
        )

    async def hybrid_retrieval_async(
        self,
        query: str,
        query_embedding: list[float] | None = None,
        filters: dict[str, Any] | None = None,
        top_k: int = 10,
        vector_weight: float | None = None,
        return_embedding: bool = False,
    ) -> list[Document]:
        """Async :meth:`hybrid_retrieval`."""
        text, vector = self._query(query), self._query_vector(query_embedding, optional=True)
        mode: _Mode = "hybrid" if vector is not None else "keyword"
        return await self._retrieve(mode, text, vector, filters, top_k, False, return_embedding, vector_weight)
