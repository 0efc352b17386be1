"""The embedding backlog: every live memory gets its vector, however it was left without one.

The write path of the memory loop stores turns without vectors and the worker embeds them;
memories written with ``embedder=None`` wait for a store opened with a model. Load shedding
defers that work, never drops it; a reopened store picks its backlog up; ``drain()`` waits
for it; ``stats()`` and ``explain()`` say how much is left. Each test runs on a SQLite file
and, where the ``where`` fixture says so, on a PostgreSQL schema.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from elastic_memory import LoopConfig, Memory, cli
from elastic_memory.cli import _common as cli_common
from elastic_memory.governor import Admission
from elastic_memory.loop.attach import loop_of
from elastic_memory.loop.jobs import EMBED_BATCH, EMBED_BATCHES
from elastic_memory.testing import FakeEmbedder

pytestmark = pytest.mark.timeout(180)

#: Far more than one embed job takes (its follow-up job is what load shedding used to drop).
TURNS = 3 * EMBED_BATCHES * EMBED_BATCH


@pytest.fixture(params=["sqlite", "postgres"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new store on each backend: a SQLite file, or a schema on the session's PostgreSQL server."""
    if request.param == "sqlite":
        return str(tmp_path / "memory.db")
    return str(request.getfixturevalue("pg_location"))


def _unembedded(mem: Memory) -> list[str]:
    """Ids of the live memories, every agent's, that have no vector (read through the public API)."""
    missing: list[str] = []
    after = None
    while True:
        page = mem.list(state="live", limit=1000, after=after)
        missing += [r.id for r in page.records if not r.has_vector]
        if page.next is None:
            return missing
        after = page.next


def _shedding_embeds(mem: Memory) -> None:
    """Make every embed job look slower than any headroom: once one runs, others are shed."""
    loop_of(mem._core).worker.admission = Admission(priors={"embed": 1e6})


def _fill_without_vectors(where: str, texts: list[str], *, agent_id: str = "default") -> None:
    with Memory.open(where, embedder=None, agent_id=agent_id) as mem:
        mem.remember_many(texts)


def _notes(n: int, who: str = "ana") -> list[str]:
    return [f"Note {i} of {who}: the {('red', 'green', 'blue')[i % 3]} crate went to shelf {i}." for i in range(n)]


def test_shed_embedding_jobs_are_deferred_and_drain_embeds_every_memory(where: str) -> None:
    """Turns recorded while every follow-up embed job is shed all have vectors after drain().

    If this fails, check that a shed deferrable job is kept aside (Worker._deferred) and that
    drain() chases the backlog left after the queue is empty.
    """
    with Memory.open(where, embedder=FakeEmbedder(), loop=LoopConfig(tier="standard")) as mem:
        _shedding_embeds(mem)
        for i in range(TURNS):
            mem.record_turn(f"Turn {i}: the crate number {i} is on shelf {i % 40}.", "Noted.", session_id="s1")
        mem.drain()
        missing = _unembedded(mem)
        shed = mem.health()["jobs_shed"].get("embed", 0)
    assert missing == []
    assert shed > 0  # the jobs were shed indeed: the vectors came from deferred and drained work


def test_a_reopened_store_embeds_its_backlog_on_drain_without_a_new_write(where: str) -> None:
    """A store filled with ``embedder=None`` and reopened with a model has every vector after drain()."""
    _fill_without_vectors(where, _notes(40))
    with Memory.open(where, embedder=FakeEmbedder(), loop=LoopConfig(tier="standard", background=False)) as mem:
        mem.drain()
        missing = _unembedded(mem)
    assert missing == []


def test_a_reopened_store_embeds_its_backlog_in_the_background(where: str) -> None:
    """Opening a store with a backlog queues its embedding: the worker gives the vectors, no call needed.

    If this fails, check that loop.attach.open_core calls MemoryLoop.resume.
    """
    _fill_without_vectors(where, _notes(40))
    with Memory.open(where, embedder=FakeEmbedder(), loop=LoopConfig(tier="standard")) as mem:
        deadline = time.monotonic() + 60
        while mem.stats()["vectors_pending"] and time.monotonic() < deadline:
            time.sleep(0.05)  # the worker runs on the library's loop meanwhile
        missing = _unembedded(mem)
    assert missing == []


