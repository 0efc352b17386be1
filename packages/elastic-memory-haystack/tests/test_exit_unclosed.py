"""A program that runs a Haystack Agent with ``run_async`` and never closes the store exits quietly.

A child interpreter, inside ``asyncio.run(main())``, runs an Agent with the memory hooks through
``run_async`` (recording the turn queues background work), waits until the store's background
worker is idle (and still alive), then returns without closing anything. It must exit with
code 0 and print no "Task was destroyed but it is pending!" (the worker's task), no traceback.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

AGENT = """
import asyncio
from typing import Any

from haystack import component
from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage

from haystack_integrations.memory_stores.elastic_memory import memory_hooks


@component
class Scripted:
    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        return {"replies": [ChatMessage.from_assistant("Noted.")]}

    @component.output_types(replies=list[ChatMessage])
    async def run_async(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        return self.run(messages)


async def main() -> None:
    hooks = memory_hooks(path="agent.db", embedder=None)
    agent = Agent(chat_generator=Scripted(), hooks=hooks)
    await agent.warm_up_async()
    await agent.run_async(messages=[ChatMessage.from_user("My name is Ada and I live in Leeds.")])
    await report(hooks["before_run"][0].async_memory)
"""

#: The program ends with the worker idle but alive, nothing closed, the store dropped with ``main``.
ENDING = """

async def report(memory) -> None:
    await memory.drain()
    print("worker alive:", (await memory.health())["worker_alive"])


asyncio.run(main())
"""


def test_unclosed_agent_store_exits_quietly(tmp_path: Path) -> None:
    code = AGENT + ENDING
    run = [sys.executable, "-c", code]
    done = subprocess.run(run, check=False, cwd=tmp_path, capture_output=True, text=True, timeout=240)
    assert "worker alive: True" in done.stdout, done.stderr  # the case this test is about: a pending worker
    assert "Task was destroyed" not in done.stderr
    assert "Traceback" not in done.stderr
    assert done.returncode == 0, done.stderr
