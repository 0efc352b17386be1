"""ElasticMemoryRetriever beyond LangChain's standard suite: modes, k, filters, provenance, async, lifecycle."""

from __future__ import annotations

import doctest
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from pydantic import ValidationError

from elastic_memory import Memory, UsageError
from langchain_elastic_memory import ElasticMemoryRetriever, LangChainEmbedder, retrievers

NOTES = [
    {"content": "The user prefers metric units.", "id": "units", "metadata": {"lang": "en"}, "session_id": "s1"},
    {"content": "The user's dog is called Biscuit.", "id": "dog", "metadata": {"lang": "en"}},
    {"content": "Le chat de l'utilisateur s'appelle Tigre.", "id": "cat", "metadata": {"lang": "fr"}},
    {"content": "Standup moved to 10:00 for the team.", "id": "standup", "agent_id": "ops", "type": "episodic"},
]


@pytest.fixture
def mem() -> Iterator[Memory]:
    """A fresh in-memory store holding NOTES."""
    with Memory.open(":memory:", embedder=LangChainEmbedder(DeterministicFakeEmbedding(size=8))) as m:
        m.remember_many(NOTES, dedupe=False)
        yield m


@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
def test_every_mode_recalls(mem: Memory, mode: str) -> None:
    docs = ElasticMemoryRetriever(memory=mem, mode=mode).invoke("The user's dog is called Biscuit.")
    assert docs[0].id == "dog"


def test_keyword_mode_matches_words(mem: Memory) -> None:
    docs = ElasticMemoryRetriever(memory=mem, mode="keyword", k=10).invoke("metric")
    assert [d.id for d in docs] == ["units"]


def test_k_in_the_constructor_bounds_the_result(mem: Memory) -> None:
    assert len(ElasticMemoryRetriever(memory=mem, k=2, mode="semantic").invoke("user")) == 2


def test_k_in_invoke_overrides_the_constructor(mem: Memory) -> None:
    retriever = ElasticMemoryRetriever(memory=mem, k=1, mode="semantic")
    assert len(retriever.invoke("user", k=3)) == 3


def test_filters_narrow_the_recall(mem: Memory) -> None:
    retriever = ElasticMemoryRetriever(memory=mem, k=10, mode="semantic", filters={"metadata": {"lang": "fr"}})
    assert [d.id for d in retriever.invoke("user")] == ["cat"]


def test_filters_on_columns_narrow_the_recall(mem: Memory) -> None:
    retriever = ElasticMemoryRetriever(memory=mem, k=10, mode="semantic", filters={"agent_id": "ops"})
    assert [d.id for d in retriever.invoke("anything")] == ["standup"]


def test_documents_carry_score_and_provenance(mem: Memory) -> None:
    [doc] = ElasticMemoryRetriever(memory=mem, k=1, mode="keyword").invoke("metric units")
    meta = doc.metadata
    assert doc.page_content == "The user prefers metric units." and doc.id == "units"
    assert meta["metadata"] == {"lang": "en"}
    assert (meta["id"], meta["type"], meta["kind"], meta["agent_id"]) == ("units", "semantic", "note", "default")
    assert (meta["session_id"], meta["tier"], meta["scope"], meta["source"]) == ("s1", None, "private", "agent")
    assert meta["score"] > 0 and meta["keyword_score"] > 0 and isinstance(meta["created_at"], float)
    assert set(meta) >= {"importance", "confidence", "pinned", "tags", "vector_score", "pool"}


def test_semantic_documents_carry_the_cosine(mem: Memory) -> None:
    [doc] = ElasticMemoryRetriever(memory=mem, k=1, mode="semantic").invoke("The user prefers metric units.")
    assert doc.metadata["vector_score"] == pytest.approx(1.0, abs=1e-5)


def test_the_retriever_recalls_memory_loop_turns(mem: Memory) -> None:
    mem.record_turn("We hiked the Serra da Estrela.", "Sounds lovely!", session_id="trip")
    retriever = ElasticMemoryRetriever(memory=mem, k=5, mode="keyword", filters={"kind": "chunk"})
    [doc] = retriever.invoke("Serra da Estrela")
    assert doc.metadata["kind"] == "chunk" and doc.metadata["session_id"] == "trip"


def test_touch_false_records_no_access(mem: Memory) -> None:
    ElasticMemoryRetriever(memory=mem, mode="keyword", touch=False).invoke("metric units")
    record = mem.get("units")
    assert record is not None and record.access_count == 0


def test_recall_counts_as_access_by_default(mem: Memory) -> None:
    ElasticMemoryRetriever(memory=mem, mode="keyword").invoke("metric units")
    record = mem.get("units")
    assert record is not None and record.access_count == 1


async def test_ainvoke_returns_what_invoke_returns(mem: Memory) -> None:
    retriever = ElasticMemoryRetriever(memory=mem, k=3, mode="hybrid", touch=False)
    assert await retriever.ainvoke("user", k=2) == retriever.invoke("user", k=2)


