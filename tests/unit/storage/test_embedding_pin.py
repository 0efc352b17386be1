"""The embedding gateway and the database pin."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from elastic_memory import EmbedderError, EmbeddingMismatchError, Memory, RecallWarning, UsageError
from elastic_memory.testing import FakeEmbedder


class Broken(FakeEmbedder):
    def embed(self, texts):  # type: ignore[no-untyped-def]
        raise RuntimeError("model exploded")


class WrongShape(FakeEmbedder):
    def embed(self, texts):  # type: ignore[no-untyped-def]
        return np.zeros((len(texts), self.dimension + 1), dtype=np.float32)


def test_first_vector_write_pins_the_model(db_path: Path) -> None:
    with Memory.open(db_path, embedder=FakeEmbedder(model_id="m1", family="fam")) as mem:
        mem.remember("pin me")
        stats = mem.stats()
    assert (stats["embedding_model"], stats["embedding_dimension"], stats["embedding_family"]) == ("m1", 16, "fam")


def test_same_family_model_is_accepted(db_path: Path) -> None:
    with Memory.open(db_path, embedder=FakeEmbedder(model_id="m1", family="fam")) as mem:
        mid = mem.remember("family member")
    with Memory.open(db_path, embedder=FakeEmbedder(model_id="m2", family="fam")) as mem:
        assert mem.recall("family member", mode="semantic")[0].id == mid
        assert mem.explain("family member", mode="semantic").effective_mode.value == "semantic"


def test_other_family_degrades_to_keyword_with_one_warning(db_path: Path) -> None:
    with Memory.open(db_path, embedder=FakeEmbedder(model_id="m1", family="fam")) as mem:
        mem.remember("keyword fallback works")
    with Memory.open(db_path, embedder=FakeEmbedder(model_id="x", family="other")) as mem:
        with pytest.warns(RecallWarning, match="pinned to 'm1'"):
            explanation = mem.explain("keyword fallback", mode="semantic")
        assert explanation.effective_mode.value == "keyword"
        assert [h.content for h in explanation.hits] == ["keyword fallback works"]
        mem.recall("again", mode="hybrid")  # no second warning (filterwarnings=error would fail)


def test_gateway_takes_the_first_healthy_embedder(db_path: Path) -> None:
    with Memory.open(db_path, embedder=[Broken(model_id="bad"), FakeEmbedder(model_id="good")]) as mem:
        mem.remember("healthy wins")  # no warning: a healthy embedder was found
        assert mem.stats()["embedding_model"] == "good"


def test_no_healthy_embedder_means_keyword_only_with_a_warning(db_path: Path) -> None:
    with Memory.open(db_path, embedder=Broken()) as mem:
        with pytest.warns(RecallWarning, match="model exploded"):
            mem.remember("still stored")
        assert [h.content for h in mem.recall("stored", mode="hybrid")] == ["still stored"]
        assert mem.stats()["vectors"] == 0


def test_vector_of_the_wrong_width_is_refused(db_path: Path) -> None:
    with Memory.open(db_path, embedder=FakeEmbedder()) as mem:
        mem.remember("pinned at 16")
    store = Memory.open(db_path, embedder=FakeEmbedder(dimension=8))
    with store as mem, pytest.warns(RecallWarning):
        mem.remember("eight wide")  # gateway skips the 8-d model: stored without a vector
    with Memory.open(db_path, embedder=None) as mem, pytest.raises(EmbeddingMismatchError, match="dimension 16"):
        mem._core.store.check_vector(np.zeros(8, dtype=np.float32))


def test_embedder_returning_the_wrong_shape_fails_the_write_cleanly(db_path: Path) -> None:
    with Memory.open(db_path, embedder=[FakeEmbedder()]) as mem:
        mem.remember("first")
        mem._core._embedder = WrongShape()
        with pytest.raises(EmbedderError, match="shape"):
            mem.remember("second")
        assert mem.stats()["total_memories"] == 1


def test_invalid_embedder_argument_is_a_usage_error(db_path: Path) -> None:
    with pytest.raises(UsageError, match="not an Embedder"):
        Memory.open(db_path, embedder=object())  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="'auto'"):
        Memory.open(db_path, embedder="openai")
