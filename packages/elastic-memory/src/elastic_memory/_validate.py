"""Argument validation and row building for writes (pure).

Every public write goes through :func:`build_row`, so a bad argument is refused before
any I/O with a message that says what to do.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import unicodedata
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NoReturn

from .errors import UsageError
from .filters import check_text, finite, to_timestamp
from .storage.queries import encode_json
from .types import KINDS, MemoryType, RecallMode, Scope, Source
from .users import check_user, owner_key, split_owner

__all__ = [
    "MAX_CONTENT_CHARS",
    "MAX_METADATA_DEPTH",
    "RESERVED_PREFIX",
    "build_row",
    "check_json_depth",
    "check_k",
    "check_mode",
    "check_reserved",
    "check_text",
    "content_hash",
    "library_keys",
    "normalise",
]

#: The longest content one memory may hold (about 250k tokens); split longer text.
MAX_CONTENT_CHARS = 1_000_000
#: How deep metadata may nest (a dict holding a list holding a dict is three levels).
MAX_METADATA_DEPTH = 64
#: Metadata keys starting with this belong to the library (``em_flagged`` marks a turn the guards
#: caught): only its own writers set them; every public write refuses them.
RESERVED_PREFIX = "em_"
_ID = re.compile(r"[^\x00-\x1f\ud800-\udfff]{1,256}")
#: A JSON string (its brackets are text) or a bracket: what :func:`check_json_depth` reads.
_JSON_NESTING = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]')


def normalise(content: str) -> str:
    """NFKC, whitespace runs collapsed, ends stripped: what the content hash is taken of.

    ``str.split()`` splits on the characters a regex's whitespace class matches (those of
    ``str.isspace``), at a quarter of a regex substitution's cost.
    """
    return " ".join(unicodedata.normalize("NFKC", content).split())


def content_hash(content: str) -> str:
    """SHA-256 hex of :func:`normalise` ``(content)``.

    >>> content_hash("a  b") == content_hash(" a b ")
    True
    """
    return hashlib.sha256(normalise(content).encode("utf-8", "surrogatepass")).hexdigest()


_MEMBERS: dict[type[Any], dict[str, Any]] = {}


def _members(enum: type[Any]) -> dict[str, Any]:
    members = _MEMBERS.get(enum)
    if members is None:
        members = _MEMBERS[enum] = {e.value: e for e in enum}
    return members


def check_enum(name: str, value: Any, enum: type[Any]) -> Any:
    """A member of ``enum`` (given as itself or its value)."""
    if isinstance(value, str) and (member := _members(enum).get(value)) is not None:
        return member  # the common case, without Enum's call machinery
    try:
        return enum(value)
    except ValueError:
        msg = f"{name} must be one of {[e.value for e in enum]}, got {value!r}"
        raise UsageError(msg) from None


def check_mode(mode: Any) -> RecallMode:
    """A :class:`RecallMode` from a mode name."""
    return check_enum("mode", mode, RecallMode)  # type: ignore[no-any-return]


def check_k(k: Any) -> int:
    """``k`` as an int in [1, 1000]."""
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 1000:
        msg = f"k must be an integer from 1 to 1000, got {k!r}"
        raise UsageError(msg)
    return k


def check_id(value: Any, name: str = "id") -> str:
    """A memory id: a non-empty string of at most 256 printable characters (valid Unicode)."""
    if not isinstance(value, str) or not _ID.fullmatch(value):
        msg = (
            f"{name} must be a non-empty string of at most 256 characters without control characters "
            f"or lone surrogates, got {value!r}"
        )
        raise UsageError(msg)
    return value


def check_ids(ids: Any) -> list[str]:
    """One id or a list of ids as a list."""
    if isinstance(ids, str):
        return [check_id(ids)]
    if isinstance(ids, bytes | Mapping) or not isinstance(ids, Iterable):
        msg = f"pass a memory id or a list of ids, got {type(ids).__name__}"
        raise UsageError(msg)
    return [check_id(i) for i in ids]


def unit(name: str, value: Any) -> float:
    """A number, clamped to [0, 1]."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or (isinstance(value, float) and math.isnan(value))
    ):
        msg = f"{name} must be a number (it is clamped to [0, 1]), got {value!r}"
        raise UsageError(msg)
    return 1.0 if value > 1 else 0.0 if value < 0 else float(value)


