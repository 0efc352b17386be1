"""An agent with long-term memory serving two users, on one SQLite file.

``create_agent`` with LangChain's scripted fake chat model and ``ElasticMemoryMiddleware``:
each run names its user in ``context``; the middleware recalls and records that user's memory
only. Alice tells the agent a fact in one thread; in a new thread the agent is reminded of it,
and Bob's run never sees it. Embeddings: the core's built-in offline model.

    python examples/langchain/agent_two_users.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any, ClassVar, TypedDict

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import BaseMessage

from elastic_memory import LoopConfig, Memory
from langchain_elastic_memory import ElasticMemoryMiddleware


class Context(TypedDict):
    """Who a run is for."""

    user_id: str


class Scripted(GenericFakeChatModel):
    """Answers from a script and keeps the system message it was sent."""

    systems: ClassVar[list[str]] = []

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.systems.append(messages[0].text if messages[0].type == "system" else "")
        return super()._generate(messages, *args, **kwargs)


def main() -> int:
    """Run the two users' turns; 0 when the memory went to the right user only."""
    with (
        tempfile.TemporaryDirectory() as folder,
        Memory.open(Path(folder) / "agent.db", loop=LoopConfig(tier="standard")) as mem,
    ):
        model = Scripted(messages=iter(["Noted, Alice!", "You are allergic to peanuts.", "I don't know yet."]))
        agent = create_agent(
            model, system_prompt="Be brief.", middleware=[ElasticMemoryMiddleware(memory=mem)], context_schema=Context
        )

        def ask(user: str, thread: str, text: str) -> str:
            state = agent.invoke(
                {"messages": [("user", text)]}, {"configurable": {"thread_id": thread}}, context={"user_id": user}
            )
            return str(state["messages"][-1].text)

        print("alice:", ask("alice", "a1", "I'm allergic to peanuts."))
        mem.drain()  # the background worker has captured the fact
        print("alice:", ask("alice", "a2", "What am I allergic to?"))
        alice_saw = "peanuts" in model.systems[-1]
        print("bob:  ", ask("bob", "b1", "What am I allergic to?"))
        bob_saw = "peanuts" in model.systems[-1]
        facts = [f.value for f in mem.for_user("alice").facts.list()]
        print("alice's facts:", facts, "| bob's facts:", [f.value for f in mem.for_user("bob").facts.list()])

    ok = alice_saw and not bob_saw and facts == ["peanuts"]
    print("OK" if ok else "WRONG: alice's fact must reach alice's next thread and never bob's")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
