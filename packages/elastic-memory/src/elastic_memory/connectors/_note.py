"""A note as read from a folder (pure): its stable id, its fields, and the parse of its bytes."""

from __future__ import annotations

import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from .._validate import RESERVED_PREFIX
from ..types import MemoryType
from . import _rank, _text

__all__ = ["NAMESPACE", "Note", "Parsed", "ScanReport", "note_id", "parse_note"]

#: The uuid5 namespace of note ids. Fixed forever: changing it would re-id every ingested note.
NAMESPACE = uuid.UUID("1dccc681-e205-4994-b265-18f7acdb6311")


def note_id(rel_path: str) -> str:
    """The stable id of the note at root-relative POSIX path ``rel_path``."""
    return str(uuid.uuid5(NAMESPACE, rel_path))


@dataclass(frozen=True)
class Note:
    """One note: its body (``content``, frontmatter removed) and the fields its frontmatter set."""

    id: str
    rel_path: str
    title: str
    content: str
    type: MemoryType
    importance: float
    pinned: bool
    tags: tuple[str, ...]
    metadata: dict[str, Any]
    mtime_ns: int
    size: int


@dataclass(frozen=True)
class ScanReport:
    """What the last scan saw.

    ``scanned`` counts note files (by extension, not hidden); ``parsed`` the notes read;
    ``skipped_binary`` binary or non-UTF-8 files (or names); ``skipped_symlink`` and
    ``skipped_ignored`` files and directories; ``bad_frontmatter`` notes read without their
    malformed frontmatter; ``errors`` entries that vanished or could not be read.
    """

    scanned: int = 0
    parsed: int = 0
    skipped_large: int = 0
    skipped_binary: int = 0
    skipped_symlink: int = 0
    skipped_ignored: int = 0
    bad_frontmatter: int = 0
    errors: int = 0


@dataclass(frozen=True)
class Parsed:
    """A cache entry: what one file held at (mtime_ns, size); ``note`` is None for a binary file."""

    mtime_ns: int
    size: int
    note: Note | None
    bad: bool = False
    body: Counter[str] | None = None
    title: Counter[str] | None = None


#: What a frontmatter key the library reserves (``em_...``) is stored as: ``note_em_...``.
RENAMED = "note_"


def _own_keys(metadata: dict[str, Any]) -> dict[str, Any]:
    """Frontmatter as metadata; a key with the library's prefix (``em_flagged``) is kept as ``note_em_flagged``."""
    return {(RENAMED + k if k.startswith(RESERVED_PREFIX) else k): v for k, v in metadata.items()}


def parse_note(rel_path: str, data: bytes, mtime_ns: int, size: int, *, counters: bool = True) -> Parsed:
    """Parse one file's bytes into a note (binary or non-UTF-8 bytes give no note).

    ``counters=False`` leaves out the token counts that only a folder search needs.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return Parsed(mtime_ns, size, None)
    if "\x00" in text:
        return Parsed(mtime_ns, size, None)
    text = text.removeprefix("\ufeff")
    yaml_text, body = _text.split_frontmatter(text)
    fields, bad = _text.Fields(), False
    if yaml_text is not None:
        try:
            fields = _text.parse_frontmatter(yaml_text)
        except _text.BadFrontmatter:
            bad, body = True, text  # ignored: read as plain text, nothing lost
    masked = _text.mask_code(body)
    title = fields.title or _text.title_of(masked) or PurePosixPath(rel_path).stem
    note = Note(
        id=note_id(rel_path),
        rel_path=rel_path,
        title=title,
        content=body,
        type=fields.type,
        importance=fields.importance,
        pinned=fields.pinned,
        tags=_text.merge_tags(fields.tags, _text.hashtags(masked)),
        metadata=_own_keys(fields.metadata or {}),
        mtime_ns=mtime_ns,
        size=size,
    )
    if not counters:
        return Parsed(mtime_ns, size, note, bad)
    return Parsed(mtime_ns, size, note, bad, Counter(_rank.tokens(body)), Counter(_rank.tokens(title)))