def check_content(content: Any) -> str:
    """Non-empty text of at most :data:`MAX_CONTENT_CHARS` characters."""
    if not isinstance(content, str):
        msg = f"content must be a str, got {type(content).__name__}"
        raise UsageError(msg)
    if not content.strip():
        msg = "content is empty: there is nothing to remember"
        raise UsageError(msg)
    check_text(content, "content")
    if len(content) > MAX_CONTENT_CHARS:
        msg = f"content has {len(content)} characters, more than {MAX_CONTENT_CHARS}; split it into smaller memories"
        raise UsageError(msg)
    return content


def clean_query(query: str, limit: int = 20_000) -> str:
    """A query made safe for any tokenizer: at most ``limit`` characters, no lone surrogates, no NUL."""
    return query[:limit].encode("utf-8", "replace").decode("utf-8").replace("\x00", " ")


def check_tags(tags: Any) -> list[str]:
    """A sorted list of distinct non-empty tag strings."""
    if tags is None:
        return []
    if isinstance(tags, str) or not isinstance(tags, Sequence | set | frozenset):
        msg = f"tags must be a list of strings, got {tags!r}"
        raise UsageError(msg)
    out = []
    for tag in tags:
        if not isinstance(tag, str) or not tag.strip() or len(tag) > 256:
            msg = f"each tag must be a non-empty string of at most 256 characters, got {tag!r}"
            raise UsageError(msg)
        out.append(check_text(tag, "tags"))
    return sorted(set(out))


def check_reserved(metadata: Any) -> None:
    """Refuse metadata a caller passes with the library's own keys (:data:`RESERVED_PREFIX`).

    Raises:
        UsageError: a key starts with ``em_``; the message names them.
    """
    if not isinstance(metadata, Mapping):
        return  # not a dict: check_metadata says so
    reserved = sorted(k for k in metadata if isinstance(k, str) and k.startswith(RESERVED_PREFIX))
    if reserved:
        msg = (
            f"metadata keys starting with {RESERVED_PREFIX!r} belong to the library, got {reserved}; "
            f"rename them (such as {reserved[0].removeprefix(RESERVED_PREFIX) or 'flag'!r})"
        )
        raise UsageError(msg)


