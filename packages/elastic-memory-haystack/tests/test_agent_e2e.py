"""End to end: a haystack Agent with the memory hooks recalls, in a later run, what an earlier one stored."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from haystack import component
from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage

from haystack_integrations.memory_stores.elastic_memory import (
    CONTEXT_META_KEY,
    ElasticMemoryChatMessageStore,
    ElasticMemoryStore,
    memory_hooks,
)


@component
class ScriptedChatGenerator:
    """Returns scripted replies and records the messages each call received."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.calls: list[list[ChatMessage]] = []

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(list(messages))
        return {"replies": [ChatMessage.from_assistant(self.replies.pop(0))]}

    @component.output_types(replies=list[ChatMessage])
    async def run_async(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        return self.run(messages, tools, **kwargs)


def _seen(generator: ScriptedChatGenerator) -> str:
    return "\n".join(m.text or "" for call in generator.calls for m in call)


def _agent(path: Path, reply: str, session_id: str) -> tuple[Agent, ScriptedChatGenerator]:
    generator = ScriptedChatGenerator([reply])
    hooks = memory_hooks(path=path, session_id=session_id, embedder=None)
    return Agent(chat_generator=generator, system_prompt="You are a helpful assistant.", hooks=hooks), generator


def test_a_fresh_agent_recalls_what_the_first_run_stored(tmp_path: Path):
    path = tmp_path / "agent.db"
    agent, generator = _agent(path, "What a lovely name!", "monday")
    agent.warm_up()
    result = agent.run(messages=[ChatMessage.from_user("My dog is called Biscuit.")])
    assert result["last_message"].text == "What a lovely name!"
    assert "Biscuit" not in _seen(generator).replace("My dog is called Biscuit.", "")
    assert not any(m.meta.get(CONTEXT_META_KEY) for m in result["messages"])  # output history stays clean
    agent.close()

    agent2, generator2 = _agent(path, "Your dog is called Biscuit.", "tuesday")
    agent2.warm_up()
    agent2.run(messages=[ChatMessage.from_user("What is my dog called?")])
    [call] = generator2.calls
    assert call[0].text == "You are a helpful assistant."
    assert call[1].meta == {CONTEXT_META_KEY: "context"} and "Biscuit" in call[1].text
    assert call[-1].text == "What is my dog called?"
    agent2.close()


def test_resending_the_history_records_each_turn_once(tmp_path: Path):
    path = tmp_path / "agent.db"
    generator = ScriptedChatGenerator(["Hello Ada!", "Noted: Leeds."])
    hooks = memory_hooks(path=path, embedder=None)
    agent = Agent(chat_generator=generator, hooks=hooks)
    first = agent.run(messages=[ChatMessage.from_user("Hi, my name is Ada.")])["messages"]
    second = agent.run(messages=[*first, ChatMessage.from_user("I live in Leeds.")])["messages"]
    assert [m.role.value for m in second] == ["user", "assistant", "user", "assistant"]
    mem = hooks["before_run"][0].memory
    turns = [h for h in mem.recall("", k=50, filters={"agent_id": mem.agent_id}) if "haystack_turn" in h.metadata]
    assert len(turns) == 2
    assert mem.facts.get("user.name").value == "Ada" and mem.facts.get("user.location").value == "Leeds"
    # the second call saw the plan (profile facts) once, not a stale copy from the first run
    assert sum(1 for m in generator.calls[1] if m.meta.get(CONTEXT_META_KEY)) == 1
    agent.close()


async def test_async_agent_recalls_across_runs(tmp_path: Path):
    path = tmp_path / "agent.db"
    agent, _ = _agent(path, "Noted.", "a")
    await agent.warm_up_async()
    await agent.run_async(messages=[ChatMessage.from_user("My cat is called Miso.")], hook_context={"session_id": "x"})
    await agent.close_async()

    agent2, generator2 = _agent(path, "Miso.", "b")
    await agent2.warm_up_async()
    await agent2.run_async(messages=[ChatMessage.from_user("What is my cat called?")])
    assert "Miso" in _seen(generator2).replace("What is my cat called?", "")
    await agent2.close_async()


def test_agent_with_the_memory_store_and_chat_store(tmp_path: Path):
    """The experimental Agent's pattern by hand: chat history in, memories searched, both written after."""
    path = tmp_path / "stores.db"
    with (
        ElasticMemoryChatMessageStore(path=path, embedder=None) as chats,
        ElasticMemoryStore(memory=chats.memory) as memories,
    ):
        for question, reply in [("I love green tea.", "Lovely."), ("What do I love?", "Green tea.")]:
            generator = ScriptedChatGenerator([reply])
            agent = Agent(chat_generator=generator)
            recalled = memories.search_memories(query=question, user_id="ada")
            history = chats.retrieve_messages("chat-1")
            messages = [*recalled, *history, ChatMessage.from_user(question)]
            out = agent.run(messages=messages)["messages"]
            chats.write_messages("chat-1", [m for m in out if m.role.value != "system"])
            memories.add_memories(messages=out, user_id="ada")
        assert "I love green tea." in [m.text for m in generator.calls[0] if m.role.value == "system"]
        assert chats.count_messages("chat-1") == 4
        assert len(memories.search_memories(top_k=10, user_id="ada")) == 4
