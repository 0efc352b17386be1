r"""NUL-safe text for PostgreSQL, whose ``text`` and ``jsonb`` cannot hold U+0000 (SQLite's can).

Every string bound or read on the store's connections goes through a reversible escape:
U+0001 becomes U+0001 U+0001 and U+0000 becomes U+0001 U+0002. Text without either
character (nearly all of it) is stored as it is, so SQL comparisons, full text and
indexes see the same strings; content with NUL bytes round-trips byte for byte.

JSON (the ``tags`` and ``metadata`` columns) gets the same escape inside its strings, at the
level of JSON's ``\u`` escapes, so the strings ``jsonb`` holds are escaped exactly as bound
filter values are, and a tag or metadata value with NUL is stored like any other.

>>> escape("a\x00b\x01c") == "a\x01\x02b\x01\x01c"
True
>>> unescape(escape("\x00\x01\x01\x00 x")) == "\x00\x01\x01\x00 x"
True
>>> json_escape('["a\\u0000", "\\\\u0000"]')
'["a\\u0001\\u0002", "\\\\u0000"]'
>>> json_unescape(json_escape('{"k": "\\u0001\\u0000"}'))
'{"k": "\\u0001\\u0000"}'
"""

from __future__ import annotations

import re

__all__ = ["JsonText", "escape", "json_escape", "json_unescape", "unescape"]

_ESCAPED = re.compile("\x01([\x01\x02])")
# One JSON escape at a time, left to right, so "\\u0000" (a backslash, then text) is left alone.
_JSON_ESCAPE = re.compile(r"\\(u000[01]|.)")
_JSON_ESCAPED = re.compile(r"\\(u0001\\u000[12]|.)")


def escape(text: str) -> str:
    """``text`` with U+0001 doubled and U+0000 as U+0001 U+0002."""
    if "\x00" not in text and "\x01" not in text:
        return text
    return text.replace("\x01", "\x01\x01").replace("\x00", "\x01\x02")


def unescape(text: str) -> str:
    """The inverse of :func:`escape`."""
    if "\x01" not in text:
        return text
    return _ESCAPED.sub(lambda m: "\x01" if m.group(1) == "\x01" else "\x00", text)


def json_escape(text: str) -> str:
    """Compact JSON text (control characters as ``u`` escapes) with :func:`escape` applied inside its strings."""
    if "\\u000" not in text:
        return text

    def one(m: re.Match[str]) -> str:
        code = m.group(1)
        return {"u0000": "\\u0001\\u0002", "u0001": "\\u0001\\u0001"}.get(code, m.group(0))

    return _JSON_ESCAPE.sub(one, text)


def json_unescape(text: str) -> str:
    """The inverse of :func:`json_escape` (on ``jsonb``'s output, which writes U+0001 as a ``u`` escape)."""
    if "\\u0001" not in text:
        return text

    def one(m: re.Match[str]) -> str:
        code = m.group(1)
        return {"u0001\\u0002": "\\u0000", "u0001\\u0001": "\\u0001"}.get(code, m.group(0))

    return _JSON_ESCAPED.sub(one, text)


class JsonText(str):
    """JSON text to bind to a ``jsonb`` column (escaped by :class:`JsonTextDumper`)."""

    __slots__ = ()
