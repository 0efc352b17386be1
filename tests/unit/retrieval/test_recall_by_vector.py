"""recall(vector=...): search by a raw query vector; embed_query(): the vector recall uses for a text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from elastic_memory import AsyncMemory, EmbeddingMismatchError, Memory, UsageError
from elastic_memory.testing import FakeEmbedder

TEXTS = ["red apples in a basket", "green pears on a tree", "a blue sky over the sea"]


def test_a_vector_search_ranks_like_a_semantic_search_of_the_same_text(mem: Memory, fake: FakeEmbedder) -> None:
    """The vector of a text finds what semantic recall of that text finds, with the same cosines."""
    mem.remember_many(TEXTS)
    query = "apples and pears"
    by_text = mem.recall(query, k=3, mode="semantic", touch=False)
    by_vector = mem.recall(vector=[float(x) for x in fake.embed([query])[0]], k=3, mode="semantic", touch=False)
    assert [h.id for h in by_vector] == [h.id for h in by_text]
    assert [h.score for h in by_vector] == pytest.approx([h.score for h in by_text], abs=1e-6)


def test_a_vector_search_scores_are_cosines_of_unnormalised_vectors(mem: Memory, fake: FakeEmbedder) -> None:
    """The vector is normalised first: scaling it changes nothing."""
    mem.remember(TEXTS[0])
    vector = fake.embed([TEXTS[0]])[0] * 7.5
    [hit] = mem.recall(vector=vector.tolist(), k=1, mode="semantic")
    assert hit.score == pytest.approx(1.0, abs=1e-5)
    assert hit.vector_score == pytest.approx(1.0, abs=1e-5)


def test_a_vector_search_honours_filters(mem: Memory, fake: FakeEmbedder) -> None:
    mem.remember_many([{"content": t, "metadata": {"n": i}} for i, t in enumerate(TEXTS)])
    hits = mem.recall(vector=fake.embed([TEXTS[0]])[0].tolist(), mode="semantic", filters={"metadata": {"n": 2}})
    assert [h.content for h in hits] == [TEXTS[2]]


def test_hybrid_recall_takes_the_vector_for_its_vector_leg(mem: Memory, fake: FakeEmbedder) -> None:
    """The keyword leg matches the text, the vector leg searches the given vector."""
    mem.remember_many(TEXTS)
    explanation = mem.explain("sky", vector=fake.embed([TEXTS[1]])[0].tolist(), mode="hybrid")
    assert explanation.effective_mode.value == "hybrid"
    assert explanation.details["keyword_candidates"] == 1
    assert "embed_ms" not in explanation.details
    assert {h.content for h in explanation.hits} >= {TEXTS[1], TEXTS[2]}


def test_a_vector_does_not_call_the_embedder(db_path: Path) -> None:
    embedder = FakeEmbedder()
    with Memory.open(db_path, embedder=embedder) as mem:
        mem.remember("something stored")
        calls = embedder.calls
        mem.recall(vector=[1.0] * embedder.dimension, mode="semantic")
    assert embedder.calls == calls


def test_a_vector_search_of_an_empty_store_finds_nothing(mem: Memory) -> None:
    assert mem.recall(vector=[1.0] * 16, mode="semantic") == []


def test_a_vector_of_another_width_is_refused(mem: Memory) -> None:
    mem.remember("pins the store to 16 dimensions")
    with pytest.raises(EmbeddingMismatchError, match="width 3"):
        mem.recall(vector=[1.0, 0.0, 0.0], mode="semantic")


def test_keyword_mode_refuses_a_vector(mem: Memory) -> None:
    with pytest.raises(UsageError, match="'semantic' or 'hybrid'"):
        mem.recall("text", vector=[1.0] * 16, mode="keyword")


@pytest.mark.parametrize(
    ("vector", "message"),
    [
        ("1,2,3", "list of floats"),
        ({"x": 1.0}, "list of floats"),
        ([], "non-empty"),
        ([[1.0, 2.0]], "non-empty list"),
        (["a", "b"], "list of floats"),
        ([float("nan"), 1.0], "NaN"),
        ([0.0, 0.0], "all zeros"),
    ],
)
def test_a_malformed_vector_is_refused_before_any_io(mem: Memory, vector: Any, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        mem.recall(vector=vector, mode="semantic")


async def test_the_async_facade_searches_by_vector(amem: AsyncMemory, fake: FakeEmbedder) -> None:
    await amem.remember_many(TEXTS)
    hits = await amem.recall(vector=fake.embed([TEXTS[2]])[0].tolist(), k=1, mode="semantic")
    assert [h.content for h in hits] == [TEXTS[2]]


def test_embed_query_is_the_unit_vector_recall_uses(mem: Memory, fake: FakeEmbedder) -> None:
    vector = mem.embed_query("apples and pears")
    assert np.allclose(vector, fake.embed(["apples and pears"])[0], atol=1e-6)
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)


async def test_embed_query_on_the_async_facade(amem: AsyncMemory, fake: FakeEmbedder) -> None:
    assert np.allclose(await amem.embed_query("sky"), fake.embed(["sky"])[0], atol=1e-6)


def test_embed_query_needs_an_embedder(db_path: Path) -> None:
    with Memory.open(db_path, embedder=None) as mem, pytest.raises(UsageError, match="no usable embedder"):
        mem.embed_query("anything")


@pytest.mark.parametrize("text", ["", "   ", None, 3])
def test_embed_query_needs_text(mem: Memory, text: Any) -> None:
    with pytest.raises(UsageError, match="non-empty str"):
        mem.embed_query(text)


def test_a_federation_refuses_a_vector(tmp_path: Path) -> None:
    with (
        Memory.for_agent("ana", home=tmp_path, embedder=FakeEmbedder()) as mem,
        pytest.raises(UsageError, match="federation"),
    ):
        mem.recall(vector=[1.0] * 16, mode="semantic")
