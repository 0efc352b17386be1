"""Haystack's own DocumentStore suites (haystack.testing) against ElasticMemoryDocumentStore."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from haystack import Document
from haystack.dataclasses import ByteStream, SparseEmbedding
from haystack.document_stores.errors import DocumentStoreError, DuplicateDocumentError
from haystack.document_stores.types import DocumentStore, DuplicatePolicy
from haystack.errors import FilterError
from haystack.testing.document_store import (
    CountDocumentsByFilterTest,
    CountUniqueMetadataByFilterTest,
    DocumentStoreBaseExtendedTests,
    GetMetadataFieldMinMaxTest,
    GetMetadataFieldsInfoTest,
    GetMetadataFieldUniqueValuesTest,
)

from elastic_memory import Memory
from haystack_integrations.document_stores.elastic_memory import ElasticMemoryDocumentStore


class TestElasticMemoryDocumentStore(
    DocumentStoreBaseExtendedTests,
    CountDocumentsByFilterTest,
    CountUniqueMetadataByFilterTest,
    GetMetadataFieldsInfoTest,
    GetMetadataFieldMinMaxTest,
    GetMetadataFieldUniqueValuesTest,
):
    @pytest.fixture
    def document_store(self, location: str) -> Iterator[ElasticMemoryDocumentStore]:
        """An empty store per test, on SQLite in memory and on PostgreSQL (``conftest.py``)."""
        store = ElasticMemoryDocumentStore(path=location)
        yield store
        store.close()

    def test_write_documents(self, document_store: DocumentStore) -> None:
        docs = [Document(id="1")]
        assert document_store.write_documents(docs) == 1
        with pytest.raises(DuplicateDocumentError):
            document_store.write_documents(docs)


# --------------------------------------------------------------- our own rules
def test_documents_round_trip_exactly_in_insertion_order() -> None:
    store = ElasticMemoryDocumentStore(path=":memory:")
    try:
        docs = [
            Document(id="b", content="second", embedding=[0.1, 0.2, 1 / 3], meta={"n": 1, "nested": {"x": [1, 2]}}),
            Document(id="a", content=None, blob=ByteStream(b"\x00\x01raw", mime_type="application/octet-stream")),
            Document(id="z", content="zeros", embedding=[0.0, 0.0, 0.0]),  # no direction: kept, not indexed
            Document(id="s", content="   ", sparse_embedding=SparseEmbedding(indices=[1, 5], values=[0.5, 0.25])),
        ]
        assert store.write_documents(docs) == 4
        assert store.filter_documents() == docs
        assert all(d.score is None for d in store.filter_documents())
        # OVERWRITE moves the document to the end (as the reference store does)
        assert store.write_documents([Document(id="b", content="new b")], policy=DuplicatePolicy.OVERWRITE) == 1
        assert [d.id for d in store.filter_documents()] == ["a", "z", "s", "b"]
        assert store.filter_documents({"field": "id", "operator": "==", "value": "b"})[0].embedding is None
        assert store.embedding_retrieval([0.1, 0.2, 0.3]) == []  # b's vector went with its embedding
    finally:
        store.close()


def test_write_policies_and_atomicity() -> None:
    store = ElasticMemoryDocumentStore(path=":memory:")
    try:
        store.write_documents([Document(id="1", content="one")])
        batch = [Document(id="2", content="two"), Document(id="1", content="uno")]
        with pytest.raises(DuplicateDocumentError):
            store.write_documents(batch)
        with pytest.raises(DuplicateDocumentError):
            store.write_documents([Document(id="3", content="x"), Document(id="3", content="y")])
        assert store.count_documents() == 1  # nothing stored half
        assert store.write_documents(batch, policy=DuplicatePolicy.SKIP) == 1
        assert [d.content for d in store.filter_documents()] == ["one", "two"]
        assert store.write_documents(batch, policy=DuplicatePolicy.OVERWRITE) == 2
        assert [d.content for d in store.filter_documents()] == ["two", "uno"]
        with pytest.raises(ValueError, match="list of Documents"):
            store.write_documents([Document(id="4", content="ok"), {"id": "5"}])  # type: ignore[list-item]
        with pytest.raises(ValueError):
            store.write_documents(
                [Document(id="6", content="ok"), Document(id="7", content="bad", meta={"x": object()})]
            )
        with pytest.raises(ValueError):  # embeddings of one store share one width
            store.write_documents(
                [Document(id="8", content="v", embedding=[1.0, 0.0]), Document(id="9", embedding=[1.0])]
            )
        assert store.count_documents() == 2
    finally:
        store.close()


def test_collection_is_isolated_from_the_memory_and_other_collections() -> None:
    mem = Memory.open(":memory:", embedder=None, agent_id="haystack")
    try:
        note = mem.remember("A note of the agent itself.")
        mem.facts.set("user.dog_name", "Biscuit")
        docs = ElasticMemoryDocumentStore(memory=mem)
        other = ElasticMemoryDocumentStore(memory=mem.as_async(), collection="other")
        docs.write_documents([Document(id="d1", content="doc one"), Document(id="d2", content="doc two")])
        other.write_documents([Document(id="o1", content="other doc")])
        assert docs.count_documents() == 2 and other.count_documents() == 1
        with pytest.raises(DocumentStoreError):
            docs.write_documents([Document(id=str(note), content="clash")])
        with pytest.raises(DocumentStoreError):
            docs.write_documents([Document(id="o1", content="clash")], policy=DuplicatePolicy.OVERWRITE)
        docs.delete_documents([str(note), "o1", "unknown", "d1"])  # not ours, unknown: ignored
        assert [d.id for d in docs.filter_documents()] == ["d2"]
        docs.delete_all_documents()
        assert docs.count_documents() == 0 and other.count_documents() == 1
        assert mem.get(str(note)) is not None and mem.facts.get("user.dog_name") is not None
        assert [d.id for d in docs.bm25_retrieval("doc")] == []
        docs.close()  # memory= is the caller's: left open
        assert mem.get(str(note)) is not None
    finally:
        mem.close()


def test_constructor_rules(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="exactly one"):
        ElasticMemoryDocumentStore()
    with pytest.raises(ValueError, match="collection"):
        ElasticMemoryDocumentStore(path=":memory:", collection="")
    store = ElasticMemoryDocumentStore(path=tmp_path / "f.db")
    try:
        assert store.path == str(tmp_path / "f.db")
        assert store.to_dict()["init_parameters"]["path"] == str(tmp_path / "f.db")
    finally:
        store.close()


async def test_update_by_filter_keeps_position_and_embedding() -> None:
    store = ElasticMemoryDocumentStore(path=":memory:")
    try:
        docs = [Document(id=str(i), content=f"doc {i}", embedding=[1.0, float(i)], meta={"i": i}) for i in range(3)]
        await store.write_documents_async(docs)
        f = {"field": "meta.i", "operator": ">=", "value": 1}
        assert await store.update_by_filter_async(f, {"tag": "x"}) == 2
        got = await store.filter_documents_async()
        assert [d.id for d in got] == ["0", "1", "2"]
        assert [d.meta.get("tag") for d in got] == [None, "x", "x"]
        assert [d.embedding for d in got] == [d.embedding for d in docs]
        hits = await store.embedding_retrieval_async([1.0, 2.0], top_k=1, return_embedding=True)
        assert hits[0].id == "2" and hits[0].embedding == [1.0, 2.0] and hits[0].meta["tag"] == "x"
    finally:
        await store.close_async()


@pytest.fixture
def fresh() -> Iterator[ElasticMemoryDocumentStore]:
    """An empty in-memory store."""
    store = ElasticMemoryDocumentStore(path=":memory:")
    try:
        yield store
    finally:
        store.close()


def test_delete_by_an_empty_filter_is_refused_and_deletes_nothing(fresh: ElasticMemoryDocumentStore) -> None:
    """An empty filter never means "everything": FilterError, as Haystack's reference raises."""
    fresh.write_documents([Document(content="kept")])
    with pytest.raises(FilterError):
        fresh.delete_by_filter({})
    with pytest.raises(FilterError):
        fresh.update_by_filter({}, {"a": 1})
    assert fresh.count_documents() == 1


def test_a_generator_of_documents_is_written(fresh: ElasticMemoryDocumentStore) -> None:
    """write_documents reads an iterable once: a generator's documents are all stored."""
    assert fresh.write_documents(Document(content=f"d{i}") for i in range(3)) == 3
    assert fresh.count_documents() == 3


def test_a_stray_note_of_the_collection_does_not_stop_paging(fresh: ElasticMemoryDocumentStore) -> None:
    """More than a page of documents plus a foreign note tagged like them: every document is listed and deleted.

    If this fails, check ElasticMemoryDocumentStore._hits (paging must move past rows that are not documents).
    """
    fresh.memory.remember("stray", agent_id="haystack", tags=["haystack-document"], pinned=True)
    fresh.write_documents([Document(content=f"doc {i}") for i in range(1100)])
    assert len(fresh.filter_documents()) == fresh.count_documents() == 1100
    fresh.delete_all_documents()
    assert fresh.count_documents() == 0
