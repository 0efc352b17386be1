"""The Starlette app: routes, static files shipped in the package, errors as pages, the guard."""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount
from starlette.staticfiles import StaticFiles

from ..errors import AccessDeniedError, ElasticMemoryError, UsageError
from ..facade.async_memory import AsyncMemory
from . import _insight, _loop, _memories
from ._params import Conflict, Forbidden, NotFound
from ._render import Inspector, render
from ._security import DEFAULT_HOST, Address, Guard, check_token

__all__ = ["build_app"]

_STATIC = Path(__file__).parent / "static"


async def _library_error(request: Request, exc: Exception) -> Response:
    """The library's errors (and the inspector's own) as a page with the message.

    A wrong request is a 400 (403 refused, 404 not found); a database or model failure (locked,
    damaged, unloadable) is the server's, a 503: the request may work when retried.
    """
    status = 400 if isinstance(exc, UsageError) else 503
    if isinstance(exc, NotFound):
        status = 404
    elif isinstance(exc, Conflict):
        status = 409
    elif isinstance(exc, (Forbidden, AccessDeniedError)):
        status = 403
    return render(request, "error.html", status_code=status, status=status, message=str(exc))


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message = {404: "no such page", 405: "this page does not take that method"}.get(exc.status_code, exc.detail)
    return render(request, "error.html", status_code=exc.status_code, status=exc.status_code, message=message)


def build_app(
    mem: AsyncMemory,
    *,
    read_only: bool = False,
    address: Address | None = None,
    token: str | None = None,
) -> Guard:
    """The inspector over the open store ``mem`` (the caller closes it after the server stops).

    Args:
        mem: The store, or one agent's federation (:meth:`AsyncMemory.for_agent`).
        read_only: Hide every write and refuse write requests (403); nothing records access.
        address: Where it listens (loopback when ``None``): decides which Host headers are answered.
        token: The token every request must carry (required off loopback; see :func:`check_token`).

    Returns:
        An ASGI app: serve it with uvicorn, or drive it with Starlette's ``TestClient``.

    Raises:
        UsageError: ``address`` is not loopback and there is no token, or the token is unusable.
    """
    token = check_token(address or Address(DEFAULT_HOST, 0), token)
    routes: list[BaseRoute] = [
        *_memories.ROUTES,
        *_loop.ROUTES,
        *_insight.ROUTES,
        Mount("/static", app=StaticFiles(directory=_STATIC), name="static"),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers={ElasticMemoryError: _library_error, HTTPException: _http_error},
    )
    app.state.inspector = Inspector(mem, read_only=read_only)
    return Guard(app, address=address, token=token)
