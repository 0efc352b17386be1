"""A LlamaIndex ``VectorStoreIndex`` kept in one SQLite file, embedded offline by elastic-memory's model.

Indexes a few documents into ``ElasticMemoryVectorStore`` with ``ElasticMemoryEmbedding`` (the
core's built-in all-MiniLM-L6-v2, no download, no API key) set as LlamaIndex's default model,
queries them (a retriever, then a query engine over ``MockLLM``), and reopens the file in a
second index to show the nodes persist. It checks what it prints.

    python examples/llamaindex/vector_index.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from llama_index.core import Document, Settings, StorageContext, VectorStoreIndex
from llama_index.core.llms import MockLLM
from llama_index.core.vector_stores import MetadataFilters

from llama_index.embeddings.elastic_memory import ElasticMemoryEmbedding
from llama_index.vector_stores.elastic_memory import ElasticMemoryVectorStore

DOCS = [
    Document(text="The staging server is called Kestrel and runs in Frankfurt.", metadata={"team": "ops"}),
    Document(text="Deploys happen on Tuesdays and Thursdays after the standup.", metadata={"team": "ops"}),
    Document(text="The design review for the new onboarding flow is on Friday.", metadata={"team": "design"}),
    Document(text="Our mascot is a heron called Pip.", metadata={"team": "all"}),
]


def main(db: Path) -> None:
    """Index DOCS in ``db``, query them three ways, reopen the file; check the answers."""
    # Say once which model LlamaIndex embeds with (its default would be OpenAI's hosted one).
    Settings.embed_model = ElasticMemoryEmbedding()
    Settings.llm = MockLLM(max_tokens=32)

    with ElasticMemoryVectorStore(path=db) as store:
        index = VectorStoreIndex.from_documents(DOCS, storage_context=StorageContext.from_defaults(vector_store=store))
        best = index.as_retriever(similarity_top_k=2).retrieve("Where does the staging server run?")
        print(f"retrieved: {best[0].node.get_content()} (cosine {best[0].score:.2f})")
        ops = MetadataFilters.from_dicts([{"key": "team", "value": "ops"}])
        days = index.as_retriever(similarity_top_k=4, filters=ops).retrieve("When do we ship?")
        print("ops only:", [n.node.metadata["team"] for n in days])
        answer = index.as_query_engine(similarity_top_k=1).query("What is the mascot called?")
        print("query engine read:", [n.node.get_content() for n in answer.source_nodes])

    with ElasticMemoryVectorStore(path=db) as reopened:  # another process could do this
        again = VectorStoreIndex.from_vector_store(reopened).as_retriever(similarity_top_k=1).retrieve("heron")
        print("after reopening:", again[0].node.get_content())

    if "Kestrel" not in best[0].node.get_content() or not 0.3 < (best[0].score or 0) <= 1:
        sys.exit(f"wrong best match: {best}")
    if [n.node.metadata["team"] for n in days] != ["ops", "ops"] or days[0].node.get_content() != DOCS[1].text:
        sys.exit(f"the filter or the ranking is wrong: {days}")
    if [n.node.get_content() for n in answer.source_nodes] != [DOCS[3].text]:
        sys.exit(f"the query engine read the wrong node: {answer.source_nodes}")
    if again[0].node.get_content() != DOCS[3].text:
        sys.exit(f"the reopened index lost its nodes: {again}")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        main(Path(folder) / "index.db")
