"""Where a document's embedding is kept: the store's vector table when that is exact, else also the note.

A model's output (float32 values, length about one) is exactly the unit vector the store keeps
(times its length), so the note does not repeat it and SQL filters past small rows; any other
embedding (float64 values, a long vector the store would round) is also kept in the note. Every
way a document comes back returns the embedding it was written with, bit for bit. A fresh store
per test, on SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from haystack import Document

from haystack_integrations.document_stores.elastic_memory import ElasticMemoryDocumentStore

DIM = 16


def _unit32(seed: int, count: int = 3, scale: float = 1.0) -> list[list[float]]:
    """Float32 vectors as a model returns them: normalised in float32 (times ``scale``), as Python floats."""
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((count, DIM)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    rows: list[list[float]] = (matrix * np.float32(scale)).astype(np.float32).tolist()
    return rows


def _docs(embeddings: list[list[float]]) -> list[Document]:
    return [
        Document(id=f"d{n}", content=f"document number {n} about topic {n % 2}", meta={"n": n}, embedding=e)
        for n, e in enumerate(embeddings)
    ]


@pytest.fixture
def store(location: str) -> Iterator[ElasticMemoryDocumentStore]:
    s = ElasticMemoryDocumentStore(path=location)
    yield s
    s.close()


def _notes(store: ElasticMemoryDocumentStore) -> list[dict[str, object]]:
    return [r.metadata for r in store.memory.list({"agent_id": store.collection}, limit=100).records]


def _by_id(docs: list[Document]) -> dict[str, list[float] | None]:
    return {d.id: d.embedding for d in docs}


def test_model_embeddings_come_back_exactly_without_a_copy_in_the_note(store: ElasticMemoryDocumentStore) -> None:
    embeddings = _unit32(1)
    store.write_documents(_docs(embeddings))
    assert _by_id(store.filter_documents()) == {f"d{n}": e for n, e in enumerate(embeddings)}
    assert all("_hs_emb" not in note for note in _notes(store))


def test_scaled_float32_embeddings_come_back_exactly(store: ElasticMemoryDocumentStore) -> None:
    embeddings = _unit32(2, count=8, scale=3.7)
    store.write_documents(_docs(embeddings))
    assert _by_id(store.filter_documents()) == {f"d{n}": e for n, e in enumerate(embeddings)}


def test_float64_embeddings_come_back_exactly(store: ElasticMemoryDocumentStore) -> None:
    embeddings = [[float(x) for x in np.random.default_rng(3).random(DIM)] for _ in range(3)]
    store.write_documents(_docs(embeddings))
    assert _by_id(store.filter_documents()) == {f"d{n}": e for n, e in enumerate(embeddings)}


def test_a_filtered_read_returns_the_exact_embeddings(store: ElasticMemoryDocumentStore) -> None:
    embeddings = _unit32(4, count=6)
    store.write_documents(_docs(embeddings))
    found = store.filter_documents({"field": "meta.n", "operator": ">=", "value": 3})
    assert _by_id(found) == {f"d{n}": embeddings[n] for n in (3, 4, 5)}


def test_retrievals_return_the_exact_embedding_when_asked(store: ElasticMemoryDocumentStore) -> None:
    embeddings = _unit32(5)
    store.write_documents(_docs(embeddings))
    semantic = store.embedding_retrieval(embeddings[1], top_k=1, return_embedding=True)
    keyword = store.bm25_retrieval("document number 2", top_k=1)
    assert (semantic[0].id, semantic[0].embedding) == ("d1", embeddings[1])
    assert (keyword[0].id, keyword[0].embedding) == ("d2", embeddings[2])


def test_retrievals_leave_the_embedding_out_when_told(store: ElasticMemoryDocumentStore) -> None:
    store.write_documents(_docs(_unit32(6)))
    found = store.embedding_retrieval(_unit32(6)[0], top_k=3, return_embedding=False)
    assert [d.embedding for d in found] == [None, None, None]


def test_update_by_filter_keeps_the_exact_embedding(store: ElasticMemoryDocumentStore) -> None:
    embeddings = _unit32(7, scale=2.5)
    store.write_documents(_docs(embeddings))
    store.update_by_filter({"field": "meta.n", "operator": "==", "value": 1}, {"reviewed": True})
    (doc,) = store.filter_documents({"field": "meta.reviewed", "operator": "==", "value": True})
    assert (doc.id, doc.embedding) == ("d1", embeddings[1])


def test_a_document_without_an_embedding_stays_without_one(store: ElasticMemoryDocumentStore) -> None:
    store.write_documents([Document(id="bare", content="no vector here"), *_docs(_unit32(8, count=1))])
    assert _by_id(store.filter_documents()) == {"bare": None, "d0": _unit32(8, count=1)[0]}


def test_a_zero_embedding_comes_back_and_is_never_a_semantic_hit(store: ElasticMemoryDocumentStore) -> None:
    store.write_documents([Document(id="zero", content="flat", embedding=[0.0] * DIM), *_docs(_unit32(9, count=1))])
    assert _by_id(store.filter_documents())["zero"] == [0.0] * DIM
    assert [d.id for d in store.embedding_retrieval(_unit32(9, count=1)[0], top_k=5)] == ["d0"]


def test_embeddings_survive_reopening_the_file(tmp_path: Path) -> None:
    path = str(tmp_path / "docs.db")
    embeddings = _unit32(10, count=4, scale=0.25)
    first = ElasticMemoryDocumentStore(path=path)
    first.write_documents(_docs(embeddings))
    first.close()
    again = ElasticMemoryDocumentStore(path=path)
    try:
        assert _by_id(again.filter_documents()) == {f"d{n}": e for n, e in enumerate(embeddings)}
    finally:
        again.close()


def test_the_built_in_models_embeddings_come_back_exactly(location: str) -> None:
    from haystack_integrations.components.embedders.elastic_memory import ElasticMemoryDocumentEmbedder

    embedded = ElasticMemoryDocumentEmbedder().run(
        documents=[Document(id=f"m{n}", content=text) for n, text in enumerate(["cats purr", "rain in Paris"])]
    )["documents"]
    store = ElasticMemoryDocumentStore(path=location)
    try:
        store.write_documents(embedded)
        assert _by_id(store.filter_documents()) == {d.id: d.embedding for d in embedded}
        assert all("_hs_emb" not in note for note in _notes(store))
    finally:
        store.close()
