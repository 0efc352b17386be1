"""Index documents and query them with Haystack pipelines, on one SQLite file, fully offline.

Run from the repository root: ``python examples/haystack/rag_pipelines.py``

The indexing pipeline embeds documents with elastic-memory's built-in model (all-MiniLM-L6-v2,
shipped with the package: nothing is downloaded) and writes them to an
``ElasticMemoryDocumentStore``; the query pipeline embeds a question with the same model and
retrieves the best documents, with a Haystack filter that runs in SQL. The script checks what
it prints and exits non-zero when a result is wrong.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from haystack import Document, Pipeline
from haystack.components.writers import DocumentWriter

from haystack_integrations.components.embedders.elastic_memory import (
    ElasticMemoryDocumentEmbedder,
    ElasticMemoryTextEmbedder,
)
from haystack_integrations.components.retrievers.elastic_memory import ElasticMemoryEmbeddingRetriever
from haystack_integrations.document_stores.elastic_memory import ElasticMemoryDocumentStore

DOCUMENTS = [
    Document(content="Biscuit the golden retriever loves swimming at the beach.", meta={"topic": "pets", "year": 2023}),
    Document(content="Our cat Pixel sleeps on the warm windowsill.", meta={"topic": "pets", "year": 2021}),
    Document(content="Paris is the capital of France, on the Seine.", meta={"topic": "travel", "year": 2022}),
    Document(content="Green tea is steeped at 80 degrees for two minutes.", meta={"topic": "food", "year": 2024}),
]


def main() -> int:
    """Index, then query with and without a filter; 0 when the answers are right."""
    with tempfile.TemporaryDirectory() as folder:
        store = ElasticMemoryDocumentStore(path=str(Path(folder) / "docs.db"))

        indexing = Pipeline()
        indexing.add_component("embedder", ElasticMemoryDocumentEmbedder(meta_fields_to_embed=["topic"]))
        indexing.add_component("writer", DocumentWriter(document_store=store))
        indexing.connect("embedder.documents", "writer.documents")
        written = indexing.run({"embedder": {"documents": DOCUMENTS}})["writer"]["documents_written"]
        print(f"indexed {written} documents")

        query = Pipeline()
        query.add_component("embedder", ElasticMemoryTextEmbedder())
        query.add_component("retriever", ElasticMemoryEmbeddingRetriever(document_store=store, top_k=1))
        query.connect("embedder.embedding", "retriever.query_embedding")

        question = "Which dog enjoys the sea?"
        recent_pets = {
            "operator": "AND",
            "conditions": [
                {"field": "meta.topic", "operator": "==", "value": "pets"},
                {"field": "meta.year", "operator": ">=", "value": 2022},
            ],
        }
        [best] = query.run({"embedder": {"text": question}})["retriever"]["documents"]
        [filtered] = query.run({"embedder": {"text": "a pet at home"}, "retriever": {"filters": recent_pets}})[
            "retriever"
        ]["documents"]
        print(f"{question} -> {best.content} (score {best.score:.2f})")
        print(f"a pet at home, pets since 2022 -> {filtered.content}")
        store.close()

    ok = written == 4 and "Biscuit" in (best.content or "") and "Biscuit" in (filtered.content or "")
    if not ok:
        print("unexpected result", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
