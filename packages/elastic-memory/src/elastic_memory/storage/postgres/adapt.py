"""psycopg adapters for the NUL-safe text of :mod:`.pg_text` (imported only with the postgres extra)."""

from __future__ import annotations

from typing import Any

from psycopg.types.string import StrDumperUnknown, TextLoader

from .text import escape, json_escape, json_unescape, unescape

__all__ = ["JsonTextDumper", "JsonTextLoader", "NulSafeDumper", "NulSafeLoader"]


class NulSafeDumper(StrDumperUnknown):
    """Binds a ``str`` escaped (as psycopg's default, an untyped literal the server casts)."""

    def dump(self, obj: str) -> Any:
        """The escaped text."""
        return super().dump(escape(obj))


class JsonTextDumper(StrDumperUnknown):
    """Binds :class:`~.pg_text.JsonText` with its strings escaped."""

    def dump(self, obj: str) -> Any:
        """The escaped JSON text."""
        return super().dump(json_escape(obj))


class NulSafeLoader(TextLoader):
    """Reads ``text`` unescaped."""

    def load(self, data: Any) -> str:
        """The unescaped text."""
        return unescape(str(super().load(data)))


class JsonTextLoader(TextLoader):
    """Reads ``jsonb`` as JSON text, its strings unescaped (the rows carry JSON text, as SQLite's do)."""

    def load(self, data: Any) -> str:
        """The unescaped JSON text."""
        return json_unescape(str(super().load(data)))
