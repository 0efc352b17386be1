"""``elastic-memory ui``: the local inspector, a web app on 127.0.0.1 over one store or a federation.

The store is opened once, before the server starts, and closed when it stops. Needs the ``ui``
extra; see ``docs/inspector.md``.
"""

# No `from __future__ import annotations`: the command is defined inside register(), and typer
# must see its annotations (cli's option types) as objects, not as names it cannot resolve.

import asyncio
import contextlib
from pathlib import Path
from typing import Annotated

import typer

from ..errors import ElasticMemoryError, UsageError
from ..facade.memory import Memory
from ..loop import LoopConfig
from . import _common as common
from ._serve import open_served

__all__ = ["DEFAULT_PORT", "register"]

TOKEN_ENV = "ELASTIC_MEMORY_UI_TOKEN"  # the same name as elastic_memory.ui.TOKEN_ENV
DEFAULT_PORT = 8700
_INSTALL = "pip install 'elastic-memory[ui]'"


def _require_extra() -> None:
    try:
        import jinja2  # noqa: F401, PLC0415 - only to say which extra is missing
        import starlette  # noqa: F401, PLC0415
        import uvicorn  # noqa: F401, PLC0415
    except ImportError:
        msg = f"`elastic-memory ui` needs its web stack: {_INSTALL}"
        raise UsageError(msg) from None


def _open(
    db: Path, embedder: str | None, agent: str, home: Path | None, pools: list[str], user: str | None = None
) -> Memory:
    """The store or the federation, with no background worker: the agent's own process does that work."""
    quiet = LoopConfig(background=False)
    return open_served(db, embedder=embedder, agent=agent, home=home, pools=pools, create=False, loop=quiet, user=user)


def _warm(mem: Memory) -> None:
    """Load the vector index and the model now, so the first semantic search does not wait for them."""
    mem.load_index()
    with contextlib.suppress(ElasticMemoryError):  # a keyword-only store has no model to load
        mem.embed_query("warm up")


def register(app: typer.Typer) -> None:
    """Add the ``ui`` command to the ``elastic-memory`` app."""

    @app.command()
    def ui(
        db: common.DbOption = common.DEFAULT_DB,
        embedder: common.EmbedderOption = common.EmbedderChoice.AUTO,
        agent: common.AgentOption = "default",
        user: Annotated[
            str | None, typer.Option("--user", help="Inspect this user's memory only (of --agent).")
        ] = None,
        home: Annotated[
            Path | None,
            typer.Option(help="A federation's folder: inspect --agent's memory with its --pool tiers (--db unused)."),
        ] = None,
        pool: Annotated[
            list[str] | None, typer.Option(metavar="NAME", help="A shared pool of the federation (repeat the option).")
        ] = None,
        host: Annotated[
            str, typer.Option(help="The address to listen on; anything but loopback needs --token.")
        ] = "127.0.0.1",
        port: Annotated[int, typer.Option(help="The port to listen on.")] = DEFAULT_PORT,
        read_only: Annotated[
            bool, typer.Option("--read-only", help="Hide every write (edit, forget, restore, release, add).")
        ] = False,
        token: Annotated[
            str | None,
            typer.Option(
                envvar=TOKEN_ENV,
                show_envvar=True,
                help="A token every request must carry (required off loopback); open the URL with ?token=TOKEN once.",
            ),
        ] = None,
    ) -> None:
        """Open the inspector: browse, search, edit and explain the store in a browser (http://127.0.0.1:8700/)."""
        with common.reported():
            _require_extra()
            from ..ui import Address, check_token, serve  # noqa: PLC0415 - the extra

            address = Address.parse(host, port)
            required = check_token(address, token)
        spec = "auto" if embedder is common.EmbedderChoice.AUTO else None
        with common.reported():
            mem = _open(db, spec, agent, home, pool or [], user)
        try:
            if home is None:
                common.note_others(db, "data", agent, user)
            _warm(mem)
            url = address.url if required is None else f"{address.url}?token={required}"
            common.console_err().print(f"elastic-memory inspector on {url} (Ctrl-C stops it)", soft_wrap=True)
            with common.reported():
                asyncio.run(serve(mem.as_async(), address, token=required, read_only=read_only))
        finally:
            mem.close()
