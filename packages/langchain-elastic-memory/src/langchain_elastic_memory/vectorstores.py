"""A LangChain :class:`~langchain_core.vectorstores.VectorStore` over an elastic-memory store.

Documents are stored as notes (``kind="note"``) of one *collection*: an agent id, by
default the Memory's own. The store reads and deletes only that collection's notes, so it
can share a database with the memory loop (turns, facts, lessons) without touching them;
notes the same agent writes with ``Memory.remember`` belong to the default collection too.
Ids are unique across the database: an id another collection holds is refused.

>>> from langchain_core.embeddings import DeterministicFakeEmbedding
>>> store = ElasticMemoryVectorStore.from_texts(
...     ["The cat sat on the mat.", "Paris is in France."],
...     DeterministicFakeEmbedding(size=8),
...     metadatas=[{"topic": "pets"}, {"topic": "geo"}],
... )
>>> [d.page_content for d in store.similarity_search("Paris is in France.", k=1)]
['Paris is in France.']
>>> [d.metadata for d in store.similarity_search("cat", filter={"topic": {"$in": ["pets"]}})]
[{'topic': 'pets'}]
>>> store.close()
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore
from langchain_core.vectorstores.utils import maximal_marginal_relevance
from typing_extensions import Self

from elastic_memory import AsyncMemory, EmbeddingMismatchError, Hit, Memory, MemoryRecord, UsageError
from elastic_memory.adapters import items_arg, text_arg

from ._memory import Opened, aopen_memory, open_memory

__all__ = ["ElasticMemoryVectorStore", "SearchMode"]

#: How :meth:`ElasticMemoryVectorStore.similarity_search` ranks.
SearchMode = Literal["semantic", "hybrid", "keyword"]
_MODES = ("semantic", "hybrid", "keyword")
#: The most memories one core recall returns (``k`` above it is refused by the core).
_PAGE = 1000
#: The text embedded once to prove that the store's embedder fits the database.
_PROBE = "elastic-memory embedder check"


def _relevance(cosine: float) -> float:
    """Cosine similarity in [-1, 1] as a relevance score in [0, 1]."""
    return min(1.0, max(0.0, (1.0 + cosine) / 2.0))


def _document(hit: Hit | MemoryRecord) -> Document:
    return Document(id=hit.id, page_content=hit.content, metadata=dict(hit.metadata))


def _metadata(value: Any) -> dict[str, Any]:
    """A copy of one text's metadata (``None``: none); the core checks what it holds."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        msg = f"each metadata must be a dict or None, got {type(value).__name__}"
        raise UsageError(msg)
    return dict(value)


def _documents(value: Any) -> list[Document]:
    """``value`` as a list of ``Document``; anything else is a :class:`UsageError`."""
    documents = items_arg(value, "documents")
    for d in documents:
        if not isinstance(d, Document):
            msg = f"documents must be langchain_core Document objects, got a {type(d).__name__}"
            raise UsageError(msg)
    return documents


def _no_extra(kwargs: Mapping[str, Any], method: str, allowed: str) -> None:
    if not kwargs:
        return
    hint = " (the metadata filter is filter=)" if "filters" in kwargs else ""
    msg = f"{method}() got unexpected argument(s) {sorted(kwargs)}{hint}; it takes {allowed}"
    raise UsageError(msg)


