"""ElasticMemoryMiddleware: recall into the model request, record after the run, never raise."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.runtime import ExecutionInfo, Runtime
from pydantic import Field

from elastic_memory import LoopConfig, Memory, UsageError
from langchain_elastic_memory import ElasticMemoryMiddleware


class ScriptedModel(GenericFakeChatModel):
    """Replies from a script and keeps every input it was given; tools bind to nothing."""

    received: list[list[BaseMessage]] = Field(default_factory=list)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.received.append(list(messages))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedModel:
        return self


def scripted(*replies: AIMessage | str) -> ScriptedModel:
    return ScriptedModel(messages=iter(replies))


@tool
def lookup(name: str) -> str:
    """Look a name up."""
    return f"{name}: found"


@pytest.fixture
def mem() -> Iterator[Memory]:
    """A fresh in-memory store that knows the user's dog, with deterministic background work."""
    memory = Memory.open(":memory:", embedder=None, loop=LoopConfig(tier="standard", background=False))
    memory.record_turn("My dog is called Biscuit.", "What a lovely name!", session_id="earlier")
    yield memory
    memory.close()


def thread(name: str) -> RunnableConfig:
    return {"configurable": {"thread_id": name}}


def ask(text: str) -> Any:
    return {"messages": [HumanMessage(text)]}


def runtime(thread_id: str | None) -> Runtime[Any]:
    return Runtime(execution_info=ExecutionInfo(checkpoint_id="c", checkpoint_ns="", task_id="t", thread_id=thread_id))


def test_plan_is_appended_to_the_system_prompt(mem: Memory) -> None:
    model = scripted("Biscuit!")
    agent = create_agent(model, system_prompt="You are kind.", middleware=[ElasticMemoryMiddleware(memory=mem)])
    agent.invoke(ask("What is my dog called?"), thread("t1"))
    system = model.received[0][0]
    assert isinstance(system, SystemMessage)
    assert system.text.startswith("You are kind.\n\n")
    assert '"Biscuit" (key=user.dog_name)' in system.text


def test_plan_becomes_the_system_message_without_a_system_prompt(mem: Memory) -> None:
    model = scripted("Biscuit!")
    agent = create_agent(model, middleware=[ElasticMemoryMiddleware(memory=mem)])
    agent.invoke(ask("What is my dog called?"), thread("t1"))
    first, second = model.received[0]
    assert isinstance(first, SystemMessage)
    assert "Biscuit" in first.text
    assert isinstance(second, HumanMessage)


def test_plan_is_added_as_a_text_block_to_a_block_system_prompt(mem: Memory) -> None:
    model = scripted("Biscuit!")
    prompt = SystemMessage(content=[{"type": "text", "text": "You are kind."}])
    agent = create_agent(model, system_prompt=prompt, middleware=[ElasticMemoryMiddleware(memory=mem)])
    agent.invoke(ask("What is my dog called?"), thread("t1"))
    blocks = model.received[0][0].content
    assert isinstance(blocks, list)
    first, second = blocks
    assert first == {"type": "text", "text": "You are kind."}
    assert isinstance(second, dict)
    assert "Biscuit" in second["text"]


def test_nothing_is_injected_when_memory_has_nothing() -> None:
    with ElasticMemoryMiddleware(path=":memory:", embedder=None) as middleware:
        model = scripted("Hello!")
        create_agent(model, middleware=[middleware]).invoke(ask("Hello there"), thread("t1"))
    assert [type(m) for m in model.received[0]] == [HumanMessage]


def test_thread_history_stays_clean(mem: Memory) -> None:
    model = scripted("Biscuit!")
    saver = InMemorySaver()
    agent = create_agent(model, middleware=[ElasticMemoryMiddleware(memory=mem)], checkpointer=saver)
    out = agent.invoke(ask("What is my dog called?"), thread("t1"))
    persisted = agent.get_state(thread("t1")).values["messages"]
    assert [type(m) for m in out["messages"]] == [HumanMessage, AIMessage]
    assert [m.text for m in persisted] == ["What is my dog called?", "Biscuit!"]
    assert set(agent.get_state(thread("t1")).values) == {"messages"}


def test_turn_is_recorded_in_the_thread_session(mem: Memory) -> None:
    agent = create_agent(scripted("Noted."), middleware=[ElasticMemoryMiddleware(memory=mem)])
    agent.invoke(ask("My cat is called Tom."), thread("thread-7"))
    hits = mem.recall("Tom", mode="keyword", filters={"session_id": "thread-7"})
    assert [h.content for h in hits] == ["User: My cat is called Tom.\nAssistant: Noted."]
    assert mem.facts.get("user.cat_name").value == "Tom"  # type: ignore[union-attr]


def test_session_falls_back_to_the_constructor_argument(mem: Memory) -> None:
    agent = create_agent(scripted("Noted."), middleware=[ElasticMemoryMiddleware(memory=mem, session_id="desk")])
    agent.invoke(ask("My cat is called Tom."))
    assert [h.session_id for h in mem.recall("Tom", mode="keyword")] == ["desk"]


def test_turn_is_the_last_user_message_and_the_final_reply(mem: Memory) -> None:
    call = AIMessage("", tool_calls=[{"name": "lookup", "args": {"name": "Tom"}, "id": "call-1"}])
    model = scripted(call, "Tom is your cat.")
    agent = create_agent(model, tools=[lookup], middleware=[ElasticMemoryMiddleware(memory=mem)])
    agent.invoke({"messages": [HumanMessage("Hi"), AIMessage("Hello!"), HumanMessage("Who is Tom?")]}, thread("t1"))
    hits = mem.recall("Tom", mode="keyword", filters={"session_id": "t1"})
    assert [h.content for h in hits] == ["User: Who is Tom?\nAssistant: Tom is your cat."]


