"""Cold start: the model loads in the background from the moment a store opens.

A store opened with the background worker starts its embedder's ``load()`` on a thread of its
own (``embedders/preload.py``). Most tests use :class:`SlowLoad`, whose load blocks until the
test releases it, so "during the load" is a state the test holds, not a race it hopes to win.
If a test hangs here, a call waited for the model where it should not (``open``,
``build_context``, ``close``, the MCP handshake): see ``MemoryCore.loading``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from elastic_memory import AsyncMemory, EmbedderError, LoopConfig, Memory, MiniLMEmbedder, RecallWarning
from elastic_memory.testing import FakeEmbedder

#: The longest a fake load waits for its release: a test that forgot to release fails instead of hanging.
RELEASE_TIMEOUT = 60.0


class SlowLoad(FakeEmbedder):
    """A fake embedder with a model to load: ``load()`` blocks until :attr:`release` is set.

    ``loads`` counts the loads begun; ``started`` is set when the first begins. With ``fail``,
    the load raises it once released.
    """

    def __init__(self, fail: Exception | None = None) -> None:
        super().__init__()
        self.release = threading.Event()
        self.started = threading.Event()
        self.loads = 0
        self._fail = fail
        self._loaded = False
        self._lock = threading.Lock()

    def load(self) -> None:
        with self._lock:
            if self._loaded:
                return
            self.loads += 1
            self.started.set()
            if not self.release.wait(RELEASE_TIMEOUT):
                msg = "the test never released the load"
                raise RuntimeError(msg)
            if self._fail is not None:
                raise self._fail
            self._loaded = True

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.load()
        return super().embed(texts)


@pytest.fixture
def slow() -> Iterator[SlowLoad]:
    embedder = SlowLoad()
    yield embedder
    embedder.release.set()  # a failed test never leaves a loading thread behind


def _started(embedder: SlowLoad) -> None:
    assert embedder.started.wait(RELEASE_TIMEOUT), "the load did not start when the store opened"


def test_the_model_starts_loading_when_the_store_opens(db_path: Path, slow: SlowLoad) -> None:
    """No call is needed: opening starts the load, and open does not wait for it to end."""
    with Memory.open(db_path, embedder=slow) as mem:
        _started(slow)
        assert mem._core.loading and not slow.release.is_set()
        slow.release.set()


def test_a_recall_during_the_load_waits_for_it_and_gets_vectors(db_path: Path, slow: SlowLoad) -> None:
    """Calls that need the model wait for the load begun at open: one load, never two."""
    with Memory.open(db_path, embedder=slow) as mem:
        _started(slow)
        results: dict[str, object] = {}

        def host() -> None:
            results["id"] = mem.remember("The boat is moored at pier nine.")
            results["hits"] = mem.recall("boat moored", k=1, mode="semantic")

        thread = threading.Thread(target=host)
        thread.start()
        thread.join(0.2)
        assert thread.is_alive()  # it cannot finish before the model is loaded
        slow.release.set()
        thread.join(RELEASE_TIMEOUT)
        assert [h.id for h in results["hits"]] == [results["id"]]  # type: ignore[attr-defined]
        assert mem.stats()["vectors"] == 1
    assert slow.loads == 1


def test_record_turn_during_the_load_is_stored_then_embedded_once_loaded(db_path: Path, slow: SlowLoad) -> None:
    """record_turn needs no model: it returns during the load; the worker embeds the turn after it."""
    with Memory.open(db_path, embedder=slow) as mem:
        _started(slow)
        receipt = mem.record_turn("My sister Lena lives in Lisbon.", "Noted.", session_id="s1")
        assert receipt.ok and mem._core.loading
        slow.release.set()
        mem.drain()
        assert mem.stats()["vectors"] == len(receipt.chunk_ids) == 1
    assert slow.loads == 1


def test_build_context_during_the_load_is_keyword_only_and_does_not_wait(db_path: Path, slow: SlowLoad) -> None:
    """The plan recalls by keywords while the model loads (as on a tier without an embedder)."""
    with Memory.open(db_path, embedder=None) as mem:
        mem.record_turn("My sister Lena lives in Lisbon.", "Noted.", session_id="s1")
    with Memory.open(db_path, embedder=slow) as mem:
        _started(slow)
        plan = mem.build_context("Where does Lena live?", session_id="s2")
        assert "Lena lives in Lisbon" in plan.render()
        assert mem._core.loading and slow.loads == 1
        slow.release.set()


def test_a_failed_load_gives_keyword_only_recall_with_one_warning(db_path: Path) -> None:
    """The load's error is reported as a failed first embedding is: RecallWarning, keyword recall, no retry."""
    broken = SlowLoad(fail=EmbedderError("model exploded"))
    broken.release.set()
    with Memory.open(db_path, embedder=broken) as mem:
        with pytest.warns(RecallWarning, match="no usable embedder, recall is keyword-only: fake-hash: model exploded"):
            mem.remember("still stored")
        assert [h.content for h in mem.recall("stored", mode="hybrid")] == ["still stored"]
        assert mem.stats()["vectors"] == 0
    assert broken.loads == 1


