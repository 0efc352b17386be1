"""One agent, many users: each run's user comes from its context or config, and users never share memory."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage

from elastic_memory import LoopConfig, Memory
from langchain_elastic_memory import ElasticMemoryMiddleware

from .test_middleware import ScriptedModel, scripted

ALICE_SAYS = "My name is Alice Novak and I'm allergic to peanuts."
ASK = "What am I allergic to, and what is my name?"


@dataclass
class Context:
    """A run's context, as ``create_agent(..., context_schema=Context)`` declares it."""

    user_id: str


@pytest.fixture
def mem() -> Iterator[Memory]:
    memory = Memory.open(":memory:", agent_id="support-bot", embedder=None, loop=LoopConfig(tier="standard"))
    yield memory
    memory.close()


def _seen(model: ScriptedModel) -> str:
    """Everything the model received in its last call."""
    return "\n".join(str(m.text) for m in model.received[-1])


def _run(agent: Any, text: str, thread: str, user: str, *, by: str) -> None:
    config: dict[str, Any] = {"configurable": {"thread_id": thread}}
    if by == "context":
        agent.invoke({"messages": [HumanMessage(text)]}, config, context=Context(user_id=user))
    else:
        config["configurable"]["user_id"] = user
        agent.invoke({"messages": [HumanMessage(text)]}, config)


@pytest.mark.parametrize("by", ["context", "config"])
def test_another_users_facts_and_turns_never_reach_the_model(mem: Memory, by: str) -> None:
    model = scripted("Noted, Alice!", "I don't know yet.")
    agent = create_agent(model, middleware=[ElasticMemoryMiddleware(memory=mem)], context_schema=Context)
    _run(agent, ALICE_SAYS, "alice-1", "alice", by=by)
    mem.drain()
    _run(agent, ASK, "bob-1", "bob", by=by)
    seen = _seen(model)
    assert "Alice" not in seen.replace(ASK, "")
    assert "peanuts" not in seen


@pytest.mark.parametrize("by", ["context", "config"])
def test_a_users_memory_reaches_their_next_thread(mem: Memory, by: str) -> None:
    model = scripted("Noted, Alice!", "Peanuts, Alice Novak.")
    agent = create_agent(model, middleware=[ElasticMemoryMiddleware(memory=mem)], context_schema=Context)
    _run(agent, ALICE_SAYS, "alice-1", "alice", by=by)
    mem.drain()
    _run(agent, ASK, "alice-2", "alice", by=by)
    seen = _seen(model)
    assert "Alice Novak" in seen and "peanuts" in seen


def test_each_users_turns_are_recorded_as_theirs(mem: Memory) -> None:
    agent = create_agent(scripted("Noted.", "Noted."), middleware=[ElasticMemoryMiddleware(memory=mem)])
    _run(agent, "I live in Lisbon.", "t-a", "alice", by="config")
    _run(agent, "I live in Oslo.", "t-b", "bob", by="config")
    mem.drain()
    assert {h.user_id for h in mem.for_user("alice").recall("", k=20)} == {"alice"}
    assert [f.value for f in mem.for_user("bob").facts.list() if f.key == "user.location"] == ["Oslo"]
    assert mem.facts.list() == []


def test_a_run_without_a_user_uses_the_agents_own_memory(mem: Memory) -> None:
    agent = create_agent(scripted("Noted."), middleware=[ElasticMemoryMiddleware(memory=mem)])
    agent.invoke({"messages": [HumanMessage("I live in Lisbon.")]}, {"configurable": {"thread_id": "t"}})
    mem.drain()
    assert [f.value for f in mem.facts.list() if f.key == "user.location"] == ["Lisbon"]


def test_an_int_user_id_is_taken_as_text(mem: Memory) -> None:
    agent = create_agent(scripted("Noted."), middleware=[ElasticMemoryMiddleware(memory=mem)])
    agent.invoke({"messages": [HumanMessage("I live in Lisbon.")]}, {"configurable": {"thread_id": "t", "user_id": 42}})
    mem.drain()
    assert [f.value for f in mem.for_user("42").facts.list() if f.key == "user.location"] == ["Lisbon"]


def test_a_malformed_user_gets_no_memory_and_records_nothing(mem: Memory, caplog: pytest.LogCaptureFixture) -> None:
    mem.lessons.add("Answer in British English.")
    model = scripted("Noted.")
    agent = create_agent(model, middleware=[ElasticMemoryMiddleware(memory=mem)])
    config = {"configurable": {"thread_id": "t", "user_id": ["alice", "bob"]}}
    agent.invoke({"messages": [HumanMessage("I live in Lisbon.")]}, config)
    mem.drain()
    assert "British English" not in _seen(model)
    assert mem.recall("Lisbon", mode="keyword") == []
    assert "user_id must be a string or an int" in caplog.text


def test_a_custom_user_key(mem: Memory) -> None:
    agent = create_agent(scripted("Noted."), middleware=[ElasticMemoryMiddleware(memory=mem, user_key="account")])
    config = {"configurable": {"thread_id": "t", "account": "a1"}}
    agent.invoke({"messages": [HumanMessage("I live in Lisbon.")]}, config)
    mem.drain()
    assert [f.value for f in mem.for_user("a1").facts.list() if f.key == "user.location"] == ["Lisbon"]


@pytest.mark.model
def test_with_the_built_in_model_users_stay_apart(tmp_path: Any) -> None:
    with Memory.open(tmp_path / "m.db", agent_id="bot", embedder="auto", loop=LoopConfig(tier="standard")) as mem:
        model = scripted("Noted.", "Noted.", "I don't know.", "4.2 metres.")
        agent = create_agent(model, middleware=[ElasticMemoryMiddleware(memory=mem)], context_schema=Context)
        _run(agent, "The attic oak beam measures 4.2 metres.", "alice-1", "alice", by="context")
        _run(agent, ALICE_SAYS, "alice-1", "alice", by="context")
        mem.drain()
        _run(agent, "How long is the attic oak beam?", "bob-1", "bob", by="context")
        assert "4.2" not in _seen(model) and "peanuts" not in _seen(model)
        _run(agent, "How long is the attic oak beam?", "alice-2", "alice", by="context")
        assert "4.2" in _seen(model)