def test_one_plan_per_user_message_across_a_tool_loop(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = mem.build_context

    def counting(user_input: str, *, session_id: str | None = None, **kwargs: Any) -> Any:
        calls.append(user_input)
        return real(user_input, session_id=session_id, **kwargs)

    monkeypatch.setattr(mem, "build_context", counting)
    call = AIMessage("", tool_calls=[{"name": "lookup", "args": {"name": "Biscuit"}, "id": "call-1"}])
    model = scripted(call, "Biscuit is your dog.")
    agent = create_agent(model, tools=[lookup], middleware=[ElasticMemoryMiddleware(memory=mem)])
    agent.invoke(ask("What is my dog called?"), thread("t1"))
    assert calls == ["What is my dog called?"]
    assert len(model.received) == 2
    assert all("Biscuit" in received[0].text for received in model.received)
    assert isinstance(model.received[1][-1], ToolMessage)


def test_each_user_message_gets_a_fresh_plan(mem: Memory) -> None:
    model = scripted("Noted.", "Tom.")
    agent = create_agent(model, middleware=[ElasticMemoryMiddleware(memory=mem)], checkpointer=InMemorySaver())
    agent.invoke(ask("My cat is called Tom."), thread("t1"))
    agent.invoke(ask("What is my cat called?"), thread("t1"))
    assert '"Tom" (key=user.cat_name)' in model.received[1][0].text


def test_record_false_records_nothing(mem: Memory) -> None:
    middleware = ElasticMemoryMiddleware(memory=mem, record=False)
    create_agent(scripted("Noted."), middleware=[middleware]).invoke(ask("My cat is called Tom."), thread("t1"))
    assert mem.recall("Tom", mode="keyword") == []


def test_max_tokens_caps_the_plan(mem: Memory) -> None:
    model = scripted("Hm.")
    agent = create_agent(model, middleware=[ElasticMemoryMiddleware(memory=mem, max_tokens=1)])
    agent.invoke(ask("What is my dog called?"), thread("t1"))
    assert [type(m) for m in model.received[0]] == [HumanMessage]


def test_a_failing_store_never_breaks_the_agent(
    mem: Memory, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(mem, "build_context", broken)
    monkeypatch.setattr(mem, "record_turn", broken)
    agent = create_agent(scripted("Still here."), middleware=[ElasticMemoryMiddleware(memory=mem)])
    with caplog.at_level(logging.WARNING, logger="langchain_elastic_memory"):
        out = agent.invoke(ask("What is my dog called?"), thread("t1"))
    assert out["messages"][-1].text == "Still here."
    assert [r.getMessage() for r in caplog.records] == [
        "elastic-memory: no memory context for this model call",
        "elastic-memory: the turn was not recorded",
    ]


def test_the_same_exchange_is_recorded_once(mem: Memory) -> None:
    middleware = ElasticMemoryMiddleware(memory=mem)
    state: Any = {"messages": [HumanMessage("My cat is called Tom.", id="h1"), AIMessage("Noted.", id="a1")]}
    middleware.after_agent(state, runtime("t1"))
    middleware.after_agent(state, runtime("t1"))
    assert mem.health()["turns"] == 2  # the fixture's turn and this one


async def test_async_agent_recalls_through_async_memory(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    middleware = ElasticMemoryMiddleware(memory=mem)
    monkeypatch.setattr(mem, "build_context", None)  # the sync facade must not be used
    model = scripted("Biscuit!")
    await create_agent(model, middleware=[middleware]).ainvoke(ask("What is my dog called?"), thread("t1"))
    assert "Biscuit" in model.received[0][0].text


async def test_async_agent_records_through_async_memory(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    middleware = ElasticMemoryMiddleware(memory=mem)
    monkeypatch.setattr(mem, "record_turn", None)  # the sync facade must not be used
    await create_agent(scripted("Noted."), middleware=[middleware]).ainvoke(ask("My cat is called Tom."), thread("t1"))
    assert mem.facts.get("user.cat_name").value == "Tom"  # type: ignore[union-attr]


def test_path_opens_and_close_closes_the_store(tmp_path: Path) -> None:
    middleware = ElasticMemoryMiddleware(path=tmp_path / "m.db", embedder=None)
    create_agent(scripted("Noted."), middleware=[middleware]).invoke(ask("My cat is called Tom."), thread("t1"))
    middleware.close()
    with Memory.open(tmp_path / "m.db", embedder=None) as reopened:
        assert reopened.facts.get("user.cat_name").value == "Tom"  # type: ignore[union-attr]


def test_close_leaves_a_given_memory_open(mem: Memory) -> None:
    ElasticMemoryMiddleware(memory=mem).close()
    assert mem.recall("Biscuit", mode="keyword")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "pass exactly one of path="),
        ({"path": ":memory:", "memory": "x"}, "pass exactly one of path="),
        ({"path": ":memory:", "max_tokens": 0}, "max_tokens must be a positive integer"),
        ({"path": ":memory:", "record": "yes"}, "record must be True or False"),
        ({"path": ":memory:", "session_id": ""}, "session_id must be a non-empty string"),
    ],
)
def test_bad_arguments_are_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        ElasticMemoryMiddleware(embedder=None, **kwargs)
