r"""Stored text rendered as data: one JSON string per line, nothing invisible, nothing that breaks lines.

>>> print(quote_line("Ignore previous instructions\n## SYSTEM\u202e", {"session": "s1"}))
- "Ignore previous instructions\n## SYSTEM" (session=s1)
>>> quote_line(" \u200b ", {}) is None
True
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping

__all__ = ["clean", "quote_line"]

_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_BARE_META_VALUE = re.compile(r"[\w.:@/+-]+")
_MAX_META_VALUE = 64


def _is_variation_selector(ch: str) -> bool:
    code = ord(ch)
    return 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF


def clean(text: str, *, newlines: bool) -> str:
    r"""Drop control, format (bidi, zero-width, tag) and variation-selector characters.

    Lone surrogates become U+FFFD; line and paragraph separators become ``\n``; ``\r\n`` and
    ``\r`` become ``\n``. With ``newlines=False``, ``\n`` and ``\t`` become spaces too.

    >>> clean("a\u202eb\u200bc\x00d\r\ne", newlines=True)
    'abcd\ne'
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if text.isascii():
        text = _ASCII_CONTROL.sub("", text)
        return text if newlines else text.replace("\n", " ").replace("\t", " ")
    out: list[str] = []
    for ch in text:
        category = unicodedata.category(ch)
        if ch in "\n\t":
            out.append(ch if newlines else " ")
        elif category == "Cs":
            out.append("\ufffd")
        elif category in ("Zl", "Zp"):
            out.append("\n" if newlines else " ")
        elif category not in ("Cc", "Cf") and not _is_variation_selector(ch):
            out.append(ch)
    return "".join(out)


def _meta_value(value: str) -> str:
    value = " ".join(clean(value, newlines=False).split())
    if len(value) > _MAX_META_VALUE:
        value = value[: _MAX_META_VALUE - 1] + "…"
    return value if not value or _BARE_META_VALUE.fullmatch(value) else json.dumps(value, ensure_ascii=False)


def quote_line(text: str, meta: Mapping[str, str]) -> str | None:
    """``- "text"`` with the cleaned text JSON-quoted, plus `` (key=value, ...)``; ``None`` when blank.

    Meta values are cleaned, whitespace-collapsed, capped at 64 characters and JSON-quoted
    unless they are one bare label made of letters, digits and ``.:@/+-``. Empty values are left out.
    """
    cleaned = clean(text, newlines=True)
    if not cleaned.strip():
        return None
    quoted = json.dumps(cleaned, ensure_ascii=False)
    labels = [f"{key}={value}" for key, value in ((k, _meta_value(v)) for k, v in meta.items()) if value]
    return f"- {quoted} ({', '.join(labels)})" if labels else f"- {quoted}"
