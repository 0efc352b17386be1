"""The host's window: the recall hook plans around the messages the model actually gets.

A host that trims or summarises its history passes ``Agent.run`` fewer messages than the
session holds. The recall hook hands those messages to ``build_context(window=...)``, so a turn
of the live session the model no longer sees comes back through the memory block, and a turn
it still sees is not repeated there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from haystack import component
from haystack.components.agents import Agent, State
from haystack.dataclasses import ChatMessage
from haystack.hooks import hook

from elastic_memory import LoopConfig, Memory
from elastic_memory.testing import FakeEmbedder
from haystack_integrations.memory_stores.elastic_memory import CONTEXT_META_KEY, ElasticMemoryRecallHook, memory_hooks

BEAM = "The attic oak beam measures 4.2 metres."
QUESTION = "How long is the attic oak beam?"
CHAT = [(f"Tell me fun fact number {i} about otters.", f"Otters hold paws while asleep, fact {i}.") for i in range(14)]
SUMMARY = "Summary of the conversation so far: we talked about otters."
LOOP = LoopConfig(tier="standard", background=False)

#: What a host passes ``Agent.run``: its own history (user and assistant messages) -> the messages.
Host = Callable[[list[ChatMessage]], list[ChatMessage]]


@component
class ScriptedChatGenerator:
    """Answers every call with the same reply and records the messages each call received."""

    def __init__(self) -> None:
        self.calls: list[list[ChatMessage]] = []

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(list(messages))
        return {"replies": [ChatMessage.from_assistant(CHAT[0][1] if len(self.calls) == 1 else "Noted.")]}


def _summarising(history: list[ChatMessage]) -> list[ChatMessage]:
    """A summarising host: its summary, then the last four messages (two exchanges)."""
    return [ChatMessage.from_system(SUMMARY), *history[-4:]]


def _everything(history: list[ChatMessage]) -> list[ChatMessage]:
    return list(history)


@pytest.fixture
def hooks(tmp_path: Path) -> Iterator[dict[str, list[Any]]]:
    made = memory_hooks(path=tmp_path / "window.db", embedder=FakeEmbedder(), loop=LOOP)
    [recall] = made["before_run"]
    yield made
    recall.close()


def _converse(agent: Agent, host: Host) -> list[ChatMessage]:
    """The beam, fourteen exchanges about otters, then the question, in one session; what the model got last."""
    generator = agent.chat_generator
    assert isinstance(generator, ScriptedChatGenerator)
    history: list[ChatMessage] = []
    for text in [BEAM, *(user for user, _ in CHAT), QUESTION]:
        asked = ChatMessage.from_user(text)
        result = agent.run(messages=[*host(history), asked], hook_context={"session_id": "s"})
        history += [asked, result["last_message"]]
    return generator.calls[-1]


def _memory_block(call: list[ChatMessage]) -> str:
    return "\n".join(m.text or "" for m in call if m.meta.get(CONTEXT_META_KEY) == "context")


def test_a_turn_the_host_summarised_away_reaches_the_model_through_the_memory_block(
    hooks: dict[str, list[Any]],
) -> None:
    """The host passes its summary and the last four messages: the beam's length comes back as memory.

    If 4.2 is missing, the recall hook planned without ``window=`` (the plan then assumes the
    host still shows the session's last turns): check ``_query_and_window`` in hooks.py.
    """
    agent = Agent(chat_generator=ScriptedChatGenerator(), system_prompt="You are a helpful assistant.", hooks=hooks)
    last = _converse(agent, _summarising)
    assert not any(BEAM in (m.text or "") for m in last if m.meta.get(CONTEXT_META_KEY) is None)
    assert "4.2" in _memory_block(last)


def test_a_turn_still_in_the_hosts_messages_is_not_repeated_in_the_memory_block(
    hooks: dict[str, list[Any]],
) -> None:
    """The host passes its whole history: the beam is in the messages already, so not in the memory block."""
    agent = Agent(chat_generator=ScriptedChatGenerator(), system_prompt="You are a helpful assistant.", hooks=hooks)
    last = _converse(agent, _everything)
    assert any(m.text == BEAM for m in last)
    assert "4.2" not in _memory_block(last)


def test_under_before_llm_the_plan_sees_what_a_compaction_hook_left(hooks: dict[str, list[Any]]) -> None:
    """Recall registered under ``before_llm`` after a compaction hook plans around the compacted messages.

    The host passes everything; the compaction hook keeps the system prompt, a summary and the
    last five messages, and the model gets the beam's length back through the memory block.
    """

    @hook
    def compact(state: State) -> None:
        messages = state.get("messages")
        kept = [messages[0], ChatMessage.from_system(SUMMARY), *messages[-5:]]
        state.set("messages", kept, handler_override=lambda _old, new: new)

    [recall] = hooks.pop("before_run")
    agent = Agent(
        chat_generator=ScriptedChatGenerator(),
        system_prompt="You are a helpful assistant.",
        hooks={"before_llm": [compact, recall], **hooks},
    )
    last = _converse(agent, _everything)
    assert not any(m.text == BEAM for m in last)
    assert "4.2" in _memory_block(last)


def test_a_plan_counts_as_an_access_once_per_run(tmp_path: Path) -> None:
    """Planning again before a later model call of the same run (``step_count`` > 0) touches nothing.

    Under ``before_llm`` the hook plans before every call of a tool loop; only the first counts
    as an access of what the plan shows (``build_context(touch=...)``), as under ``before_run``.
    """
    with Memory.open(tmp_path / "touch.db", embedder=FakeEmbedder(), loop=LOOP) as mem:
        mem.record_turn(BEAM, "Noted.", session_id="old")
        recall = ElasticMemoryRecallHook(memory=mem)

        def accesses() -> int:
            mem.drain()  # touches are written by the memory loop's jobs
            return sum(r.access_count for r in mem.get_many([h.id for h in mem.recall("", k=50, touch=False)]))

        before = accesses()
        later = State(schema={}, data={"messages": [ChatMessage.from_user(QUESTION)], "step_count": 1})
        recall.run(later)
        assert "4.2" in _memory_block(later.get("messages"))
        assert accesses() == before
        first = State(schema={}, data={"messages": [ChatMessage.from_user(QUESTION)], "step_count": 0})
        recall.run(first)
        assert accesses() > before