def test_closing_during_the_load_returns_and_the_thread_ends_with_the_load(db_path: Path, slow: SlowLoad) -> None:
    """close() does not wait for the model; the loading thread runs only until its load returns."""
    mem = Memory.open(db_path, embedder=slow)
    _started(slow)
    preload = mem._core._preload
    assert preload is not None
    mem.close()
    assert preload.thread.is_alive()  # a load cannot be interrupted: it is still blocked
    slow.release.set()
    preload.thread.join(RELEASE_TIMEOUT)
    assert not preload.thread.is_alive()


def test_without_the_background_worker_the_model_loads_on_first_use(db_path: Path, slow: SlowLoad) -> None:
    """``LoopConfig(background=False)`` starts no thread: the first call loads the model, as before."""
    slow.release.set()
    with Memory.open(db_path, embedder=slow, loop=LoopConfig(background=False)) as mem:
        assert not slow.started.is_set() and not mem._core.loading
        mem.remember("loaded now")
        assert slow.loads == 1 and mem.stats()["vectors"] == 1


def test_a_lite_tier_does_not_load_the_builtin_model(db_path: Path) -> None:
    """The governor's LITE tier never loads the built-in model for the loop: nor does opening the store."""
    with Memory.open(db_path, embedder="auto", loop=LoopConfig(tier="lite")) as mem:
        assert mem._core._preload is None and not mem._core.loading


def test_a_reading_cli_command_does_not_load_the_model_ahead(db_path: Path) -> None:
    """``elastic-memory stats`` and the like open without the worker: no model loads unless a call needs it."""
    from elastic_memory.cli import _common as cli_common  # typer and rich, only for this test

    with cli_common.open_memory(db_path, cli_common.EmbedderChoice.AUTO, reads=True) as mem:
        assert mem._core._preload is None and not mem._core.loading


def test_stores_sharing_an_embedder_load_it_once(tmp_path: Path, slow: SlowLoad) -> None:
    """Two stores opened with one instance (as a federation's tiers are) share one load."""
    with Memory.open(tmp_path / "a.db", embedder=slow) as a, Memory.open(tmp_path / "b.db", embedder=slow) as b:
        _started(slow)
        slow.release.set()
        a.remember("in a")
        b.remember("in b")
        assert a.stats()["vectors"] == b.stats()["vectors"] == 1
    assert slow.loads == 1


def test_a_store_opened_after_the_load_starts_no_loading_thread(tmp_path: Path, slow: SlowLoad) -> None:
    """Opening a file per request costs no thread once the instance's model is loaded."""
    slow.release.set()
    with Memory.open(tmp_path / "first.db", embedder=slow) as first:
        preload = first._core._preload
        assert preload is not None
        preload.wait()
    with Memory.open(tmp_path / "again.db", embedder=slow) as again:
        later = again._core._preload
        assert later is not None and later.done and not later.thread.is_alive() and later.thread.ident is None
        again.remember("embedded at once")
        assert again.stats()["vectors"] == 1
    assert slow.loads == 1


