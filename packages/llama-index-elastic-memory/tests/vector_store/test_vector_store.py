"""ElasticMemoryVectorStore: a contract suite (LlamaIndex ships none), the store itself.

Writes (upsert, delete by document, delete_nodes, clear), reads (get_nodes, the node round
trip), construction and serialisation. Queries and filters are in test_vector_store_query.py,
the async twins and the real consumers in test_vector_store_async.py. A fresh store per test.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from llama_index.core.schema import BaseNode, IndexNode, MetadataMode, NodeRelationship, RelatedNodeInfo, TextNode
from llama_index.core.vector_stores.types import BasePydanticVectorStore, MetadataFilters, VectorStoreQuery

from elastic_memory import AsyncMemory, Memory
from elastic_memory.testing import FakeEmbedder
from llama_index.vector_stores.elastic_memory import NODE_ID_KEY, ElasticMemoryVectorStore

from .support import GEOMETRY, HashEmbedding, Mode, docs_store, f, ids, node, q


# ---------------------------------------------------------------- the class
def test_is_a_pydantic_vector_store_that_stores_text(store: ElasticMemoryVectorStore) -> None:
    assert isinstance(store, BasePydanticVectorStore)
    assert store.stores_text is True
    assert store.is_embedding_query is True
    assert ElasticMemoryVectorStore.class_name() == "ElasticMemoryVectorStore"


def test_client_is_the_core_memory(store: ElasticMemoryVectorStore) -> None:
    assert isinstance(store.client, Memory)
    assert store.client is store.memory
    assert isinstance(store.amemory, AsyncMemory)


# ------------------------------------------------------------------ writes
def test_add_returns_the_node_ids_in_order(store: ElasticMemoryVectorStore) -> None:
    assert store.add([node("b", "bee", [0, 1.0]), node("a", "ay", [1.0, 0])]) == ["b", "a"]


def test_add_of_nothing_stores_nothing(store: ElasticMemoryVectorStore) -> None:
    assert store.add([]) == []
    assert store.get_nodes() == []


def test_add_upserts_by_node_id(store: ElasticMemoryVectorStore) -> None:
    store.add([node("n", "first text", [1.0, 0], {"v": 1})])
    store.add([node("n", "second text", [0, 1.0], {"v": 2})])
    [found] = store.get_nodes()
    assert (found.get_content(), found.metadata) == ("second text", {"v": 2})
    assert ids(store, q([0, 1.0])) == ["n"]
    assert store.query(q([0, 1.0])).similarities == pytest.approx([1.0])


def test_a_repeated_id_in_one_batch_keeps_the_last_node(store: ElasticMemoryVectorStore) -> None:
    assert store.add([node("n", "old", [1.0, 0]), node("n", "new", [0, 1.0])]) == ["n", "n"]
    assert [n.get_content() for n in store.get_nodes()] == ["new"]


def test_the_stored_vector_is_the_nodes_embedding(store: ElasticMemoryVectorStore) -> None:
    """Kept as the unit vector of the node's embedding (cosine is what search uses)."""
    store.add([node("n", "text", [3.0, 0.0, 4.0])])
    assert store.memory.vectors(["n"])["n"] == pytest.approx([0.6, 0.0, 0.8], abs=1e-6)


def test_a_file_without_embed_model_is_pinned_to_supplied_vectors(store: ElasticMemoryVectorStore) -> None:
    store.add([node("n", "text", [1.0, 2.0, 3.0])])
    stats = store.memory.stats()
    assert (stats["embedding_model"], stats["embedding_dimension"]) == ("supplied", 3)


# -------------------------------------------------------------- round trip
def rich_node() -> TextNode:
    n = TextNode(
        id_="chunk-1",
        text="Rivers flow to the sea.",
        embedding=[0.2, 0.4, 0.9],
        metadata={"file_name": "rivers.md", "page": 3, "authors": ["ana", "rui"], "extra": {"lang": "en"}},
        excluded_embed_metadata_keys=["file_name"],
        excluded_llm_metadata_keys=["page"],
        metadata_template="{key}=>{value}",
        text_template="{metadata_str}\n\n{content}",
    )
    n.relationships = {
        NodeRelationship.SOURCE: RelatedNodeInfo(node_id="doc-1", metadata={"kind": "doc"}),
        NodeRelationship.PREVIOUS: RelatedNodeInfo(node_id="chunk-0"),
        NodeRelationship.NEXT: RelatedNodeInfo(node_id="chunk-2"),
        NodeRelationship.PARENT: RelatedNodeInfo(node_id="section-1"),
    }
    return n


