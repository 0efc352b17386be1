"""The chat stores keep what they read of a key while the store is unchanged, and read again after any write.

What they keep is keyed by the store's generation (``AsyncMemory.generation``): a write by
another store object, another connection or the core itself moves it on. A store's own
append is added to what it keeps when no other write came between. PostgreSQL keeps no
generation: its stores read every time, with the same results.
"""

from __future__ import annotations

import functools
import inspect
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms import ChatMessage, MessageRole, MockLLM

from elastic_memory import AsyncMemory, LoopConfig
from elastic_memory import Memory as CoreMemory
from llama_index.memory.elastic_memory import ElasticMemory
from llama_index.storage.chat_store.elastic_memory import ElasticMemoryAsyncChatStore, ElasticMemoryChatStore

from .support import ACTIVE, ARCHIVED, MESSAGES


class Census:
    """Calls of the core's ``recall`` (both facades): each is one read of the transcript."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: Counter[str] = Counter()
        for cls in (CoreMemory, AsyncMemory):
            for name in ("recall", "remember_many"):
                monkeypatch.setattr(cls, name, self._wrap(name, cls.__dict__[name]))

    def _wrap(self, name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        if inspect.iscoroutinefunction(original):

            @functools.wraps(original)
            async def counted(*args: Any, **kwargs: Any) -> Any:
                self.calls[name] += 1
                return await original(*args, **kwargs)

            return counted

        @functools.wraps(original)
        def counted_sync(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return original(*args, **kwargs)

        return counted_sync

    def take(self) -> Counter[str]:
        taken, self.calls = self.calls, Counter()
        return taken


@pytest.fixture
def census(monkeypatch: pytest.MonkeyPatch) -> Census:
    return Census(monkeypatch)


@pytest.fixture
def opened(location: str) -> Iterator[CoreMemory]:
    """A fresh core store on a file or a PostgreSQL schema, no embedder, background work only on drain."""
    memory = CoreMemory.open(location, embedder=None, loop=LoopConfig(tier="standard", background=False))
    yield memory
    memory.close()


def said(*texts: str, **fields: Any) -> list[ChatMessage]:
    return [ChatMessage(role=MessageRole.USER, content=t, **fields) for t in texts]


def contents(messages: list[ChatMessage]) -> list[str | None]:
    return [m.content for m in messages]


# ------------------------------------------------------------------------ what a turn costs
async def test_a_chat_engine_turn_reads_the_transcript_at_most_twice(mem: CoreMemory, census: Census) -> None:
    """Before: LlamaIndex's ``Memory`` read it about seven times a turn (each put, the FIFO check, the get)."""
    memory = ElasticMemory.from_defaults(memory=mem, session_id="s")
    engine = SimpleChatEngine.from_defaults(llm=MockLLM(max_tokens=8), memory=memory)
    await engine.achat("My dog is called Biscuit.")
    census.take()
    for question in ("What is my dog called?", "And what colour is he?", "Thanks!"):
        await engine.achat(question)
        calls = census.take()
        # the plan's own recall inside build_context is not a facade call: only transcript reads count
        assert calls["recall"] <= 2, calls
        assert calls["remember_many"] == 2, "the user message and the reply, each written when put"
    await memory.aclose()


async def test_reading_a_key_twice_reads_the_store_once(astore: ElasticMemoryAsyncChatStore, census: Census) -> None:
    await astore.add_messages("k", said("one", "two"))
    census.take()
    first, second = await astore.get_messages("k"), await astore.get_messages("k")
    assert contents(first) == contents(second) == ["one", "two"]
    assert census.take()["recall"] == 0, "the append kept what it wrote"


# -------------------------------------------------------------------- writes from elsewhere
async def test_another_store_objects_append_is_read(opened: CoreMemory) -> None:
    mine, theirs = ElasticMemoryAsyncChatStore(memory=opened), ElasticMemoryAsyncChatStore(memory=opened)
    await mine.add_messages("k", said("one"))
    assert contents(await mine.get_messages("k")) == ["one"]
    await theirs.add_message("k", said("two")[0])
    assert contents(await mine.get_messages("k")) == ["one", "two"]
    await mine.add_message("k", said("three")[0])
    assert contents(await theirs.get_messages("k")) == ["one", "two", "three"]