def test_a_federation_opens_during_the_load_and_its_first_write_waits_outside_the_budget(
    tmp_path: Path, slow: SlowLoad
) -> None:
    """Memory.for_agent does not wait for the model; a write waits for it before its tier's time budget starts."""
    home = tmp_path / "home"
    home.mkdir()
    # A budget the write itself meets on a loaded machine; the load is held for much longer than it.
    (home / "resilience.json").write_text(json.dumps({"private": {"write_timeout_ms": 1000, "write_per_entry_ms": 1}}))
    with Memory.for_agent("ana", home=home, embedder=slow) as mem:
        _started(slow)
        assert mem._core.loading
        stored: list[str] = []
        thread = threading.Thread(target=lambda: stored.append(mem.remember("Standup is at 10:00.")))
        thread.start()
        thread.join(2.5)  # longer than the write budget (1 s): the wait for the load is not counted in it
        assert thread.is_alive()
        slow.release.set()
        thread.join(RELEASE_TIMEOUT)
        assert [h.id for h in mem.recall("standup", k=1, mode="semantic")] == stored
    assert slow.loads == 1


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_mcp_answers_initialize_and_lists_tools_while_the_model_loads(
    db_path: Path, slow: SlowLoad, anyio_backend: str
) -> None:
    """The MCP handshake needs no model; a tool that does (remember) waits for the load."""
    pytest.importorskip("mcp.server.mcpserver", reason="needs the 'mcp' extra")
    from mcp import Client  # the mcp extra

    from elastic_memory.mcp_server import READ_TOOLS, WRITE_TOOLS, build_server  # the mcp extra

    async with await AsyncMemory.open(db_path, embedder=slow) as mem:
        server = build_server(mem)
        async with Client(server, mode="legacy") as client:  # "legacy": the initialize handshake
            assert client.server_info.name == "elastic-memory"
            tools = await client.list_tools()
            assert {t.name for t in tools.tools} == {*READ_TOOLS, *WRITE_TOOLS}
            assert slow.started.is_set() and not slow.release.is_set() and mem._core.loading
            slow.release.set()
            stored = await client.call_tool("remember", {"content": "The user's dog is called Biscuit."})
            assert not stored.is_error
        assert (await mem.stats())["vectors"] == 1
    assert slow.loads == 1


@pytest.mark.model
def test_the_builtin_model_loads_in_the_background_and_recalls_semantically(db_path: Path) -> None:
    """The real built-in model (``embedder="auto"``): loaded by the thread started at open, then used."""
    with Memory.open(db_path, embedder="auto") as mem:
        preload = mem._core._preload
        assert preload is not None and isinstance(preload.embedder, MiniLMEmbedder)
        preload.wait()
        assert preload.embedder._model is not None  # loaded before any call asked for it
        dog = mem.remember("My dog is called Biscuit.")
        mem.remember_many(["I work as a nurse in Porto.", "The quarterly report is due on Friday."])
        assert mem.recall("What pet do I have?", k=1, mode="semantic")[0].id == dog
        assert mem.stats()["embedding_model"] == MiniLMEmbedder.model_id


@pytest.mark.model
def test_stores_opened_with_the_builtin_model_share_one_loaded_model(tmp_path: Path) -> None:
    """``embedder="auto"`` is the process's one built-in model: a file opened per request loads nothing."""
    with Memory.open(tmp_path / "first.db", embedder="auto") as first:
        preload = first._core._preload
        assert preload is not None
        preload.wait()
        model = preload.embedder
    with Memory.open(tmp_path / "again.db") as again:  # "auto" is the default
        later = again._core._preload
        assert later is not None and later.embedder is model
        assert later.done and later.thread.ident is None  # no loading thread started
        again.remember("embedded by the model already loaded")
        assert again.stats()["vectors"] == 1