class ElasticMemoryVectorStore(VectorStore):
    """LangChain's vector store on one elastic-memory SQLite file.

    Args:
        path: a database file (created if missing) or ``":memory:"``; or else
        memory: an open elastic-memory ``Memory`` or ``AsyncMemory`` (not closed by the store).
        embedding: any LangChain ``Embeddings`` (with ``path=``); without it the core's
            built-in offline model embeds.
        collection: the agent id the documents are written under and searched in
            (default: the Memory's ``agent_id``). ``delete()`` without ids empties only it.
        search_mode: ``"semantic"`` (vector cosine, the default), ``"hybrid"`` (BM25 and
            cosine fused) or ``"keyword"`` (BM25).
        **options: ``Memory.open`` options when the store opens ``path`` (``agent_id``,
            ``vector_index``, ``timeout``...).

    Scores: :meth:`similarity_search_with_score` gives the cosine similarity in semantic
    mode (higher is better), the fused score in hybrid mode and the BM25 relevance in
    keyword mode. Relevance scores are ``(1 + cosine) / 2`` in [0, 1] (keyword mode has
    none). ``filter=`` is a dict on metadata: ``{"key": value}`` or ``{"key": {"$op": value}}``
    with ``$eq $ne $gt $gte $lt $lte $in $nin $exists``, conditions combined with AND,
    ``"a.b"`` for nested keys (missing keys match ``$ne``/``$nin``/``$exists: false``).
    Returned metadata is exactly what was stored; bookkeeping (agent, kind, times) stays
    in the core's columns.

    Writes are upserts by id in one transaction (nothing is stored when one document is
    refused) and never deduplicate text. ``delete`` erases for good. MMR always works on
    vectors, whatever ``search_mode``. An empty query matches nothing. Reads record no
    access. The ``a*`` methods run on the core's ``AsyncMemory``, not in threads.
    """

    def __init__(
        self,
        *,
        path: str | Path | None = None,
        memory: Memory | AsyncMemory | None = None,
        embedding: Embeddings | None = None,
        collection: str | None = None,
        search_mode: SearchMode = "semantic",
        **options: Any,
    ) -> None:
        _check_settings(collection, search_mode)
        self._setup(open_memory(path, memory, embedding=embedding, **options), embedding, collection, search_mode)

    def _setup(
        self, opened: Opened, embedding: Embeddings | None, collection: str | None, search_mode: SearchMode
    ) -> None:
        self._opened = opened
        self._embedding = embedding
        self.collection: str = collection if collection is not None else opened.sync.agent_id
        self.search_mode: SearchMode = search_mode
        self._base: dict[str, Any] = {"agent_id": self.collection, "kind": "note"}
        self._embeds = False  # set once the Memory proved it can embed for this database

    # ------------------------------------------------------------- lifecycle
    @property
    def memory(self) -> Memory:
        """The core store (sync facade)."""
        return self._opened.sync

    @property
    def amemory(self) -> AsyncMemory:
        """The core store (async facade)."""
        return self._opened.aio

    @property
    def embeddings(self) -> Embeddings | None:
        """The LangChain embeddings given to the constructor (``None``: the core's embedder)."""
        return self._embedding

    def close(self) -> None:
        """Close the database if this store opened it (``path=``); idempotent."""
        self._opened.close()

    async def aclose(self) -> None:
        """Async :meth:`close`."""
        if self._opened.owns:
            await self._opened.aio.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.memory!r}, collection={self.collection!r}, mode={self.search_mode!r})"

    # ------------------------------------------------------------- embedding
    def _cannot_embed(self, cause: UsageError, stats: Mapping[str, Any]) -> Exception:
        model = stats.get("embedding_model")
        if model is None:
            msg = f"this vector store needs embeddings and the store has none usable ({cause})"
            return UsageError(msg)
        msg = (
            f"the database {stats.get('path')!r} is pinned to {model!r} ({stats.get('embedding_dimension')}-d), "
            "which this store's embeddings do not match; open it with the embeddings it was built with, "
            "or use another file"
        )
        return EmbeddingMismatchError(msg)

    def _ensure_embedder(self) -> None:
        """Refuse to store or search without vectors (the core would fall back to keyword-only)."""
        if self._embeds or self.search_mode == "keyword":
            return
        try:
            self.memory.embed_query(_PROBE)
        except UsageError as e:
            raise self._cannot_embed(e, self.memory.stats()) from e
        self._embeds = True

    async def _aensure_embedder(self) -> None:
        if self._embeds or self.search_mode == "keyword":
            return
        try:
            await self.amemory.embed_query(_PROBE)
        except UsageError as e:
            raise self._cannot_embed(e, await self.amemory.stats()) from e
        self._embeds = True

    def _search(self, query: str, k: int, filters: dict[str, Any]) -> list[Hit]:
        self._ensure_embedder()
        return self.memory.recall(query, k=k, mode=self.search_mode, filters=filters, touch=False)

    async def _asearch(self, query: str, k: int, filters: dict[str, Any]) -> list[Hit]:
        await self._aensure_embedder()
        return await self.amemory.recall(query, k=k, mode=self.search_mode, filters=filters, touch=False)

    # ---------------------------------------------------------------- writes
    def _items(
        self, texts: Iterable[str], metadatas: Sequence[Mapping[str, Any] | None] | None, ids: Sequence[str | None]
    ) -> list[dict[str, Any]]:
        """remember_many() items: one note of the collection per text (ids generated where missing)."""
        contents = items_arg(texts, "texts")
        metadatas = None if metadatas is None else items_arg(metadatas, "metadatas")
        ids = items_arg(ids, "ids")
        if metadatas is not None and len(metadatas) != len(contents):
            msg = f"got {len(metadatas)} metadatas for {len(contents)} texts; pass one per text"
            raise UsageError(msg)
        if len(ids) != len(contents):
            msg = f"got {len(ids)} ids for {len(contents)} texts; pass one per text (None to generate one)"
            raise UsageError(msg)
        return [
            {
                "content": text,
                "id": given if given is not None else str(uuid.uuid4()),
                "metadata": _metadata(metadatas[n]) if metadatas is not None else {},
                "agent_id": self.collection,
                "kind": "note",
            }
            for n, (text, given) in enumerate(zip(contents, ids, strict=True))
        ]

    def _refuse_foreign(self, items: list[dict[str, Any]], existing: list[MemoryRecord]) -> list[str]:
        """The ids to write, after refusing ids that another collection or the memory loop holds."""
        foreign = sorted({r.id for r in existing if not self._owns(r)})
        if foreign:
            msg = (
                f"id(s) {foreign} already name memories outside collection {self.collection!r} "
                "(ids are unique across the database); use other ids"
            )
            raise UsageError(msg)
        return [str(item["id"]) for item in items]

    def _owns(self, record: MemoryRecord) -> bool:
        return record.agent_id == self.collection and record.kind == "note"

    def _live(self, record: MemoryRecord) -> bool:
        expired = record.expires_at is not None and record.expires_at <= self.memory.clock()
        return self._owns(record) and record.deleted_at is None and not record.archived and not expired

    @staticmethod
    def _ids_of(documents: Sequence[Document], ids: Sequence[str | None] | None) -> Sequence[str | None]:
        return items_arg(ids, "ids") if ids is not None else [d.id for d in documents]

    def add_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """Store ``texts`` (one transaction; an existing id is replaced) and return their ids."""
        kwargs.pop("batch_size", None)  # one transaction whatever the size
        _no_extra(kwargs, "add_texts", "texts, metadatas, ids")
        contents = items_arg(texts, "texts")
        items = self._items(contents, metadatas, ids if ids is not None else [None] * len(contents))
        return self._write(items)

    async def aadd_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """Async :meth:`add_texts`."""
        kwargs.pop("batch_size", None)
        _no_extra(kwargs, "aadd_texts", "texts, metadatas, ids")
        contents = items_arg(texts, "texts")
        items = self._items(contents, metadatas, ids if ids is not None else [None] * len(contents))
        return await self._awrite(items)

    def add_documents(self, documents: list[Document], **kwargs: Any) -> list[str]:
        """Store ``documents`` (ids from ``ids=``, else ``Document.id``, else generated); never mutates them."""
        ids = kwargs.pop("ids", None)
        kwargs.pop("batch_size", None)
        _no_extra(kwargs, "add_documents", "documents, ids")
        documents = _documents(documents)
        items = self._items(
            [d.page_content for d in documents], [d.metadata for d in documents], self._ids_of(documents, ids)
        )
        return self._write(items)

    async def aadd_documents(self, documents: list[Document], **kwargs: Any) -> list[str]:
        """Async :meth:`add_documents`."""
        ids = kwargs.pop("ids", None)
        kwargs.pop("batch_size", None)
        _no_extra(kwargs, "aadd_documents", "documents, ids")
        documents = _documents(documents)
        items = self._items(
            [d.page_content for d in documents], [d.metadata for d in documents], self._ids_of(documents, ids)
        )
        return await self._awrite(items)

    def _write(self, items: list[dict[str, Any]]) -> list[str]:
        if not items:
            return []
        ids = self._refuse_foreign(items, self.memory.get_many([i["id"] for i in items]))
        self._ensure_embedder()
        self.memory.remember_many(items, dedupe=False)
        return ids

    async def _awrite(self, items: list[dict[str, Any]]) -> list[str]:
        if not items:
            return []
        ids = self._refuse_foreign(items, await self.amemory.get_many([i["id"] for i in items]))
        await self._aensure_embedder()
        await self.amemory.remember_many(items, dedupe=False)
        return ids

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        """Erase the collection's documents among ``ids`` (missing ids are ignored), or all of them with ``None``."""
        _no_extra(kwargs, "delete", "ids")
        if ids is None:
            while True:
                page = self.memory.recall("", k=_PAGE, filters=self._base, touch=False)
                if page:
                    self.memory.forget([h.id for h in page], hard=True)
                if len(page) < _PAGE:
                    return True
        ids = items_arg(ids, "ids")
        mine = [r.id for r in self.memory.get_many(ids) if self._owns(r)] if ids else []
        if mine:
            self.memory.forget(mine, hard=True)
        return True

    async def adelete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        """Async :meth:`delete`."""
        _no_extra(kwargs, "adelete", "ids")
        if ids is None:
            while True:
                page = await self.amemory.recall("", k=_PAGE, filters=self._base, touch=False)
                if page:
                    await self.amemory.forget([h.id for h in page], hard=True)
                if len(page) < _PAGE:
                    return True
        ids = items_arg(ids, "ids")
        mine = [r.id for r in await self.amemory.get_many(ids) if self._owns(r)] if ids else []
        if mine:
            await self.amemory.forget(mine, hard=True)
        return True

    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        """The collection's documents among ``ids``, in that order; missing ids are left out."""
        listed = items_arg(ids, "ids")
        if not listed:
            return []
        return [_document(r) for r in self.memory.get_many(listed) if self._live(r)]

    async def aget_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        """Async :meth:`get_by_ids`."""
        listed = items_arg(ids, "ids")
        if not listed:
            return []
        return [_document(r) for r in await self.amemory.get_many(listed) if self._live(r)]

    # ---------------------------------------------------------------- search
    def _filters(self, filter: Mapping[str, Any] | None) -> dict[str, Any]:
        if filter is None or (isinstance(filter, Mapping) and not filter):
            return self._base
        if not isinstance(filter, Mapping):
            msg = (
                f"filter must be a dict on metadata such as {{'lang': 'en', 'year': {{'$gte': 2020}}}}, "
                f"got {type(filter).__name__}"
            )
            raise UsageError(msg)
        return {**self._base, "metadata": dict(filter)}

    @staticmethod
    def _ranked(hits: list[Hit], mode: str) -> list[tuple[Hit, float]]:
        """Hits with the mode's score; semantic mode ranks by the cosine alone."""
        if mode != "semantic":
            return [(h, h.score) for h in hits]
        cosines = [(h, h.vector_score) for h in hits if h.vector_score is not None]
        return sorted(cosines, key=lambda pair: -pair[1])

    def _scored(self, hits: list[Hit], mode: str) -> list[tuple[Document, float]]:
        return [(_document(h), score) for h, score in self._ranked(hits, mode)]

    def _relevance_query(self, query: str, kwargs: dict[str, Any], method: str) -> dict[str, Any] | None:
        """The core filters of a relevance search, or ``None`` when ``query`` is empty."""
        filters = self._filters(kwargs.pop("filter", None))
        _no_extra(kwargs, method, "query, k, filter, score_threshold")
        if self.search_mode == "keyword":
            msg = "relevance scores are cosine based: use search_mode='semantic' or 'hybrid' for them"
            raise UsageError(msg)
        return filters if text_arg(query, "query").strip() else None

    def _relevant(self, hits: list[Hit]) -> list[tuple[Document, float]]:
        """Documents with ``(1 + cosine) / 2`` (0 for a hit the vector leg did not score)."""
        return [
            (_document(h), 0.0 if h.vector_score is None else _relevance(h.vector_score))
            for h, _ in self._ranked(hits, self.search_mode)
        ]

    def similarity_search_with_score(
        self,
        query: str,
        k: int = 4,
        filter: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[tuple[Document, float]]:
        """The ``k`` best documents for ``query`` with their score (cosine in semantic mode)."""
        _no_extra(kwargs, "similarity_search_with_score", "query, k, filter")
        if not text_arg(query, "query").strip():
            return []
        return self._scored(self._search(query, k, self._filters(filter)), self.search_mode)

    async def asimilarity_search_with_score(
        self,
        query: str,
        k: int = 4,
        filter: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[tuple[Document, float]]:
        """Async :meth:`similarity_search_with_score`."""
        _no_extra(kwargs, "asimilarity_search_with_score", "query, k, filter")
        if not text_arg(query, "query").strip():
            return []
        return self._scored(await self._asearch(query, k, self._filters(filter)), self.search_mode)

    def similarity_search(
        self,
        query: str,
        k: int = 4,
        filter: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        """The ``k`` documents that best match ``query``, best first (an empty query matches nothing)."""
        _no_extra(kwargs, "similarity_search", "query, k, filter")
        return [d for d, _ in self.similarity_search_with_score(query, k, filter)]

    async def asimilarity_search(
        self,
        query: str,
        k: int = 4,
        filter: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        """Async :meth:`similarity_search`."""
        _no_extra(kwargs, "asimilarity_search", "query, k, filter")
        return [d for d, _ in await self.asimilarity_search_with_score(query, k, filter)]

    def _similarity_search_with_relevance_scores(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        filters = self._relevance_query(query, kwargs, "similarity_search_with_relevance_scores")
        if filters is None:
            return []
        return self._relevant(self._search(query, k, filters))

    async def _asimilarity_search_with_relevance_scores(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        filters = self._relevance_query(query, kwargs, "asimilarity_search_with_relevance_scores")
        if filters is None:
            return []
        return self._relevant(await self._asearch(query, k, filters))

    def similarity_search_by_vector(
        self,
        embedding: list[float],
        k: int = 4,
        filter: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        """The ``k`` documents nearest to the vector ``embedding`` (cosine), best first."""
        _no_extra(kwargs, "similarity_search_by_vector", "embedding, k, filter")
        hits = self.memory.recall(vector=embedding, k=k, mode="semantic", filters=self._filters(filter), touch=False)
        return [d for d, _ in self._scored(hits, "semantic")]

    async def asimilarity_search_by_vector(
        self,
        embedding: list[float],
        k: int = 4,
        filter: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        """Async :meth:`similarity_search_by_vector`."""
        _no_extra(kwargs, "asimilarity_search_by_vector", "embedding, k, filter")
        hits = await self.amemory.recall(
            vector=embedding, k=k, mode="semantic", filters=self._filters(filter), touch=False
        )
        return [d for d, _ in self._scored(hits, "semantic")]

    # ------------------------------------------------------------------- MMR
    @staticmethod
    def _mmr_sizes(k: Any, fetch_k: Any, lambda_mult: Any) -> int:
        """How many candidates to fetch (at least ``k``); refuses bad arguments."""
        for name, value in (("k", k), ("fetch_k", fetch_k)):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= _PAGE:
                msg = f"{name} must be an integer from 1 to {_PAGE}, got {value!r}"
                raise UsageError(msg)
        if isinstance(lambda_mult, bool) or not isinstance(lambda_mult, int | float) or not 0 <= lambda_mult <= 1:
            msg = f"lambda_mult must be a number from 0 (most diverse) to 1 (most relevant), got {lambda_mult!r}"
            raise UsageError(msg)
        return int(max(k, fetch_k))

    @staticmethod
    def _mmr_pick(
        embedding: Sequence[float], hits: list[Hit], vectors: dict[str, list[float]], k: int, lambda_mult: float
    ) -> list[Document]:
        candidates = [h for h in hits if h.id in vectors]
        query = np.asarray(embedding, dtype=np.float64)  # recall() refused a zero or non-finite one
        chosen = maximal_marginal_relevance(
            query / np.abs(query).max(),  # cosine ignores scale; a huge vector's square would overflow
            [vectors[h.id] for h in candidates],
            lambda_mult=lambda_mult,
            k=k,
        )
        return [_document(candidates[i]) for i in chosen]

    def max_marginal_relevance_search_by_vector(
        self,
        embedding: list[float],
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        filter: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        """``k`` documents among the ``fetch_k`` nearest to ``embedding``, relevant yet diverse.

        ``lambda_mult``: 1 ranks by relevance only, 0 by diversity only.
        """
        _no_extra(kwargs, "max_marginal_relevance_search_by_vector", "embedding, k, fetch_k, lambda_mult, filter")
        fetch = self._mmr_sizes(k, fetch_k, lambda_mult)
        hits = self.memory.recall(
            vector=embedding, k=fetch, mode="semantic", filters=self._filters(filter), touch=False
        )
        vectors = self.memory.vectors([h.id for h in hits]) if hits else {}
        return self._mmr_pick(embedding, hits, vectors, k, lambda_mult)

    async def amax_marginal_relevance_search_by_vector(
        self,
        embedding: list[float],
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        filter: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        """Async :meth:`max_marginal_relevance_search_by_vector`."""
        _no_extra(kwargs, "amax_marginal_relevance_search_by_vector", "embedding, k, fetch_k, lambda_mult, filter")
        fetch = self._mmr_sizes(k, fetch_k, lambda_mult)
        hits = await self.amemory.recall(
            vector=embedding, k=fetch, mode="semantic", filters=self._filters(filter), touch=False
        )
        vectors = await self.amemory.vectors([h.id for h in hits]) if hits else {}
        return self._mmr_pick(embedding, hits, vectors, k, lambda_mult)

    def max_marginal_relevance_search(
        self,
        query: str,
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        filter: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        """Maximal marginal relevance for ``query`` (embedded as recall embeds it), whatever the search mode."""
        _no_extra(kwargs, "max_marginal_relevance_search", "query, k, fetch_k, lambda_mult, filter")
        if not text_arg(query, "query").strip():
            return []
        self._ensure_embedder()
        vector = self.memory.embed_query(query)
        return self.max_marginal_relevance_search_by_vector(vector, k, fetch_k, lambda_mult, filter)

    async def amax_marginal_relevance_search(
        self,
        query: str,
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        filter: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        """Async :meth:`max_marginal_relevance_search`."""
        _no_extra(kwargs, "amax_marginal_relevance_search", "query, k, fetch_k, lambda_mult, filter")
        if not text_arg(query, "query").strip():
            return []
        await self._aensure_embedder()
        vector = await self.amemory.embed_query(query)
        return await self.amax_marginal_relevance_search_by_vector(vector, k, fetch_k, lambda_mult, filter)

    # ---------------------------------------------------------- construction
    @classmethod
    def from_texts(
        cls,
        texts: list[str],
        embedding: Embeddings | None,
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        path: str | Path = ":memory:",
        memory: Memory | AsyncMemory | None = None,
        collection: str | None = None,
        search_mode: SearchMode = "semantic",
        **options: Any,
    ) -> Self:
        """A store at ``path`` (default ``":memory:"``; or over ``memory=``) holding ``texts``.

        ``embedding=None`` uses the core's built-in model (or ``memory``'s embedder).
        """
        store = cls(
            path=None if memory is not None else path,
            memory=memory,
            embedding=embedding,
            collection=collection,
            search_mode=search_mode,
            **options,
        )
        try:
            store.add_texts(texts, metadatas, ids=ids)
        except BaseException:
            store.close()
            raise
        return store

    @classmethod
    async def afrom_texts(
        cls,
        texts: list[str],
        embedding: Embeddings | None,
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        path: str | Path = ":memory:",
        memory: Memory | AsyncMemory | None = None,
        collection: str | None = None,
        search_mode: SearchMode = "semantic",
        **options: Any,
    ) -> Self:
        """Async :meth:`from_texts` (the file is opened with ``AsyncMemory.open``)."""
        _check_settings(collection, search_mode)
        opened = await aopen_memory(None if memory is not None else path, memory, embedding=embedding, **options)
        store = cls.__new__(cls)
        store._setup(opened, embedding, collection, search_mode)
        try:
            await store.aadd_texts(texts, metadatas, ids=ids)
        except BaseException:
            await store.aclose()
            raise
        return store


def _check_settings(collection: Any, search_mode: Any) -> None:
    if search_mode not in _MODES:
        msg = f"search_mode must be one of {list(_MODES)}, got {search_mode!r}"
        raise UsageError(msg)
    if collection is not None and (not isinstance(collection, str) or not collection.strip() or len(collection) > 256):
        msg = f"collection must be a non-empty agent id of at most 256 characters, got {collection!r}"
        raise UsageError(msg)
