"""ElasticMemoryBlock: record on put, the plan on get, token share, truncation by priority, never raising."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock, ToolCallBlock
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.memory import Memory, StaticMemoryBlock
from llama_index.core.storage.chat_store.base_db import AsyncDBChatStore, MessageStatus
from llama_index.core.utils import get_tokenizer

from elastic_memory import LoopConfig, UsageError
from elastic_memory import Memory as CoreMemory
from elastic_memory.context import PREAMBLE
from llama_index.memory.elastic_memory import ElasticMemoryBlock

DOG = "My dog is called Biscuit."
QUESTION = "What's my dog called?"
count = get_tokenizer()


class ListChatStore(AsyncDBChatStore):
    """A minimal in-process AsyncDBChatStore, so these tests do not depend on any database chat store."""

    _rows: dict[str, list[tuple[ChatMessage, MessageStatus]]] = PrivateAttr(default_factory=dict)

    async def get_messages(
        self,
        key: str,
        status: MessageStatus | None = MessageStatus.ACTIVE,
        limit: int | None = None,
        offset: int | None = None,
    ) -> list[ChatMessage]:
        rows = [m.model_copy(deep=True) for m, s in self._rows.get(key, []) if status is None or s == status]
        rows = rows[offset or 0 :]
        return rows if limit is None else rows[:limit]

    async def count_messages(self, key: str, status: MessageStatus | None = MessageStatus.ACTIVE) -> int:
        return len(await self.get_messages(key, status))

    async def add_message(self, key: str, message: ChatMessage, status: MessageStatus = MessageStatus.ACTIVE) -> None:
        self._rows.setdefault(key, []).append((message.model_copy(deep=True), status))

    async def add_messages(
        self, key: str, messages: list[ChatMessage], status: MessageStatus = MessageStatus.ACTIVE
    ) -> None:
        for message in messages:
            await self.add_message(key, message, status)

    async def set_messages(
        self, key: str, messages: list[ChatMessage], status: MessageStatus = MessageStatus.ACTIVE
    ) -> None:
        self._rows[key] = []
        await self.add_messages(key, messages, status)

    async def delete_message(self, key: str, idx: int) -> ChatMessage | None:
        return self._rows.get(key, []).pop(idx)[0]

    async def delete_messages(self, key: str, status: MessageStatus | None = None) -> None:
        self._rows[key] = [(m, s) for m, s in self._rows.get(key, []) if status is not None and s != status]

    async def delete_oldest_messages(self, key: str, n: int) -> list[ChatMessage]:
        rows = self._rows.get(key, [])
        gone, self._rows[key] = rows[:n], rows[n:]
        return [m for m, _ in gone]

    async def archive_oldest_messages(self, key: str, n: int) -> list[ChatMessage]:
        rows = self._rows.get(key, [])
        active = [i for i, (_, s) in enumerate(rows) if s == MessageStatus.ACTIVE][:n]
        for i in active:
            rows[i] = (rows[i][0], MessageStatus.ARCHIVED)
        return [rows[i][0] for i in active]

    async def get_keys(self) -> list[str]:
        return list(self._rows)


def user(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.USER, content=text)


def assistant(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.ASSISTANT, content=text)


def tool_call(text: str = "") -> ChatMessage:
    """An assistant step that calls a tool (with some text, or none)."""
    call = ToolCallBlock(tool_call_id="c1", tool_name="lookup", tool_kwargs={"q": "x"})
    return ChatMessage(role=MessageRole.ASSISTANT, blocks=[TextBlock(text=text), call] if text else [call])


def tool_result(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.TOOL, content=text, additional_kwargs={"tool_call_id": "c1"})


def session_of(mem: CoreMemory, text: str) -> set[str | None]:
    """The sessions of the recorded exchanges that contain ``text``."""
    return {h.session_id for h in mem.recall(text, mode="keyword", filters={"kind": "chunk"})}


def memory_with(block: ElasticMemoryBlock, session_id: str = "live", **kwargs: Any) -> Memory:
    return Memory.from_defaults(session_id=session_id, memory_blocks=[block], chat_store=ListChatStore(), **kwargs)


@pytest.fixture
def mem() -> Iterator[CoreMemory]:
    """A fresh in-memory store with deterministic background work."""
    memory = CoreMemory.open(":memory:", embedder=None, loop=LoopConfig(tier="standard", background=False))
    yield memory
    memory.close()


@pytest.fixture
def known(mem: CoreMemory) -> CoreMemory:
    """The store after one earlier session: a profile fact, a note fact and past moments."""
    mem.record_turn("I live in Leeds.", "Lovely city!", session_id="earlier")
    mem.record_turn(DOG, "What a lovely name!", session_id="earlier")
    mem.record_turn("Biscuit loves the beach at Whitby.", "Sounds fun!", session_id="earlier")
    return mem


# ---------------------------------------------------------------------- construction
def test_is_a_llamaindex_memory_block(mem: CoreMemory) -> None:
    block = ElasticMemoryBlock(memory=mem)
    assert block.name == "ElasticMemory"
    assert block.priority == 1  # may be trimmed by Memory's budget
    assert block.accept_short_term_memory is True
    assert ElasticMemoryBlock.class_name() == "ElasticMemoryBlock"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({}, "pass exactly one of path="), ({"path": ":memory:", "memory": "x"}, "pass exactly one of path=")],
)
def test_exactly_one_of_path_or_memory(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        ElasticMemoryBlock(embedder=None, **kwargs)


def test_constructor_is_keyword_only() -> None:
    with pytest.raises(TypeError):
        ElasticMemoryBlock(":memory:")  # type: ignore[call-arg]


def test_a_given_memory_refuses_open_options(mem: CoreMemory) -> None:
    with pytest.raises(UsageError, match="embed_model= applies when the adapter opens the store"):
        ElasticMemoryBlock(memory=mem, embed_model=MockEmbedding(embed_dim=8))
    with pytest.raises(UsageError, match="apply when the adapter opens the store"):
        ElasticMemoryBlock(memory=mem, context_tokens=4096)


def test_bad_fields_are_refused(mem: CoreMemory) -> None:
    with pytest.raises(ValueError, match="max_tokens"):
        ElasticMemoryBlock(memory=mem, max_tokens=0)


def test_async_memory_is_accepted_and_left_open(mem: CoreMemory) -> None:
    block = ElasticMemoryBlock(memory=mem.as_async())
    assert block.memory.path == mem.path
    block.close()
    assert mem.stats()["total_memories"] == 0  # still open


def test_path_opens_and_close_closes(tmp_path: Path) -> None:
    with ElasticMemoryBlock(path=tmp_path / "m.db", embedder=None) as block:
        block.memory.facts.set("user.name", "Ada")
    with CoreMemory.open(tmp_path / "m.db", embedder=None) as reopened:
        assert reopened.facts.get("user.name").value == "Ada"  # type: ignore[union-attr]


def test_embed_model_becomes_the_store_embedder(tmp_path: Path) -> None:
    with ElasticMemoryBlock(path=tmp_path / "m.db", embed_model=MockEmbedding(embed_dim=8)) as block:
        block.memory.remember("The user likes tea.")
        stats = block.memory.stats()
        assert (stats["embedding_dimension"], stats["embedding_model"]) == (
            8,
            "llama_index:MockEmbedding:" + stats["embedding_model"].rsplit(":", 1)[1],
        )


def test_open_options_reach_memory_open(tmp_path: Path) -> None:
    block = ElasticMemoryBlock(path=tmp_path / "m.db", embedder=None, loop=LoopConfig(tier="lite"), max_tokens=50)
    assert block.max_tokens == 50
    assert block.memory.health()["tier"] == "lite"
    block.close()


def test_serialisation_carries_the_path(tmp_path: Path) -> None:
    block = ElasticMemoryBlock(path=tmp_path / "m.db", embedder=None, session_id="s", max_tokens=300, priority=2)
    block.memory.facts.set("user.name", "Ada")
    dump = block.model_dump()
    assert dump["path"] == str(tmp_path / "m.db")
    assert {k: dump[k] for k in ("session_id", "max_tokens", "priority", "record")} == {
        "session_id": "s",
        "max_tokens": 300,
        "priority": 2,
        "record": True,
    }
    block.close()
    with ElasticMemoryBlock(**dump, embedder=None) as rebuilt:
        assert rebuilt.memory.facts.get("user.name").value == "Ada"  # type: ignore[union-attr]
        assert rebuilt.model_dump() == dump
    validated = ElasticMemoryBlock.model_validate_json(block.model_dump_json())
    assert validated.memory.facts.get("user.name").value == "Ada"  # type: ignore[union-attr]
    validated.close()


def test_a_given_memory_serialises_its_path(tmp_path: Path) -> None:
    with CoreMemory.open(tmp_path / "m.db", embedder=None) as mem:
        assert ElasticMemoryBlock(memory=mem).model_dump()["path"] == str(tmp_path / "m.db")


# ---------------------------------------------------------------------- record on put
async def test_put_records_the_turn(mem: CoreMemory) -> None:
    block = ElasticMemoryBlock(memory=mem)
    await block.aput([user(DOG), assistant("What a lovely name!")], session_id="monday")
    assert mem.facts.get("user.dog_name").value == "Biscuit"  # type: ignore[union-attr]  # a fact
    assert [(r.source, r.relation, r.target) for r in mem.graph.relations("Biscuit")] == [
        ("user", "has_pet", "Biscuit")  # the knowledge graph
    ]
    assert mem.health()["turns"] == 1
    assert session_of(mem, "Biscuit") == {"monday"}
    (hit,) = mem.recall("Biscuit", mode="keyword", filters={"kind": "chunk"})
    assert hit.content == f"User: {DOG}\nAssistant: What a lovely name!"


async def test_put_records_every_turn_of_a_batch(mem: CoreMemory) -> None:
    block = ElasticMemoryBlock(memory=mem)
    await block.aput(
        [user("I live in Leeds."), assistant("Nice."), user(DOG), assistant("Lovely.")], session_id="monday"
    )
    assert mem.health()["turns"] == 2
    assert {f.key for f in mem.facts.list()} == {"user.location", "user.dog_name"}


async def test_tool_steps_are_skipped_and_the_final_reply_kept(mem: CoreMemory) -> None:
    block = ElasticMemoryBlock(memory=mem)
    batch = [
        assistant("Hello! How can I help?"),  # before any user message: not a turn
        user("Where is Whitby?"),
        tool_call("Let me look that up."),
        tool_result("Whitby: North Yorkshire"),
        assistant("Whitby is in North Yorkshire."),
        user("And Leeds?"),
        tool_call(),
        tool_result("Leeds: West Yorkshire"),
        tool_call("Checking the map."),  # no final reply: the tool step's text stands in
    ]
    await block.aput(batch, session_id="s")
    chunks = sorted(h.content for h in mem.recall("", k=10, filters={"kind": "chunk"}))
    assert chunks == [
        "User: And Leeds?\nAssistant: Checking the map.",
        "User: Where is Whitby?\nAssistant: Whitby is in North Yorkshire.",
    ]


async def test_record_false_records_nothing(mem: CoreMemory) -> None:
    block = ElasticMemoryBlock(memory=mem, record=False)
    await block.aput([user(DOG), assistant("Nice.")], session_id="s")
    assert mem.health()["turns"] == 0


def test_sync_record_messages(mem: CoreMemory) -> None:
    block = ElasticMemoryBlock(memory=mem)
    assert block.record_messages([user(DOG), assistant("Nice.")], session_id="s") == 1
    assert session_of(mem, "Biscuit") == {"s"}


async def test_memory_feeds_the_block_when_its_fifo_overflows(mem: CoreMemory) -> None:
    block = ElasticMemoryBlock(memory=mem)
    memory = memory_with(block, token_limit=60, chat_history_token_ratio=0.5, token_flush_size=10)
    await memory.aput_messages([user(DOG), assistant("What a lovely name!")])
    assert mem.health()["turns"] == 0  # LlamaIndex keeps it in its FIFO
    for i in range(6):
        await memory.aput_messages([user(f"Filler message number {i} about the weather."), assistant("Okay.")])
    assert mem.facts.get("user.dog_name").value == "Biscuit"  # type: ignore[union-attr]
    assert session_of(mem, "Biscuit") == {"live"}  # LlamaIndex's session_id


# ---------------------------------------------------------------------- context on get
async def test_get_is_the_plan_for_the_latest_user_message(known: CoreMemory) -> None:
    block = ElasticMemoryBlock(memory=known)
    messages = [user("I live in Leeds."), assistant("Nice."), user(QUESTION)]
    text = await block.aget(messages, session_id="today")
    assert text == known.build_context(QUESTION, session_id="today").render()
    assert '"Biscuit" (key=user.dog_name)' in text
    assert text.startswith(PREAMBLE)


async def test_get_without_a_user_message_still_shows_profile_facts(known: CoreMemory) -> None:
    text = await ElasticMemoryBlock(memory=known).aget([], session_id="today")
    assert '"Leeds" (key=user.location)' in text
    assert "Biscuit" not in text


async def test_get_on_an_empty_store_is_empty(mem: CoreMemory) -> None:
    assert await ElasticMemoryBlock(memory=mem).aget([user(QUESTION)], session_id="s") == ""


async def test_memory_injects_the_plan_into_the_system_message(known: CoreMemory) -> None:
    memory = memory_with(ElasticMemoryBlock(memory=known))
    await memory.aput(user(QUESTION))
    system, question = await memory.aget()
    assert system.role == MessageRole.SYSTEM
    assert '"Biscuit" (key=user.dog_name)' in (system.content or "")
    assert (question.role, question.content) == (MessageRole.USER, QUESTION)
    assert [m.content for m in await memory.aget_all()] == [QUESTION]  # the history stays clean


async def test_memory_get_with_input_uses_the_input(known: CoreMemory) -> None:
    memory = memory_with(ElasticMemoryBlock(memory=known))
    (system,) = await memory.aget(input=QUESTION)
    assert '"Biscuit"' in (system.content or "")


# ---------------------------------------------------------------------- token share
async def test_max_tokens_is_the_blocks_token_share(known: CoreMemory) -> None:
    full = await ElasticMemoryBlock(memory=known).aget([user(QUESTION)], session_id="today")
    assert "## RELEVANT PAST MOMENTS" in full
    share = len(count(full)) - 10
    text = await ElasticMemoryBlock(memory=known, max_tokens=share).aget([user(QUESTION)], session_id="today")
    assert 0 < len(count(text)) <= share
    assert '"Leeds" (key=user.location)' in text  # profile facts go last
    assert text.startswith(PREAMBLE)
    assert full.startswith(text.rsplit("\n", 1)[0])  # what is left is the plan's head


async def test_a_share_too_small_for_anything_is_empty(known: CoreMemory) -> None:
    assert await ElasticMemoryBlock(memory=known, max_tokens=5).aget([user(QUESTION)], session_id="t") == ""


async def test_memory_drops_an_empty_block(known: CoreMemory) -> None:
    memory = memory_with(ElasticMemoryBlock(memory=known, max_tokens=5))
    await memory.aput(user(QUESTION))
    assert [m.role for m in await memory.aget()] == [MessageRole.USER]


# ---------------------------------------------------------------------- atruncate
def sections_of(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("## ")]


async def test_atruncate_trims_lowest_priority_sections_first(known: CoreMemory) -> None:
    block = ElasticMemoryBlock(memory=known)
    full = await block.aget([user("Tell me about Biscuit and Whitby.")], session_id="today")
    everything = ["## PROFILE FACTS", "## FACTS", "## RELEVANT PAST MOMENTS", "## RELATED TOPICS"]
    assert sections_of(full) == everything  # render order is priority order
    tokens = len(count(full))
    seen: list[list[str]] = []
    for cut in range(1, tokens + 1):
        trimmed = await block.atruncate(full, cut)
        if trimmed is None:
            break
        assert len(count(trimmed)) <= tokens - cut
        assert trimmed.startswith(PREAMBLE)
        if not seen or seen[-1] != sections_of(trimmed):
            seen.append(sections_of(trimmed))
    # one token less already drops the one related topic; then past moments, facts, profile facts last
    assert seen == [everything[:n] for n in (3, 2, 1)]
    assert await block.atruncate(full, tokens) is None


async def test_atruncate_of_foreign_text_trims_the_same_way(known: CoreMemory) -> None:
    block = ElasticMemoryBlock(memory=known)
    full = await block.aget([user("Tell me about Biscuit and Whitby.")], session_id="today")
    other = ElasticMemoryBlock(memory=known)  # never saw this plan: trims the rendered text
    for cut in (5, 20, 40):
        assert await other.atruncate(full, cut) == await block.atruncate(full, cut)


async def test_atruncate_of_unknown_content_drops_it(mem: CoreMemory) -> None:
    block = ElasticMemoryBlock(memory=mem)
    assert await block.atruncate("not a plan\n\nat all", 1) is None
    assert await block.atruncate([], 10) is None  # type: ignore[arg-type]  # what Memory passes for an empty block
    assert await block.atruncate("", 10) is None


async def test_memory_truncates_the_block_over_its_token_limit(known: CoreMemory) -> None:
    block = ElasticMemoryBlock(memory=known)
    full = await block.aget([user("Tell me about Biscuit and Whitby.")], session_id="live")
    memory = memory_with(block, token_limit=len(count(full)) - 20)
    await memory.aput(user("Tell me about Biscuit and Whitby."))
    system = (await memory.aget())[0]
    assert system.role == MessageRole.SYSTEM
    text = system.content or ""
    assert "## PROFILE FACTS" in text and "## FACTS" in text
    assert "## RELATED TOPICS" not in text  # the lowest-priority section went first
    assert "User: My dog is called Biscuit." not in text  # then the last past moment


# ---------------------------------------------------------------------- sessions
async def test_each_memory_records_under_its_own_session(mem: CoreMemory) -> None:
    block = ElasticMemoryBlock(memory=mem)
    await block.aput([user("My cat is called Tom."), assistant("Nice.")], session_id="alice")
    await block.aput([user(DOG), assistant("Nice.")], session_id="bob")
    assert session_of(mem, "Tom") == {"alice"}
    assert session_of(mem, "Biscuit") == {"bob"}


async def test_the_blocks_session_is_the_fallback(mem: CoreMemory) -> None:
    block = ElasticMemoryBlock(memory=mem, session_id="fallback")
    await block.aput([user(DOG), assistant("Nice.")])
    await block.aput([user("My cat is called Tom."), assistant("Nice.")], session_id="given")
    assert session_of(mem, "Biscuit") == {"fallback"}
    assert session_of(mem, "Tom") == {"given"}


async def test_the_live_sessions_turns_in_the_window_are_not_repeated(mem: CoreMemory) -> None:
    block = ElasticMemoryBlock(memory=mem)
    said = [user("Biscuit loves the beach at Whitby."), assistant("Fun!")]
    await block.aput(said, session_id="a")
    asked = [*said, user("Where does Biscuit like to go?")]  # the messages the LLM gets beside the block
    elsewhere = await block.aget(asked, session_id="b")
    assert "## RELEVANT PAST MOMENTS" in elsewhere and "Whitby" in elsewhere
    live = await block.aget(asked, session_id="a")  # that turn is in session a's own window
    assert "Whitby" not in live


# ---------------------------------------------------------------------- never raising
@pytest.fixture
def broken(mem: CoreMemory, monkeypatch: pytest.MonkeyPatch) -> ElasticMemoryBlock:
    block = ElasticMemoryBlock(memory=mem)
    aio = block._store().aio

    async def fail(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(aio, "build_context", fail)
    monkeypatch.setattr(aio, "record_turn", fail)
    return block


async def test_a_failing_store_never_raises_into_llamaindex(
    broken: ElasticMemoryBlock, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="llama_index.memory.elastic_memory"):
        assert await broken.aget([user(QUESTION)], session_id="s") == ""
        await broken.aput([user(DOG), assistant("Nice.")], session_id="s")
    assert [r.getMessage() for r in caplog.records] == [
        "elastic-memory: no memory context for this call",
        "elastic-memory: the turn was not recorded",
    ]


async def test_a_failing_block_leaves_memory_working(broken: ElasticMemoryBlock) -> None:
    static = StaticMemoryBlock(name="core", static_content=[TextBlock(text="The user likes tea.")])
    memory = Memory.from_defaults(
        session_id="s",
        memory_blocks=[static, broken],
        chat_store=ListChatStore(),
        token_limit=60,
        chat_history_token_ratio=0.5,
        token_flush_size=10,
    )
    for i in range(6):
        await memory.aput_messages([user(f"Message number {i} about the weather."), assistant("Okay.")])
    system, *_ = await memory.aget()
    assert "The user likes tea." in (system.content or "")
    assert "Stored memories" not in (system.content or "")


async def test_a_not_ok_receipt_is_logged(mem: CoreMemory, caplog: pytest.LogCaptureFixture) -> None:
    block = ElasticMemoryBlock(memory=mem)
    mem.close()  # record_turn answers ok=False on a closed store
    with caplog.at_level(logging.WARNING, logger="llama_index.memory.elastic_memory"):
        assert await block.arecord_messages([user(DOG), assistant("Nice.")]) == 0
    assert caplog.records
