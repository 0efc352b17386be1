"""The built-in embedder: the real all-MiniLM-L6-v2 int8 model, loaded offline."""

from __future__ import annotations

import socket
from pathlib import Path

import numpy as np
import pytest

from elastic_memory import EmbedderError, Memory, MiniLMEmbedder
from elastic_memory.embedders import builtin

pytestmark = pytest.mark.model


def test_vectors_are_384_wide_and_unit_length(minilm: MiniLMEmbedder) -> None:
    vectors = minilm.embed(["The cat sits on the mat.", "Stock markets fell sharply on Monday."])
    assert vectors.shape == (2, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


def test_paraphrases_are_closer_than_unrelated_text(minilm: MiniLMEmbedder) -> None:
    cat, feline, stocks = minilm.embed(
        ["The cat sits on the mat.", "A feline is resting on a rug.", "Stock markets fell sharply on Monday."]
    )
    assert float(cat @ feline) > 0.5
    assert float(cat @ stocks) < 0.2


def test_loading_never_touches_the_network(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setenv("ELASTIC_MEMORY_CACHE", str(tmp_path / "cache"))
    vectors = MiniLMEmbedder().embed(["offline"])
    assert vectors.shape == (1, 384)
    assert (tmp_path / "cache" / "all-MiniLM-L6-v2-int8" / "tokenizer.json").is_file()


def test_a_model_file_with_the_wrong_hash_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(builtin, "MODEL_SHA256", "0" * 64)
    monkeypatch.setattr(builtin, "_verified", set())
    with pytest.raises(EmbedderError, match="SHA-256"):
        MiniLMEmbedder().embed(["x"])


def test_semantic_recall_finds_a_paraphrase_with_no_shared_words(db_path: Path, minilm: MiniLMEmbedder) -> None:
    with Memory.open(db_path, embedder=minilm) as mem:
        dog = mem.remember("My dog is called Biscuit.")
        mem.remember_many(["I work as a nurse in Porto.", "The quarterly report is due on Friday."])
        assert mem.recall("What pet do I have?", mode="keyword") == []
        assert mem.recall("What pet do I have?", k=1, mode="semantic")[0].id == dog
        assert mem.recall("What pet do I have?", k=1, mode="hybrid")[0].id == dog


def test_default_auto_embedder_pins_minilm(db_path: Path) -> None:
    with Memory.open(db_path) as mem:
        mem.remember("default embedder")
        stats = mem.stats()
    assert stats["embedding_model"] == MiniLMEmbedder.model_id
    assert stats["embedding_dimension"] == 384


@pytest.mark.parametrize("query", ["\x00" * 10, "🐶" * 3000, "\ud800", "NEAR(" * 500])
def test_hostile_queries_do_not_break_the_real_tokenizer(db_path: Path, minilm: MiniLMEmbedder, query: str) -> None:
    with Memory.open(db_path, embedder=minilm) as mem:
        mem.remember("something to find")
        assert isinstance(mem.recall(query, mode="hybrid"), list)


def test_the_background_twin_gives_the_same_vectors_from_its_own_session(minilm: MiniLMEmbedder) -> None:
    texts = ["The cat sits on the mat.", "Stock markets fell sharply on Monday."]
    twin = minilm.for_background()
    assert twin is not minilm and twin is minilm.for_background()
    assert np.allclose(twin.embed(texts), minilm.embed(texts), atol=1e-5)


def test_background_embedding_of_a_turn_uses_the_twin(db_path: Path) -> None:
    with Memory.open(db_path, embedder="auto") as mem:
        mem.record_turn("The boat is moored at pier nine.", "Noted.", session_id="s1")
        mem.drain()
        embedder = mem._core.configured_embedder  # the instance the store resolved
        assert isinstance(embedder, MiniLMEmbedder)
        assert embedder.for_background()._model is not None  # the twin was loaded and used
        assert mem.recall("where is the boat", mode="semantic")
