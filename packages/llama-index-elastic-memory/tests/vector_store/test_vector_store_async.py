"""ElasticMemoryVectorStore: the truly async twins, and the real consumers (VectorStoreIndex,
VectorMemoryBlock in Memory). A fresh store per test.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import ChatMessage
from llama_index.core.memory import Memory as LlamaMemory
from llama_index.core.memory import VectorMemoryBlock
from llama_index.core.schema import Document
from llama_index.core.vector_stores.types import MetadataFilters, VectorStoreQuery

from elastic_memory import Memory
from llama_index.vector_stores.elastic_memory import ElasticMemoryVectorStore

from .support import GEOMETRY, QUERY, TEXTS, AsyncOnlyEmbedding, HashEmbedding, Mode, Op, f, node, q

# ---------------------------------------------------------- truly async
SYNC_CORE = ["remember_many", "recall", "get_many", "forget", "vectors", "embed_query", "explain"]
SYNC_STORE = ["add", "query", "get_nodes", "delete", "delete_nodes", "clear"]


@pytest.fixture
def no_sync(monkeypatch: pytest.MonkeyPatch, astore: ElasticMemoryVectorStore) -> None:
    """Every sync path of the core facade, of the store and of its embed model raises from here on."""
    assert isinstance(astore.embed_model, AsyncOnlyEmbedding)
    astore.embed_model.refuse_sync = True

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a sync method was called by an async one")

    for name in SYNC_CORE:
        monkeypatch.setattr(Memory, name, refuse)
    for name in SYNC_STORE:
        monkeypatch.setattr(ElasticMemoryVectorStore, name, refuse)


@pytest.fixture
async def astore(tmp_path: Path) -> AsyncIterator[ElasticMemoryVectorStore]:
    store = ElasticMemoryVectorStore(path=tmp_path / "async.db", embed_model=AsyncOnlyEmbedding())
    await store.async_add([node(k, TEXTS[k], None, {"key": k}, ref_doc=f"doc-{k}") for k in GEOMETRY])
    yield store
    await store.aclose()


async def test_async_add_is_truly_async(astore: ElasticMemoryVectorStore, no_sync: None) -> None:
    assert await astore.async_add([node("new", "new text", None)]) == ["new"]
    assert [n.node_id for n in await astore.aget_nodes(["new"])] == ["new"]


@pytest.mark.parametrize("mode", [Mode.DEFAULT, Mode.TEXT_SEARCH, Mode.HYBRID, Mode.MMR])
async def test_aquery_is_truly_async(astore: ElasticMemoryVectorStore, no_sync: None, mode: Mode) -> None:
    result = await astore.aquery(VectorStoreQuery(query_str="apple pie", similarity_top_k=2, mode=mode))
    assert result.ids and result.ids[0] in {"pie", "tart"}


async def test_aget_nodes_is_truly_async(astore: ElasticMemoryVectorStore, no_sync: None) -> None:
    filters = MetadataFilters(filters=[f("key", ["pie", "far"], Op.IN)])
    assert {n.node_id for n in await astore.aget_nodes(filters=filters)} == {"pie", "far"}
    assert [n.node_id for n in await astore.aget_nodes(["cake"])] == ["cake"]


async def test_adelete_is_truly_async(astore: ElasticMemoryVectorStore, no_sync: None) -> None:
    await astore.adelete("doc-pie")
    assert {n.node_id for n in await astore.aget_nodes()} == {"tart", "cake", "far"}


async def test_adelete_nodes_is_truly_async(astore: ElasticMemoryVectorStore, no_sync: None) -> None:
    await astore.adelete_nodes(["pie"], MetadataFilters(filters=[f("key", "pie")]))
    await astore.adelete_nodes(filters=MetadataFilters(filters=[f("key", "far")]))
    assert {n.node_id for n in await astore.aget_nodes()} == {"tart", "cake"}


async def test_aclear_is_truly_async(astore: ElasticMemoryVectorStore, no_sync: None) -> None:
    await astore.aclear()
    assert await astore.aget_nodes() == []


async def test_async_add_refuses_like_add(astore: ElasticMemoryVectorStore, no_sync: None) -> None:
    with pytest.raises(ValueError, match="no text"):
        await astore.async_add([node("blank", " ", [1.0] * 16)])


@pytest.mark.parametrize("mode", [Mode.DEFAULT, Mode.TEXT_SEARCH, Mode.SPARSE, Mode.HYBRID, Mode.MMR])
async def test_aquery_returns_what_query_returns(seeded: ElasticMemoryVectorStore, mode: Mode) -> None:
    query = q(QUERY, k=3, query_str="apple cherry", mode=mode)
    sync = await asyncio.to_thread(seeded.query, query)
    result = await seeded.aquery(query)
    assert (result.ids, result.similarities) == (sync.ids, sync.similarities)


async def test_the_store_works_from_another_event_loop(tmp_path: Path) -> None:
    """The core runs on its own loop: a store is usable from any loop, here a worker thread's."""
    store = ElasticMemoryVectorStore(path=tmp_path / "x.db")
    await store.async_add([node("n", "text", [1.0, 0])])

    def other_loop() -> list[str]:
        return asyncio.run(store.aquery(q([1.0, 0]))).ids or []

    assert await asyncio.to_thread(other_loop) == ["n"]
    await store.aclose()


