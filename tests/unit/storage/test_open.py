"""Opening a store: argument checks, missing FTS5, explicit-only model downloads."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from elastic_memory import EmbedderError, FastEmbedEmbedder, Memory, StorageError, UsageError
from elastic_memory.storage.sqlite import opening


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"agent_id": ""}, "agent_id"),
        ({"vector_index": "faiss"}, "vector_index"),
        ({"timeout": -1}, "timeout"),
        ({"recall": {"fusion": "rrf"}}, "RecallConfig"),
    ],
)
def test_bad_open_arguments_are_usage_errors(db_path: Path, kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(UsageError, match=match):
        Memory.open(db_path, embedder=None, **kwargs)  # type: ignore[arg-type]
    assert not db_path.exists()


def test_missing_fts5_is_a_clear_storage_error(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(opening, "_FTS5_PROBE", "CREATE VIRTUAL TABLE temp.p USING no_such_fts(x)")
    with pytest.raises(StorageError, match=r"no FTS5; install pysqlite3-binary or sqlean\.py"):
        Memory.open(db_path, embedder=None)


def test_named_fastembed_model_is_not_downloaded_implicitly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    embedder = FastEmbedEmbedder("BAAI/bge-small-en-v1.5", cache_dir=str(tmp_path))
    assert embedder.dimension == 384
    with pytest.raises(EmbedderError, match="allow_download=True"):
        embedder.embed(["x"])


def test_unknown_fastembed_model_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="list_supported_models"):
        FastEmbedEmbedder("no/such-model")


def test_in_memory_stores_are_independent() -> None:
    with Memory.open(":memory:", embedder=None) as a, Memory.open(":memory:", embedder=None) as b:
        a.remember("only in a")
        assert b.recall("only", mode="keyword") == []


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda m: m.remember("x", importance=10**400), None),
        (lambda m: m.remember("x", ttl=10**400), "ttl"),
        (lambda m: m.recall("x", filters={"since": 10**400}), "since"),
        (lambda m: m.recall("x", filters={"metadata": {"n": 2**70}}), "64-bit"),
        (lambda m: m.prune(min_importance=10**400), None),
        (lambda m: m.purge(float("nan")), "older_than"),
    ],
)
def test_huge_or_nan_numbers_are_handled_cleanly(db_path: Path, call, match: str | None) -> None:  # type: ignore[no-untyped-def]
    with Memory.open(db_path, embedder=None) as mem:
        if match is None:
            call(mem)  # clamped, not an error
        else:
            with pytest.raises(UsageError, match=match):
                call(mem)


def test_bad_ram_budget_and_clock_are_refused_at_open(db_path: Path) -> None:
    with pytest.raises(UsageError, match="ram_budget_bytes"):
        Memory.open(db_path, embedder=None, ram_budget_bytes="lots")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="clock"):
        Memory.open(db_path, embedder=None, clock=5)  # type: ignore[arg-type]


def test_ids_may_come_from_any_iterable(db_path: Path) -> None:
    with Memory.open(db_path, embedder=None) as mem:
        ids = mem.remember_many(["a", "b"])
        assert mem.forget(i for i in ids) == 2