def test_a_store_closed_with_a_backlog_is_embedded_when_reopened(where: str) -> None:
    """Turns whose follow-up embed jobs were shed, closed undrained, get their vectors at the next drain."""
    with Memory.open(where, embedder=FakeEmbedder(), loop=LoopConfig(tier="standard")) as mem:
        _shedding_embeds(mem)
        for i in range(TURNS):
            mem.record_turn(f"Turn {i}: the parcel {i} left on truck {i % 7}.", "Okay.", session_id="s1")
    with Memory.open(where, embedder=FakeEmbedder(), loop=LoopConfig(tier="standard", background=False)) as mem:
        mem.drain()
        missing = _unembedded(mem)
    assert missing == []


def test_stats_counts_the_backlog(where: str) -> None:
    """``stats()["vectors_pending"]`` counts the live memories without a vector."""
    _fill_without_vectors(where, _notes(12))
    with Memory.open(where, embedder=FakeEmbedder(), loop=LoopConfig(tier="standard", background=False)) as mem:
        pending = mem.stats()["vectors_pending"]
    assert pending == 12


def test_stats_counts_no_backlog_after_drain(where: str) -> None:
    """Once drained, no live memory waits for a vector."""
    _fill_without_vectors(where, _notes(12))
    with Memory.open(where, embedder=FakeEmbedder(), loop=LoopConfig(tier="standard", background=False)) as mem:
        mem.drain()
        pending = mem.stats()["vectors_pending"]
    assert pending == 0


def test_hidden_memories_are_not_in_the_backlog(where: str) -> None:
    """Forgotten and archived memories need no vector: they are not counted, nor embedded."""
    with Memory.open(where, embedder=None) as mem:
        ids = mem.remember_many(_notes(4))
        mem.forget([ids[0]])
        mem.archive([ids[1]])
        pending = mem.stats()["vectors_pending"]
    assert pending == 2


def test_explain_reports_the_memories_semantic_search_could_not_see(where: str) -> None:
    """While a backlog waits, ``explain().details["vectors_pending"]`` counts it (semantic search saw the rest)."""
    with Memory.open(where, embedder=FakeEmbedder(), loop=LoopConfig(tier="standard", background=False)) as mem:
        mem.remember("The red crate went to shelf 3.")  # embedded on write: the store is pinned
    _fill_without_vectors(where, _notes(9))
    with Memory.open(where, embedder=FakeEmbedder(), loop=LoopConfig(tier="standard", background=False)) as mem:
        details = mem.explain("red crate shelf", mode="hybrid").details
    assert details["vectors_pending"] == 9


def test_explain_reports_full_coverage_after_drain(where: str) -> None:
    """After drain() semantic search covers every memory: ``vectors_pending`` is 0."""
    with Memory.open(where, embedder=FakeEmbedder(), loop=LoopConfig(tier="standard", background=False)) as mem:
        mem.remember("The red crate went to shelf 3.")
    _fill_without_vectors(where, _notes(9))
    with Memory.open(where, embedder=FakeEmbedder(), loop=LoopConfig(tier="standard", background=False)) as mem:
        mem.drain()
        details = mem.explain("red crate shelf", mode="semantic").details
    assert details["vectors_pending"] == 0


def test_a_keyword_recall_counts_no_backlog(where: str) -> None:
    """The count is asked only of a recall that wanted semantic search."""
    _fill_without_vectors(where, _notes(3))
    with Memory.open(where, embedder=FakeEmbedder(), loop=LoopConfig(tier="standard", background=False)) as mem:
        details = mem.explain("red crate", mode="keyword").details
    assert "vectors_pending" not in details


