"""A Haystack Agent that remembers across runs, with elastic-memory's hooks, fully offline.

Run from the repository root: ``python examples/haystack/agent_memory.py``

``memory_hooks(path=...)`` recalls before each run and records the exchange after it. The chat
model here is a scripted stand-in that records what it was shown (swap in any Haystack chat
generator); the memory uses the built-in offline embedding model. A second Agent, started
later on the same file, gets the first conversation's fact in its context. The script checks
that and exits non-zero otherwise.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

from haystack import component
from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage

from haystack_integrations.memory_stores.elastic_memory import CONTEXT_META_KEY, memory_hooks


@component
class ScriptedChatGenerator:
    """Answers from a script and keeps the messages of every call."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.seen: list[list[ChatMessage]] = []

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        """The next scripted reply."""
        self.seen.append(list(messages))
        return {"replies": [ChatMessage.from_assistant(self.replies.pop(0))]}


def memory_context(messages: list[ChatMessage]) -> str:
    """The memory block the hooks put in front of the model."""
    return " ".join(m.text or "" for m in messages if m.meta.get(CONTEXT_META_KEY) == "context")


def main() -> int:
    """Two Agents on one file, a day apart; 0 when the second saw the first's memory."""
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "agent.db")

        monday = Agent(
            chat_generator=ScriptedChatGenerator(["Nice to meet Biscuit!"]),
            hooks=memory_hooks(path=path, session_id="monday"),
        )
        monday.warm_up()
        monday.run(messages=[ChatMessage.from_user("My dog is called Biscuit and he loves the beach.")])
        monday.close()

        model = ScriptedChatGenerator(["Your dog is called Biscuit."])
        tuesday = Agent(chat_generator=model, hooks=memory_hooks(path=path, session_id="tuesday"))
        tuesday.warm_up()
        reply = tuesday.run(messages=[ChatMessage.from_user("What is my dog called?")])["last_message"].text
        tuesday.close()

    context = memory_context(model.seen[0])
    recalled = [line.strip() for line in context.splitlines() if "Biscuit" in line]
    print("memory shown to the model:", recalled[0] if recalled else "(nothing about Biscuit)")
    print("reply:", reply)
    ok = "Biscuit" in context
    if not ok:
        print("the second run did not get the first run's memory", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
