"""One adapter per compared system, all behind the small ``Peer`` interface.

Every peer gets the same precomputed vectors (nothing here embeds text), its
own empty directory, and ids ``0..n-1``; searches return those ids, best first.
A peer's module is imported in ``setup`` so a missing package only removes
that peer. Add our own library later as one more class and one more line in
``PEERS``, whose keys are the names the harness reports.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable

import numpy as np

# Nothing phones home during a benchmark.
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
os.environ.setdefault("MEM0_TELEMETRY", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

Memory = tuple[int, str, np.ndarray, dict]  # (id, text, unit vector, metadata)
DIM = 384


class Peer:
    """What the harness needs from a system under test."""

    supports_text = False  # has a ranked keyword (BM25-style) search
    notes = ""

    def setup(self, tmpdir: str) -> None:
        """Create an empty store whose files live under ``tmpdir``."""
        raise NotImplementedError

    def add(self, batch: list[Memory]) -> None:
        """Store a batch of memories with their vectors and metadata."""
        raise NotImplementedError

    def finish(self) -> None:
        """Build indexes or persist after the last batch; timed as part of ingest."""

    def search_vector(self, qvec: np.ndarray, k: int) -> list[int]:
        """Ids of the ``k`` nearest memories by cosine similarity."""
        raise NotImplementedError

    def search_text(self, query: str, k: int) -> list[int]:
        """Ids of the ``k`` best keyword matches (only if ``supports_text``)."""
        raise NotImplementedError

    def close(self) -> None:
        """Release files and handles; the harness measures disk use afterwards."""


# --- shared helpers -------------------------------------------------------


def sqlite_module():
    """A DB-API sqlite3 module that can load extensions (sqlite-vec).

    The interpreter's own ``sqlite3`` is often built without extension
    loading, so prefer pysqlite3-binary, then sqlean.py, then the stdlib.
    """
    try:
        import pysqlite3.dbapi2 as mod  # type: ignore[import-not-found]
    except ImportError:
        try:
            import sqlean as mod  # type: ignore[import-not-found,no-redef]
        except ImportError:
            import sqlite3 as mod  # type: ignore[no-redef]
    if not hasattr(mod.connect(":memory:"), "enable_load_extension"):
        raise RuntimeError("no sqlite3 module with extension loading (pip install pysqlite3-binary)")
    return mod


def sqlite_connect(path: str, **kwargs):
    import sqlite_vec

    conn = sqlite_module().connect(path, **kwargs)
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.enable_load_extension(False)
    return conn


def precomputed_embeddings():
    """A LangChain ``Embeddings`` that returns vectors the harness registered.

    The adapter puts ``text -> vector`` into ``.table`` before each call; the
    peer then "embeds" by lookup, so no model runs and every peer sees the
    same vectors. Text that was not registered is an error (a peer embedding
    something else would silently ruin its recall), unless ``.fallback`` is
    set, as it is while a peer probes the dimension with a dummy text.
    """
    from langchain_core.embeddings import Embeddings

    class Precomputed(Embeddings):
        def __init__(self) -> None:
            self.table: dict[str, list[float]] = {}
            self.fallback: list[float] | None = None

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [self.embed_query(t) for t in texts]

        def embed_query(self, text: str) -> list[float]:
            vec = self.table.get(text, self.fallback)
            if vec is None:
                raise KeyError(f"no vector registered for text {text[:60]!r}")
            return vec

    return Precomputed()


QUERY_KEY = "\x00query"  # the "text" a vector query is sent as


def _ids(values) -> list[int]:
    return [int(v) for v in values]


# --- floors ---------------------------------------------------------------


class NumpyExact(Peer):
    """Physical floor: one float32 matrix, exact top-k by matrix product."""

    notes = "brute force; disk = the raw float32 matrix"

    def setup(self, tmpdir):
        self.dir = tmpdir
        self.parts: list[np.ndarray] = []
        self.matrix = np.empty((0, DIM), dtype=np.float32)

    def add(self, batch):
        self.parts.append(np.stack([m[2] for m in batch]))

    def finish(self):
        self.matrix = np.concatenate([self.matrix, *self.parts])
        self.parts = []
        np.save(os.path.join(self.dir, "vectors.npy"), self.matrix)

    def search_vector(self, qvec, k):
        scores = self.matrix @ qvec
        top = np.argpartition(-scores, k - 1)[:k]
        return _ids(top[np.argsort(-scores[top])])


class SqliteVecFts5(Peer):
    """Engine floor: one SQLite file, a vec0 table (exact scan) and an FTS5 table."""

    supports_text = True
    notes = "raw SQL, one transaction per batch, WAL + synchronous=NORMAL"

    def setup(self, tmpdir):
        self.db = sqlite_connect(os.path.join(tmpdir, "memories.db"), isolation_level=None)
        self.db.executescript(
            f"""
            PRAGMA journal_mode = WAL;
            PRAGMA synchronous = NORMAL;
            CREATE TABLE memories (id INTEGER PRIMARY KEY, text TEXT NOT NULL, meta TEXT);
            CREATE VIRTUAL TABLE memories_fts USING fts5(
                text, content='memories', content_rowid='id');
            CREATE VIRTUAL TABLE memories_vec USING vec0(
                embedding float[{DIM}] distance_metric=cosine);
            """
        )

    def add(self, batch):
        db = self.db
        db.execute("BEGIN")
        db.executemany(
            "INSERT INTO memories (id, text, meta) VALUES (?, ?, ?)",
            [(i, text, json.dumps(meta)) for i, text, _, meta in batch],
        )
        db.executemany(
            "INSERT INTO memories_fts (rowid, text) VALUES (?, ?)",
            [(i, text) for i, text, _, _ in batch],
        )
        db.executemany(
            "INSERT INTO memories_vec (rowid, embedding) VALUES (?, ?)",
            [(i, vec.tobytes()) for i, _, vec, _ in batch],
        )
        db.execute("COMMIT")

    def search_vector(self, qvec, k):
        rows = self.db.execute(
            "SELECT rowid FROM memories_vec WHERE embedding MATCH ? AND k = ? ORDER BY distance",
            (qvec.astype(np.float32).tobytes(), k),
        )
        return [r[0] for r in rows]

    def search_text(self, query, k):
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in query.split())
        rows = self.db.execute(
            "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rank LIMIT ?",
            (match, k),
        )
        return [r[0] for r in rows]

    def close(self):
        self.db.close()


# --- LangChain / LangGraph ------------------------------------------------


class _LangGraphStoreBase(Peer):
    supports_text = False
    notes = "no full-text search; vector search = SQL scan with vec_distance_cosine"
    NAMESPACE = ("bench",)

    def _index(self):
        self.embed = precomputed_embeddings()
        # IndexConfig documents "fields"; SqliteStore reads "text_fields" and with
        # only "fields" silently embeds the whole JSON value. Give both.
        return {"dims": DIM, "embed": self.embed, "fields": ["text"], "text_fields": ["text"]}

    def _put_ops(self, batch):
        from langgraph.store.base import PutOp

        self.embed.table = {text: vec.tolist() for _, text, vec, _ in batch}
        return [PutOp(self.NAMESPACE, str(i), {"text": text, "meta": meta}) for i, text, _, meta in batch]

    def _query(self, qvec):
        self.embed.table = {QUERY_KEY: qvec.tolist()}
        return QUERY_KEY


class LangGraphSqliteStore(_LangGraphStoreBase):
    def setup(self, tmpdir):
        from langgraph.store.sqlite import SqliteStore

        conn = sqlite_connect(os.path.join(tmpdir, "store.db"), check_same_thread=False, isolation_level=None)
        self.store = SqliteStore(conn, index=self._index())
        self.store.setup()

    def add(self, batch):
        self.store.batch(self._put_ops(batch))

    def search_vector(self, qvec, k):
        hits = self.store.search(self.NAMESPACE, query=self._query(qvec), limit=k)
        return _ids(h.key for h in hits)

    def close(self):
        self.store.conn.close()


class LangGraphAsyncSqliteStore(_LangGraphStoreBase):
    """The async store, driven from a private event loop like a sync caller would."""

    def setup(self, tmpdir):
        self.loop = asyncio.new_event_loop()
        self.store = self.loop.run_until_complete(self._open(os.path.join(tmpdir, "store.db")))

    async def _open(self, path):
        import aiosqlite
        from langgraph.store.sqlite.aio import AsyncSqliteStore

        # aiosqlite opens connections with the stdlib sqlite3; hand it one that
        # can load sqlite-vec instead (the store loads the extension itself).
        mod = sqlite_module()
        conn = await aiosqlite.Connection(
            lambda: mod.connect(path, check_same_thread=False, isolation_level=None),
            iter_chunk_size=64,
        )
        store = AsyncSqliteStore(conn, index=self._index())
        await store.setup()
        return store

    def add(self, batch):
        self.loop.run_until_complete(self.store.abatch(self._put_ops(batch)))

    def search_vector(self, qvec, k):
        hits = self.loop.run_until_complete(self.store.asearch(self.NAMESPACE, query=self._query(qvec), limit=k))
        return _ids(h.key for h in hits)

    def close(self):
        self.loop.run_until_complete(self.store.conn.close())
        pending = asyncio.all_tasks(self.loop)  # the store's background batcher
        for task in pending:
            task.cancel()
        self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        self.loop.close()


class LangChainSQLiteVec(Peer):
    notes = "vec0 exact scan; vector stored twice (row + vec0); no full-text search"

    def setup(self, tmpdir):
        from langchain_community.vectorstores import SQLiteVec

        conn = sqlite_connect(os.path.join(tmpdir, "vec.db"))
        conn.row_factory = sqlite_module().Row
        self.embed = precomputed_embeddings()
        self.embed.fallback = [0.0] * DIM  # the constructor embeds a dummy text for the dimension
        self.store = SQLiteVec(table="memories", connection=conn, embedding=self.embed)
        self.embed.fallback = None

    def add(self, batch):
        self.embed.table = {text: vec.tolist() for _, text, vec, _ in batch}
        self.store.add_texts(
            [text for _, text, _, _ in batch],
            metadatas=[{"id": i, **meta} for i, _, _, meta in batch],
        )

    def search_vector(self, qvec, k):
        docs = self.store.similarity_search_by_vector(qvec.tolist(), k=k)
        return [d.metadata["id"] for d in docs]

    def close(self):
        self.store._connection.close()


# --- vector databases -----------------------------------------------------


class Chroma(Peer):
    notes = "PersistentClient, HNSW (cosine); local mode has no ranked full-text search"

    def setup(self, tmpdir):
        import chromadb
        from chromadb.config import Settings

        self.client = chromadb.PersistentClient(path=tmpdir, settings=Settings(anonymized_telemetry=False))
        self.col = self.client.create_collection(
            "memories", embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
        )

    def add(self, batch):
        self.col.add(
            ids=[str(i) for i, _, _, _ in batch],
            embeddings=np.stack([v for _, _, v, _ in batch]),
            documents=[t for _, t, _, _ in batch],
            metadatas=[meta for _, _, _, meta in batch],
        )

    def search_vector(self, qvec, k):
        res = self.col.query(query_embeddings=qvec[None, :], n_results=k, include=[])
        return _ids(res["ids"][0])

    def close(self):
        self.client.close()


class LanceDB(Peer):
    """LanceDB table; with ``ivf_pq`` an IVF_PQ index (library defaults) is built
    in ``finish``, and ``refine`` re-ranks that many times k candidates exactly."""

    supports_text = True

    def __init__(self, ivf_pq: bool = True, refine: int | None = None):
        self.ivf_pq, self.refine = ivf_pq, refine
        index = "IVF_PQ index (defaults)" if ivf_pq else "no vector index (exact scan)"
        extra = f", refine_factor={refine}" if refine else ""
        self.notes = f"{index}{extra} + native FTS index, both built after ingest"

    def setup(self, tmpdir):
        import lancedb
        import pyarrow as pa

        self.pa = pa
        self.db = lancedb.connect(tmpdir)
        schema = pa.schema(
            [
                pa.field("id", pa.int64()),
                pa.field("text", pa.string()),
                pa.field("meta", pa.string()),
                pa.field("vector", pa.list_(pa.float32(), DIM)),
            ]
        )
        self.table = self.db.create_table("memories", schema=schema)

    def add(self, batch):
        pa = self.pa
        flat = pa.array(np.concatenate([v for _, _, v, _ in batch]))
        self.table.add(
            pa.table(
                {
                    "id": [i for i, _, _, _ in batch],
                    "text": [t for _, t, _, _ in batch],
                    "meta": [json.dumps(m) for _, _, _, m in batch],
                    "vector": pa.FixedSizeListArray.from_arrays(flat, DIM),
                }
            )
        )

    def finish(self):
        from lancedb.index import FTS, IvfPq

        if self.ivf_pq:
            self.table.create_index("vector", config=IvfPq(distance_type="cosine"))
        self.table.create_index("text", config=FTS())

    def search_vector(self, qvec, k):
        q = self.table.search(qvec, vector_column_name="vector").distance_type("cosine")
        if self.refine:
            q = q.refine_factor(self.refine)
        return _ids(q.limit(k).select(["id", "_distance"]).to_arrow().column("id").to_pylist())

    def search_text(self, query, k):
        q = self.table.search(query, query_type="fts")
        return _ids(q.limit(k).select(["id", "_score"]).to_arrow().column("id").to_pylist())


# --- framework in-memory stores -------------------------------------------


class HaystackInMemory(Peer):
    supports_text = True
    notes = "InMemoryDocumentStore (cosine, BM25L); persisted with save_to_disk in finish"

    def setup(self, tmpdir):
        from haystack.document_stores.in_memory import InMemoryDocumentStore

        self.path = os.path.join(tmpdir, "store.json")
        self.store = InMemoryDocumentStore(embedding_similarity_function="cosine")

    def add(self, batch):
        from haystack import Document

        self.store.write_documents(
            [Document(id=str(i), content=text, embedding=vec.tolist(), meta=meta) for i, text, vec, meta in batch]
        )

    def finish(self):
        self.store.save_to_disk(self.path)

    def search_vector(self, qvec, k):
        docs = self.store.embedding_retrieval(query_embedding=qvec.tolist(), top_k=k)
        return _ids(d.id for d in docs)

    def search_text(self, query, k):
        return _ids(d.id for d in self.store.bm25_retrieval(query=query, top_k=k))


class LlamaIndexSimple(Peer):
    notes = "vectors + metadata only (text lives in a docstore); persisted as JSON in finish"

    def setup(self, tmpdir):
        from llama_index.core.vector_stores import SimpleVectorStore

        self.path = os.path.join(tmpdir, "vector_store.json")
        self.store = SimpleVectorStore()

    def add(self, batch):
        from llama_index.core.schema import TextNode

        self.store.add(
            [TextNode(id_=str(i), text=text, embedding=vec.tolist(), metadata=meta) for i, text, vec, meta in batch]
        )

    def finish(self):
        self.store.persist(self.path)

    def search_vector(self, qvec, k):
        from llama_index.core.vector_stores.types import VectorStoreQuery

        res = self.store.query(VectorStoreQuery(query_embedding=qvec.tolist(), similarity_top_k=k))
        return _ids(res.ids)


# --- memory libraries -------------------------------------------------------


class Mem0(Peer):
    """mem0 OSS ``Memory`` with ``infer=False`` (no LLM), default local Qdrant on disk."""

    notes = (
        "Memory.add(infer=False) + Memory.search, local Qdrant (on_disk) + history.db; "
        "offline its BM25 (fastembed) and entity boost (spaCy) are off, so search is semantic"
    )
    USER = "bench"

    def setup(self, tmpdir):
        os.environ["MEM0_DIR"] = os.path.join(tmpdir, "home")
        from mem0 import Memory

        self.embed = precomputed_embeddings()
        self.memory = Memory.from_config(
            {
                "vector_store": {
                    "provider": "qdrant",
                    "config": {
                        "collection_name": "memories",
                        "embedding_model_dims": DIM,
                        "path": os.path.join(tmpdir, "qdrant"),
                        "on_disk": True,
                    },
                },
                "embedder": {"provider": "langchain", "config": {"model": self.embed}},
                # Never called with infer=False; the client only needs a key to construct.
                "llm": {
                    "provider": "openai",
                    "config": {"api_key": "unused-offline", "model": "unused"},
                },
                "history_db_path": os.path.join(tmpdir, "history.db"),
            }
        )
        self.ids: dict[str, int] = {}

    def add(self, batch):
        self.embed.table = {text: vec.tolist() for _, text, vec, _ in batch}
        res = self.memory.add(
            [{"role": "user", "content": text} for _, text, _, _ in batch],
            user_id=self.USER,
            infer=False,
        )
        for (i, text, _, _), item in zip(batch, res["results"], strict=True):
            assert item["memory"] == text
            self.ids[item["id"]] = i

    def search_vector(self, qvec, k):
        self.embed.table = {QUERY_KEY: qvec.tolist()}
        res = self.memory.search(QUERY_KEY, filters={"user_id": self.USER}, top_k=k, threshold=0.0)
        return [self.ids[r["id"]] for r in res["results"]]

    def close(self):
        self.memory.vector_store.client.close()  # Memory.close() leaves Qdrant open
        self.memory.close()


# --- elastic-memory (this repository) ----------------------------------------


class ElasticMemory(Peer):
    """elastic-memory's public API: ``Memory.remember_many(vectors=)`` and ``Memory.recall``.

    ``vector_index`` is the library's own setting: ``"auto"`` (the default: exact RAM
    matrix, ANN above ``ann_threshold`` when faiss is installed), or forced
    ``"ram"`` / ``"ann"`` / ``"vec0"``. Recall runs with ``touch=False``: access
    tracking is a write, and a benchmark query should not be one.
    """

    supports_text = True

    def __init__(self, vector_index: str = "auto") -> None:
        self.vector_index = vector_index
        self.notes = (
            f"Memory.open(embedder=None, vector_index={vector_index!r}); remember_many(vectors=) "
            "one transaction per batch; recall(vector=, mode='semantic') / recall(query, mode='keyword')"
        )

    def setup(self, tmpdir):
        from elastic_memory import Memory

        self.memory = Memory.open(os.path.join(tmpdir, "memory.db"), embedder=None, vector_index=self.vector_index)

    def add(self, batch):
        self.memory.remember_many(
            [{"content": text, "id": str(i), "metadata": meta} for i, text, _, meta in batch],
            vectors=[vec for _, _, vec, _ in batch],
        )

    def finish(self):
        self.memory.load_index()  # loads the matrix; builds the ANN index when the tier wants one

    def search_vector(self, qvec, k):
        hits = self.memory.recall(vector=qvec, k=k, mode="semantic", touch=False)
        return [int(h.id) for h in hits]

    def search_text(self, query, k):
        hits = self.memory.recall(query, k=k, mode="keyword", touch=False)
        return [int(h.id) for h in hits]

    def close(self):
        self.memory.close()


PEERS: dict[str, Callable[[], Peer]] = {
    "numpy-exact": NumpyExact,
    "sqlite-vec+fts5": SqliteVecFts5,
    "langgraph-SqliteStore": LangGraphSqliteStore,
    "langgraph-AsyncSqliteStore": LangGraphAsyncSqliteStore,
    "langchain-SQLiteVec": LangChainSQLiteVec,
    "chroma": Chroma,
    "lancedb-flat": lambda: LanceDB(ivf_pq=False),
    "lancedb-ivfpq": lambda: LanceDB(ivf_pq=True),
    "lancedb-ivfpq-refine10": lambda: LanceDB(ivf_pq=True, refine=10),
    "haystack-InMemory": HaystackInMemory,
    "llamaindex-SimpleVectorStore": LlamaIndexSimple,
    "mem0": Mem0,
    "elastic-memory": ElasticMemory,
    "elastic-memory-exact": lambda: ElasticMemory("ram"),
    "elastic-memory-vec0": lambda: ElasticMemory("vec0"),
    "elastic-memory-ann": lambda: ElasticMemory("ann"),
}
