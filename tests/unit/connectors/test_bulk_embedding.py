"""Bulk writes: texts embedded in like-length batches within a budget, truncated at the model's limit, never twice."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from elastic_memory import EmbedderError, Memory, MiniLMEmbedder
from elastic_memory.embedders import batching
from elastic_memory.embedders.builtin import MAX_TOKENS
from elastic_memory.testing import FakeEmbedder


@given(st.lists(st.integers(min_value=0, max_value=MAX_TOKENS), max_size=300))
def test_every_text_is_in_one_batch_within_the_budget(lengths: list[int]) -> None:
    """Each position once; a batch of several texts stays within the token and attention budgets."""
    batches = batching.plan(lengths)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for batch in batches:
        longest = max(1, *(lengths[i] for i in batch))
        assert len(batch) == 1 or (
            len(batch) <= batching.MAX_BATCH
            and len(batch) * longest <= batching.BATCH_TOKENS
            and len(batch) * longest**2 <= batching.BATCH_ATTENTION
        )


@given(st.lists(st.integers(min_value=0, max_value=MAX_TOKENS), max_size=300))
def test_batches_go_shortest_first(lengths: list[int]) -> None:
    """Texts are grouped by length: little padding in each batch."""
    order = [lengths[i] for b in batching.plan(lengths) for i in b]
    assert order == sorted(lengths)


@pytest.mark.model
def test_text_beyond_the_model_limit_changes_nothing(minilm: MiniLMEmbedder) -> None:
    """The model reads the first 256 tokens (its sentence-transformers limit), not 512."""
    head = " ".join(f"word{n % 50} harbour" for n in range(200))  # well over 256 tokens
    short, long = minilm.embed([head, head + " lighthouse keepers" * 100])
    assert np.array_equal(short, long)


@pytest.mark.model
def test_batched_vectors_come_back_in_the_texts_order(minilm: MiniLMEmbedder) -> None:
    """Sorting into batches is undone: each row is its own text's vector, as embedded alone."""
    texts = ["a short one", "a much longer sentence about harbours, ships and their keepers " * 6, "mid length text"]
    together = minilm.embed(texts)
    alone = np.vstack([minilm.embed([t]) for t in texts])
    assert np.allclose(together, alone, atol=1e-5)


def _export(tmp_path: Path) -> Path:
    out = tmp_path / "e.jsonl"
    with Memory.open(tmp_path / "a.db", embedder=None) as src:
        src.remember_many([f"note number {n}" for n in range(100)])
        src.export_jsonl(out)
    return out


def test_importing_again_embeds_nothing_stored(tmp_path: Path) -> None:
    """A re-run of an import (an interrupted one, say) keeps the stored vectors of unchanged memories."""
    out, fake = _export(tmp_path), FakeEmbedder()
    with Memory.open(tmp_path / "b.db", embedder=fake) as dst:
        dst.import_jsonl(out)
        first = fake.calls
        dst.import_jsonl(out)
        assert first >= 100 and fake.calls == first
        assert dst.stats()["vectors"] == 100


def test_a_changed_memory_is_embedded_again_on_import(tmp_path: Path) -> None:
    """Only memories whose text differs from the stored one are embedded."""
    out, fake = _export(tmp_path), FakeEmbedder()
    with Memory.open(tmp_path / "b.db", embedder=fake) as dst:
        dst.import_jsonl(out)
        lines = out.read_text(encoding="utf-8").splitlines()
        record = json.loads(lines[1])
        record["content"], record["content_hash"] = "a new text", "x"
        out.write_text("\n".join([lines[0], json.dumps(record), *lines[2:]]) + "\n", encoding="utf-8")
        before = fake.calls
        dst.import_jsonl(out)
        assert fake.calls - before == 1


def test_import_reports_progress_up_to_the_files_count(tmp_path: Path) -> None:
    """``progress(done, total)`` after each batch, ending at the file's record count."""
    out, seen = _export(tmp_path), []
    with Memory.open(tmp_path / "b.db", embedder=None) as dst:
        dst.import_jsonl(out, progress=lambda done, total: seen.append((done, total)))
    assert len(seen) >= 2 and seen[-1] == (100, 100)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_a_failed_import_keeps_the_finished_batches(tmp_path: Path) -> None:
    """Each batch of memories commits: an embedder failing at the second batch leaves the first stored."""

    class Failing(FakeEmbedder):
        def embed(self, texts: list[str]) -> np.ndarray:  # type: ignore[override]
            if self.calls >= 64:
                msg = "model crashed"
                raise RuntimeError(msg)
            return super().embed(texts)

    out = _export(tmp_path)
    with Memory.open(tmp_path / "b.db", embedder=Failing()) as dst:
        with pytest.raises(EmbedderError, match="model crashed"):
            dst.import_jsonl(out)
        assert dst.stats()["total_memories"] == 64


def test_remembering_stored_texts_again_embeds_nothing(tmp_path: Path) -> None:
    """Texts already stored (visible, same namespace) are duplicates: found by hash, not run through the model."""
    fake = FakeEmbedder()
    with Memory.open(tmp_path / "m.db", embedder=fake) as mem:
        first = mem.remember_many([f"note number {n}" for n in range(50)])
        before = fake.calls
        again = mem.remember_many([f"note number {n}" for n in range(50)] + ["a new note"])
        assert fake.calls - before == 1
        assert [i.status for i in again] == ["duplicate"] * 50 + ["created"]
        assert [str(i) for i in again[:50]] == [str(i) for i in first]


def test_ingest_embeds_notes_in_like_length_batches(tmp_path: Path) -> None:
    """Notes are read ahead and sorted by length before they are cut into batches (less padding)."""
    from elastic_memory.connectors import MarkdownFolder
    from elastic_memory.connectors.ingest import BATCH, ingest_folder

    class Recording(FakeEmbedder):
        def __init__(self) -> None:
            super().__init__()
            self.batches: list[list[int]] = []

        def embed(self, texts: list[str]) -> np.ndarray:  # type: ignore[override]
            self.batches.append([len(t) for t in texts])
            return super().embed(texts)

    vault = tmp_path / "vault"
    vault.mkdir()
    for n in range(5 * BATCH):
        words = " ".join(f"word{k}" for k in range((n * 37) % 90 + 5))
        (vault / f"n{n}.md").write_text(f"# Note {n}\n{words}\n", encoding="utf-8")
    embedder = Recording()
    with Memory.open(tmp_path / "m.db", embedder=embedder) as mem:
        ingest_folder(mem, MarkdownFolder(vault))
    lengths = [n for batch in embedder.batches if len(batch) > 1 for n in batch]
    assert len(lengths) == 5 * BATCH and lengths == sorted(lengths)