async def test_ainvoke_uses_the_async_core_not_threads(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    retriever = ElasticMemoryRetriever(memory=mem, k=2, mode="hybrid")

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("ainvoke went through the sync facade or a worker thread")

    with monkeypatch.context() as patched:
        for name in ("recall", "explain", "get_many", "embed_query"):
            patched.setattr(Memory, name, refuse)
        patched.setattr("langchain_core.retrievers.run_in_executor", refuse)
        assert len(await retriever.ainvoke("user")) == 2


def test_a_path_opens_a_file_and_close_closes_it(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    with Memory.open(path, embedder=LangChainEmbedder(DeterministicFakeEmbedding(size=8))) as m:
        m.remember("Written before the retriever opened the file.")
    retriever = ElasticMemoryRetriever(path=path, embedding=DeterministicFakeEmbedding(size=8), mode="semantic")
    try:
        assert [d.page_content for d in retriever.invoke("before")] == ["Written before the retriever opened the file."]
    finally:
        retriever.close()
    with pytest.raises(UsageError):
        retriever.invoke("closed now")


def test_a_retriever_over_an_open_memory_leaves_it_open(mem: Memory) -> None:
    ElasticMemoryRetriever(memory=mem).close()
    assert mem.get("dog") is not None


def test_a_bad_filter_fails_at_construction(mem: Memory) -> None:
    with pytest.raises(UsageError, match="unknown operator"):
        ElasticMemoryRetriever(memory=mem, filters={"metadata": {"lang": {"$regex": "e.*"}}})


@pytest.mark.parametrize(
    "kwargs",
    [{"mode": "vector"}, {"k": 0}, {"k": 1001}, {"top_k": 3}],
    ids=["mode", "k-zero", "k-large", "unknown-field"],
)
def test_bad_settings_are_a_validation_error(mem: Memory, kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        ElasticMemoryRetriever(memory=mem, **kwargs)


def test_path_and_memory_together_are_refused(mem: Memory) -> None:
    with pytest.raises(UsageError, match="exactly one of path="):
        ElasticMemoryRetriever(path=":memory:", memory=mem)


def test_k_out_of_range_in_invoke_is_refused(mem: Memory) -> None:
    with pytest.raises(UsageError, match="k must be an integer"):
        ElasticMemoryRetriever(memory=mem).invoke("user", k=0)


@pytest.mark.model
def test_the_builtin_model_recalls_by_meaning() -> None:
    retriever = ElasticMemoryRetriever(path=":memory:", mode="semantic", k=1)
    try:
        retriever.memory.remember_many(["The cat sat on the mat.", "Stock markets fell sharply today."])
        assert [d.page_content for d in retriever.invoke("a kitten resting")] == ["The cat sat on the mat."]
    finally:
        retriever.close()


def test_the_module_example_runs() -> None:
    assert doctest.testmod(retrievers, raise_on_error=True).attempted > 0


# ------------------------------------------------------------ search_kwargs
def test_search_kwargs_k_bounds_the_result(mem: Memory) -> None:
    retriever = ElasticMemoryRetriever(memory=mem, mode="semantic", search_kwargs={"k": 2})
    assert len(retriever.invoke("user")) == 2


def test_search_kwargs_filter_narrows_the_recall(mem: Memory) -> None:
    retriever = ElasticMemoryRetriever(memory=mem, k=10, search_kwargs={"filter": {"metadata": {"lang": "fr"}}})
    assert [d.id for d in retriever.invoke("user")] == ["cat"]


def test_search_kwargs_filters_is_the_same_as_filter(mem: Memory) -> None:
    retriever = ElasticMemoryRetriever(memory=mem, k=10, search_kwargs={"filters": {"agent_id": "ops"}})
    assert [d.id for d in retriever.invoke("anything")] == ["standup"]


def test_search_kwargs_score_threshold_drops_the_less_relevant(mem: Memory) -> None:
    everything = ElasticMemoryRetriever(memory=mem, k=10, mode="semantic").invoke("The user's dog is called Biscuit.")
    kept = ElasticMemoryRetriever(memory=mem, k=10, mode="semantic", search_kwargs={"score_threshold": 0.99})
    assert [d.id for d in kept.invoke("The user's dog is called Biscuit.")] == ["dog"]
    assert len(everything) > 1


def test_search_kwargs_mmr_arguments_are_accepted_and_ignored(mem: Memory) -> None:
    retriever = ElasticMemoryRetriever(memory=mem, search_kwargs={"k": 1, "fetch_k": 20, "lambda_mult": 0.5})
    assert len(retriever.invoke("user")) == 1


def test_search_kwargs_with_an_unknown_key_is_refused(mem: Memory) -> None:
    with pytest.raises(UsageError, match="unknown key"):
        ElasticMemoryRetriever(memory=mem, search_kwargs={"top_k": 3})


def test_search_kwargs_with_a_bad_value_is_a_validation_error(mem: Memory) -> None:
    with pytest.raises(ValidationError):
        ElasticMemoryRetriever(memory=mem, search_kwargs={"k": 0})


def test_search_kwargs_with_a_bad_filter_is_refused_at_construction(mem: Memory) -> None:
    with pytest.raises(UsageError, match="unknown operator"):
        ElasticMemoryRetriever(memory=mem, search_kwargs={"filter": {"metadata": {"lang": {"$regex": "e"}}}})
