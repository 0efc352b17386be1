"""ElasticMemoryEmbedding: the core's offline model (or any core Embedder) as a LlamaIndex BaseEmbedding."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from llama_index.core import Document, StorageContext, VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.llms import ChatMessage
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores import SimpleVectorStore

import elastic_memory.embedders.builtin as builtin_module
from elastic_memory import Memory, MiniLMEmbedder, UsageError
from elastic_memory.testing import FakeEmbedder
from llama_index.embeddings.elastic_memory import ElasticMemoryEmbedding, shared_embedder
from llama_index.retrievers.elastic_memory import ElasticMemoryRetriever
from llama_index.storage.chat_store.elastic_memory import ElasticMemoryChatStore
from llama_index.vector_stores.elastic_memory import ElasticMemoryVectorStore

TEXTS = ["The cat sat on the mat.", "Paris is the capital of France.", "Rust has no garbage collector."]


def fake() -> ElasticMemoryEmbedding:
    return ElasticMemoryEmbedding(embedder=FakeEmbedder())


def test_it_is_a_llamaindex_embedding_named_after_the_model() -> None:
    model = fake()
    assert isinstance(model, BaseEmbedding)
    assert (model.class_name(), model.model_name) == ("ElasticMemoryEmbedding", "fake-hash")


def test_without_an_embedder_it_is_the_built_in_model_shared_per_process() -> None:
    first, second = ElasticMemoryEmbedding(), ElasticMemoryEmbedding()
    assert first.embedder is second.embedder is shared_embedder()
    assert isinstance(first.embedder, MiniLMEmbedder)
    assert (first.model_name, first.dimension) == (MiniLMEmbedder.model_id, 384)


def test_text_embeddings_are_the_core_embedders_vectors() -> None:
    core = FakeEmbedder()
    vectors = ElasticMemoryEmbedding(embedder=core).get_text_embedding_batch(TEXTS)
    assert np.allclose(vectors, core.embed(TEXTS))


def test_a_query_uses_the_embedders_embed_query_when_it_has_one() -> None:
    class Asymmetric(FakeEmbedder):
        def embed_query(self, text: str) -> list[float]:
            return [1.0] + [0.0] * (self.dimension - 1)

    assert ElasticMemoryEmbedding(embedder=Asymmetric()).get_query_embedding("anything")[0] == 1.0


async def test_async_embeddings_equal_the_sync_ones() -> None:
    model = fake()
    assert await model.aget_text_embedding_batch(TEXTS) == model.get_text_embedding_batch(TEXTS)
    assert await model.aget_query_embedding("cats") == model.get_query_embedding("cats")


def test_an_empty_batch_embeds_nothing() -> None:
    assert fake().get_text_embedding_batch([]) == []


def test_a_model_name_other_than_the_embedders_is_refused() -> None:
    with pytest.raises(UsageError, match="model_name"):
        ElasticMemoryEmbedding(embedder=FakeEmbedder(), model_name="text-embedding-3-small")


def test_an_object_that_is_not_an_embedder_is_refused() -> None:
    with pytest.raises(UsageError, match="not an Embedder"):
        ElasticMemoryEmbedding(embedder=object())  # type: ignore[arg-type]


def test_importing_it_does_not_set_llamaindexs_default_model() -> None:
    code = (
        "import llama_index.embeddings.elastic_memory, llama_index.vector_stores.elastic_memory\n"
        "import llama_index.memory.elastic_memory\n"
        "from llama_index.core import Settings\n"
        "print(Settings._embed_model)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "None"


def test_a_vector_store_given_it_pins_the_file_to_the_core_model(tmp_path: Path) -> None:
    core = FakeEmbedder()
    with ElasticMemoryVectorStore(path=tmp_path / "v.db", embed_model=ElasticMemoryEmbedding(embedder=core)) as store:
        store.add([TextNode(id_="cat", text=TEXTS[0])])
    with Memory.open(tmp_path / "v.db", embedder=core) as mem:  # the core opens it with the same model
        assert mem.stats()["embedding_model"] == "fake-hash"
        assert mem.recall(TEXTS[0], mode="semantic", k=1)[0].id == "cat"


def test_an_index_over_the_store_ranks_and_scores_like_simple_vector_store(tmp_path: Path) -> None:
    def retrieved(store: object) -> list[tuple[str, float]]:
        index = VectorStoreIndex(
            [TextNode(id_=f"n{i}", text=t) for i, t in enumerate(TEXTS)],
            storage_context=StorageContext.from_defaults(vector_store=store),
            embed_model=fake(),
        )
        return [(n.node.node_id, float(n.score or 0)) for n in index.as_retriever(similarity_top_k=3).retrieve("cat")]

    with ElasticMemoryVectorStore(path=tmp_path / "v.db") as mine:
        ours, theirs = retrieved(mine), retrieved(SimpleVectorStore())
    assert [i for i, _ in ours] == [i for i, _ in theirs]
    assert [s for _, s in ours] == pytest.approx([s for _, s in theirs], abs=1e-5)


def test_stores_opened_with_the_built_in_model_share_the_process_instance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[object] = []
    monkeypatch.setattr(builtin_module, "MiniLMEmbedder", lambda: built.append(1) or MiniLMEmbedder())
    monkeypatch.setattr(builtin_module, "_shared", FakeEmbedder(model_id="the-shared-one"))
    with ElasticMemoryChatStore(path=tmp_path / "a.db", embedder="auto") as chats:
        chats.add_message("k", ChatMessage(role="user", content="hello"))  # messages are never embedded
        chats.memory.remember("a note")
        assert chats.memory.stats()["embedding_model"] == "the-shared-one"
    retriever = ElasticMemoryRetriever(path=tmp_path / "b.db")
    retriever.memory.remember("a note")
    assert retriever.memory.stats()["embedding_model"] == "the-shared-one"
    retriever.close()
    assert built == []  # no store made a model of its own


@pytest.mark.model
def test_vector_store_index_from_documents_runs_offline(tmp_path: Path) -> None:
    """The issue's failing call (it needed llama-index-embeddings-openai), with the built-in model."""
    docs = [Document(text=t) for t in TEXTS]
    with ElasticMemoryVectorStore(path=tmp_path / "docs.db") as store:
        index = VectorStoreIndex.from_documents(
            docs, storage_context=StorageContext.from_defaults(vector_store=store), embed_model=ElasticMemoryEmbedding()
        )
        found = index.as_retriever(similarity_top_k=1).retrieve("Which city is France's capital?")
    assert [n.node.get_content() for n in found] == [TEXTS[1]]
    assert 0.3 < (found[0].score or 0) <= 1.0  # a cosine