def assert_same_node(found: BaseNode, original: TextNode) -> None:
    assert isinstance(found, TextNode)
    assert found.node_id == original.node_id
    assert found.get_content() == original.get_content()
    assert found.metadata == original.metadata
    assert found.relationships == original.relationships
    assert found.ref_doc_id == "doc-1"
    assert found.excluded_embed_metadata_keys == original.excluded_embed_metadata_keys
    assert found.excluded_llm_metadata_keys == original.excluded_llm_metadata_keys
    assert found.get_content(MetadataMode.LLM) == original.get_content(MetadataMode.LLM)
    assert found.embedding is None  # nodes come back without their embedding


def test_get_nodes_round_trips_text_metadata_and_relationships(store: ElasticMemoryVectorStore) -> None:
    store.add([rich_node()])
    [found] = store.get_nodes(["chunk-1"])
    assert_same_node(found, rich_node())


def test_query_round_trips_text_metadata_and_relationships(store: ElasticMemoryVectorStore) -> None:
    store.add([rich_node()])
    [found] = store.query(q([0.2, 0.4, 0.9], k=1)).nodes or []
    assert_same_node(found, rich_node())


def test_an_index_node_keeps_its_type(store: ElasticMemoryVectorStore) -> None:
    store.add([IndexNode(id_="i", text="points at another index", index_id="other", embedding=[1.0, 0.0])])
    [found] = store.get_nodes(["i"])
    assert isinstance(found, IndexNode)
    assert found.index_id == "other"


def test_node_metadata_is_filterable_at_the_top_level(store: ElasticMemoryVectorStore) -> None:
    """What the core holds: the node's metadata keys, the serialised node and the id keys."""
    store.add([node("n", "text", [1.0, 0], {"lang": "en"}, ref_doc="d")])
    record = store.memory.get("n")
    assert record is not None
    assert record.content == "text"
    assert record.metadata["lang"] == "en"
    assert record.metadata["ref_doc_id"] == record.metadata["doc_id"] == "d"
    assert record.metadata[NODE_ID_KEY] == "n"
    assert set(record.metadata) >= {"_node_content", "_node_type", "document_id"}


# ----------------------------------------------------------------- deletes


def remaining(store: ElasticMemoryVectorStore) -> set[str]:
    return {n.node_id for n in store.get_nodes()}


def test_delete_erases_the_nodes_of_one_document(store: ElasticMemoryVectorStore) -> None:
    docs_store(store).delete("A")
    assert remaining(store) == {"b1", "loose"}


def test_delete_of_an_unknown_document_changes_nothing(store: ElasticMemoryVectorStore) -> None:
    docs_store(store).delete("nope")
    assert remaining(store) == {"a1", "a2", "b1", "loose"}


def test_delete_nodes_by_ids(store: ElasticMemoryVectorStore) -> None:
    docs_store(store).delete_nodes(["a1", "b1", "missing"])
    assert remaining(store) == {"a2", "loose"}


def test_delete_nodes_by_filters(store: ElasticMemoryVectorStore) -> None:
    docs_store(store).delete_nodes(filters=MetadataFilters.from_dicts([{"key": "ref_doc_id", "value": "A"}]))
    assert remaining(store) == {"b1", "loose"}


def test_delete_nodes_by_ids_and_filters_erases_only_nodes_meeting_both(store: ElasticMemoryVectorStore) -> None:
    docs_store(store).delete_nodes(["a1", "b1"], MetadataFilters.from_dicts([{"key": "ref_doc_id", "value": "A"}]))
    assert remaining(store) == {"a2", "b1", "loose"}


def test_delete_nodes_with_an_empty_id_list_erases_nothing(store: ElasticMemoryVectorStore) -> None:
    docs_store(store).delete_nodes([])
    assert remaining(store) == {"a1", "a2", "b1", "loose"}


def test_delete_nodes_without_ids_or_filters_is_refused(store: ElasticMemoryVectorStore) -> None:
    with pytest.raises(ValueError, match="clear"):
        docs_store(store).delete_nodes()
    assert len(remaining(store)) == 4


def test_clear_erases_every_node(store: ElasticMemoryVectorStore) -> None:
    docs_store(store).clear()
    assert store.get_nodes() == []
    assert store.query(q([1.0, 0])).ids == []


