"""End to end: ElasticMemory gives a chat engine and an agent memory that persists across processes.

Process 1 is a real child process that tells a fact in session A; this process then opens a
fresh ``ElasticMemory.from_defaults`` over the same file in session B, and the fact must be in
what the LLM receives. LlamaIndex's ``MockLLM`` echoes its prompt back as the reply (which
would then be recorded as the assistant's words), so the LLM here is LlamaIndex's
``MockFunctionCallingLLM`` with a scripted response generator that keeps every input.
"""

from __future__ import annotations

import inspect
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock, ToolCallBlock
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms import MockLLM
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import Memory, StaticMemoryBlock
from llama_index.core.tools import FunctionTool

from elastic_memory import LoopConfig, UsageError
from elastic_memory import Memory as CoreMemory
from llama_index.memory.elastic_memory import ElasticMemory, ElasticMemoryBlock
from llama_index.storage.chat_store.elastic_memory import ElasticMemoryAsyncChatStore

FACT = "My dog is called Biscuit."
QUESTION = "What's my dog called?"
RECALLED = '"Biscuit" (key=user.dog_name)'
SYSTEM = "You are a helpful assistant."

Received = list[list[ChatMessage]]


#: Building a FunctionAgent, LlamaIndex's workflows inspect every attribute of the agent, pydantic's
#: deprecated ones included (their warnings, not ours).
def agent_warnings(test: Any) -> Any:
    for category in ("PydanticDeprecatedSince20", "PydanticDeprecatedSince211"):
        test = pytest.mark.filterwarnings(f"ignore::pydantic.warnings.{category}")(test)
    return test


@pytest.fixture(autouse=True)
def thread_loop(request: pytest.FixtureRequest) -> None:
    """Sync tests get an event loop that is closed afterwards (``loop_set``): LlamaIndex's sync API runs on it."""
    if not inspect.iscoroutinefunction(request.function):
        request.getfixturevalue("loop_set")


def scripted(*replies: str | ChatMessage) -> tuple[MockFunctionCallingLLM, Received]:
    """LlamaIndex's mock function-calling LLM answering from a script; the list gets every input."""
    received: Received = []
    script = iter(replies)

    def respond(messages: list[ChatMessage], **kwargs: Any) -> ChatMessage:
        received.append([m.model_copy(deep=True) for m in messages])
        reply = next(script)
        return reply if isinstance(reply, ChatMessage) else ChatMessage(role=MessageRole.ASSISTANT, content=reply)

    return MockFunctionCallingLLM(response_generator=respond), received


def call(name: str, **kwargs: Any) -> ChatMessage:
    """A scripted tool call."""
    block = ToolCallBlock(tool_call_id=f"call-{name}", tool_name=name, tool_kwargs=kwargs)
    return ChatMessage(role=MessageRole.ASSISTANT, blocks=[block])


def pet_name(species: str) -> str:
    """Look up the name of the user's pet of this species."""
    return f"no {species} on file"


def assert_recalled(received: list[ChatMessage]) -> None:
    """The LLM got the system prompt, the memory with the recalled fact, and only the new question."""
    system, memory, question = received
    assert (system.role, system.content) == (MessageRole.SYSTEM, SYSTEM)
    assert memory.role == MessageRole.SYSTEM
    assert RECALLED in (memory.content or "")
    assert (question.role, question.content) == (MessageRole.USER, QUESTION)


def open_memory(db: Path, session_id: str, **kwargs: Any) -> ElasticMemory:
    return ElasticMemory.from_defaults(db, session_id=session_id, embedder=None, **kwargs)


def child(code: str) -> None:
    """Run ``code`` in a fresh Python process (a real second process on the same file)."""
    subprocess.run([sys.executable, "-c", textwrap.dedent(code)], check=True, timeout=180)


