"""The gate every write passes (not read-only, a form carrying this process's CSRF token) and what follows it."""

from __future__ import annotations

from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse

from ._params import Forbidden, form
from ._render import Inspector
from ._security import csrf_ok

__all__ = ["NOTICES", "done", "is_read", "notice", "refuse_read_only", "write_form"]

#: What a page says after a write, by the ``done`` code its redirect carries. The text is the
#: inspector's own: a link cannot put words on its pages. ``{item}`` is a quarantined item's number.
NOTICES = {
    "saved": "Saved.",
    "forgotten": "Forgotten: hidden from recall until restored.",
    "restored": "Restored.",
    "lesson": "Lesson added.",
    "released": "Released item {item}.",
    "discarded": "Discarded item {item}.",
}


def is_read(request: Request) -> bool:
    """Whether a page that also takes a POST was asked for itself (GET, or HEAD: a GET without the body)."""
    return request.method in ("GET", "HEAD")


def refuse_read_only(request: Request) -> None:
    """Raise :class:`Forbidden` when the inspector is read-only (its write pages and forms do not exist)."""
    inspector: Inspector = request.app.state.inspector
    if inspector.read_only:
        msg = "this inspector is read-only (--read-only): nothing can be changed from it"
        raise Forbidden(msg)


async def write_form(request: Request) -> dict[str, str]:
    """The posted form, once the write is allowed.

    Raises:
        Forbidden: the inspector is read-only, or the form lacks the CSRF token.
    """
    refuse_read_only(request)
    fields = await form(request)
    if not csrf_ok(request.scope.get("state", {}).get("csrf", ""), fields.get("csrf")):
        msg = "the form lacks this inspector's CSRF token: reload the page and submit it again"
        raise Forbidden(msg)
    return fields


def done(url: str, code: str, *, item: int | None = None) -> RedirectResponse:
    """After a write: back to a page (303, so a reload does not post again) showing the notice ``code``.

    ``url`` is the inspector's own, percent-encoded already (:func:`~._links.memory_url`).
    """
    assert code in NOTICES
    query = {"done": code, **({} if item is None else {"item": str(item)})}
    joiner = "&" if "?" in url else "?"
    return RedirectResponse(f"{url}{joiner}{urlencode(query)}", status_code=303)


def notice(request: Request) -> str:
    """The notice the ``done`` code asks for ('' when none or unknown)."""
    params = request.query_params
    template = NOTICES.get(params.get("done", ""), "")
    item = params.get("item", "")
    if "{item}" in template:
        return template.format(item=item) if item.isascii() and item.isdigit() and len(item) < 20 else ""
    return template
