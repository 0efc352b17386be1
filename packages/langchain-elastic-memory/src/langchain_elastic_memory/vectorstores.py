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
...     path=":memory:",
... )
>>> [d.page_content for d in store.similarity_search("Paris is in France.", k=1)]
['Paris is in France.']
>>> [d.metadata for d in store.similarity_search("cat", filter={"topic": {"$in": ["pets"]}})]
[{'topic': 'pets'}]
>>> store.close()
"""

from __future__ import annotations

import math
import uuid
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore
from langchain_core.vectorstores.utils import maximal_marginal_relevance
from typing_extensions import Self

from elastic_memory import AsyncMemory, EmbeddingMismatchError, Filters, Hit, Memory, MemoryRecord, UsageError
from elastic_memory.adapters import StoreLifecycle, items_arg, text_arg

from ._memory import LangChainEmbedder, Opened, aopen_memory, open_memory
from .embeddings import ElasticMemoryEmbeddings, builtin_embedder

__all__ = ["ElasticMemoryVectorStore", "SearchMode"]

#: How :meth:`ElasticMemoryVectorStore.similarity_search` ranks.
SearchMode = Literal["semantic", "hybrid", "keyword"]
_MODES = ("semantic", "hybrid", "keyword")
#: The most memories one core recall returns (``k`` above it is refused by the core).
_PAGE = 1000
#: The text embedded once to prove that the store's embedder fits the database.
_PROBE = "elastic-memory embedder check"


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


def _count(name: str, value: Any) -> int:
    """``k`` or ``fetch_k``: an integer from 0 to :data:`_PAGE` (0 asks for nothing)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _PAGE:
        msg = f"{name} must be an integer from 0 to {_PAGE}, got {value!r}"
        raise UsageError(msg)
    return value


