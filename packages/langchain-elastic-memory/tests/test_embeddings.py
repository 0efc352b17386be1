"""ElasticMemoryEmbeddings: the core's embedders as LangChain Embeddings, one built-in model per process."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_tests.integration_tests import EmbeddingsIntegrationTests
from langchain_tests.unit_tests import EmbeddingsUnitTests

import elastic_memory.embedders.builtin as builtin_module
from elastic_memory import Memory, UsageError
from elastic_memory.embedders import MiniLMEmbedder
from elastic_memory.testing import FakeEmbedder
from langchain_elastic_memory import ElasticMemoryEmbeddings, ElasticMemoryVectorStore


class TestElasticMemoryEmbeddingsUnit(EmbeddingsUnitTests):
    @property
    def embeddings_class(self) -> type[Embeddings]:
        return ElasticMemoryEmbeddings


@pytest.mark.model
class TestElasticMemoryEmbeddingsIntegration(EmbeddingsIntegrationTests):
    @property
    def embeddings_class(self) -> type[Embeddings]:
        return ElasticMemoryEmbeddings


def test_a_core_embedder_gives_its_vectors() -> None:
    fake = FakeEmbedder(dimension=8)
    embeddings = ElasticMemoryEmbeddings(fake)
    assert embeddings.embed_documents(["tea", "coffee"]) == fake.embed(["tea", "coffee"]).tolist()


def test_a_query_goes_through_the_embedders_embed_query() -> None:
    class Asymmetric(FakeEmbedder):
        def embed_query(self, text: str) -> list[float]:
            return [1.0] + [0.0] * (self.dimension - 1)

    assert ElasticMemoryEmbeddings(Asymmetric(dimension=4)).embed_query("anything") == [1.0, 0.0, 0.0, 0.0]


def test_no_texts_give_no_vectors() -> None:
    assert ElasticMemoryEmbeddings(FakeEmbedder()).embed_documents([]) == []


def test_a_string_for_the_list_of_texts_is_refused() -> None:
    with pytest.raises(UsageError, match="texts must be a list"):
        ElasticMemoryEmbeddings(FakeEmbedder()).embed_documents("tea")  # type: ignore[arg-type]


def test_something_that_is_not_an_embedder_is_refused() -> None:
    with pytest.raises(UsageError, match="not an Embedder"):
        ElasticMemoryEmbeddings(object())  # type: ignore[arg-type]


def test_every_default_instance_shares_one_builtin_model() -> None:
    assert ElasticMemoryEmbeddings().embedder is ElasticMemoryEmbeddings().embedder
    assert isinstance(ElasticMemoryEmbeddings().embedder, MiniLMEmbedder)


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """A fresh process-wide built-in embedder whose model loads are counted."""
    counted: list[int] = []
    original = MiniLMEmbedder._load

    def counting(self: MiniLMEmbedder) -> object:
        counted.append(1)
        return original(self)

    monkeypatch.setattr(builtin_module, "_shared", None)  # the core keeps the process's one instance
    monkeypatch.setattr(MiniLMEmbedder, "_load", counting)
    yield counted


@pytest.mark.model
def test_stores_and_embeddings_load_the_builtin_model_once(loads: list[int]) -> None:
    with ElasticMemoryVectorStore(path=":memory:") as a, ElasticMemoryVectorStore(path=":memory:") as b:
        a.add_texts(["The cat sat on the mat."])
        b.add_texts(["Paris is in France."])
        ElasticMemoryEmbeddings().embed_query("a kitten")
    assert len(loads) == 1


@pytest.mark.model
def test_the_vector_stores_embeddings_are_the_builtin_model() -> None:
    with ElasticMemoryVectorStore(path=":memory:") as store:
        assert isinstance(store.embeddings, ElasticMemoryEmbeddings)
        assert store.embeddings.embedder is ElasticMemoryEmbeddings().embedder


def test_the_vector_stores_embeddings_are_the_given_ones() -> None:
    given = ElasticMemoryEmbeddings(FakeEmbedder())
    with ElasticMemoryVectorStore(path=":memory:", embedding=given) as store:
        assert store.embeddings is given


def test_a_core_embedder_option_is_the_vector_stores_embeddings() -> None:
    fake = FakeEmbedder()
    with ElasticMemoryVectorStore(path=":memory:", embedder=fake) as store:
        assert isinstance(store.embeddings, ElasticMemoryEmbeddings) and store.embeddings.embedder is fake


def test_a_keyword_only_store_has_no_embeddings() -> None:
    with ElasticMemoryVectorStore(path=":memory:", embedder=None, search_mode="keyword") as store:
        assert store.embeddings is None


def test_an_open_memory_with_another_model_has_no_embeddings_to_report() -> None:
    with Memory.open(":memory:", embedder=FakeEmbedder()) as mem:
        store = ElasticMemoryVectorStore(memory=mem)
        store.add_texts(["tea"])
        assert store.embeddings is None


@pytest.mark.model
def test_an_open_memory_pinned_to_the_builtin_model_reports_it() -> None:
    with Memory.open(":memory:") as mem:
        store = ElasticMemoryVectorStore(memory=mem)
        store.add_texts(["tea"])
        assert isinstance(store.embeddings, ElasticMemoryEmbeddings)


CORPUS = [
    Document(id="cat", page_content="The cat sat on the mat."),
    Document(id="stocks", page_content="Stock markets fell sharply today."),
    Document(id="paris", page_content="Paris is the capital of France."),
    Document(id="rain", page_content="Heavy rain is expected this weekend."),
    Document(id="python", page_content="Python is a popular programming language."),
]


@pytest.mark.model
@pytest.mark.parametrize("query", ["a kitten resting", "the economy", "weather forecast", "writing code", "Europe"])
def test_in_memory_vector_store_on_these_embeddings_finds_what_the_store_finds(query: str) -> None:
    reference = InMemoryVectorStore(embedding=ElasticMemoryEmbeddings())
    reference.add_documents(CORPUS)
    with ElasticMemoryVectorStore(path=":memory:") as ours:
        ours.add_documents(CORPUS)
        expected = reference.similarity_search_with_score(query, k=3)
        found = ours.similarity_search_with_score(query, k=3)
    assert [d.id for d, _ in found] == [d.id for d, _ in expected]
    assert [s for _, s in found] == pytest.approx([s for _, s in expected], abs=1e-4)
