"""End to end: a create_agent agent recalls, in a new thread, a fact told in another thread.

Each thread runs on a fresh agent (new model, new checkpointer, new middleware) over the
same database file, so the fact can only come through the file: the middleware's memory
loop, and with ``store=`` LangGraph's long-term store on the same file.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain.tools import ToolRuntime
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatResult
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import Field

from langchain_elastic_memory import ElasticMemoryMiddleware, ElasticMemoryStore

FACT = "My dog is called Biscuit."
QUESTION = "What's my dog called?"


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


def run_thread(db: Path, thread_id: str, text: str, reply: str) -> ScriptedModel:
    """One fresh agent over ``db`` answers ``text`` in ``thread_id``; returns its model."""
    model = ScriptedModel(messages=iter([reply]))
    with ElasticMemoryMiddleware(path=db, embedder=None) as memory:
        agent = create_agent(
            model, system_prompt="You are a helpful assistant.", middleware=[memory], checkpointer=InMemorySaver()
        )
        agent.invoke({"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": thread_id}})
    return model


async def arun_thread(db: Path, thread_id: str, text: str, reply: str) -> ScriptedModel:
    model = ScriptedModel(messages=iter([reply]))
    with ElasticMemoryMiddleware(path=db, embedder=None) as memory:
        agent = create_agent(
            model, system_prompt="You are a helpful assistant.", middleware=[memory], checkpointer=InMemorySaver()
        )
        await agent.ainvoke({"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": thread_id}})
    return model


def assert_recalled(model: ScriptedModel) -> None:
    """The model's only call got the system prompt with the recalled fact, then just the new question."""
    (received,) = model.received
    system, *rest = received
    assert isinstance(system, SystemMessage)
    assert system.text.startswith("You are a helpful assistant.")
    assert '"Biscuit" (key=user.dog_name)' in system.text
    assert [(type(m), m.text) for m in rest] == [(HumanMessage, QUESTION)]


def test_a_fact_told_in_one_thread_is_recalled_in_another(tmp_path: Path) -> None:
    db = tmp_path / "agent.db"
    first = run_thread(db, "thread-1", FACT, "What a lovely name!")
    assert "Biscuit" not in first.received[0][0].text  # nothing was known before
    assert_recalled(run_thread(db, "thread-2", QUESTION, "Your dog is called Biscuit."))


async def test_a_fact_told_in_one_thread_is_recalled_in_another_async(tmp_path: Path) -> None:
    db = tmp_path / "agent.db"
    await arun_thread(db, "thread-1", FACT, "What a lovely name!")
    assert_recalled(await arun_thread(db, "thread-2", QUESTION, "Your dog is called Biscuit."))


def test_a_fact_told_in_another_process_is_recalled(tmp_path: Path) -> None:
    db = tmp_path / "agent.db"
    child = textwrap.dedent(
        f"""
        from langchain.agents import create_agent
        from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
        from langchain_elastic_memory import ElasticMemoryMiddleware, ElasticMemoryStore

        with ElasticMemoryMiddleware(path={str(db)!r}, embedder=None) as memory:
            agent = create_agent(GenericFakeChatModel(messages=iter(["What a lovely name!"])), middleware=[memory])
            agent.invoke({{"messages": [("user", {FACT!r})]}}, {{"configurable": {{"thread_id": "thread-1"}}}})
        """
    )
    subprocess.run([sys.executable, "-c", child], check=True, timeout=120)
    assert_recalled(run_thread(db, "thread-2", QUESTION, "Your dog is called Biscuit."))


def test_the_recalled_fact_is_not_written_into_the_new_thread(tmp_path: Path) -> None:
    db = tmp_path / "agent.db"
    run_thread(db, "thread-1", FACT, "What a lovely name!")
    model = ScriptedModel(messages=iter(["Your dog is called Biscuit."]))
    with ElasticMemoryMiddleware(path=db, embedder=None) as memory:
        agent = create_agent(model, middleware=[memory], checkpointer=InMemorySaver())
        config: Any = {"configurable": {"thread_id": "thread-2"}}
        agent.invoke({"messages": [HumanMessage(QUESTION)]}, config)
        persisted = agent.get_state(config).values["messages"]
    assert [(type(m), m.text) for m in persisted] == [
        (HumanMessage, QUESTION),
        (AIMessage, "Your dog is called Biscuit."),
    ]


@tool
def save_pet(name: str, runtime: ToolRuntime) -> str:
    """Save the user's pet in the long-term store."""
    assert runtime.store is not None
    runtime.store.put(("user", "pets"), "dog", {"name": name})
    return "saved"


@tool
def find_pet(runtime: ToolRuntime) -> str:
    """Read the user's pet from the long-term store."""
    assert runtime.store is not None
    item = runtime.store.get(("user", "pets"), "dog")
    return "nothing stored" if item is None else f"dog: {item.value['name']}"


def call(name: str, args: dict[str, Any]) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call-{name}"}])


def run_with_store(db: Path, thread_id: str, text: str, *replies: AIMessage | str) -> ScriptedModel:
    """A fresh agent with the middleware and an ElasticMemoryStore, both on ``db``."""
    model = ScriptedModel(messages=iter(replies))
    with (
        ElasticMemoryMiddleware(path=db, embedder=None) as memory,
        ElasticMemoryStore(memory=memory.memory) as store,
    ):
        agent = create_agent(
            model,
            tools=[save_pet, find_pet],
            system_prompt="You are a helpful assistant.",
            middleware=[memory],
            checkpointer=InMemorySaver(),
            store=store,
        )
        agent.invoke({"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": thread_id}})
    return model


def test_a_fact_is_recalled_through_the_middleware_and_the_store(tmp_path: Path) -> None:
    db = tmp_path / "agent.db"
    run_with_store(db, "thread-1", FACT, call("save_pet", {"name": "Biscuit"}), "Saved: Biscuit.")
    model = run_with_store(db, "thread-2", QUESTION, call("find_pet", {}), "Your dog is called Biscuit.")
    first, second = model.received
    assert '"Biscuit" (key=user.dog_name)' in first[0].text  # the middleware's recall
    assert isinstance(second[-1], ToolMessage)
    assert second[-1].text == "dog: Biscuit"  # the store's item, read by the tool