def test_clear_leaves_other_collections_and_the_memory_loop(shared: Memory) -> None:
    mine = ElasticMemoryVectorStore(memory=shared, collection="docs")
    theirs = ElasticMemoryVectorStore(memory=shared, collection="other")
    mine.add([node("m", "mine", None)])
    theirs.add([node("t", "theirs", None)])
    note = shared.remember("a note of the agent itself", agent_id="docs")
    shared.record_turn("I like tea.", "Noted.", session_id="s")
    shared.drain()  # the loop's background work is done before counting
    before = shared.stats()["active_memories"]
    mine.clear()
    assert [n.node_id for n in theirs.get_nodes()] == ["t"]
    assert shared.get(note) is not None
    assert shared.stats()["active_memories"] == before - 1
    assert shared.recall("", filters={"kind": "chunk"})


def test_clear_of_a_large_collection_erases_every_page(store: ElasticMemoryVectorStore) -> None:
    store.add([node(f"n{i}", f"text {i}", [1.0, i / 1000]) for i in range(1100)])
    store.clear()
    assert store.get_nodes() == []


# ------------------------------------------------------------------- reads
def test_get_nodes_by_ids_keeps_their_order_and_skips_missing(seeded: ElasticMemoryVectorStore) -> None:
    assert [n.node_id for n in seeded.get_nodes(["far", "missing", "pie"])] == ["far", "pie"]


def test_get_nodes_by_filters(seeded: ElasticMemoryVectorStore) -> None:
    filters = MetadataFilters.from_dicts([{"key": "key", "value": ["pie", "cake"], "operator": "in"}])
    assert {n.node_id for n in seeded.get_nodes(filters=filters)} == {"pie", "cake"}


def test_get_nodes_by_ids_and_filters(seeded: ElasticMemoryVectorStore) -> None:
    filters = MetadataFilters.from_dicts([{"key": "key", "value": "pie", "operator": "!="}])
    assert [n.node_id for n in seeded.get_nodes(["pie", "far", "tart"], filters)] == ["far", "tart"]


def test_get_nodes_without_arguments_lists_the_collection(seeded: ElasticMemoryVectorStore) -> None:
    assert {n.node_id for n in seeded.get_nodes()} == set(GEOMETRY)


def test_get_nodes_lists_past_one_page(store: ElasticMemoryVectorStore) -> None:
    store.add([node(f"n{i}", f"text {i}", [1.0, i / 1000]) for i in range(1005)])
    assert len({n.node_id for n in store.get_nodes()}) == 1005


def test_get_nodes_by_many_ids_and_filters(store: ElasticMemoryVectorStore) -> None:
    """More ids than one page holds, with a filter: every match, in the order asked."""
    store.add([node(f"n{i}", f"text {i}", [1.0, i / 1000], {"odd": i % 2}) for i in range(1205)])
    wanted = [f"n{i}" for i in reversed(range(1205))]
    found = store.get_nodes(wanted, MetadataFilters(filters=[f("odd", 1)]))
    assert [n.node_id for n in found] == [i for i in wanted if int(i[1:]) % 2]


def test_get_nodes_of_an_empty_store(store: ElasticMemoryVectorStore) -> None:
    assert store.get_nodes() == []
    assert store.get_nodes(["x"]) == []


# ------------------------------------------------------------ construction
def test_path_and_memory_are_exclusive(tmp_path: Path, shared: Memory) -> None:
    with pytest.raises(ValueError, match="exactly one"):
        ElasticMemoryVectorStore()
    with pytest.raises(ValueError, match="exactly one"):
        ElasticMemoryVectorStore(path=tmp_path / "x.db", memory=shared)


def test_embed_model_with_an_open_memory_is_refused(shared: Memory) -> None:
    with pytest.raises(ValueError, match="embed_model"):
        ElasticMemoryVectorStore(memory=shared, embed_model=HashEmbedding())


def test_stores_text_cannot_be_turned_off(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="stores_text"):
        ElasticMemoryVectorStore(path=tmp_path / "x.db", stores_text=False)


def test_a_bad_collection_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="collection"):
        ElasticMemoryVectorStore(path=tmp_path / "x.db", collection=" ")


def test_flat_metadata_refuses_nested_metadata(tmp_path: Path) -> None:
    with ElasticMemoryVectorStore(path=tmp_path / "x.db", flat_metadata=True) as store:
        with pytest.raises(ValueError, match="Value for metadata a"):
            store.add([node("ok", "flat", [1.0, 0], {"a": 1}), node("n", "nested", [1.0, 0], {"a": {"b": 1}})])
        assert store.get_nodes() == []