def library_keys(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The library's own keys of stored ``metadata``: an update that replaces the metadata keeps them.

    >>> library_keys({"em_flagged": "instruction", "project": "kayak"})
    {'em_flagged': 'instruction'}
    """
    return {k: v for k, v in metadata.items() if k.startswith(RESERVED_PREFIX)}


def check_metadata(metadata: Any, *, library: bool = False) -> dict[str, Any]:
    """A JSON-serialisable dict with string keys (no NaN or infinity), at most :data:`MAX_METADATA_DEPTH` deep.

    Keys of the library's (:data:`RESERVED_PREFIX`) are refused unless ``library`` (its own writers).
    """
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        msg = f"metadata must be a dict, got {type(metadata).__name__}"
        raise UsageError(msg)
    if any(not isinstance(k, str) for k in metadata):
        msg = "metadata keys must be strings"
        raise UsageError(msg)
    if not library:
        check_reserved(metadata)
    _walk_metadata(metadata)
    try:
        return json.loads(json.dumps(metadata, allow_nan=False))  # type: ignore[no-any-return]
    except (TypeError, ValueError) as e:
        msg = f"metadata must be JSON-serialisable (str, numbers, bool, None, lists, dicts): {e}"
        raise UsageError(msg) from e


def _walk_metadata(metadata: Mapping[Any, Any]) -> bool:
    """Refuse metadata nested too deep or holding text that is not valid Unicode, without recursion.

    Returns True when every dict inside has string keys only. Plain dicts, lists, strings and
    numbers take the fast path (a write batch walks every value); a place's name is spelled
    out only for an error or a container.
    """
    str_keys = True
    stack: list[tuple[Any, str, int]] = [(metadata, "metadata", 1)]
    while stack:
        value, where, depth = stack.pop()
        if depth > MAX_METADATA_DEPTH:
            _too_deep("metadata")
        mapping = type(value) is dict or isinstance(value, Mapping)
        for key, item in value.items() if mapping else enumerate(value):
            if mapping:
                if isinstance(key, str):
                    if not key.isascii():
                        check_text(key, "a metadata key" if depth == 1 else f"a key in {where}")
                else:
                    str_keys = False
            kind = type(item)
            if kind is int or kind is float or kind is bool or item is None:  # identity: a metaclass may lie
                continue
            if kind is str or isinstance(item, str):
                if not item.isascii():
                    check_text(item, f"{where}[{key!r}]")
            elif kind is dict or kind is list or isinstance(item, Mapping | list | tuple):
                stack.append((item, f"{where}[{key!r}]", depth + 1))
    return str_keys


def check_json_depth(text: str, name: str = "metadata") -> None:
    """Refuse JSON ``text`` that nests deeper than :data:`MAX_METADATA_DEPTH`, before it is parsed.

    ``json.loads`` recurses, so text nested thousands deep fails there with a RecursionError.

    >>> check_json_depth('{"a": {"b": "[[["}}')
    >>> check_json_depth("[" * 65 + "]" * 65, "--metadata")
    Traceback (most recent call last):
    ...
    elastic_memory.UsageError: --metadata nests deeper than 64 levels (MAX_METADATA_DEPTH); flatten it
    """
    depth = 0
    for match in _JSON_NESTING.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth > MAX_METADATA_DEPTH:
                _too_deep(name)
        elif token in ("]", "}"):
            depth -= 1


def _too_deep(name: str) -> NoReturn:
    msg = f"{name} nests deeper than {MAX_METADATA_DEPTH} levels (MAX_METADATA_DEPTH); flatten it"
    raise UsageError(msg)


def encode_metadata(metadata: Any) -> str:
    """:func:`check_metadata` and the column's compact, key-sorted JSON.

    >>> encode_metadata({"b": 1, "a": [True, None]})
    '{"a":[true,null],"b":1}'
    """
    if not metadata and isinstance(metadata, Mapping | type(None)):
        return "{}"
    if isinstance(metadata, Mapping) and _walk_metadata(metadata):
        with contextlib.suppress(TypeError, ValueError):
            return json.dumps(metadata, allow_nan=False, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    # Not a dict, non-string keys, NaN, odd values: check_metadata says what is wrong (or,
    # for nested non-string keys, turns them into strings as JSON does).
    return encode_json(check_metadata(metadata, library=True))


def check_scope(scope: Any, pool: Any) -> tuple[str, str | None]:
    """A scope and its pool: SHARED needs a pool name, the others take none."""
    s = check_enum("scope", scope, Scope)
    if s is Scope.SHARED:
        if not isinstance(pool, str) or not pool.strip():
            msg = "a shared memory needs pool='<pool name>' naming the agents' shared pool"
            raise UsageError(msg)
        return s.value, check_text(pool, "pool")
    if pool is not None:
        msg = f"pool={pool!r} only applies to scope='shared'; drop it or use scope='shared'"
        raise UsageError(msg)
    return s.value, None


def _optional_str(name: str, value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value or len(value) > 256:
        msg = f"{name} must be a non-empty string of at most 256 characters or None, got {value!r}"
        raise UsageError(msg)
    return check_text(value, name)


def owner_of(default_agent: str, agent_id: Any, user_id: Any) -> str:
    """The owner key of a write: ``default_agent`` unless ``agent_id`` or ``user_id`` says otherwise."""
    if agent_id is None and user_id is None:
        return default_agent
    base_agent, base_user = split_owner(default_agent)
    agent = base_agent if agent_id is None else check_id(agent_id, "agent_id")
    user = check_user(user_id) if user_id is not None else (base_user if agent_id is None else None)
    return owner_key(agent, user)


def check_kind(kind: Any) -> str:
    """``kind`` if it is one of :data:`KINDS`."""
    if kind not in KINDS:
        msg = f"kind must be one of {list(KINDS)}, got {kind!r}"
        raise UsageError(msg)
    return str(kind)


def build_row(
    content: Any,
    *,
    now: float,
    default_agent: str,
    id: Any = None,
    type: Any = "semantic",
    importance: Any = 0.5,
    confidence: Any = 1.0,
    source: Any = "agent",
    tags: Any = None,
    metadata: Any = None,
    agent_id: Any = None,
    scope: Any = "private",
    pool: Any = None,
    session_id: Any = None,
    pinned: Any = False,
    ttl: Any = None,
    expires_at: Any = None,
    kind: str = "note",
    user_id: Any = None,
    refuse_reserved: bool = False,
) -> dict[str, Any]:
    """A full ``memories`` row (without ``seq``) from remember()-style arguments.

    ``default_agent`` is the owner key (:mod:`elastic_memory.users`) rows go to when neither
    ``agent_id`` nor ``user_id`` is given; ``user_id`` alone keeps its agent, ``agent_id`` alone
    means that agent's own rows. ``refuse_reserved`` is for a public write: its ``metadata`` may
    not hold the library's keys (:func:`check_reserved`); the library's own writers leave it off.
    """
    if refuse_reserved:
        check_reserved(metadata)
    text = check_content(content)
    scope_value, pool_value = check_scope(scope, pool)
    if not isinstance(pinned, bool):
        msg = f"pinned must be True or False, got {pinned!r}"
        raise UsageError(msg)
    if ttl is not None and expires_at is not None:
        msg = "pass either ttl (seconds from now) or expires_at (a time), not both"
        raise UsageError(msg)
    expiry = None
    if ttl is not None:
        seconds = finite(ttl)
        if seconds is None or seconds <= 0:
            msg = f"ttl must be a positive number of seconds, got {ttl!r}"
            raise UsageError(msg)
        expiry = now + seconds
    elif expires_at is not None:
        expiry = to_timestamp("expires_at", expires_at)
    agent = owner_of(default_agent, agent_id, user_id)
    return {
        "id": check_id(id) if id is not None else str(uuid.uuid4()),
        "agent_id": agent,
        "scope": scope_value,
        "pool": pool_value,
        "type": check_enum("type", type, MemoryType).value,
        "content": text,
        "content_hash": content_hash(text),
        "importance": unit("importance", importance),
        "confidence": unit("confidence", confidence),
        "source": check_enum("source", source, Source).value,
        "pinned": int(pinned),
        "tags": "[]" if tags is None else encode_json(check_tags(tags)),
        "metadata": encode_metadata(metadata),
        "session_id": _optional_str("session_id", session_id),
        "created_at": now,
        "updated_at": now,
        "accessed_at": now,
        "access_count": 0,
        "retention_strength": 1.0,
        "archived": 0,
        "deleted_at": None,
        "expires_at": expiry,
        "has_vector": 0,
        "kind": check_kind(kind),
    }


_FACT_KEY = re.compile(r"[a-z][a-z0-9_]*(\.[a-z0-9_]+)*")
#: Longest fact value accepted from :meth:`Facts.set`.
MAX_FACT_VALUE = 2_000


def check_fact_key(key: Any, reserved: Sequence[str]) -> str:
    """A dotted lowercase key such as ``user.dog_name``, outside the ``reserved`` prefixes."""
    if not isinstance(key, str) or len(key) > 100 or not _FACT_KEY.fullmatch(key):
        msg = (
            f"a fact key is dotted lowercase words such as 'user.dog_name' (letters, digits, '_', at most "
            f"100 characters), got {key!r}"
        )
        raise UsageError(msg)
    for prefix in reserved:
        if key.startswith(prefix):
            msg = f"fact key {key!r} uses the reserved prefix {prefix!r}; these keys belong to the host"
            raise UsageError(msg)
    return key


def check_fact_value(value: Any) -> str:
    """A fact value: a non-empty string (numbers and bools are turned into text)."""
    if isinstance(value, bool | int | float) and not (isinstance(value, float) and not math.isfinite(value)):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        msg = f"a fact value must be non-empty text (or a number), got {value!r}"
        raise UsageError(msg)
    if len(value) > MAX_FACT_VALUE:
        msg = (
            f"a fact value holds at most {MAX_FACT_VALUE} characters, got {len(value)}; store long text with remember()"
        )
        raise UsageError(msg)
    return check_text(value, "the fact value").strip()


def check_category(category: Any, key: str, profile_keys: Iterable[str] = ()) -> str:
    """``"profile"`` or ``"note"``; ``None`` picks profile for the documented profile keys."""
    if category is None:
        return "profile" if key in set(profile_keys) else "note"
    if category not in ("profile", "note"):
        msg = (
            f"category must be 'profile' (always shown to the model) or 'note' (shown when relevant), got {category!r}"
        )
        raise UsageError(msg)
    return str(category)


def check_path(value: Any, name: str) -> str:
    """A path as text, if the file system can name it (a str or ``os.PathLike``, no NUL, valid Unicode)."""
    try:
        text = os.fspath(value)
        ok = isinstance(text, str) and bool(text) and b"\x00" not in os.fsencode(text)
    except (TypeError, UnicodeEncodeError):
        ok = False
    if not ok:
        msg = f"{name} must be a path the file system can name (text without NUL or lone surrogates), got {value!r}"
        raise UsageError(msg)
    return str(text)


def check_prefix(prefix: Any) -> str | None:
    """A ``tags(prefix=...)`` prefix: text, or ``None`` (or empty) for every tag."""
    if prefix is not None and not isinstance(prefix, str):
        msg = f"prefix must be a string or None, got {prefix!r}"
        raise UsageError(msg)
    return check_text(prefix, "prefix") if prefix else None
