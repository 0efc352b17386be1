"""The retrievers: serialisation, run/run_async parity, pipelines, filter policies, scores."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from haystack import Document, Pipeline
from haystack.components.builders import PromptBuilder
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack.document_stores.types import FilterPolicy

from elastic_memory import Memory
from elastic_memory.testing import FakeEmbedder
from haystack_integrations.components.retrievers.elastic_memory import (
    ElasticMemoryBM25Retriever,
    ElasticMemoryEmbeddingRetriever,
    ElasticMemoryHybridRetriever,
    ElasticMemoryRetriever,
)
from haystack_integrations.document_stores.elastic_memory import ElasticMemoryDocumentStore

DOCS = [
    Document(id="tea", content="Green tea is a drink from China.", embedding=[1.0, 0.0, 0.0], meta={"lang": "en"}),
    Document(id="coffee", content="Coffee is a drink from Ethiopia.", embedding=[0.0, 1.0, 0.0], meta={"lang": "en"}),
    Document(id="the", content="Le thé vert: green tea, a drink.", embedding=[0.9, 0.1, 0.0], meta={"lang": "fr"}),
    Document(id="paris", content="Paris is the capital of France.", embedding=[0.0, 0.0, 1.0], meta={"lang": "en"}),
]
EN = {"field": "meta.lang", "operator": "==", "value": "en"}
FR = {"field": "meta.lang", "operator": "==", "value": "fr"}
RETRIEVERS = [ElasticMemoryBM25Retriever, ElasticMemoryEmbeddingRetriever, ElasticMemoryHybridRetriever]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ElasticMemoryDocumentStore]:
    s = ElasticMemoryDocumentStore(path=tmp_path / "docs.db")
    s.write_documents(DOCS)
    yield s
    s.close()


def _inputs(cls: type[Any]) -> dict[str, Any]:
    if cls is ElasticMemoryBM25Retriever:
        return {"query": "drink tea"}
    if cls is ElasticMemoryEmbeddingRetriever:
        return {"query_embedding": [1.0, 0.05, 0.0]}
    return {"query": "drink tea", "query_embedding": [1.0, 0.05, 0.0]}


def _ids(result: dict[str, list[Document]]) -> list[str]:
    return [d.id for d in result["documents"]]


@pytest.mark.parametrize("cls", RETRIEVERS)
def test_serialisation_round_trip(cls: type[Any], store: ElasticMemoryDocumentStore, tmp_path: Path) -> None:
    retriever = cls(document_store=store, filters=EN, top_k=2, filter_policy="merge")
    data = retriever.to_dict()
    assert data["type"] == f"{cls.__module__}.{cls.__name__}"
    params = data["init_parameters"]
    assert params["filters"] == EN and params["top_k"] == 2 and params["filter_policy"] == "merge"
    store_params = params["document_store"]["init_parameters"]
    assert store_params["path"] == str((tmp_path / "docs.db").resolve())
    assert store_params["collection"] == "haystack"
    rebuilt = cls.from_dict(data)
    try:
        assert isinstance(rebuilt.document_store, ElasticMemoryDocumentStore)
        assert rebuilt.document_store is not store and rebuilt.document_store.path == store.path
        assert rebuilt.filter_policy is FilterPolicy.MERGE and rebuilt.to_dict() == data
        assert _ids(rebuilt.run(**_inputs(cls))) == _ids(retriever.run(**_inputs(cls)))
    finally:
        rebuilt.document_store.close()


def test_store_serialisation_is_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    s = ElasticMemoryDocumentStore(path="rel.db", collection="docs")
    try:
        data = s.to_dict()
        assert data == {
            "type": "haystack_integrations.document_stores.elastic_memory.document_store.ElasticMemoryDocumentStore",
            "init_parameters": {
                "path": str(tmp_path / "rel.db"),
                "collection": "docs",
                "strict_datetime_comparison": False,
            },
        }
        s.write_documents([Document(id="x", content="x")])
    finally:
        s.close()
    again = ElasticMemoryDocumentStore.from_dict(data)
    try:
        assert [d.id for d in again.filter_documents()] == ["x"]
    finally:
        again.close()


@pytest.mark.parametrize("cls", RETRIEVERS)
async def test_run_and_run_async_agree(cls: type[Any], store: ElasticMemoryDocumentStore) -> None:
    retriever = cls(document_store=store, top_k=3)
    sync = retriever.run(**_inputs(cls))
    aio = await retriever.run_async(**_inputs(cls))
    assert sync == aio
    assert sync["documents"] and sync["documents"][0].id == "tea"
    scores = [d.score for d in sync["documents"]]
    assert all(s is not None for s in scores) and scores == sorted(scores, reverse=True)


@pytest.mark.parametrize("cls", RETRIEVERS)
async def test_filter_policy_replace_and_merge(cls: type[Any], store: ElasticMemoryDocumentStore) -> None:
    replace = cls(document_store=store, filters=EN, filter_policy=FilterPolicy.REPLACE)
    merge = cls(document_store=store, filters=EN, filter_policy=FilterPolicy.MERGE)
    assert "the" not in _ids(replace.run(**_inputs(cls)))  # init filters apply without runtime ones
    assert _ids(replace.run(**_inputs(cls), filters=FR)) == ["the"]  # runtime replaces init
    # MERGE: init and runtime filters on different fields are AND-ed ...
    both = {"field": "id", "operator": "in", "value": ["the", "coffee"]}
    assert _ids(merge.run(**_inputs(cls), filters=both)) == ["coffee"]
    assert _ids(await merge.run_async(**_inputs(cls), filters=both)) == ["coffee"]
    replaced = _ids(replace.run(**_inputs(cls), filters=both))
    assert "coffee" in replaced and set(replaced) <= {"the", "coffee"}
    assert _ids(await replace.run_async(**_inputs(cls), filters=FR)) == ["the"]
    # ... and on the same field the runtime filter wins (Haystack's rule)
    assert _ids(merge.run(**_inputs(cls), filters=FR)) == ["the"]


def test_pipeline_with_prompt_builder(store: ElasticMemoryDocumentStore) -> None:
    template = "Context:\n{% for d in documents %}- {{ d.content }}\n{% endfor %}Question: {{ query }}"
    pipe = Pipeline()
    pipe.add_component("retriever", ElasticMemoryBM25Retriever(document_store=store, top_k=2))
    pipe.add_component("prompt", PromptBuilder(template=template, required_variables=["documents", "query"]))
    pipe.connect("retriever.documents", "prompt.documents")
    out = pipe.run({"retriever": {"query": "capital France"}, "prompt": {"query": "What is the capital of France?"}})
    prompt = out["prompt"]["prompt"]
    assert "- Paris is the capital of France." in prompt and prompt.endswith("Question: What is the capital of France?")
    rebuilt = Pipeline.loads(pipe.dumps())
    try:
        again = rebuilt.run(
            {"retriever": {"query": "capital France"}, "prompt": {"query": "What is the capital of France?"}}
        )
        assert again["prompt"]["prompt"] == prompt
    finally:
        retriever = rebuilt.get_component("retriever")
        assert isinstance(retriever, ElasticMemoryBM25Retriever)
        retriever.document_store.close()


async def test_async_pipeline_with_hybrid_retriever(store: ElasticMemoryDocumentStore) -> None:
    pipe = Pipeline()
    pipe.add_component("retriever", ElasticMemoryHybridRetriever(document_store=store, top_k=1))
    pipe.add_component("prompt", PromptBuilder(template="{{ documents[0].content }}", required_variables=["documents"]))
    pipe.connect("retriever.documents", "prompt.documents")
    out = await pipe.run_async({"retriever": {"query": "coffee", "query_embedding": [0.0, 1.0, 0.0]}})
    assert out["prompt"]["prompt"] == "Coffee is a drink from Ethiopia."


def test_hybrid_without_embedding_is_bm25(store: ElasticMemoryDocumentStore) -> None:
    hybrid = ElasticMemoryHybridRetriever(document_store=store)
    bm25 = ElasticMemoryBM25Retriever(document_store=store)
    plain = [(d.id, d.score) for d in hybrid.run(query="drink")["documents"]]
    assert plain == [(d.id, d.score) for d in bm25.run(query="drink")["documents"]]
    weighted = hybrid.run(query="drink", query_embedding=[0.0, 1.0, 0.0], vector_weight=1.0)
    assert _ids(weighted)[0] == "coffee"


def test_embedding_retrieval_matches_the_reference_ranking(store: ElasticMemoryDocumentStore) -> None:
    reference = InMemoryDocumentStore(shared=False, embedding_similarity_function="cosine")
    reference.write_documents(DOCS)
    query = [0.3, 0.2, 0.1]
    ours = store.embedding_retrieval(query, top_k=4)
    theirs = reference.embedding_retrieval(query, top_k=4)
    assert [d.id for d in ours] == [d.id for d in theirs]
    assert [d.score for d in ours] == pytest.approx([d.score for d in theirs], abs=1e-5)
    assert all(d.embedding is None for d in ours)
    with_emb = store.embedding_retrieval(query, top_k=1, return_embedding=True, scale_score=True)
    assert with_emb[0].embedding == DOCS[2].embedding or with_emb[0].embedding in [d.embedding for d in DOCS]
    assert 0 <= (with_emb[0].score or 0) <= 1


def test_bad_input(store: ElasticMemoryDocumentStore) -> None:
    with pytest.raises(ValueError, match="ElasticMemoryDocumentStore"):
        ElasticMemoryBM25Retriever(document_store=InMemoryDocumentStore())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="top_k"):
        ElasticMemoryEmbeddingRetriever(document_store=store, top_k=0)
    with pytest.raises(ValueError, match="vector_weight"):
        ElasticMemoryHybridRetriever(document_store=store, vector_weight=2)
    with pytest.raises(ValueError, match="non-empty string"):
        ElasticMemoryBM25Retriever(document_store=store).run(query="")
    with pytest.raises(ValueError, match="query_embedding"):
        ElasticMemoryEmbeddingRetriever(document_store=store).run(query_embedding=[])


def test_hybrid_score_is_absolute(store: ElasticMemoryDocumentStore) -> None:
    """An unrelated query (no word in common, an orthogonal embedding) scores low, not 1.0 for the best."""
    hybrid = ElasticMemoryHybridRetriever(document_store=store)
    found = hybrid.run(query="zebra", query_embedding=[0.0, -0.2, -1.0])["documents"]
    assert all(0.0 <= (d.score or 0.0) < 0.5 for d in found)
    related = hybrid.run(query="green tea", query_embedding=[1.0, 0.0, 0.0])["documents"]
    assert related[0].id == "tea" and 0.5 < (related[0].score or 0.0) <= 1.0


@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
def test_memory_retriever_score_is_the_modes(mode: str) -> None:
    """BM25 (keyword), cosine with negative values kept (semantic), [0, 1] (hybrid): the score contract."""
    with Memory.open(":memory:", embedder=FakeEmbedder()) as mem:
        mem.remember("The user prefers metric units.")
        mem.remember("Coffee is brewed at 94 degrees.")
        docs = ElasticMemoryRetriever(memory=mem, mode=mode).run("metric units")["documents"]
    assert docs and docs[0].content == "The user prefers metric units."
    scores = [d.score for d in docs]
    if mode == "keyword":
        assert scores == [d.meta["keyword_score"] for d in docs] and all(s is not None and s > 0 for s in scores)
    elif mode == "semantic":
        assert scores == [d.meta["vector_score"] for d in docs] and min(s or 0.0 for s in scores) < 0
    else:
        assert all(s is not None and 0.0 <= s <= 1.0 for s in scores)