def test_collections_on_one_memory_do_not_see_each_other(shared: Memory) -> None:
    a = ElasticMemoryVectorStore(memory=shared, collection="a")
    b = ElasticMemoryVectorStore(memory=shared, collection="b")
    a.add([node("in-a", "apple", None)])
    b.add([node("in-b", "apple", None)])
    assert ids(a, VectorStoreQuery(query_str="apple", similarity_top_k=5)) == ["in-a"]
    assert [n.node_id for n in b.get_nodes()] == ["in-b"]


def test_notes_written_through_the_core_are_not_nodes(shared: Memory) -> None:
    shared.remember("apple notes of the agent")
    store = ElasticMemoryVectorStore(memory=shared)
    store.add([node("n", "apple node", None)])
    assert ids(store, VectorStoreQuery(query_str="apple", similarity_top_k=5)) == ["n"]
    assert ids(store, q(None, query_str="apple", mode=Mode.TEXT_SEARCH)) == ["n"]


def test_with_memory_the_core_embedder_embeds_nodes_and_queries(shared: Memory) -> None:
    store = ElasticMemoryVectorStore(memory=shared)
    store.add([node("a", "red apples", None), node("b", "blue boats", None)])
    assert ids(store, VectorStoreQuery(query_str="boats", similarity_top_k=1)) == ["b"]
    assert store.memory.vectors(["a"])["a"] == pytest.approx(FakeEmbedder().embed(["red apples"])[0].tolist())


def test_the_embed_model_embeds_nodes_without_an_embedding(tmp_path: Path) -> None:
    """As LlamaIndex embeds nodes: their content with the metadata meant for embedding."""
    embed = HashEmbedding()
    with ElasticMemoryVectorStore(path=tmp_path / "e.db", embed_model=embed) as store:
        n = node("a", "red apples", None, {"colour": "red"})
        store.add([n])
        expected = embed.get_text_embedding(n.get_content(metadata_mode=MetadataMode.EMBED))
        assert store.memory.vectors(["a"])["a"] == pytest.approx(list(np.asarray(expected) / np.linalg.norm(expected)))


def test_closing_a_path_store_closes_its_memory(tmp_path: Path) -> None:
    store = ElasticMemoryVectorStore(path=tmp_path / "x.db")
    store.close()
    with pytest.raises(ValueError, match="closed"):
        store.memory.stats()


def test_closing_a_memory_store_leaves_the_memory_open(shared: Memory) -> None:
    ElasticMemoryVectorStore(memory=shared).close()
    assert shared.stats()["path"]


# ----------------------------------------------------------- serialisation
def test_to_dict_carries_the_path_and_collection(tmp_path: Path) -> None:
    with ElasticMemoryVectorStore(path=tmp_path / "x.db", collection="docs") as store:
        data = store.to_dict()
    assert data["path"] == str(tmp_path / "x.db")
    assert data["collection"] == "docs"
    assert data["class_name"] == "ElasticMemoryVectorStore"


def test_to_dict_holds_an_absolute_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with ElasticMemoryVectorStore(path="relative.db") as store:
        assert store.to_dict()["path"] == str(tmp_path / "relative.db")


def test_from_dict_reopens_the_same_file(tmp_path: Path) -> None:
    with ElasticMemoryVectorStore(path=tmp_path / "x.db", collection="docs") as store:
        store.add([node("n", "kept", [1.0, 0])])
        data = store.to_dict()
    with ElasticMemoryVectorStore.from_dict(data) as again:
        assert again.collection == "docs"
        assert [n.get_content() for n in again.get_nodes()] == ["kept"]
        assert again.query(q([1.0, 0])).ids == ["n"]


def test_from_json_reopens_the_same_file(tmp_path: Path) -> None:
    with ElasticMemoryVectorStore(path=tmp_path / "x.db") as store:
        store.add([node("n", "kept", [1.0, 0])])
        text = store.to_json()
    with ElasticMemoryVectorStore.from_json(text) as again:
        assert [n.node_id for n in again.get_nodes()] == ["n"]


def test_from_dict_takes_the_embed_model_again(tmp_path: Path) -> None:
    embed = HashEmbedding()
    with ElasticMemoryVectorStore(path=tmp_path / "x.db", embed_model=embed) as store:
        store.add([node("n", "boats", None)])
        data = store.to_dict()
    assert "embed_model" not in data
    with ElasticMemoryVectorStore.from_dict(data, embed_model=embed) as again:
        assert ids(again, VectorStoreQuery(query_str="boats", similarity_top_k=1)) == ["n"]
