"""Pages from the Jinja2 templates shipped in the package; every value is HTML-escaped (autoescape)."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

import jinja2
from starlette.requests import Request
from starlette.responses import HTMLResponse

from ..facade.async_memory import AsyncMemory
from ._links import memory_url, segment, session_url

__all__ = ["NAV", "Inspector", "render"]

#: The menu: (path, label).
NAV = (
    ("/", "Memories"),
    ("/facts", "Facts"),
    ("/lessons", "Lessons"),
    ("/quarantine", "Quarantine"),
    ("/sessions", "Sessions"),
    ("/explain", "Explain"),
    ("/context", "Context"),
    ("/graph", "Graph"),
    ("/health", "Health"),
)


@dataclass
class Inspector:
    """What every route needs: the open store and whether writes are offered."""

    mem: AsyncMemory
    read_only: bool = False


def _when(value: float | None) -> str:
    if value is None:
        return "-"
    return dt.datetime.fromtimestamp(value, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _ms(value: Any) -> str:
    return f"{value:.1f} ms" if isinstance(value, (int, float)) else "-"


def _score(value: Any) -> str:
    return f"{value:.4f}" if isinstance(value, (int, float)) else "-"


def _nudge(value: Any) -> str:
    return f"+{value:.4f}" if isinstance(value, (int, float)) else "-"


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)


_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("elastic_memory.ui", "templates"),
    autoescape=True,  # stored text is data: <script> in a memory renders as text
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_ENV.filters.update(
    when=_when,
    ms=_ms,
    score=_score,
    nudge=_nudge,
    pretty=_pretty,
    memory_url=memory_url,
    session_url=session_url,
    segment=segment,
)


def render(request: Request, template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    """The page ``template`` with the menu, the CSRF token and the read-only switch."""
    inspector: Inspector = request.app.state.inspector
    page = _ENV.get_template(template).render(
        nav=NAV,
        here=request.url.path,
        read_only=inspector.read_only,
        agent_id=inspector.mem.agent_id,
        federated=inspector.mem.federation is not None,
        csrf=request.scope.get("state", {}).get("csrf", ""),
        request=request,
        **context,
    )
    return HTMLResponse(page, status_code=status_code)