# ---------------------------------------------------------------------- across processes
CHAT_CHILD = """
    from llama_index.core.chat_engine import SimpleChatEngine
    from llama_index.core.llms import ChatMessage
    from llama_index.core.llms.mock import MockFunctionCallingLLM
    from llama_index.memory.elastic_memory import ElasticMemory

    llm = MockFunctionCallingLLM(response_generator=lambda messages, **kw: ChatMessage(
        role="assistant", content="What a lovely name!"))
    memory = ElasticMemory.from_defaults({db!r}, session_id="A", embedder=None)
    engine = SimpleChatEngine.from_defaults(llm=llm, memory=memory)
    assert engine.chat({fact!r}).response == "What a lovely name!"
    # no close(): the turn was recorded when the reply was put, and the FIFO never overflowed
"""


def test_a_chat_engine_recalls_a_fact_told_in_another_process(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    child(CHAT_CHILD.format(db=str(db), fact=FACT))
    llm, received = scripted("Your dog is called Biscuit.")
    with open_memory(db, "B") as memory:
        engine = SimpleChatEngine.from_defaults(llm=llm, memory=memory, system_prompt=SYSTEM)
        assert engine.chat(QUESTION).response == "Your dog is called Biscuit."
    (first,) = received
    assert_recalled(first)


AGENT_CHILD = """
    import asyncio
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.llms import ChatMessage
    from llama_index.core.llms.mock import MockFunctionCallingLLM
    from llama_index.memory.elastic_memory import ElasticMemory

    def respond(messages, **kwargs):
        return ChatMessage(role="assistant", content="What a lovely name!")

    async def main():
        llm = MockFunctionCallingLLM(response_generator=respond)
        agent = FunctionAgent(llm=llm, tools=[], system_prompt="You are a helpful assistant.")
        async with ElasticMemory.from_defaults({db!r}, session_id="A", embedder=None) as memory:
            answer = await agent.run(user_msg={fact!r}, memory=memory)
        assert str(answer) == "What a lovely name!", str(answer)

    asyncio.run(main())
"""


@agent_warnings
async def test_an_agent_recalls_a_fact_told_in_another_process(tmp_path: Path) -> None:
    db = tmp_path / "agent.db"
    child(AGENT_CHILD.format(db=str(db), fact=FACT))
    llm, received = scripted(call("pet_name", species="dog"), "Your dog is called Biscuit.")
    agent = FunctionAgent(llm=llm, tools=[FunctionTool.from_defaults(pet_name)], system_prompt=SYSTEM)
    async with open_memory(db, "B") as memory:
        answer = await agent.run(user_msg=QUESTION, memory=memory)
        assert str(answer) == "Your dog is called Biscuit."
        first, second = received
        assert_recalled(first)
        assert RECALLED in (second[1].content or "")  # the tool loop's second call keeps the memory
        assert [m.role for m in second[3:]] == [MessageRole.ASSISTANT, MessageRole.TOOL]
        # the recorded turn is the question and the final reply, not the tool step
        (chunk,) = memory.memory.recall("dog called", mode="keyword", filters={"kind": "chunk", "session_id": "B"})
        assert chunk.content == f"User: {QUESTION}\nAssistant: Your dog is called Biscuit."


# ---------------------------------------------------------------------- in one process
def test_a_second_session_recalls_the_first(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    llm, first = scripted("What a lovely name!")
    with open_memory(db, "A") as memory:
        SimpleChatEngine.from_defaults(llm=llm, memory=memory, system_prompt=SYSTEM).chat(FACT)
    assert RECALLED not in str(first)  # nothing was known before
    llm, second = scripted("Your dog is called Biscuit.")
    with open_memory(db, "B") as memory:
        SimpleChatEngine.from_defaults(llm=llm, memory=memory, system_prompt=SYSTEM).chat(QUESTION)
    assert_recalled(second[0])


async def test_a_second_session_recalls_the_first_async(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    llm, _ = scripted("What a lovely name!")
    async with open_memory(db, "A") as memory:
        await SimpleChatEngine.from_defaults(llm=llm, memory=memory, system_prompt=SYSTEM).achat(FACT)
    llm, received = scripted("Your dog is called Biscuit.")
    async with open_memory(db, "B") as memory:
        await SimpleChatEngine.from_defaults(llm=llm, memory=memory, system_prompt=SYSTEM).achat(QUESTION)
    assert_recalled(received[0])


async def test_a_streamed_reply_is_recorded(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    llm, _ = scripted("What a lovely name!")
    async with open_memory(db, "A") as memory:
        engine = SimpleChatEngine.from_defaults(llm=llm, memory=memory)
        response = await engine.astream_chat(FACT)
        assert "".join([token async for token in response.async_response_gen()]) == "What a lovely name!"
        # consuming the stream awaited LlamaIndex's write of the reply into the memory
        assert memory.memory.facts.get("user.dog_name").value == "Biscuit"  # type: ignore[union-attr]


def test_the_same_session_continues_from_the_file(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    llm, _ = scripted("What a lovely name!")
    with open_memory(db, "A") as memory:
        SimpleChatEngine.from_defaults(llm=llm, memory=memory).chat(FACT)
    llm, received = scripted("Biscuit.")
    with open_memory(db, "A") as memory:  # the short-term history is in the file too
        SimpleChatEngine.from_defaults(llm=llm, memory=memory).chat(QUESTION)
        assert [(m.role, m.content) for m in memory.get_all()] == [
            (MessageRole.USER, FACT),
            (MessageRole.ASSISTANT, "What a lovely name!"),
            (MessageRole.USER, QUESTION),
            (MessageRole.ASSISTANT, "Biscuit."),
        ]
    assert [m.content for m in received[0][1:]] == [FACT, "What a lovely name!", QUESTION]


def test_the_memory_block_is_not_written_into_the_history(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    with open_memory(db, "A") as memory:
        memory.put_messages([ChatMessage(role="user", content=FACT), ChatMessage(role="assistant", content="Nice.")])
    llm, _ = scripted("Biscuit.", "Still Biscuit.")
    with open_memory(db, "B") as memory:
        engine = SimpleChatEngine.from_defaults(llm=llm, memory=memory)
        engine.chat(QUESTION)
        engine.chat(QUESTION)
        assert [m.role for m in memory.get_all()] == [MessageRole.USER, MessageRole.ASSISTANT] * 2
        assert all(RECALLED not in (m.content or "") for m in memory.get_all())


# ---------------------------------------------------------------------- ElasticMemory itself
@pytest.fixture
def mem() -> Iterator[CoreMemory]:
    memory = CoreMemory.open(":memory:", embedder=None, loop=LoopConfig(tier="standard", background=False))
    yield memory
    memory.close()


def user(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.USER, content=text)


def assistant(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.ASSISTANT, content=text)


def chunks(mem: CoreMemory) -> list[str]:
    return sorted(h.content for h in mem.recall("", k=100, filters={"kind": "chunk"}))


def test_from_defaults_is_a_ready_llamaindex_memory(mem: CoreMemory) -> None:
    memory = ElasticMemory.from_defaults(memory=mem, session_id="s")
    assert isinstance(memory, Memory)
    assert isinstance(memory.sql_store, ElasticMemoryAsyncChatStore)
    assert memory.sql_store.memory.path == mem.path
    (block,) = memory.memory_blocks
    assert isinstance(block, ElasticMemoryBlock)
    assert block is memory.block
    assert block.accept_short_term_memory is False  # turns are recorded as they are put
    assert block.max_tokens == int(30_000 * 0.3)  # the share LlamaIndex leaves next to the history
    assert block.session_id == memory.session_id == "s"
    assert memory.memory is block.memory
    assert ElasticMemory.class_name() == "ElasticMemory"


def test_a_random_session_by_default(mem: CoreMemory) -> None:
    memory = ElasticMemory.from_defaults(memory=mem)
    assert memory.session_id
    assert memory.block.session_id == memory.session_id


async def test_each_turn_is_recorded_as_it_is_put(mem: CoreMemory) -> None:
    memory = ElasticMemory.from_defaults(memory=mem, session_id="s")
    await memory.aput(user(FACT))
    assert mem.health()["turns"] == 0  # the turn is open until its reply
    await memory.aput(assistant("What a lovely name!"))
    assert chunks(mem) == [f"User: {FACT}\nAssistant: What a lovely name!"]
    assert {h.session_id for h in mem.recall("Biscuit", mode="keyword", filters={"kind": "chunk"})} == {"s"}


async def test_a_fifo_flush_does_not_record_again(mem: CoreMemory) -> None:
    memory = ElasticMemory.from_defaults(
        memory=mem, session_id="s", token_limit=80, chat_history_token_ratio=0.5, token_flush_size=10
    )
    for i in range(8):
        await memory.aput_messages([user(f"Message number {i} about the weather."), assistant(f"Reply {i}.")])
    assert await memory.sql_store.count_messages("s", status=None) > await memory.sql_store.count_messages("s")
    assert mem.health()["turns"] == 8
    assert len(chunks(mem)) == 8


async def test_a_tool_loop_records_the_final_reply(mem: CoreMemory) -> None:
    memory = ElasticMemory.from_defaults(memory=mem, session_id="s")
    await memory.aput(user("Where is Whitby?"))
    step = ChatMessage(
        role=MessageRole.ASSISTANT,
        blocks=[TextBlock(text="Let me look."), ToolCallBlock(tool_call_id="c", tool_name="geo", tool_kwargs={})],
    )
    tool = ChatMessage(role=MessageRole.TOOL, content="North Yorkshire", additional_kwargs={"tool_call_id": "c"})
    await memory.aput_messages([step, tool])
    assert mem.health()["turns"] == 0
    await memory.aput_messages([assistant("Whitby is in North Yorkshire.")])
    assert chunks(mem) == ["User: Where is Whitby?\nAssistant: Whitby is in North Yorkshire."]


async def test_a_user_message_without_a_reply_is_recorded_later(mem: CoreMemory) -> None:
    memory = ElasticMemory.from_defaults(memory=mem, session_id="s")
    await memory.aput(user("I live in Leeds."))
    await memory.aput(user(FACT))  # the first one got no reply
    assert chunks(mem) == ["User: I live in Leeds."]
    await memory.aclose()  # closing records the open turn
    assert chunks(mem) == ["User: I live in Leeds.", f"User: {FACT}"]


def test_sync_close_records_the_open_turn(mem: CoreMemory) -> None:
    memory = ElasticMemory.from_defaults(memory=mem, session_id="s")
    memory.put(user(FACT))
    memory.close()
    assert chunks(mem) == [f"User: {FACT}"]
    assert mem.stats()  # a given memory stays open


async def test_set_history_is_not_recorded(mem: CoreMemory) -> None:
    memory = ElasticMemory.from_defaults(memory=mem, session_id="s", chat_history=[user(FACT), assistant("Nice.")])
    await memory.aput(user("I live in Leeds."))
    await memory.aset([user("Earlier."), assistant("Yes.")])  # forgets the open turn
    await memory.aput(assistant("Unrelated."))
    assert mem.health()["turns"] == 0
    assert [m.content for m in await memory.aget_all()] == ["Earlier.", "Yes.", "Unrelated."]


async def test_record_false_only_recalls(mem: CoreMemory) -> None:
    mem.record_turn(FACT, "Nice.", session_id="earlier")
    memory = ElasticMemory.from_defaults(memory=mem, session_id="s", record=False)
    await memory.aput_messages([user(QUESTION), assistant("Biscuit.")])
    await memory.aclose()
    assert mem.health()["turns"] == 1
    assert RECALLED in ((await memory.aget(input=QUESTION))[0].content or "")


async def test_extra_blocks_follow_the_elastic_memory_block(mem: CoreMemory) -> None:
    mem.record_turn(FACT, "Nice.", session_id="earlier")
    static = StaticMemoryBlock(name="core", static_content=[TextBlock(text="The user likes tea.")])
    memory = ElasticMemory.from_defaults(memory=mem, session_id="s", memory_blocks=[static])
    (system,) = await memory.aget(input=QUESTION)
    assert RECALLED in (system.content or "") and "The user likes tea." in (system.content or "")


def test_an_extra_recording_block_is_refused(mem: CoreMemory) -> None:
    with pytest.raises(UsageError, match="record the FIFO's flushes a second time"):
        ElasticMemory.from_defaults(memory=mem, memory_blocks=[ElasticMemoryBlock(memory=mem)])
    quiet = ElasticMemoryBlock(memory=mem, name="Other", accept_short_term_memory=False)
    assert len(ElasticMemory.from_defaults(memory=mem, memory_blocks=[quiet]).memory_blocks) == 2


def test_bad_arguments_are_refused(mem: CoreMemory) -> None:
    with pytest.raises(UsageError, match="pass exactly one of path="):
        ElasticMemory.from_defaults()
    with pytest.raises(UsageError, match="chat_history_token_ratio"):
        ElasticMemory.from_defaults(memory=mem, chat_history_token_ratio=1.0)


def test_path_is_opened_and_closed(tmp_path: Path) -> None:
    memory = open_memory(tmp_path / "m.db", "s")
    assert memory.path == str(tmp_path / "m.db")
    memory.put_messages([user(FACT), assistant("Nice.")])
    memory.close()
    with CoreMemory.open(tmp_path / "m.db", embedder=None) as reopened:
        assert reopened.facts.get("user.dog_name").value == "Biscuit"  # type: ignore[union-attr]


def test_serialisation_carries_the_path(tmp_path: Path) -> None:
    memory = open_memory(tmp_path / "m.db", "s", token_limit=5000, block_priority=2)
    memory.put_messages([user(FACT), assistant("Nice.")])
    data = memory.to_dict()
    assert (data["path"], data["session_id"], data["class_name"]) == (str(tmp_path / "m.db"), "s", "ElasticMemory")
    memory.close()
    with ElasticMemory.from_dict(data, embedder=None) as rebuilt:
        assert (rebuilt.path, rebuilt.session_id, rebuilt.token_limit) == (memory.path, "s", 5000)
        assert rebuilt.block.priority == 2
        assert [m.content for m in rebuilt.get_all()] == [FACT, "Nice."]
        assert RECALLED in (rebuilt.get(input=QUESTION)[0].content or "")


def test_a_chat_store_can_be_given(mem: CoreMemory, tmp_path: Path) -> None:
    store = ElasticMemoryAsyncChatStore(path=tmp_path / "history.db")
    try:
        memory = ElasticMemory.from_defaults(memory=mem, session_id="s", chat_store=store)
        memory.put_messages([user(FACT), assistant("Nice.")])
        assert memory.sql_store is store
        assert [m.content for m in memory.get_all()] == [FACT, "Nice."]
        assert store.memory.path != mem.path
    finally:
        store.close()
    assert mem.facts.get("user.dog_name").value == "Biscuit"  # type: ignore[union-attr]


def test_mock_llm_echoes_its_prompt() -> None:
    """Why the tests script MockFunctionCallingLLM: MockLLM's reply is its whole prompt."""
    reply = MockLLM().chat([ChatMessage(role="system", content="secret memory"), user("hi")])
    assert "secret memory" in (reply.message.content or "")


async def test_recording_never_raises_into_llamaindex(mem: CoreMemory, monkeypatch: pytest.MonkeyPatch) -> None:
    memory = ElasticMemory.from_defaults(memory=mem, session_id="s")

    async def fail(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(memory.block._store().aio, "record_turn", fail)
    await memory.aput_messages([user(FACT), assistant("Nice.")])
    assert [m.content for m in await memory.aget_all()] == [FACT, "Nice."]


def test_serialisation_keeps_the_blocks_settings(tmp_path: Path) -> None:
    """A recall-only memory stays recall-only after to_dict/from_dict, with its token share."""
    memory = open_memory(tmp_path / "m.db", "s", record=False, max_tokens=77)
    data = memory.to_dict()
    memory.close()
    with ElasticMemory.from_dict(data, embedder=None) as rebuilt:
        assert (rebuilt.block.record, rebuilt.block.max_tokens) == (False, 77)
