"""``elastic-memory mcp``: serve a store to MCP clients (Claude Desktop, VS Code, agents) over stdio or HTTP.

The store is opened once, before the server starts, and closed when it stops. On stdio,
stdout carries only JSON-RPC: everything else (warnings, the model loading) goes to stderr.
Needs the ``mcp`` extra; see ``docs/mcp.md``.
"""

# No `from __future__ import annotations`: the command is defined inside register(), and typer
# must see its annotations (cli's option types) as objects, not as names it cannot resolve.

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer

from ..errors import UsageError
from ..facade.memory import Memory
from . import _common as common
from ._serve import open_served

__all__ = ["register"]

TOKEN_ENV = "ELASTIC_MEMORY_MCP_TOKEN"  # the same name as elastic_memory.mcp_server.TOKEN_ENV
_INSTALL = "pip install 'elastic-memory[mcp]'"


def _require_sdk() -> None:
    try:
        import mcp.server.mcpserver  # noqa: F401, PLC0415 - only to say which extra is missing
    except ImportError:
        msg = f"`elastic-memory mcp` needs the MCP SDK: {_INSTALL}"
        raise UsageError(msg) from None


@contextlib.contextmanager
def _opened(
    db: Path, embedder: str | None, agent: str, home: Path | None, pools: list[str], user: str | None = None
) -> Iterator[Memory]:
    """The store (or the agent's federation), opened with stdout diverted to stderr, closed afterwards."""
    with contextlib.redirect_stdout(sys.stderr):  # stdout is the protocol channel on stdio
        mem = open_served(db, embedder=embedder, agent=agent, home=home, pools=pools, create=True, user=user)
    try:
        yield mem
    finally:
        mem.close()


def register(app: typer.Typer) -> None:
    """Add the ``mcp`` command to the ``elastic-memory`` app."""

    @app.command()
    def mcp(
        db: common.DbOption = common.DEFAULT_DB,
        embedder: common.EmbedderOption = common.EmbedderChoice.AUTO,
        agent: common.AgentOption = "default",
        user: Annotated[
            str | None,
            typer.Option(
                "--user",
                help="Serve this user's memory only (one user per server; no tool can name another).",
            ),
        ] = None,
        home: Annotated[
            Path | None,
            typer.Option(help="A federation's folder: serve --agent's memory with its --pool tiers (--db unused)."),
        ] = None,
        pool: Annotated[
            list[str] | None, typer.Option(metavar="NAME", help="A shared pool of the federation (repeat the option).")
        ] = None,
        read_only: Annotated[
            bool, typer.Option("--read-only", help="Serve only the tools that read; writes are not offered.")
        ] = False,
        http: Annotated[
            str | None,
            typer.Option(metavar="HOST:PORT", help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio."),
        ] = None,
        token: Annotated[
            str | None,
            typer.Option(
                envvar=TOKEN_ENV,
                show_envvar=True,
                help="With --http: the bearer token every request must carry (required off loopback).",
            ),
        ] = None,
    ) -> None:
        """Serve the store to MCP clients: stdio by default, or streamable HTTP with --http."""
        with common.reported():
            _require_sdk()
            from ..mcp_server import Address, build_server, check_token, serve_http  # noqa: PLC0415 - the extra

            address = None if http is None else Address.parse(http)
            required = None if address is None else check_token(address, token)
        spec = "auto" if embedder is common.EmbedderChoice.AUTO else None
        with common.reported(), _opened(db, spec, agent, home, pool or [], user) as mem:
            if home is None:
                common.note_others(db, "data", agent, user)
            server = build_server(mem.as_async(), read_only=read_only)
            if address is None:
                server.run("stdio")
                return
            import anyio  # noqa: PLC0415 - an mcp dependency

            common.console_err().print(f"elastic-memory MCP server on {address.url}", soft_wrap=True)
            anyio.run(serve_http, server, address, required)