def test_recall_keeps_only_the_hits_and_asks_no_backlog_count(where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The count serves ``explain``'s details: ``recall`` (and so every plan) skips its statement."""
    with Memory.open(where, embedder=FakeEmbedder(), loop=LoopConfig(tier="standard", background=False)) as mem:
        mem.remember("The red crate went to shelf 3.")
    _fill_without_vectors(where, _notes(3))
    with Memory.open(where, embedder=FakeEmbedder(), loop=LoopConfig(tier="standard", background=False)) as mem:
        store = mem._ops.store
        counted: list[int] = []
        original = store.unembedded

        async def unembedded() -> int:
            counted.append(1)
            return await original()

        monkeypatch.setattr(store, "unembedded", unembedded)
        hits = mem.recall("red crate shelf", mode="hybrid")
        assert counted == []
        assert [h.id for h in hits] == [h.id for h in mem.explain("red crate shelf", mode="hybrid").hits]
        assert counted == [1]


def test_every_agent_partition_of_a_file_is_embedded(where: str) -> None:
    """Rows two agents wrote into one store both get vectors, whichever agent's store drains."""
    _fill_without_vectors(where, _notes(20, "ana"), agent_id="ana")
    _fill_without_vectors(where, _notes(20, "bob"), agent_id="bob")
    with Memory.open(where, embedder=FakeEmbedder(), agent_id="ana", loop=LoopConfig(background=False)) as mem:
        mem.drain()
        missing = _unembedded(mem)
        bob = mem.recall("shelf", k=50, mode="semantic", filters={"agent_id": "bob"})
    assert missing == []
    assert len(bob) == 20


def test_drain_without_an_embedder_leaves_the_backlog_for_a_store_with_one(where: str) -> None:
    """A keyword-only store has nothing to embed with: drain() returns and the memories keep waiting."""
    _fill_without_vectors(where, _notes(5))
    with Memory.open(where, embedder=None, loop=LoopConfig(background=False)) as mem:
        mem.drain()
        pending = mem.stats()["vectors_pending"]
    assert pending == 5


def test_drain_logs_why_it_left_a_backlog(where: str, caplog: pytest.LogCaptureFixture) -> None:
    """An embedder that cannot embed: drain() returns, and says in the log how many memories wait and why."""

    class Broken(FakeEmbedder):
        def embed(self, texts: Any) -> Any:
            msg = "the model file is gone"
            raise RuntimeError(msg)

    _fill_without_vectors(where, _notes(5))
    with (
        caplog.at_level(logging.WARNING, logger="elastic_memory"),
        Memory.open(where, embedder=Broken(), loop=LoopConfig(tier="standard", background=False)) as mem,
    ):
        mem.drain()
    assert "drain() left 5 memories without a vector" in caplog.text


def test_memories_added_with_embedder_none_on_the_command_line_get_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``add --embedder none`` stores no vector; a later command with a model embeds those memories too."""
    monkeypatch.delenv(cli_common.DB_ENV, raising=False)
    monkeypatch.setattr(cli_common, "_embedder_spec", lambda choice: FakeEmbedder() if choice.value == "auto" else None)
    db = tmp_path / "memory.db"
    runner = CliRunner()
    for text in ("The spare key is under the blue pot.", "The wifi password is on the fridge."):
        assert runner.invoke(cli.app, ["add", text, "--db", str(db), "--embedder", "none"]).exit_code == 0
    assert runner.invoke(cli.app, ["add", "The boiler was serviced in May.", "--db", str(db)]).exit_code == 0
    with Memory.open(db, embedder=None) as mem:
        missing = _unembedded(mem)
    assert missing == []


def test_the_stats_command_counts_the_backlog_and_embeds_none_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A command that only reads (``stats``) runs no background worker: the memories keep waiting."""
    monkeypatch.delenv(cli_common.DB_ENV, raising=False)
    monkeypatch.setattr(cli_common, "_embedder_spec", lambda choice: FakeEmbedder() if choice.value == "auto" else None)
    db = tmp_path / "memory.db"
    _fill_without_vectors(str(db), _notes(3))
    result = CliRunner().invoke(cli.app, ["stats", "--db", str(db), "--json"])
    with Memory.open(db, embedder=None) as mem:
        missing = _unembedded(mem)
    assert result.exit_code == 0, result.output
    assert '"vectors_pending": 3' in result.output
    assert len(missing) == 3


@pytest.mark.model
def test_the_built_in_model_embeds_a_reopened_backlog(tmp_path: Path) -> None:
    """With ``embedder="auto"`` a keyword-only store's backlog gets MiniLM vectors, and semantic recall finds it."""
    path = str(tmp_path / "memory.db")
    _fill_without_vectors(path, ["The spare key is under the blue flower pot.", "Lisbon is sunny in May."])
    with Memory.open(path, embedder="auto", loop=LoopConfig(tier="standard")) as mem:
        mem.drain()
        missing = _unembedded(mem)
        explanation = mem.explain("where did I hide the house key?", k=1, mode="semantic")
    assert missing == []
    assert explanation.details["vectors_pending"] == 0
    assert "spare key" in explanation.hits[0].content
