"""remember_many(vectors=...): vectors the caller computed; recall(vector_weight=...): a per-call fusion weight."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from elastic_memory import AsyncMemory, EmbeddingMismatchError, Memory, UsageError
from elastic_memory.testing import FakeEmbedder


def _unit(values: list[float]) -> list[float]:
    array = np.asarray(values, dtype=np.float64)
    return [float(x) for x in array / np.linalg.norm(array)]


def test_supplied_vectors_are_stored_instead_of_embedding(db_path: Path) -> None:
    embedder = FakeEmbedder(dimension=4)
    with Memory.open(db_path, embedder=embedder) as mem:
        ids = mem.remember_many(["first", "second"], vectors=[[3.0, 0, 0, 4.0], [0, 2.0, 0, 0]], dedupe=False)
        stored = mem.vectors(list(ids))
        assert embedder.calls == 1  # the health check only
    assert stored[ids[0]] == pytest.approx([0.6, 0, 0, 0.8], abs=1e-6)
    assert stored[ids[1]] == pytest.approx([0, 1.0, 0, 0], abs=1e-6)


def test_a_none_vector_is_embedded_by_the_store(db_path: Path) -> None:
    embedder = FakeEmbedder(dimension=4)
    with Memory.open(db_path, embedder=embedder) as mem:
        ids = mem.remember_many(["given", "embedded"], vectors=[[1.0, 0, 0, 0], None])
        stored = mem.vectors(list(ids))
    assert stored[ids[1]] == pytest.approx(embedder.embed(["embedded"])[0].tolist(), abs=1e-6)


def test_without_an_embedder_supplied_vectors_pin_the_store(db_path: Path) -> None:
    """A keyword-only store takes supplied vectors: pinned to "supplied", searchable by vector."""
    with Memory.open(db_path, embedder=None) as mem:
        mem.remember_many(
            [{"content": "north", "id": "n"}, {"content": "east", "id": "e"}], vectors=[[0, 1.0], [1.0, 0.1]]
        )
        stats = mem.stats()
        hits = mem.recall(vector=[0.1, 1.0], mode="semantic", k=2)
    assert (stats["embedding_model"], stats["embedding_dimension"]) == ("supplied", 2)
    assert [h.id for h in hits] == ["n", "e"]
    assert hits[0].vector_score == pytest.approx(float(np.dot(_unit([0.1, 1.0]), [0, 1.0])), abs=1e-6)


def test_without_an_embedder_rows_without_vectors_have_none(db_path: Path) -> None:
    with Memory.open(db_path, embedder=None) as mem:
        ids = mem.remember_many(["with", "without"], vectors=[[1.0, 0.0], None])
        assert set(mem.vectors(list(ids))) == {ids[0]}


async def test_async_remember_many_takes_vectors(db_path: Path) -> None:
    async with await AsyncMemory.open(db_path, embedder=None) as mem:
        [mid] = await mem.remember_many(["only"], vectors=[[0.0, 0.0, 2.0]])
        assert (await mem.vectors([mid]))[mid] == pytest.approx([0, 0, 1.0])


@pytest.mark.parametrize(
    ("vectors", "match"),
    [
        ([[1.0, 0.0]], "2 items"),
        ([[1.0, 0.0], [1.0, 0.0, 0.0]], "different widths"),
        ([[1.0, float("nan")], None], r"vectors\[0\] holds NaN"),
        ([None, [0.0, 0.0]], r"vectors\[1\] is all zeros"),
        ([None, "ab"], r"vectors\[1\] must be a list of floats"),
        ("not a list", "one vector"),
    ],
)
def test_bad_vectors_are_refused_before_anything_is_stored(db_path: Path, vectors: object, match: str) -> None:
    with Memory.open(db_path, embedder=None) as mem:
        with pytest.raises(UsageError, match=match):
            mem.remember_many(["one", "two"], vectors=vectors)  # type: ignore[arg-type]
        assert mem.stats()["total_memories"] == 0


def test_a_vector_of_the_wrong_width_for_the_pin_is_refused(db_path: Path) -> None:
    with Memory.open(db_path, embedder=FakeEmbedder(dimension=4)) as mem:
        mem.remember("pins the store to 4-d")
        with pytest.raises(EmbeddingMismatchError):
            mem.remember_many(["a", "b"], vectors=[[1.0, 0.0], [0.0, 1.0]])
        with pytest.raises(EmbeddingMismatchError):
            mem.remember_many(["c"], vectors=[[1.0, 0.0]])
        assert mem.stats()["total_memories"] == 1


def test_a_federation_refuses_supplied_vectors_and_a_weight(tmp_path: Path) -> None:
    with Memory.for_agent("ana", home=tmp_path, embedder=FakeEmbedder()) as mem:
        with pytest.raises(UsageError, match="federation"):
            mem.remember_many(["x"], vectors=[[1.0] * 16])
        with pytest.raises(UsageError, match="federation"):
            mem.recall("x", vector_weight=0.5)


def _ranked(mem: Memory, weight: float) -> list[str]:
    vector = [1.0, 0.0]  # nearest to "b", while the keyword "apple" is only in "a"
    return [h.id for h in mem.recall("apple", vector=vector, mode="hybrid", k=2, vector_weight=weight, touch=False)]


def test_vector_weight_moves_hybrid_between_its_legs(db_path: Path) -> None:
    with Memory.open(db_path, embedder=None) as mem:
        mem.remember_many(
            [{"content": "apple pie", "id": "a"}, {"content": "plum tart", "id": "b"}], vectors=[[0.2, 1.0], [1.0, 0.0]]
        )
        assert _ranked(mem, 1.0) == ["b", "a"]
        assert _ranked(mem, 0.0) == ["a", "b"]
        explanation = mem.explain("apple", vector=[1.0, 0.0], mode="hybrid", vector_weight=0.25)
        assert explanation.details["vector_weight"] == 0.25
        assert mem.recall_config.vector_weight is None  # the store's setting is unchanged


@pytest.mark.parametrize("weight", [-0.1, 1.5, "0.5", True])
def test_a_bad_vector_weight_is_a_usage_error(mem: Memory, weight: object) -> None:
    with pytest.raises(UsageError, match="vector_weight"):
        mem.recall("x", vector_weight=weight)  # type: ignore[arg-type]
