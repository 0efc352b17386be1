"""JSONL export and import: a lossless round trip."""

from __future__ import annotations

from pathlib import Path

import pytest

from elastic_memory import Memory, UsageError
from elastic_memory.testing import FakeEmbedder


def _fill(mem: Memory) -> list[str]:
    ids = mem.remember_many(
        [
            {"content": "alpha", "tags": ["t1"], "metadata": {"n": 1, "deep": {"x": [1, 2]}}, "session_id": "s"},
            {"content": "beta", "type": "episodic", "importance": 0.9, "scope": "shared", "pool": "team"},
            {"content": "gamma", "pinned": True, "ttl": 3600, "source": "user_confirmed", "confidence": 0.7},
        ]
    )
    mem.recall("alpha")  # access counters move
    mem.forget(ids[1])
    mem.archive(ids[2])
    return list(ids)


@pytest.mark.parametrize("vectors", [False, True])
def test_round_trip_preserves_every_field(tmp_path: Path, vectors: bool) -> None:
    out = tmp_path / "export.jsonl"
    with Memory.open(tmp_path / "a.db", embedder=FakeEmbedder()) as src:
        ids = _fill(src)
        assert src.export_jsonl(out, vectors=vectors) == 3
        before = src.get_many(ids)
    with Memory.open(tmp_path / "b.db", embedder=FakeEmbedder()) as dst:
        report = dst.import_jsonl(out)
        assert (report.created, report.total) == (3, 3)
        after = dst.get_many(ids)
        assert after == before
        assert [h.content for h in dst.recall("alpha", mode="semantic", k=1)] == ["alpha"]


def test_importing_twice_updates_instead_of_duplicating(tmp_path: Path) -> None:
    out = tmp_path / "export.jsonl"
    with Memory.open(tmp_path / "a.db", embedder=None) as src:
        _fill(src)
        src.export_jsonl(out)
    with Memory.open(tmp_path / "b.db", embedder=None) as dst:
        dst.import_jsonl(out)
        report = dst.import_jsonl(out)
        assert (report.created, report.updated) == (0, 3)
        assert dst.stats()["total_memories"] == 3


def test_a_bad_line_is_reported_with_its_number_and_writes_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"content": "x"}\n', encoding="utf-8")
    with Memory.open(tmp_path / "b.db", embedder=None) as dst:
        with pytest.raises(UsageError, match=r"bad.jsonl:1"):
            dst.import_jsonl(bad)
        assert dst.stats()["total_memories"] == 0


def test_vectors_import_into_a_store_without_embedder_under_the_exporters_model(tmp_path: Path) -> None:
    out = tmp_path / "export.jsonl"
    with Memory.open(tmp_path / "a.db", embedder=FakeEmbedder()) as src:
        src.remember("with a vector")
        src.export_jsonl(out, vectors=True)
    with Memory.open(tmp_path / "b.db", embedder=None) as dst:
        assert dst.import_jsonl(out).created == 1
        stats = dst.stats()
        assert (stats["vectors"], stats["embedding_model"]) == (1, FakeEmbedder().model_id)
    with Memory.open(tmp_path / "b.db", embedder=FakeEmbedder()) as again:
        assert again.recall("with a vector", mode="semantic")[0].vector_score == pytest.approx(1.0, abs=1e-5)


def test_vectors_of_another_family_are_re_embedded(tmp_path: Path) -> None:
    out = tmp_path / "export.jsonl"
    with Memory.open(tmp_path / "a.db", embedder=FakeEmbedder(16, family="one")) as src:
        src.remember("foreign vector")
        src.export_jsonl(out, vectors=True)
    with Memory.open(tmp_path / "b.db", embedder=FakeEmbedder(8, model_id="m8", family="two")) as dst:
        dst.import_jsonl(out)
        stats = dst.stats()
        assert (stats["embedding_model"], stats["embedding_dimension"], stats["vectors"]) == ("m8", 8, 1)
        assert dst.recall("foreign vector", mode="semantic")[0].vector_score == pytest.approx(1.0, abs=1e-5)


def test_export_to_a_missing_folder_is_a_usage_error(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "a.db", embedder=None) as src, pytest.raises(UsageError, match="does not exist"):
        src.export_jsonl(tmp_path / "nope" / "out.jsonl")