def test_another_connections_append_is_read(tmp_path: Any) -> None:
    path = str(tmp_path / "chat.db")
    mine, theirs = ElasticMemoryChatStore(path=path), ElasticMemoryChatStore(path=path)
    try:
        mine.add_message("k", said("one")[0])
        assert contents(mine.get_messages("k")) == ["one"]
        theirs.add_message("k", said("two")[0])
        assert contents(mine.get_messages("k")) == ["one", "two"]
        mine.add_message("k", said("three")[0])
        assert contents(theirs.get_messages("k")) == ["one", "two", "three"]
    finally:
        mine.close()
        theirs.close()


async def test_a_message_the_core_forgets_is_gone_from_the_next_read(opened: CoreMemory) -> None:
    store = ElasticMemoryAsyncChatStore(memory=opened)
    await store.add_messages("k", said("keep", "drop"))
    assert contents(await store.get_messages("k")) == ["keep", "drop"]
    found = opened.recall("drop", k=5, mode="keyword", filters={**MESSAGES, "agent_id": store.agent_id})
    dropped = [h.id for h in found if h.content == "drop"]
    assert opened.forget(dropped, hard=True) == 1
    assert contents(await store.get_messages("k")) == ["keep"]


async def test_an_archived_message_leaves_the_active_listing(opened: CoreMemory) -> None:
    store = ElasticMemoryAsyncChatStore(memory=opened)
    await store.add_messages("k", said("old", "new"))
    assert contents(await store.get_messages("k")) == ["old", "new"]
    await store.archive_oldest_messages("k", 1)
    assert contents(await store.get_messages("k")) == ["new"]
    assert contents(await store.get_messages("k", status=ARCHIVED)) == ["old"]
    await store.add_message("k", said("newer")[0])
    assert contents(await store.get_messages("k", status=None)) == ["old", "new", "newer"]


async def test_what_an_append_keeps_is_what_a_fresh_read_finds(opened: CoreMemory) -> None:
    kept = ElasticMemoryAsyncChatStore(memory=opened)
    await kept.add_messages("k", said("a"))
    await kept.get_messages("k", status=None)
    for text in ("b", "c", "d"):
        await kept.add_message("k", said(text)[0])
    await kept.add_message("k", said("e")[0], status=ARCHIVED)
    fresh = ElasticMemoryAsyncChatStore(memory=opened)
    for status in (ACTIVE, ARCHIVED, None):
        assert contents(await kept.get_messages("k", status=status)) == contents(
            await fresh.get_messages("k", status=status)
        )
    deleted = await kept.delete_message("k", -1)
    assert deleted is not None and deleted.content == "e"
    assert contents(await fresh.get_messages("k", status=None)) == ["a", "b", "c", "d"]


# ------------------------------------------------------------------ what a caller gets back
async def test_changing_a_returned_message_leaves_the_next_read_as_stored(mem: CoreMemory) -> None:
    store = ElasticMemoryAsyncChatStore(memory=mem)
    await store.add_messages("k", said("one", additional_kwargs={"tool_calls": [{"id": "c1"}]}))
    got = await store.get_messages("k")
    got[0].additional_kwargs["tool_calls"][0]["id"] = "changed"
    got[0].additional_kwargs["tool_calls"].append({"id": "extra"})
    assert (await store.get_messages("k"))[0].additional_kwargs == {"tool_calls": [{"id": "c1"}]}


def test_changing_a_message_of_the_classic_store_leaves_the_next_read_as_stored(mem: CoreMemory) -> None:
    store = ElasticMemoryChatStore(memory=mem)
    store.add_message("k", said("one", additional_kwargs={"meta": {"n": 1}})[0])
    store.get_messages("k")[0].additional_kwargs["meta"]["n"] = 2
    assert store.get_messages("k")[0].additional_kwargs == {"meta": {"n": 1}}


async def test_an_appended_message_reads_back_as_a_fresh_read_gives_it(mem: CoreMemory) -> None:
    """The core keeps metadata as JSON with sorted keys: what an append keeps is in that form too."""
    kept = ElasticMemoryAsyncChatStore(memory=mem)
    await kept.get_messages("k")
    await kept.add_messages("k", said("one", additional_kwargs={"b": 1, "a": 2}))
    fresh = ElasticMemoryAsyncChatStore(memory=mem)
    assert (await kept.get_messages("k"))[0].model_dump_json() == (await fresh.get_messages("k"))[0].model_dump_json()
