"""An MCP client using elastic-memory's server: remember, record a turn, then build the context.

Starts `elastic-memory mcp` over stdio on a fresh store (the built-in offline model loads in
the server), calls its tools the way an MCP host does, and checks what comes back.

    python examples/mcp/client.py
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.stdio import get_default_environment

SERVER = Path(sys.executable).with_name("elastic-memory")  # the console script beside this Python


async def call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    """A tool's structured result; a tool error stops the example."""
    result = await session.call_tool(tool, arguments)
    if result.is_error or result.structured_content is None:
        sys.exit(f"{tool} failed: {result.content}")
    return result.structured_content


async def main(db: Path) -> None:
    """Serve ``db`` over stdio, use the tools, check what they answered."""
    env = {
        **get_default_environment(),
        **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}),
    }
    params = StdioServerParameters(command=str(SERVER), args=["mcp", "--db", str(db)], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {t.name for t in (await session.list_tools()).tools}
        print("tools:", ", ".join(sorted(tools)))
        await call(session, "remember", content="The user's kayak is bright orange.", tags=["gear"])
        await call(session, "record_turn", user="My name is Priya.", reply="Nice to meet you, Priya.", session_id="s1")
        hits = (await call(session, "recall", query="what colour is the kayak", k=3))["hits"]
        print("recall:", hits[0]["content"])
        context = (await call(session, "build_context", user_input="What do you know about me?", session_id="s2"))[
            "context"
        ]
        print("context mentions Priya:", "Priya" in context)
    assert {"remember", "recall", "build_context", "record_turn"} <= tools, tools
    assert hits[0]["content"] == "The user's kayak is bright orange.", hits
    assert "Priya" in context, context


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(main(Path(folder) / "memory.db"))
