"""The native embedders: serialisable components over the built-in offline model, in pipelines beside InMemory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from haystack import Document, Pipeline
from haystack.components.retrievers.in_memory import InMemoryEmbeddingRetriever
from haystack.components.writers import DocumentWriter
from haystack.core.errors import DeserializationError
from haystack.document_stores.in_memory import InMemoryDocumentStore

from elastic_memory import Memory
from elastic_memory.testing import FakeEmbedder
from haystack_integrations.components.embedders.elastic_memory import (
    ElasticMemoryDocumentEmbedder,
    ElasticMemoryTextEmbedder,
    builtin_embedder,
)
from haystack_integrations.components.retrievers.elastic_memory import (
    ElasticMemoryEmbeddingRetriever,
    ElasticMemoryRetriever,
)
from haystack_integrations.document_stores.elastic_memory import ElasticMemoryDocumentStore

DOCS = [
    Document(id="dog", content="Biscuit is a golden retriever who loves the beach.", meta={"topic": "pets"}),
    Document(id="paris", content="Paris is the capital of France, on the Seine.", meta={"topic": "geo"}),
    Document(id="tea", content="Green tea is steeped at 80 degrees for two minutes.", meta={"topic": "food"}),
    Document(id="cat", content="The cat sleeps on the warm windowsill all afternoon.", meta={"topic": "pets"}),
    Document(id="rome", content="Rome was the capital of the Roman Empire.", meta={"topic": "geo"}),
]
QUERIES = ["Which dog likes the sea?", "capital city of France", "how to brew tea", "where does the cat nap"]


def _indexing(store: Any) -> Pipeline:
    pipeline = Pipeline()
    pipeline.add_component("embedder", ElasticMemoryDocumentEmbedder())
    pipeline.add_component("writer", DocumentWriter(document_store=store))
    pipeline.connect("embedder.documents", "writer.documents")
    return pipeline


def _query(retriever: Any) -> Pipeline:
    pipeline = Pipeline()
    pipeline.add_component("embedder", ElasticMemoryTextEmbedder())
    pipeline.add_component("retriever", retriever)
    pipeline.connect("embedder.embedding", "retriever.query_embedding")
    return pipeline


def test_pipelines_with_the_builtin_model_rank_like_in_memory_document_store(tmp_path: Path) -> None:
    ours = ElasticMemoryDocumentStore(path=str(tmp_path / "docs.db"))
    reference = InMemoryDocumentStore(embedding_similarity_function="cosine")
    try:
        assert _indexing(ours).run({"embedder": {"documents": DOCS}})["writer"]["documents_written"] == len(DOCS)
        _indexing(reference).run({"embedder": {"documents": DOCS}})
        mine = _query(ElasticMemoryEmbeddingRetriever(document_store=ours, top_k=3))
        theirs = _query(InMemoryEmbeddingRetriever(document_store=reference, top_k=3))
        for query in QUERIES:
            found = mine.run({"embedder": {"text": query}})["retriever"]["documents"]
            expected = theirs.run({"embedder": {"text": query}})["retriever"]["documents"]
            assert [d.id for d in found] == [d.id for d in expected]
            assert [d.score for d in found] == pytest.approx([d.score for d in expected], abs=1e-5)
        assert (
            _query(ElasticMemoryEmbeddingRetriever(document_store=ours, top_k=1))
            .run({"embedder": {"text": QUERIES[0]}})["retriever"]["documents"][0]
            .id
            == "dog"
        )
    finally:
        ours.close()


def test_embeddings_written_come_back_exactly(tmp_path: Path) -> None:
    store = ElasticMemoryDocumentStore(path=str(tmp_path / "docs.db"))
    try:
        embedded = ElasticMemoryDocumentEmbedder().run(DOCS[:2])["documents"]
        store.write_documents(embedded)
        assert store.filter_documents() == embedded
    finally:
        store.close()


def test_components_share_one_builtin_model() -> None:
    text, docs = ElasticMemoryTextEmbedder(), ElasticMemoryDocumentEmbedder()
    assert text.embedder is None and docs.embedder is None
    assert builtin_embedder() is builtin_embedder()
    assert text.model_id == docs.model_id == builtin_embedder().model_id


def test_the_text_embedder_gives_a_unit_vector_of_the_builtin_width() -> None:
    result = ElasticMemoryTextEmbedder().run("hello world")
    assert len(result["embedding"]) == 384
    assert sum(x * x for x in result["embedding"]) == pytest.approx(1.0, abs=1e-4)


def test_to_dict_from_dict_round_trip() -> None:
    component = ElasticMemoryDocumentEmbedder(prefix="passage: ", meta_fields_to_embed=["topic"], batch_size=8)
    data = component.to_dict()
    assert data["init_parameters"]["embedder"] == "builtin"
    again = ElasticMemoryDocumentEmbedder.from_dict(data)
    assert again.to_dict() == data


def test_an_own_embedder_serialises_as_its_class(monkeypatch: pytest.MonkeyPatch) -> None:
    data = ElasticMemoryTextEmbedder(embedder=FakeEmbedder()).to_dict()
    assert data["init_parameters"]["embedder"] == "elastic_memory.testing.FakeEmbedder"
    with pytest.raises(DeserializationError):
        ElasticMemoryTextEmbedder.from_dict(data)  # elastic_memory is not on Haystack's allowlist
    monkeypatch.setenv("HAYSTACK_DESERIALIZATION_ALLOWLIST", "elastic_memory.testing")
    again = ElasticMemoryTextEmbedder.from_dict(data)
    assert again.run("x")["meta"]["model"] == "fake-hash"


def test_meta_fields_prefix_and_suffix_shape_the_text() -> None:
    fake = FakeEmbedder()
    component = ElasticMemoryDocumentEmbedder(embedder=fake, prefix="p ", suffix=" s", meta_fields_to_embed=["topic"])
    [doc] = component.run([DOCS[0]])["documents"]
    assert doc.embedding == pytest.approx(fake.embed(["p pets\n" + (DOCS[0].content or "") + " s"])[0].tolist())
    assert DOCS[0].embedding is None  # the input is not changed


def test_wrong_inputs_raise_type_error() -> None:
    with pytest.raises(TypeError, match="ElasticMemoryDocumentEmbedder"):
        ElasticMemoryTextEmbedder(embedder=FakeEmbedder()).run(DOCS)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="ElasticMemoryTextEmbedder"):
        ElasticMemoryDocumentEmbedder(embedder=FakeEmbedder()).run("text")  # type: ignore[arg-type]


async def test_run_async_embeds_like_run() -> None:
    component = ElasticMemoryTextEmbedder(embedder=FakeEmbedder())
    assert (await component.run_async("tea"))["embedding"] == component.run("tea")["embedding"]


def test_memory_retriever_semantic_scores_are_in_memory_cosine_scores() -> None:
    """In semantic mode a memory's score is the cosine similarity, InMemoryDocumentStore's default (unscaled)."""
    fake = FakeEmbedder()
    texts = [d.content or "" for d in DOCS]
    reference = InMemoryDocumentStore(embedding_similarity_function="cosine")
    reference.write_documents(
        [Document(id=t, content=t, embedding=v.tolist()) for t, v in zip(texts, fake.embed(texts), strict=True)]
    )
    with Memory.open(":memory:", embedder=fake) as mem:
        for text in texts:
            mem.remember(text)
        retriever = ElasticMemoryRetriever(memory=mem, mode="semantic", top_k=3)
        for query in QUERIES:
            found = retriever.run(query)["documents"]
            expected = InMemoryEmbeddingRetriever(document_store=reference, top_k=3).run(
                query_embedding=fake.embed([query])[0].tolist()
            )["documents"]
            assert [d.content for d in found] == [d.content for d in expected]
            assert [d.score for d in found] == pytest.approx([d.score for d in expected], abs=1e-5)
