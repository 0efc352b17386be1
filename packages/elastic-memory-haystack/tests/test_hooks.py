"""The Agent hooks: recall before a run (build_context), record after it (record_turn, once)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest
from haystack import component
from haystack.components.agents import Agent, State
from haystack.dataclasses import ChatMessage

from elastic_memory import AsyncMemory, Memory, UsageError
from haystack_integrations.memory_stores.elastic_memory import (
    CONTEXT_META_KEY,
    ElasticMemoryRecallHook,
    ElasticMemoryRecordHook,
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


def _state(messages: list[ChatMessage], session_id: str | None = None) -> State:
    state = State(schema={"hook_context": {"type": dict}}, data={"messages": messages})
    if session_id is not None:
        state.set("hook_context", {"session_id": session_id})
    return state


def _turns(mem: Memory) -> list[str]:
    hits = mem.recall("", k=100, mode="keyword", filters={"agent_id": mem.agent_id}, touch=False)
    return sorted(h.content for h in hits if "haystack_turn" in h.metadata)


@pytest.fixture
def mem():
    with Memory.open(":memory:", embedder=None) as m:
        yield m


def test_recall_injects_the_plan_after_leading_system_messages(mem):
    mem.record_turn("My dog is called Biscuit.", "What a lovely name!", session_id="monday")
    hook = ElasticMemoryRecallHook(memory=mem)
    state = _state([ChatMessage.from_system("You are helpful."), ChatMessage.from_user("What is my dog called?")])
    hook.run(state)
    messages = state.get("messages")
    assert [m.role.value for m in messages] == ["system", "system", "user"]
    assert messages[1].meta == {CONTEXT_META_KEY: "context"}
    assert "Biscuit" in messages[1].text
    hook.run(state)  # never stacked
    assert len(state.get("messages")) == 3


def test_recall_without_memories_or_user_message_adds_nothing(mem):
    hook = ElasticMemoryRecallHook(memory=mem)
    state = _state([ChatMessage.from_user("Hello")])
    hook.run(state)
    assert [m.role.value for m in state.get("messages")] == ["user"]
    state = _state([ChatMessage.from_assistant("Hi")])
    hook.run(state)
    assert len(state.get("messages")) == 1


def test_recall_max_tokens(mem):
    for n in range(20):
        mem.record_turn(f"My dog is called Biscuit number {n}.", "Nice!", session_id="old")
    hook = ElasticMemoryRecallHook(memory=mem, max_tokens=40)
    state = _state([ChatMessage.from_user("dog Biscuit")])
    hook.run(state)
    full = mem.build_context("dog Biscuit").render()
    injected = [m.text for m in state.get("messages") if m.meta.get(CONTEXT_META_KEY)]
    assert len(injected) <= 1 and all(len(text) < len(full) for text in injected)


def test_record_records_the_exchange_once(mem):
    hook = ElasticMemoryRecordHook(memory=mem)
    messages = [
        ChatMessage.from_system("ctx", meta={CONTEXT_META_KEY: "context"}),
        ChatMessage.from_user("My dog is called Biscuit."),
        ChatMessage.from_assistant("What a lovely name!"),
    ]
    state = _state(list(messages), session_id="s1")
    hook.run(state)
    assert mem.facts.get("user.dog_name").value == "Biscuit"
    assert [m.role.value for m in state.get("messages")] == ["user", "assistant"]  # context stripped
    hook.run(_state(list(messages), session_id="s1"))
    ElasticMemoryRecordHook(memory=mem).run(_state(list(messages), session_id="s1"))  # a fresh hook too
    assert _turns(mem) == ["User: My dog is called Biscuit.\nAssistant: What a lovely name!"]
    assert mem.recall("", k=10, filters={"session_id": "s1"})


def test_record_same_question_later_in_the_conversation_is_a_new_turn(mem):
    hook = ElasticMemoryRecordHook(memory=mem)
    first = [ChatMessage.from_user("Hi"), ChatMessage.from_assistant("Hello")]
    hook.run(_state(list(first)))
    hook.run(_state([*first, ChatMessage.from_user("Hi"), ChatMessage.from_assistant("Hello")]))
    assert len(_turns(mem)) == 2


def test_record_a_regenerated_answer_is_the_same_turn(mem):
    hook = ElasticMemoryRecordHook(memory=mem)
    hook.run(_state([ChatMessage.from_user("Hi"), ChatMessage.from_assistant("Hello")], session_id="s"))
    hook.run(_state([ChatMessage.from_user("Hi"), ChatMessage.from_assistant("Hello again")], session_id="s"))
    assert len(_turns(mem)) == 1
    hook.run(_state([ChatMessage.from_user("Hi"), ChatMessage.from_assistant("Hello")], session_id="other"))
    assert len(_turns(mem)) == 2


def test_record_skips_unanswered_and_tool_only(mem):
    hook = ElasticMemoryRecordHook(memory=mem, strip_context=False)
    hook.run(_state([ChatMessage.from_user("Hi")]))
    hook.run(_state([ChatMessage.from_assistant("Hello")]))
    assert _turns(mem) == []
    ctx = ChatMessage.from_system("ctx", meta={CONTEXT_META_KEY: "context"})
    state = _state([ctx, ChatMessage.from_user("Hi"), ChatMessage.from_assistant("Hello")])
    hook.run(state)
    assert len(state.get("messages")) == 3  # strip_context=False keeps it


def test_session_from_hook_context_wins(mem):
    hook = ElasticMemoryRecordHook(memory=mem, session_id="fallback")
    hook.run(_state([ChatMessage.from_user("Hello there"), ChatMessage.from_assistant("Hi")], session_id="ctx"))
    hook.run(_state([ChatMessage.from_user("Bye now"), ChatMessage.from_assistant("Bye")]))
    sessions = {h.session_id for h in mem.recall("", k=10, filters={"agent_id": mem.agent_id})}
    assert sessions == {"ctx", "fallback"}


async def test_async_hooks_use_the_async_facade(tmp_path: Path):
    mem = await AsyncMemory.open(tmp_path / "a.db", embedder=None)
    try:
        recall, record = ElasticMemoryRecallHook(memory=mem), ElasticMemoryRecordHook(memory=mem)
        assert asyncio.iscoroutinefunction(recall.run_async) and asyncio.iscoroutinefunction(record.run_async)
        await record.run_async(
            _state([ChatMessage.from_user("My dog is called Rex."), ChatMessage.from_assistant("Ok")])
        )
        await record.run_async(
            _state([ChatMessage.from_user("My dog is called Rex."), ChatMessage.from_assistant("Ok")])
        )
        assert len(_turns(mem.as_sync())) == 1
        state = _state([ChatMessage.from_user("What is my dog called?")])
        await recall.run_async(state)
        assert "Rex" in state.get("messages")[0].text
    finally:
        await mem.close()


def test_hooks_never_raise_into_the_agent(mem, caplog):
    hook = ElasticMemoryRecallHook(memory=mem)
    record = ElasticMemoryRecordHook(memory=mem)
    mem.close()
    state = _state([ChatMessage.from_user("Hi"), ChatMessage.from_assistant("Hello")])
    with caplog.at_level(logging.WARNING, logger="haystack_integrations.elastic_memory"):
        hook.run(state)
        record.run(state)
    assert "not recorded" in caplog.text  # build_context itself degrades to an empty plan


def test_memory_hooks_share_one_store_and_serialise(tmp_path: Path):
    path = tmp_path / "hooks.db"
    hooks = memory_hooks(path=path, session_id="s", embedder=None)
    [recall], [record] = hooks["before_run"], hooks["after_run"]
    assert record.memory is recall.memory
    agent = Agent(chat_generator=ScriptedChatGenerator(["Hi"]), hooks=hooks)
    data = agent.to_dict()["init_parameters"]["hooks"]
    assert data["before_run"][0] == {
        "type": "haystack_integrations.memory_stores.elastic_memory.hooks.ElasticMemoryRecallHook",
        "init_parameters": {
            "path": str(path.resolve()),
            "session_id": "s",
            "user_key": "user_id",
            "require_user": False,
            "max_tokens": None,
            "embedder": None,
        },
    }
    assert data["after_run"][0]["init_parameters"] == {
        "path": str(path.resolve()),
        "session_id": "s",
        "user_key": "user_id",
        "require_user": False,
        "strip_context": True,
        "embedder": None,
    }
    recall.close()
    again = ElasticMemoryRecallHook.from_dict(data["before_run"][0])
    assert again.path == str(path.resolve()) and again.session_id == "s"
    again.close()


def test_argument_errors(mem):
    with pytest.raises(UsageError):
        ElasticMemoryRecallHook()
    with pytest.raises(UsageError):
        ElasticMemoryRecallHook(memory=mem, max_tokens=0)
    with pytest.raises(UsageError):
        ElasticMemoryRecordHook(memory=mem, session_id="")
    with pytest.raises(UsageError):
        ElasticMemoryRecordHook(memory=mem, strip_context="yes")