# ----------------------------------------------------------- consumers
def corpus() -> list[Document]:
    return [
        Document(text="The blue kettle is on the stove.", doc_id="kettle", metadata={"room": "kitchen"}),
        Document(text="Winter tyres go on in November.", doc_id="tyres", metadata={"room": "garage"}),
        Document(text="The red kettle is broken.", doc_id="broken", metadata={"room": "garage"}),
    ]


def index_over(store: ElasticMemoryVectorStore, embed: BaseEmbedding) -> VectorStoreIndex:
    context = StorageContext.from_defaults(vector_store=store)
    return VectorStoreIndex.from_documents(corpus(), storage_context=context, embed_model=embed)


def test_vector_store_index_from_vector_store_retrieves(store: ElasticMemoryVectorStore) -> None:
    embed = HashEmbedding()
    index_over(store, embed)
    retriever = VectorStoreIndex.from_vector_store(store, embed_model=embed).as_retriever(similarity_top_k=1)
    [found] = retriever.retrieve("winter tyres")
    assert found.node.ref_doc_id == "tyres"
    assert found.score is not None and 0 < found.score <= 1


def test_vector_store_index_retrieves_with_mock_embedding(store: ElasticMemoryVectorStore) -> None:
    """MockEmbedding gives every text the same vector: every node scores 1."""
    embed = MockEmbedding(embed_dim=8)
    index_over(store, embed)
    found = VectorStoreIndex.from_vector_store(store, embed_model=embed).as_retriever(similarity_top_k=5).retrieve("x")
    assert {n.node.ref_doc_id for n in found} == {"kettle", "tyres", "broken"}
    assert [n.score for n in found] == pytest.approx([1.0, 1.0, 1.0])


def test_vector_store_index_retriever_filters(store: ElasticMemoryVectorStore) -> None:
    embed = HashEmbedding()
    index_over(store, embed)
    filters = MetadataFilters(filters=[f("room", "garage")])
    retriever = VectorStoreIndex.from_vector_store(store, embed_model=embed).as_retriever(
        similarity_top_k=5, filters=filters
    )
    assert {n.node.ref_doc_id for n in retriever.retrieve("kettle")} == {"tyres", "broken"}


def test_vector_store_index_hybrid_retriever_with_alpha(store: ElasticMemoryVectorStore) -> None:
    embed = HashEmbedding()
    index_over(store, embed)
    retriever = VectorStoreIndex.from_vector_store(store, embed_model=embed).as_retriever(
        similarity_top_k=1, vector_store_query_mode="hybrid", alpha=0.0
    )
    [found] = retriever.retrieve("broken")
    assert found.node.ref_doc_id == "broken"


async def test_vector_store_index_aretrieve(store: ElasticMemoryVectorStore) -> None:
    embed = HashEmbedding()
    await asyncio.to_thread(index_over, store, embed)
    retriever = VectorStoreIndex.from_vector_store(store, embed_model=embed).as_retriever(similarity_top_k=1)
    [found] = await retriever.aretrieve("blue kettle stove")
    assert found.node.ref_doc_id == "kettle"


def test_vector_store_index_delete_ref_doc_reaches_the_store(store: ElasticMemoryVectorStore) -> None:
    index = index_over(store, HashEmbedding())
    index.delete_ref_doc("kettle")
    assert {n.ref_doc_id for n in store.get_nodes()} == {"tyres", "broken"}


async def test_vector_memory_block_inside_llamaindex_memory(store: ElasticMemoryVectorStore) -> None:
    """frameworks.md §2.5: flushed turns land in the store as one node per batch, and come back."""
    block = VectorMemoryBlock(vector_store=store, embed_model=MockEmbedding(embed_dim=8), similarity_top_k=2)
    memory = LlamaMemory.from_defaults(
        session_id="s1", token_limit=50, chat_history_token_ratio=0.3, token_flush_size=5, memory_blocks=[block]
    )
    for i in range(10):
        role = "user" if i % 2 == 0 else "assistant"
        await memory.aput(ChatMessage(role=role, content=f"turn {i} mentions the blue kettle"))
    try:
        nodes = await store.aget_nodes()
        assert nodes and all(n.metadata == {"session_id": "s1"} for n in nodes)
        assert any("blue kettle" in (m.content or "") for m in await memory.aget())
    finally:
        engine = memory.sql_store._async_engine  # LlamaIndex's default chat store leaves its engine open
        if engine is not None:
            await engine.dispose()


async def test_vector_memory_block_keeps_sessions_apart(store: ElasticMemoryVectorStore) -> None:
    embed = MockEmbedding(embed_dim=8)
    await store.async_add(
        [node("other", "a secret of session two", embed.get_text_embedding("x"), {"session_id": "s2"})]
    )
    asked = [ChatMessage(role="user", content="what secret?")]
    for session, sees in (("s1", False), ("s2", True)):
        block = VectorMemoryBlock(vector_store=store, embed_model=embed, similarity_top_k=5)  # one per session
        assert ("secret of session two" in await block.aget(asked, session_id=session)) is sees


def test_prune_never_archives_nodes(seeded: ElasticMemoryVectorStore) -> None:
    """Nodes are pinned: a prune of the file leaves every node of the collection searchable.

    If this fails, check that add() writes the notes pinned.
    """
    seeded.memory.prune(max_entries=1)
    assert sorted(n.node_id for n in seeded.get_nodes()) == sorted(GEOMETRY)
