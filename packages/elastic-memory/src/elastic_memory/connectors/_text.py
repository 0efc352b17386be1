"""The text of a Markdown note, parsed (pure): code masking, frontmatter, hashtags, title, tokens."""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass
from typing import Any

from ..types import MemoryType

__all__ = [
    "BadFrontmatter",
    "Fields",
    "hashtags",
    "mask_code",
    "merge_tags",
    "parse_frontmatter",
    "split_frontmatter",
    "title_of",
]

_OPEN_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CLOSE_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*\r?\n?$")
_INLINE_CODE = re.compile(r"(?<!`)(`+)(?!`).+?(?<!`)\1(?!`)", re.S)
_CLOSE_FRONTMATTER = re.compile(r"^(?:---|\.\.\.)[ \t]*\r?$", re.M)
_HASHTAG = re.compile(r"(?<!\S)#([\w/-]+)")
_H1 = re.compile(r"^#[ \t]+(.+?)[ \t#]*$", re.M)
#: Frontmatter keys that map to fields; every other key goes to metadata.
FIELD_KEYS = ("type", "importance", "pinned", "tags")
#: Bounds on a frontmatter's converted size: a YAML alias bomb is refused, not expanded.
_MAX_NODES = 10_000
_MAX_DEPTH = 32
_MAX_TAG = 256


class BadFrontmatter(Exception):
    """The frontmatter is not a YAML mapping of bounded size (the note is read without it)."""


@dataclass(frozen=True)
class Fields:
    """What a note's frontmatter says, with defaults for missing or unusable values."""

    type: MemoryType = MemoryType.SEMANTIC
    importance: float = 0.5
    pinned: bool = False
    tags: tuple[str, ...] = ()
    title: str | None = None
    metadata: dict[str, Any] | None = None


def mask_code(text: str) -> str:
    r"""``text`` with fenced code blocks and inline code spans blanked out.

    >>> mask_code("a `#x` b\n```\n#y\n```\nc")
    'a   b\n\n\n\nc'
    """
    out: list[str] = []
    fence: str | None = None
    for line in text.splitlines(keepends=True):
        if fence is None:
            opening = _OPEN_FENCE.match(line)
            if opening is None:
                out.append(line)
                continue
            fence = opening.group(1)
        else:
            closing = _CLOSE_FENCE.match(line)
            if closing and closing.group(1)[0] == fence[0] and len(closing.group(1)) >= len(fence):
                fence = None
        out.append("\n" if line.endswith("\n") else "")
    return _INLINE_CODE.sub(" ", "".join(out))


def split_frontmatter(text: str) -> tuple[str | None, str]:
    r"""The YAML between a leading ``---`` line and the next ``---`` (or ``...``) line, and the body.

    >>> split_frontmatter("---\ntags: [a]\n---\n# Title\n")
    ('tags: [a]\n', '# Title\n')
    >>> split_frontmatter("no frontmatter")
    (None, 'no frontmatter')
    """
    first, _, rest = text.partition("\n")
    if first.rstrip() != "---":
        return None, text
    closing = _CLOSE_FRONTMATTER.search(rest)
    if closing is None:
        return None, text
    return rest[: closing.start()], rest[closing.end() :].lstrip("\r\n")


def parse_frontmatter(yaml_text: str) -> Fields:
    """The fields of a frontmatter block.

    Raises:
        BadFrontmatter: The YAML does not parse, is not a mapping, or is too large or deep.
    """
    # Imported here: PyYAML takes ~45 ms to import, and only notes with frontmatter need it.
    # PyYAML ships no stubs and types-PyYAML is not a lint dependency.
    import yaml  # type: ignore[import-untyped]  # noqa: PLC0415

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C loader when PyYAML was built with libyaml
    try:
        data = yaml.load(yaml_text, Loader=loader)  # a safe loader: plain data only, never objects
    except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError) as e:
        raise BadFrontmatter(str(e)) from e
    if data is None:
        return Fields()
    if not isinstance(data, dict):
        msg = f"frontmatter is a {type(data).__name__}, not a mapping"
        raise BadFrontmatter(msg)
    safe = _json_safe(data, [_MAX_NODES], 0)
    kind = str(safe.get("type", "")).strip().lower()
    importance = safe.get("importance")
    title = safe.get("title")
    return Fields(
        type=MemoryType(kind) if kind in {t.value for t in MemoryType} else MemoryType.SEMANTIC,
        importance=_unit(importance) if _is_number(importance) else 0.5,
        pinned=safe.get("pinned") is True,
        tags=_tags(safe.get("tags")),
        title=title.strip() if isinstance(title, str) and title.strip() else None,
        metadata={k: v for k, v in safe.items() if k not in FIELD_KEYS},
    )


def hashtags(masked: str) -> list[str]:
    """Obsidian ``#tags`` of code-masked text: lowercased, in order, each once.

    A tag follows whitespace or the start of a line and has a non-digit, so headings
    (``# Title``), URL fragments (``a.com/#x``) and numbers (``#123``) are not tags.

    >>> hashtags("#Work and #work, # heading, https://a.com/#frag, #123 #a/b-c")
    ['work', 'a/b-c']
    """
    out = (_clean_tag(t) for t in _HASHTAG.findall(masked) if not t.isdigit())
    return list(dict.fromkeys(t for t in out if t))


def title_of(masked: str) -> str | None:
    """The text of the first ``# `` heading of code-masked text, if any."""
    heading = _H1.search(masked)
    return heading.group(1).strip() if heading else None


def merge_tags(*groups: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Tags in order of first appearance, each once."""
    return tuple(dict.fromkeys(t for group in groups for t in group))


# -------------------------------------------------------------------- helpers
def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _unit(value: float) -> float:
    return min(1.0, max(0.0, float(value)))


def _clean_tag(tag: str) -> str:
    tag = tag.strip().lstrip("#").strip().lower()
    return tag if len(tag) <= _MAX_TAG else ""


def _tags(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        items: list[Any] = value.split(",")
    elif isinstance(value, list):
        items = value
    else:
        return ()
    cleaned = (_clean_tag(str(v)) for v in items if isinstance(v, str) or _is_number(v))
    return tuple(dict.fromkeys(t for t in cleaned if t))


_DROP = object()


def _json_safe(value: Any, budget: list[int], depth: int) -> Any:
    """``value`` as JSON-ready data: dates as ISO strings, non-finite and unknown values dropped."""
    budget[0] -= 1
    if budget[0] < 0 or depth > _MAX_DEPTH:
        msg = f"frontmatter exceeds {_MAX_NODES} values or {_MAX_DEPTH} levels of nesting"
        raise BadFrontmatter(msg)
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else _DROP
    if isinstance(value, dt.date):  # datetime is a date too
        return value.isoformat()
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=repr) if isinstance(value, set | frozenset) else value
        converted = (_json_safe(v, budget, depth + 1) for v in items)
        return [v for v in converted if v is not _DROP]
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            name = key.isoformat() if isinstance(key, dt.date) else key
            if isinstance(name, bool | int | float | str):
                converted_item = _json_safe(item, budget, depth + 1)
                if converted_item is not _DROP:
                    out[str(name)] = converted_item
        return out
    return _DROP
