r"""NUL-safe text for PostgreSQL, whose ``text`` cannot hold U+0000 (SQLite's can).

Every string bound or read on the store's connections goes through a reversible escape:
U+0001 becomes U+0001 U+0001 and U+0000 becomes U+0001 U+0002. Text without either
character (nearly all of it) is stored as it is, so SQL comparisons, full text and
indexes see the same strings; content with NUL bytes round-trips byte for byte.

>>> escape("a\x00b\x01c") == "a\x01\x02b\x01\x01c"
True
>>> unescape(escape("\x00\x01\x01\x00 x")) == "\x00\x01\x01\x00 x"
True
"""

from __future__ import annotations

import re
from typing import Any

from psycopg.types.string import StrDumperUnknown, TextLoader

__all__ = ["NulSafeDumper", "NulSafeLoader", "escape", "unescape"]

_ESCAPED = re.compile("\x01([\x01\x02])")


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


class NulSafeDumper(StrDumperUnknown):
    """Binds a ``str`` escaped (as psycopg's default, an untyped literal the server casts)."""

    def dump(self, obj: str) -> Any:
        """The escaped text."""
        return super().dump(escape(obj))


class NulSafeLoader(TextLoader):
    """Reads ``text`` unescaped."""

    def load(self, data: Any) -> str:
        """The unescaped text."""
        return unescape(str(super().load(data)))
