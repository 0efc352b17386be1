"""Reading query and form parameters: each bad value is a :class:`BadRequest` that names it."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl

from starlette.requests import Request

from ..errors import UsageError

__all__ = [
    "MAX_CONTENT",
    "MAX_FORM_BYTES",
    "MAX_ID",
    "BadRequest",
    "Conflict",
    "Forbidden",
    "NotFound",
    "choice",
    "form",
    "integer",
    "json_object",
    "number",
    "text",
]

MAX_TEXT = 20_000
#: The longest memory or session id the store accepts.
MAX_ID = 256
#: The longest content (and metadata) the edit form takes: the store's own limit on content.
MAX_CONTENT = 1_000_000
#: The largest form body read: MAX_CONTENT characters, percent-encoded UTF-8, with room to spare.
MAX_FORM_BYTES = 12 * MAX_CONTENT


class BadRequest(UsageError):
    """A parameter the inspector cannot use: shown as a 400 page with this message."""


class NotFound(UsageError):
    """No such memory, fact, session or entity: shown as a 404 page."""


class Conflict(UsageError):
    """The thing changed since its form was shown; writing would undo that change: a 409 page."""


def text(params: Mapping[str, str], name: str, default: str = "", *, limit: int = MAX_TEXT) -> str:
    """A string parameter, at most ``limit`` characters and free of NUL."""
    value = params.get(name, default)
    if len(value) > limit:
        msg = f"{name} is {len(value)} characters long; at most {limit} are accepted"
        raise BadRequest(msg)
    if "\x00" in value:
        msg = f"{name} contains a NUL character"
        raise BadRequest(msg)
    return value


def integer(params: Mapping[str, str], name: str, default: int, *, low: int, high: int) -> int:
    """An integer parameter within ``[low, high]``."""
    raw = params.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        msg = f"{name} must be a whole number from {low} to {high}, got {raw[:40]!r}"
        raise BadRequest(msg) from None
    if not low <= value <= high:
        msg = f"{name} must be from {low} to {high}, got {value}"
        raise BadRequest(msg)
    return value


def number(params: Mapping[str, str], name: str, *, low: float, high: float) -> float | None:
    """A decimal parameter within ``[low, high]``, or ``None`` when empty."""
    raw = params.get(name, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not low <= value <= high:
        msg = f"{name} must be a number from {low:g} to {high:g}, got {raw[:40]!r}"
        raise BadRequest(msg)
    return value


def choice(params: Mapping[str, str], name: str, options: tuple[str, ...], default: str) -> str:
    """One of ``options`` (the first listed when absent)."""
    value = params.get(name, "").strip() or default
    if value not in options:
        msg = f"{name} must be one of {', '.join(options)}; got {value[:40]!r}"
        raise BadRequest(msg)
    return value


def json_object(raw: str, name: str) -> dict[str, Any]:
    """A JSON object typed into a form field (empty: ``{}``)."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        msg = f"{name} is not valid JSON ({exc.msg} at character {exc.pos})"
        raise BadRequest(msg) from None
    if not isinstance(value, dict):
        msg = f'{name} must be a JSON object such as {{"project": "kayak"}}'
        raise BadRequest(msg)
    return value


async def form(request: Request) -> dict[str, str]:
    """A URL-encoded form body (the inspector's forms send nothing else), read up to :data:`MAX_FORM_BYTES`."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_FORM_BYTES:
            msg = f"the form is larger than {MAX_FORM_BYTES // 1_000_000} MB"
            raise BadRequest(msg)
        chunks.append(chunk)
    body = b"".join(chunks)
    try:
        return dict(parse_qsl(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False))
    except UnicodeDecodeError:
        msg = "the form is not UTF-8"
        raise BadRequest(msg) from None


class Forbidden(UsageError):
    """A write the inspector refuses (read-only, or a form without this process's CSRF token): 403."""
