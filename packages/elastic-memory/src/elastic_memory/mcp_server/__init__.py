"""elastic-memory as an MCP server (the ``mcp`` extra): tools, resources and a prompt over one open store.

``elastic-memory mcp --db PATH`` runs it (see ``docs/mcp.md``); :func:`build_server` makes the
server object for a store you opened yourself, to run in-process or mount in an ASGI app::

    mem = Memory.open("memory.db")
    build_server(mem.as_async()).run("stdio")

Tools: :data:`READ_TOOLS` always, :data:`WRITE_TOOLS` unless ``read_only``. Resources:
``memory://profile`` and ``memory://sessions/recent`` (JSON). Prompt: ``use_memory``.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

from .._version import __version__
from ..facade.async_memory import AsyncMemory
from ._guide import INSTRUCTIONS, PROFILE_URI, SESSIONS_URI, add_guide
from ._http import TOKEN_ENV, Address, BearerAuth, check_token, serve_http
from ._tools import READ_TOOLS, WRITE_TOOLS, add_tools

__all__ = [
    "PROFILE_URI",
    "READ_TOOLS",
    "SESSIONS_URI",
    "TOKEN_ENV",
    "WRITE_TOOLS",
    "Address",
    "BearerAuth",
    "build_server",
    "check_token",
    "serve_http",
]


def build_server(mem: AsyncMemory, *, read_only: bool = False) -> MCPServer:
    """An MCP server over the open store ``mem`` (which the caller closes after the server stops).

    Args:
        mem: The store, or one agent's federation (:meth:`AsyncMemory.for_agent`): the client
            acts as that agent.
        read_only: Leave out the tools that write (:data:`WRITE_TOOLS`); recall records no access.

    Returns:
        The server; ``server.run("stdio")``, or :func:`serve_http`.
    """
    server: MCPServer = MCPServer("elastic-memory", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
    add_tools(server, mem, read_only=read_only)
    add_guide(server, mem)
    return server
