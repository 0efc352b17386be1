"""Many users, one store: the memory hooks serve the user a run's ``hook_context`` names, and no other.

One ``Agent(hooks=memory_hooks(...))`` over one file serves Alice and Bob; each run names its
user with ``agent.run(..., hook_context={"user_id": ...})``. The scripted chat generator keeps
every message list the model was given, which is what these tests read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from haystack import component
from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage

from elastic_memory import AccessDeniedError, LoopConfig, Memory, UsageError
from elastic_memory.testing import FakeEmbedder
from haystack_integrations.memory_stores.elastic_memory import (
    CONTEXT_META_KEY,
    ElasticMemoryChatMessageStore,
    ElasticMemoryRecallHook,
    ElasticMemoryRecordHook,
    ElasticMemoryStore,
    memory_hooks,
)

ALICE_SAYS = "My name is Alice Novak and I'm allergic to peanuts."
ALICE_NOTE = "Alice keeps her EpiPen in the blue kitchen drawer."
BOB_SAYS = "My name is Bob Stone and I play the cello."
ASK = "What am I allergic to, what is my name, and where do I keep my EpiPen?"
#: What of Alice's may reach no one else: her name, her allergy (facts and turn), her note (a memory).
ALICES = ("Alice", "Novak", "peanut", "blue kitchen drawer")
LOOP = LoopConfig(tier="standard", background=False)


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


Hooks = dict[str, list[Any]]


@pytest.fixture
def make_hooks(tmp_path: Path) -> Iterator[Callable[..., Hooks]]:
    """``memory_hooks`` over one fresh file per test (a fake embedder, no background worker); closed afterwards."""
    made: list[ElasticMemoryRecallHook] = []

    def make(**kwargs: Any) -> Hooks:
        hooks = memory_hooks(path=tmp_path / "users.db", **{"embedder": FakeEmbedder(), "loop": LOOP, **kwargs})
        made.append(hooks["before_run"][0])
        return hooks

    yield make
    for hook in made:
        hook.close()


def _agent(hooks: dict[str, list[Any]], replies: int = 4) -> tuple[Agent, ScriptedChatGenerator]:
    generator = ScriptedChatGenerator(["Noted."] * replies)
    return Agent(chat_generator=generator, system_prompt="You are a helpful assistant.", hooks=hooks), generator


def _said(agent: Agent, text: str, user: str | None, session: str) -> None:
    context: dict[str, Any] = {"session_id": session}
    if user is not None:
        context["user_id"] = user
    agent.run(messages=[ChatMessage.from_user(text)], hook_context=context)


def _all_text(call: list[ChatMessage]) -> str:
    return "\n".join(m.text or "" for m in call)


def _memory_block(call: list[ChatMessage]) -> str:
    return "\n".join(m.text or "" for m in call if m.meta.get(CONTEXT_META_KEY) == "context")


def _alice_and_bob(hooks: Hooks) -> tuple[Agent, ScriptedChatGenerator, Memory]:
    """Alice's first run (her name and allergy) and a note of hers; Bob's first run (his name)."""
    agent, generator = _agent(hooks)
    mem = hooks["before_run"][0].memory
    _said(agent, ALICE_SAYS, "alice", "alice-1")
    mem.remember(ALICE_NOTE, user_id="alice")
    _said(agent, BOB_SAYS, "bob", "bob-1")
    mem.drain()
    return agent, generator, mem


def test_bobs_model_gets_none_of_alices_facts_turns_or_memories(make_hooks: Callable[..., Hooks]) -> None:
    """Bob's run, in a store Alice wrote to, hands his model his own memory and nothing of Alice's.

    If Alice's name, allergy or note shows up, the hooks served the run from the agent's handle
    (or Alice's) instead of ``mem.for_user("bob")``: check ``_MemoryHook._user``/``_sync``.
    """
    agent, generator, _ = _alice_and_bob(make_hooks())
    _said(agent, ASK, "bob", "bob-2")
    bobs = generator.calls[-1]
    assert "Bob Stone" in _memory_block(bobs)  # he has a memory block, and it is his
    assert [word for word in ALICES if word in _all_text(bobs)] == []
    agent.close()


def test_alices_next_session_still_gets_her_name_and_allergy(make_hooks: Callable[..., Hooks]) -> None:
    """Alice's run in a new session gets her profile (name, allergy) and her note through the memory block."""
    agent, generator, _ = _alice_and_bob(make_hooks())
    _said(agent, ASK, "alice", "alice-2")
    block = _memory_block(generator.calls[-1])
    assert "Alice Novak" in block and "peanuts" in block and "blue kitchen drawer" in block
    assert "Bob" not in _all_text(generator.calls[-1])
    agent.close()


def test_each_users_turns_are_recorded_in_their_own_memory(make_hooks: Callable[..., Hooks]) -> None:
    """The record hook writes the exchange to the run's user: their facts, not the agent's or the other user's."""
    agent, _, mem = _alice_and_bob(make_hooks())
    assert mem.for_user("alice").facts.get("user.name").value == "Alice Novak"
    assert mem.for_user("bob").facts.get("user.name").value == "Bob Stone"
    assert mem.facts.list() == []
    agent.close()


async def test_async_runs_serve_the_user_of_their_hook_context(make_hooks: Callable[..., Hooks]) -> None:
    """``run_async`` (the hooks' async path) picks the user the same way."""
    hooks = make_hooks()
    agent, generator = _agent(hooks)
    await agent.run_async(
        messages=[ChatMessage.from_user(ALICE_SAYS)], hook_context={"user_id": "alice", "session_id": "a1"}
    )
    await agent.run_async(messages=[ChatMessage.from_user(ASK)], hook_context={"user_id": "bob", "session_id": "b1"})
    await agent.run_async(messages=[ChatMessage.from_user(ASK)], hook_context={"user_id": "alice", "session_id": "a2"})
    assert [word for word in ALICES if word in _all_text(generator.calls[1])] == []
    assert "peanuts" in _memory_block(generator.calls[2])
    await agent.close_async()


def test_a_run_without_a_user_uses_the_agents_own_memory(make_hooks: Callable[..., Hooks]) -> None:
    """No user in ``hook_context``: the agent's own memory, which no user's run sees."""
    hooks = make_hooks()
    agent, generator = _agent(hooks)
    _said(agent, ALICE_SAYS, None, "s1")
    _said(agent, ASK, "bob", "s2")
    _said(agent, ASK, None, "s3")
    mem = hooks["before_run"][0].memory
    assert mem.facts.get("user.name").value == "Alice Novak"
    assert "Novak" not in _all_text(generator.calls[1])
    assert "Alice Novak" in _memory_block(generator.calls[2])
    agent.close()


def test_require_user_refuses_a_run_without_one(make_hooks: Callable[..., Hooks]) -> None:
    """``require_user=True``: a run whose ``hook_context`` names no user stops before the model is called."""
    hooks = make_hooks(require_user=True)
    agent, generator = _agent(hooks)
    with pytest.raises(UsageError, match="require_user=True"):
        _said(agent, ALICE_SAYS, None, "s1")
    assert generator.calls == []
    _said(agent, ALICE_SAYS, "alice", "s1")
    assert len(generator.calls) == 1
    agent.close()


@pytest.mark.parametrize("user", ["", 42, "a\x00b"], ids=["empty", "not-a-string", "control-character"])
def test_a_user_that_is_not_an_id_is_refused(make_hooks: Callable[..., Hooks], user: Any) -> None:
    """A malformed user never falls back to the agent's memory: the run stops before the model is called."""
    hooks = make_hooks()
    agent, generator = _agent(hooks)
    with pytest.raises(UsageError, match="user_id must be None or a non-empty string"):
        agent.run(messages=[ChatMessage.from_user("Hi")], hook_context={"user_id": user})
    assert generator.calls == []
    agent.close()


def test_the_user_key_names_the_hook_context_entry(make_hooks: Callable[..., Hooks]) -> None:
    """``user_key="account"`` reads ``hook_context["account"]`` (and ignores ``user_id``)."""
    hooks = make_hooks(user_key="account")
    agent, _ = _agent(hooks)
    agent.run(messages=[ChatMessage.from_user(ALICE_SAYS)], hook_context={"account": "acct-7", "user_id": "x"})
    mem = hooks["before_run"][0].memory
    assert mem.for_user("acct-7").facts.get("user.name").value == "Alice Novak"
    assert mem.for_user("x").facts.list() == []
    agent.close()


def test_hooks_on_a_users_handle_serve_that_user_only(tmp_path: Path) -> None:
    """``memory=mem.for_user("alice")``: runs without a user are Alice's, a run naming Bob is refused."""
    with Memory.open(tmp_path / "users.db", embedder=FakeEmbedder(), loop=LOOP) as mem:
        agent, generator = _agent(memory_hooks(memory=mem.for_user("alice")))
        _said(agent, ALICE_SAYS, None, "s1")
        _said(agent, ALICE_SAYS, "alice", "s2")
        with pytest.raises(AccessDeniedError, match="user 'alice'"):
            _said(agent, ASK, "bob", "s3")
        assert len(generator.calls) == 2
        assert mem.for_user("alice").facts.get("user.name").value == "Alice Novak"
        assert mem.facts.list() == []


def test_user_key_and_require_user_survive_serialisation(make_hooks: Callable[..., Hooks]) -> None:
    """``to_dict``/``from_dict`` of the Agent's hooks keep their user settings."""
    hooks = make_hooks(embedder=None, user_key="account", require_user=True)
    agent, _ = _agent(hooks)
    data = agent.to_dict()["init_parameters"]["hooks"]
    for point, cls in (("before_run", ElasticMemoryRecallHook), ("after_run", ElasticMemoryRecordHook)):
        hook = cls.from_dict(data[point][0])
        assert (hook.user_key, hook.require_user) == ("account", True)
        hook.close()
    agent.close()


def test_hooks_on_a_users_handle_serialise_it_as_user_id(tmp_path: Path) -> None:
    """A hook given ``mem.for_user("alice")`` records ``user_id="alice"``: ``from_dict`` reopens Alice's handle."""
    with Memory.open(tmp_path / "users.db", embedder=None) as mem:
        hook = ElasticMemoryRecallHook(memory=mem.for_user("alice"))
        data = hook.to_dict()
        assert data["init_parameters"]["user_id"] == "alice"
        reopened = ElasticMemoryRecallHook.from_dict(data)
        assert reopened.memory.user_id == "alice"
        reopened.close()


def test_chat_message_stores_on_users_handles_keep_their_histories_apart(tmp_path: Path) -> None:
    """``ElasticMemoryChatMessageStore(memory=mem.for_user(...))``: one ``chat_history_id``, one history per user."""
    with Memory.open(tmp_path / "users.db", embedder=None) as mem:
        alice = ElasticMemoryChatMessageStore(memory=mem.for_user("alice"))
        bob = ElasticMemoryChatMessageStore(memory=mem.for_user("bob"))
        alice.write_messages("chat-1", [ChatMessage.from_user(ALICE_SAYS), ChatMessage.from_assistant("Noted.")])
        bob.write_messages("chat-1", [ChatMessage.from_user(BOB_SAYS)])
        assert [m.text for m in alice.retrieve_messages("chat-1")] == [ALICE_SAYS, "Noted."]
        assert [m.text for m in bob.retrieve_messages("chat-1")] == [BOB_SAYS]
        assert ElasticMemoryChatMessageStore(memory=mem).count_messages("chat-1") == 0  # the agent's own
        bob.delete_all_messages()
        assert alice.count_messages("chat-1") == 2


def test_a_memory_store_on_a_users_handle_serves_that_user_only(tmp_path: Path) -> None:
    """``ElasticMemoryStore(memory=mem.for_user("alice"))``: ``user_id`` defaults to Alice; naming Bob is refused."""
    with Memory.open(tmp_path / "users.db", embedder=None) as mem:
        alice = ElasticMemoryStore(memory=mem.for_user("alice"))
        alice.add_memories(messages=[ChatMessage.from_user(ALICE_SAYS)])
        [found] = alice.search_memories(query="allergic peanuts")
        assert found.meta["user_id"] == "alice"
        assert alice.search_memories(query="allergic peanuts", user_id="alice") == [found]
        assert ElasticMemoryStore(memory=mem.for_user("bob")).search_memories(query="allergic peanuts") == []
        with pytest.raises(AccessDeniedError):
            alice.search_memories(query="peanuts", user_id="bob")
        alice.delete_memory(found.meta["memory_id"])
        assert alice.search_memories(query="allergic peanuts") == []


@pytest.mark.model
def test_with_the_built_in_model_bobs_model_gets_nothing_of_alices(make_hooks: Callable[..., Hooks]) -> None:
    """The same as the first two tests with ``embedder="auto"``: semantic recall must not cross users either."""
    agent, generator, _ = _alice_and_bob(make_hooks(embedder="auto"))
    _said(agent, ASK, "bob", "bob-2")
    _said(agent, ASK, "alice", "alice-2")
    bobs, alices = generator.calls[-2], generator.calls[-1]
    assert [word for word in ALICES if word in _all_text(bobs)] == []
    assert "Alice Novak" in _memory_block(alices) and "peanuts" in _memory_block(alices)
    agent.close()
