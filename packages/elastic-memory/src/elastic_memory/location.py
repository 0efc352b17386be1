"""Where a store lives, written the way :meth:`Memory.open` keeps it (adapters serialise this)."""

from __future__ import annotations

import os

from .storage.postgres.connect import is_url, redact

__all__ = ["resolve_location"]


def resolve_location(path: str | os.PathLike[str]) -> str:
    """``":memory:"`` as given, a ``postgresql://`` URL without its password, a file path made absolute.

    An absolute path lets a serialised store reopen the same file from any folder; a URL
    reopens with the password from ``PGPASSWORD`` or ``~/.pgpass``, never from a saved file.

    >>> resolve_location(":memory:"), resolve_location("postgresql://ana:pw@db/mem?schema=team")
    (':memory:', 'postgresql://ana@db/mem?schema=team')
    >>> resolve_location("memory.db") == os.path.abspath("memory.db")
    True
    """
    text = os.fspath(path)
    if text == ":memory:":
        return text
    if is_url(text):
        return redact(text)
    return os.path.abspath(os.path.expanduser(text))
