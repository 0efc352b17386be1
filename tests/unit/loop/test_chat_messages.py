"""Chat messages (kind ``message``): stored without embedding, left out of recall unless asked.

An adapter's chat history writes every message of a conversation; embedding each one would
cost a model run per message and fill recall with the raw transcript beside the loop's own
chunks. On every backend (``backend`` runs each test on SQLite files, in memory and on
PostgreSQL).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from elastic_memory import Memory
from elastic_memory.testing import FakeEmbedder

MESSAGE = "user: my kayak is bright orange"


def _message(store: Memory) -> str:
    """Store MESSAGE as a chat history does (remember_many's items take ``kind``)."""
    (mid,) = store.remember_many([{"content": MESSAGE, "kind": "message", "type": "episodic"}], dedupe=False)
    return str(mid)


@pytest.fixture
def store(location: str) -> Iterator[Memory]:
    with Memory.open(location, embedder=FakeEmbedder()) as mem:
        yield mem


def test_a_message_is_stored_without_a_vector(store: Memory) -> None:
    """Neither the write nor the worker embeds a chat message."""
    mid = _message(store)
    store.drain()
    assert store.vectors([mid]) == {} and store.stats()["vectors_pending"] == 0


def test_a_supplied_vector_is_not_kept_for_a_message(store: Memory) -> None:
    """A message never carries a vector, even one the caller supplies."""
    (mid,) = store.remember_many([{"content": MESSAGE, "kind": "message"}], vectors=[[1.0] + [0.0] * 15])
    assert store.vectors([mid]) == {}


@pytest.mark.parametrize("mode", ["keyword", "hybrid", "semantic"])
def test_recall_leaves_messages_out(store: Memory, mode: str) -> None:
    """A recall that does not name the kind never returns a chat message."""
    _message(store)
    note = store.remember("The kayak lives in the garage.")
    assert [h.id for h in store.recall("kayak", mode=mode)] == [note]


def test_listing_leaves_messages_out(store: Memory) -> None:
    """An empty query lists memories, not the transcript."""
    _message(store)
    assert store.recall("") == []


def test_recall_finds_messages_when_asked(store: Memory) -> None:
    """filters={"kind": "message"} recalls them by keyword."""
    mid = _message(store)
    store.remember("The kayak lives in the garage.")
    assert [h.id for h in store.recall("kayak", mode="keyword", filters={"kind": "message"})] == [mid]


def test_a_plan_never_shows_a_message(store: Memory) -> None:
    """build_context's relevant memories leave chat messages out."""
    _message(store)
    assert "bright orange" not in store.build_context("What colour is my kayak?").render()


def test_get_reads_a_message_by_id(store: Memory) -> None:
    """A message is a memory: get() returns it."""
    mid = _message(store)
    record = store.get(mid)
    assert record is not None and record.kind == "message"


def test_a_version_9_file_drops_messages_from_its_backlog_index(tmp_path: Path) -> None:
    """The migration rebuilds the embedding backlog's index without chat messages."""
    path = tmp_path / "memory.db"
    with Memory.open(path, embedder=None):
        pass
    with sqlite3.connect(path) as conn:
        (sql,) = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'memories_unembedded'").fetchone()
        (version,) = conn.execute("PRAGMA user_version").fetchone()
    assert "kind <> 'message'" in sql and version >= 10


def test_writing_only_messages_runs_no_model(location: str) -> None:
    """A batch of chat messages neither waits for the model nor health-checks it."""
    embedder = FakeEmbedder()
    with Memory.open(location, embedder=embedder) as mem:
        before = embedder.calls
        mem.remember_many([{"content": MESSAGE, "kind": "message"}], dedupe=False)
        assert embedder.calls == before
