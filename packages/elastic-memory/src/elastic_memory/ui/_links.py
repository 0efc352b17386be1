"""The inspector's links to a memory or a session, and reading the id back from the request.

An id may hold any printable character, ``/``, ``..``, ``?``, ``#`` and ``%`` included. A link
carries it percent-encoded as one path segment (``/`` as ``%2F``), and the route decodes that
segment once from the raw path, so ``x/forget`` is a memory and ``x`` + ``/forget`` its action.
A browser resolves a segment that is ``.`` or ``..`` however it is encoded, so those two ids
travel in the query string instead (``/memories/?id=..``).
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import quote, unquote, urlencode

from starlette.requests import Request

from ._params import BadRequest

__all__ = ["memory_url", "path_segments", "segment", "session_url"]

_DOTS = (".", "..")


def segment(value: str) -> str:
    """``value`` percent-encoded as one path segment: ``/``, ``?``, ``#`` and ``%`` included.

    >>> segment("x/forget?#")
    'x%2Fforget%3F%23'
    """
    return quote(value, safe="")


def _url(base: str, value: str, tail: str = "", query: Mapping[str, str] | None = None) -> str:
    if value in _DOTS:
        return f"{base}/?{urlencode({'id': value, **({'action': tail} if tail else {}), **(query or {})})}"
    path = f"{base}/{segment(value)}" + (f"/{tail}" if tail else "")
    return path + (f"?{urlencode(query)}" if query else "")


def memory_url(mid: str, action: str = "", query: Mapping[str, str] | None = None) -> str:
    """The inspector's page of memory ``mid`` (or its ``action`` page: edit, forget, restore).

    >>> memory_url("../../lessons"), memory_url("x/forget", "edit"), memory_url("..")
    ('/memories/..%2F..%2Flessons', '/memories/x%2Fforget/edit', '/memories/?id=..')
    """
    return _url("/memories", mid, action, query)


def session_url(sid: str) -> str:
    """The transcript page of session ``sid``.

    >>> session_url("a/b"), session_url(".")
    ('/sessions/a%2Fb', '/sessions/?id=.')
    """
    return _url("/sessions", sid)


def path_segments(request: Request, prefix: str) -> list[str]:
    """The segments of the path after ``prefix`` as the client sent them, each percent-decoded once.

    They are read from the raw path: the decoded one no longer tells a segment boundary from an
    encoded ``/``.

    Raises:
        BadRequest: a segment is not percent-encoded UTF-8.
    """
    raw = request.scope.get("raw_path")
    sent = raw.decode("latin-1") if isinstance(raw, bytes) else quote(request.url.path, safe="/")
    start = sent.find(prefix)
    rest = sent[start + len(prefix) :] if start >= 0 else sent.rpartition(prefix.rstrip("/"))[2].lstrip("/")
    return [_decoded(part) for part in rest.split("/")]


def _decoded(raw: str) -> str:
    try:
        return unquote(raw, errors="strict")
    except UnicodeDecodeError:
        msg = f"the address segment {raw[:80]!r} is not percent-encoded UTF-8"
        raise BadRequest(msg) from None
