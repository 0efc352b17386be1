"""haystack-experimental's ``Agent`` with this package's stores as ``memory_store=`` and ``chat_message_store=``.

That Agent imports and runs only on haystack-ai 2.23 to 2.25.2 (haystack-ai 2.26 changed
``Agent._runtime_checks``, 3.0 removed ``AgentBreakpoint``; haystack-experimental 0.19.0.post1
is the newest release), while the rest of this package needs haystack-ai 3.4. So this file runs
in its own environment, haystack-ai 2.25.2 with haystack-experimental 0.19.0.post1 (the nox
session ``tests_haystack_experimental_agent``), and is skipped on haystack-ai 3.
"""

from __future__ import annotations

import importlib.metadata
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from haystack import component
from haystack.dataclasses import ChatMessage, ChatRole

from haystack_integrations.memory_stores.elastic_memory import ElasticMemoryChatMessageStore, ElasticMemoryStore

HAYSTACK = importlib.metadata.version("haystack-ai")
pytestmark = pytest.mark.skipif(
    int(HAYSTACK.split(".")[0]) >= 3,
    reason=f"haystack-experimental's Agent needs haystack-ai 2.23 to 2.25.2, not {HAYSTACK}: "
    "`nox -s tests_haystack_experimental_agent` runs this file",
)
RUN = {"chat_message_store_kwargs": {"chat_history_id": "chat-1"}, "memory_store_kwargs": {"user_id": "ada"}}


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


@dataclass
class TwoRuns:
    generator: ScriptedChatGenerator
    chats: ElasticMemoryChatMessageStore
    memories: ElasticMemoryStore
    first: list[ChatMessage]
    second: list[ChatMessage]


@pytest.fixture
def two_runs(tmp_path: Path) -> Iterator[TwoRuns]:
    """One experimental Agent over one file, run twice for the same user and chat."""
    from haystack_experimental.components.agents import Agent

    with (
        ElasticMemoryChatMessageStore(path=tmp_path / "agent.db", embedder=None) as chats,
        ElasticMemoryStore(memory=chats.memory) as memories,
    ):
        generator = ScriptedChatGenerator(["Noted: green tea.", "You love green tea."])
        agent = Agent(chat_generator=generator, chat_message_store=chats, memory_store=memories)
        first = agent.run(messages=[ChatMessage.from_user("I love green tea.")], **RUN)["messages"]
        second = agent.run(messages=[ChatMessage.from_user("Which tea do I love?")], **RUN)["messages"]
        yield TwoRuns(generator, chats, memories, first, second)


def _texts(messages: list[ChatMessage], role: ChatRole) -> list[str]:
    return [m.text or "" for m in messages if m.role == role]


def test_second_run_is_given_the_first_runs_memories(two_runs: TwoRuns) -> None:
    seen = "\n".join(_texts(two_runs.generator.calls[1], ChatRole.SYSTEM))
    assert re.findall(r"MEMORY #\d+: (.*)", seen) == ["I love green tea.", "Noted: green tea."]


def test_second_run_is_given_the_chat_history(two_runs: TwoRuns) -> None:
    assert _texts(two_runs.generator.calls[1], ChatRole.USER) == ["I love green tea.", "Which tea do I love?"]
    assert _texts(two_runs.generator.calls[1], ChatRole.ASSISTANT) == ["Noted: green tea."]
    assert two_runs.chats.count_messages("chat-1") == 4  # the history written back is not written twice


def test_each_message_is_one_memory_however_often_it_is_added(two_runs: TwoRuns) -> None:
    expected = ["I love green tea.", "Noted: green tea.", "Which tea do I love?", "You love green tea."]
    stored = sorted(m.text or "" for m in two_runs.memories.search_memories(top_k=50, user_id="ada"))
    assert stored == expected  # the second run re-added the first run's messages
    two_runs.memories.add_memories(messages=[*two_runs.first, *two_runs.second], user_id="ada")
    again = sorted(m.text or "" for m in two_runs.memories.search_memories(top_k=50, user_id="ada"))
    assert again == expected