def _lambda_mult(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        msg = f"lambda_mult must be a number from 0 (most diverse) to 1 (most relevant), got {value!r}"
        raise UsageError(msg)
    return float(value)


def _threshold(value: Any) -> float | None:
    """``score_threshold``: ``None``, or the least relevance in [0, 1] a document must have."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not (math.isfinite(value) and 0 <= value <= 1):
        msg = f"score_threshold must be a relevance from 0 to 1 (or None), got {value!r}"
        raise UsageError(msg)
    return float(value)


#: What the search methods take besides their own arguments, as other LangChain stores do.
_SEARCH_OPTIONS = "filter, score_threshold (a relevance in [0, 1]); fetch_k and lambda_mult are MMR's, ignored here"


def _options(kwargs: dict[str, Any], method: str, allowed: str) -> float | None:
    """The ``score_threshold`` among a search's ``kwargs``; MMR's ``fetch_k``/``lambda_mult`` are checked, then ignored.

    A retriever's ``search_kwargs`` often hold them whatever the search type (InMemoryVectorStore
    and PGVector ignore them too). Any other argument is refused, so a misspelt ``filters=``
    never returns unfiltered documents.
    """
    if "fetch_k" in kwargs:
        _count("fetch_k", kwargs.pop("fetch_k"))
    if "lambda_mult" in kwargs:
        _lambda_mult(kwargs.pop("lambda_mult"))
    threshold = _threshold(kwargs.pop("score_threshold", None))
    _no_extra(kwargs, method, f"{allowed}, {_SEARCH_OPTIONS}")
    return threshold


def cosine_relevance(hit: Hit, mode: str) -> float:
    """The hit's relevance, LangChain's way for cosine in semantic mode (may be negative there).

    Semantic: LangChain's cosine relevance of the cosine distance (``1 - distance``), i.e. the
    cosine similarity itself (what Chroma, PGVector and FAISS report). Hybrid and keyword: the
    core's ``Hit.relevance`` in [0, 1] (docs/concepts.md, "Scores").
    """
    if mode == "semantic":
        return hit.score  # the cosine: 1 - (1 - cosine)
    return hit.relevance if hit.relevance is not None else 0.0


def _relevance(hit: Hit, mode: str) -> float:
    """The relevance reported, in [0, 1]: an opposite document (negative cosine) gets 0."""
    return min(1.0, max(0.0, cosine_relevance(hit, mode)))


def _kept(hits: list[Hit], threshold: float | None, mode: str) -> list[Hit]:
    """The hits at least ``threshold`` relevant (all of them without one); a negative cosine never passes."""
    return hits if threshold is None else [h for h in hits if cosine_relevance(h, mode) >= threshold]


def _in_memory_warning(method: str) -> None:
    msg = (
        f"ElasticMemoryVectorStore.{method}() without path= keeps the documents in memory: they are gone "
        "when the store closes. Pass path='docs.db' to keep them in a file, or path=':memory:' to say so"
    )
    warnings.warn(msg, UserWarning, stacklevel=3)


class ElasticMemoryVectorStore(StoreLifecycle, VectorStore):
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

    Scores: :meth:`similarity_search_with_score` gives the core's ``Hit.score``: the cosine
    similarity in semantic mode (in [-1, 1], as ``InMemoryVectorStore``), BM25 in keyword mode
    (positive), the hybrid score in [0, 1]. Relevance scores (and the threshold retriever)
    are in [0, 1]: in semantic mode LangChain's cosine relevance (the cosine similarity, as
    Chroma, PGVector and FAISS with cosine report it; negative as 0), so a ``score_threshold``
    ported from them means the same here; in hybrid and keyword mode the core's ``Hit.relevance``.

    ``filter=`` is a dict on metadata: ``{"key": value}`` or ``{"key": {"$op": value}}`` with
    ``$eq $ne $gt $gte $lt $lte $in $nin $exists $contains $icontains $empty $like $ilike
    $between`` and ``$and $or $not``, ``"a.b"`` for nested keys (missing keys match
    ``$ne``/``$nin``/``$exists: false``); equality on a list-valued field means the list
    holds the value. Returned metadata is exactly what was stored; bookkeeping (agent,
    kind, times) stays in the core's columns.

    Search methods also take ``score_threshold`` (a relevance in [0, 1]), and MMR's
    ``fetch_k``/``lambda_mult`` (ignored by plain similarity search, as other stores do);
    any other argument is refused. ``k=0`` finds nothing; ``k`` is at most 1000.

    Writes are upserts by id in one transaction (nothing is stored when one document is
    refused) and never deduplicate text. ``delete`` erases for good. MMR always works on
    vectors, whatever ``search_mode``. An empty query matches nothing. Reads record no
    access. The ``a*`` methods run on the core's ``AsyncMemory``, not in threads.
    """

    _opened: Opened

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
        chosen = _langchain_embeddings(embedding, memory, options)
        self._setup(open_memory(path, memory, embedding=embedding, **options), chosen, collection, search_mode)

    def _setup(
        self, opened: Opened, embedding: Embeddings | None, collection: str | None, search_mode: SearchMode
    ) -> None:
        self._opened = opened
        self._embedding = embedding
        self.collection: str = collection if collection is not None else opened.sync.agent_id
        self.search_mode: SearchMode = search_mode
        self._base: dict[str, Any] = {"agent_id": self.collection, "kind": "note"}
        self._embeds = False  # set once the Memory proved it can embed for this database

    # ------------------------------------------------------------- embedding
    @property
    def embeddings(self) -> Embeddings | None:
        """The embeddings documents and queries go through, as LangChain ``Embeddings``.

        The ``embedding=`` given, else the core's embedder as :class:`ElasticMemoryEmbeddings`
        (the built-in offline model by default). Over an open ``memory=``: its built-in model
        once the database is pinned to it, else ``None`` (the Memory's own embedder is not
        reachable from here).
        """
        pinned = (
            None if self._embedding is not None or self._opened.owns else self.memory.stats().get("embedding_model")
        )
        if pinned is not None and pinned == builtin_embedder().model_id:
            return ElasticMemoryEmbeddings()
        return self._embedding

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.memory!r}, collection={self.collection!r}, mode={self.search_mode!r})"

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

    def _query(self, query: str, k: Any, filter: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """The core filters of a search, or ``None`` when it finds nothing (an empty query, ``k=0``)."""
        filters = self._filters(filter)
        asked = _count("k", k)
        if not text_arg(query, "query").strip():
            return None
        if asked == 0:
            Filters.parse(filters)  # a bad filter is refused even when nothing is asked for
            return None
        return filters

    def similarity_search_with_score(
        self,
        query: str,
        k: int = 4,
        filter: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[tuple[Document, float]]:
        """The ``k`` best documents for ``query`` with their score: cosine (semantic), BM25 (keyword), hybrid's."""
        threshold = _options(kwargs, "similarity_search_with_score", "query, k")
        filters = self._query(query, k, filter)
        if filters is None:
            return []
        return [(_document(h), h.score) for h in _kept(self._search(query, k, filters), threshold, self.search_mode)]

    async def asimilarity_search_with_score(
        self,
        query: str,
        k: int = 4,
        filter: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[tuple[Document, float]]:
        """Async :meth:`similarity_search_with_score`."""
        threshold = _options(kwargs, "asimilarity_search_with_score", "query, k")
        filters = self._query(query, k, filter)
        if filters is None:
            return []
        return [
            (_document(h), h.score) for h in _kept(await self._asearch(query, k, filters), threshold, self.search_mode)
        ]

    def similarity_search(
        self,
        query: str,
        k: int = 4,
        filter: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        """The ``k`` documents that best match ``query``, best first (an empty query matches nothing)."""
        threshold = _options(kwargs, "similarity_search", "query, k")
        return [d for d, _ in self.similarity_search_with_score(query, k, filter, score_threshold=threshold)]

    async def asimilarity_search(
        self,
        query: str,
        k: int = 4,
        filter: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        """Async :meth:`similarity_search`."""
        threshold = _options(kwargs, "asimilarity_search", "query, k")
        return [d for d, _ in await self.asimilarity_search_with_score(query, k, filter, score_threshold=threshold)]

    def similarity_search_with_relevance_scores(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """The ``k`` best documents with their relevance in [0, 1] (semantic: the cosine, negative as 0).

        ``score_threshold`` keeps the documents whose relevance before clipping reaches it, so
        a threshold of 0 leaves out opposite documents, as a cosine store's does.
        """
        return self._similarity_search_with_relevance_scores(query, k, **kwargs)

    async def asimilarity_search_with_relevance_scores(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """Async :meth:`similarity_search_with_relevance_scores`."""
        return await self._asimilarity_search_with_relevance_scores(query, k, **kwargs)

    def _similarity_search_with_relevance_scores(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        filter = kwargs.pop("filter", None)
        threshold = _options(kwargs, "similarity_search_with_relevance_scores", "query, k")
        filters = self._query(query, k, filter)
        if filters is None:
            return []
        return [
            (_document(h), _relevance(h, self.search_mode))
            for h in _kept(self._search(query, k, filters), threshold, self.search_mode)
        ]

    async def _asimilarity_search_with_relevance_scores(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        filter = kwargs.pop("filter", None)
        threshold = _options(kwargs, "asimilarity_search_with_relevance_scores", "query, k")
        filters = self._query(query, k, filter)
        if filters is None:
            return []
        return [
            (_document(h), _relevance(h, self.search_mode))
            for h in _kept(await self._asearch(query, k, filters), threshold, self.search_mode)
        ]

    def _by_vector(self, k: Any, filter: Mapping[str, Any] | None) -> dict[str, Any] | None:
        filters = self._filters(filter)
        if _count("k", k) == 0:
            Filters.parse(filters)
            return None
        return filters

    def similarity_search_by_vector(
        self,
        embedding: list[float],
        k: int = 4,
        filter: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        """The ``k`` documents nearest to the vector ``embedding`` (cosine), best first."""
        threshold = _options(kwargs, "similarity_search_by_vector", "embedding, k")
        filters = self._by_vector(k, filter)
        if filters is None:
            return []
        hits = self.memory.recall(vector=embedding, k=k, mode="semantic", filters=filters, touch=False)
        return [_document(h) for h in _kept(hits, threshold, "semantic")]

    async def asimilarity_search_by_vector(
        self,
        embedding: list[float],
        k: int = 4,
        filter: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        """Async :meth:`similarity_search_by_vector`."""
        threshold = _options(kwargs, "asimilarity_search_by_vector", "embedding, k")
        filters = self._by_vector(k, filter)
        if filters is None:
            return []
        hits = await self.amemory.recall(vector=embedding, k=k, mode="semantic", filters=filters, touch=False)
        return [_document(h) for h in _kept(hits, threshold, "semantic")]

    # ------------------------------------------------------------------- MMR
    @staticmethod
    def _mmr_sizes(k: Any, fetch_k: Any, lambda_mult: Any) -> int:
        """How many candidates to fetch (at least ``k``); refuses bad arguments."""
        _lambda_mult(lambda_mult)
        return max(_count("k", k), _count("fetch_k", fetch_k))

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

        ``lambda_mult``: 1 ranks by relevance only, 0 by diversity only. ``score_threshold``
        (a relevance in [0, 1]) drops candidates before the choice.
        """
        threshold = _threshold(kwargs.pop("score_threshold", None))
        _no_extra(kwargs, "max_marginal_relevance_search_by_vector", "embedding, k, fetch_k, lambda_mult, filter")
        fetch = self._mmr_sizes(k, fetch_k, lambda_mult)
        filters = self._filters(filter)
        if k == 0:
            Filters.parse(filters)
            return []
        recalled = self.memory.recall(vector=embedding, k=fetch, mode="semantic", filters=filters, touch=False)
        hits = _kept(recalled, threshold, "semantic")
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
        threshold = _threshold(kwargs.pop("score_threshold", None))
        _no_extra(kwargs, "amax_marginal_relevance_search_by_vector", "embedding, k, fetch_k, lambda_mult, filter")
        fetch = self._mmr_sizes(k, fetch_k, lambda_mult)
        filters = self._filters(filter)
        if k == 0:
            Filters.parse(filters)
            return []
        recalled = await self.amemory.recall(vector=embedding, k=fetch, mode="semantic", filters=filters, touch=False)
        hits = _kept(recalled, threshold, "semantic")
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
        threshold = _threshold(kwargs.pop("score_threshold", None))
        _no_extra(kwargs, "max_marginal_relevance_search", "query, k, fetch_k, lambda_mult, filter, score_threshold")
        self._mmr_sizes(k, fetch_k, lambda_mult)
        if self._query(query, k, filter) is None:
            return []
        self._ensure_embedder()
        vector = self.memory.embed_query(query)
        return self.max_marginal_relevance_search_by_vector(
            vector, k, fetch_k, lambda_mult, filter, score_threshold=threshold
        )

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
        threshold = _threshold(kwargs.pop("score_threshold", None))
        _no_extra(kwargs, "amax_marginal_relevance_search", "query, k, fetch_k, lambda_mult, filter, score_threshold")
        self._mmr_sizes(k, fetch_k, lambda_mult)
        if self._query(query, k, filter) is None:
            return []
        await self._aensure_embedder()
        vector = await self.amemory.embed_query(query)
        return await self.amax_marginal_relevance_search_by_vector(
            vector, k, fetch_k, lambda_mult, filter, score_threshold=threshold
        )

    # ---------------------------------------------------------- construction
    @classmethod
    def from_texts(
        cls,
        texts: list[str],
        embedding: Embeddings | None,
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        path: str | Path | None = None,
        memory: Memory | AsyncMemory | None = None,
        collection: str | None = None,
        search_mode: SearchMode = "semantic",
        **options: Any,
    ) -> Self:
        """A store at ``path`` (or over ``memory=``) holding ``texts``.

        Without ``path=`` or ``memory=`` the store is in memory and warns so: its documents are
        gone when it closes (``path=":memory:"`` says that is meant). ``embedding=None`` uses
        the core's built-in model (or ``memory``'s embedder).
        """
        if path is None and memory is None:
            _in_memory_warning("from_texts")
        store = cls(
            path=None if memory is not None else path or ":memory:",
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
        path: str | Path | None = None,
        memory: Memory | AsyncMemory | None = None,
        collection: str | None = None,
        search_mode: SearchMode = "semantic",
        **options: Any,
    ) -> Self:
        """Async :meth:`from_texts` (the file is opened with ``AsyncMemory.open``)."""
        _check_settings(collection, search_mode)
        if path is None and memory is None:
            _in_memory_warning("afrom_texts")
        where = None if memory is not None else path or ":memory:"
        chosen = _langchain_embeddings(embedding, memory, options)
        opened = await aopen_memory(where, memory, embedding=embedding, **options)
        store = cls.__new__(cls)
        store._setup(opened, chosen, collection, search_mode)
        try:
            await store.aadd_texts(texts, metadatas, ids=ids)
        except BaseException:
            await store.aclose()
            raise
        return store


def _langchain_embeddings(
    embedding: Embeddings | None, memory: Memory | AsyncMemory | None, options: Mapping[str, Any]
) -> Embeddings | None:
    """What :attr:`ElasticMemoryVectorStore.embeddings` reports for a store opened with these arguments."""
    if embedding is not None or memory is not None:
        return embedding
    embedder = options.get("embedder", "auto")
    if isinstance(embedder, str):
        return ElasticMemoryEmbeddings() if embedder == "auto" else None
    if isinstance(embedder, LangChainEmbedder):
        return embedder.embeddings
    if embedder is None or isinstance(embedder, Sequence):
        return None
    return ElasticMemoryEmbeddings(embedder)


def _check_settings(collection: Any, search_mode: Any) -> None:
    if search_mode not in _MODES:
        msg = f"search_mode must be one of {list(_MODES)}, got {search_mode!r}"
        raise UsageError(msg)
    if collection is not None and (not isinstance(collection, str) or not collection.strip() or len(collection) > 256):
        msg = f"collection must be a non-empty agent id of at most 256 characters, got {collection!r}"
        raise UsageError(msg)
