"""Recall filters: parsed and validated from a plain dict, once, before any I/O.

>>> f = Filters.parse({"type": "semantic", "tags": ["prefs"], "metadata": {"n": {"$gte": 2}}})
>>> f.types, f.tags_any, f.metadata
(('semantic',), ('prefs',), (('n', '$gte', 2),))
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import UsageError
from .types import KINDS, UNRECALLED, MemoryType, Scope, Source

__all__ = [
    "MAX_FILTER_CONDITIONS",
    "MAX_FILTER_VALUES",
    "MAX_PATTERN_LENGTH",
    "METADATA_LOGIC",
    "METADATA_OPERATORS",
    "Filters",
    "check_text",
    "with_scope",
]

#: Operators accepted in ``filters={"metadata": {key: {op: value}}}``.
METADATA_OPERATORS = (
    "$eq",
    "$ne",
    "$gt",
    "$gte",
    "$lt",
    "$lte",
    "$in",
    "$nin",
    "$exists",
    "$contains",
    "$icontains",
    "$empty",
    "$like",
    "$ilike",
    "$between",
)
#: Keys of a metadata filter that combine other metadata filters (lists of them, or one for ``$not``).
METADATA_LOGIC = ("$and", "$or", "$not")
#: How deep ``$and``/``$or``/``$not`` may nest.
_MAX_DEPTH = 32
#: The most metadata conditions one filter may hold, ``$and``/``$or``/``$not`` included, at
#: every level (SQLite refuses an expression more than 1,000 nodes deep).
MAX_FILTER_CONDITIONS = 128
#: The most values one filter may list in all (``$in``/``$nin`` items, list filters such as
#: ``tags``), well under the 32,766 parameters SQLite binds to one statement.
MAX_FILTER_VALUES = 10_000
#: The longest ``$like``/``$ilike`` pattern, in characters (SQLite refuses patterns over 50,000 bytes).
MAX_PATTERN_LENGTH = 10_000

_KEYS = (
    "agent_id",
    "scope",
    "pool",
    "type",
    "source",
    "session_id",
    "exclude_session_id",
    "kind",
    "tags",
    "tags_all",
    "min_confidence",
    "min_importance",
    "since",
    "until",
    "pinned",
    "metadata",
)
_METADATA_KEY = re.compile(r"[A-Za-z0-9_\-]+(\.[A-Za-z0-9_\-]+)*")
Scalar = str | int | float | bool | None


def check_text(value: str, name: str) -> str:
    r"""``value`` if it can be stored as UTF-8: no lone surrogates (``"\ud800"``).

    >>> check_text("\ud800", "tags")
    Traceback (most recent call last):
    ...
    elastic_memory.UsageError: tags is not valid Unicode (a lone surrogate at position 0); ...
    """
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as e:
            msg = (
                f"{name} is not valid Unicode (a lone surrogate at position {e.start}); "
                "decode your text properly first (bytes.decode('utf-8'))"
            )
            raise UsageError(msg) from None
    return value


class _Budget:
    """What a filter has used of :data:`MAX_FILTER_CONDITIONS` and :data:`MAX_FILTER_VALUES`."""

    def __init__(self) -> None:
        self.conditions = 0
        self.values = 0

    def condition(self) -> None:
        self.conditions += 1
        if self.conditions > MAX_FILTER_CONDITIONS:
            msg = (
                f"the metadata filter holds more than {MAX_FILTER_CONDITIONS} conditions (MAX_FILTER_CONDITIONS); "
                "use $in with a list of values instead of many $or branches, or split the recall"
            )
            raise UsageError(msg)

    def take(self, count: int, key: str) -> None:
        self.values += count
        if self.values > MAX_FILTER_VALUES:
            msg = (
                f"filters list more than {MAX_FILTER_VALUES} values in all (MAX_FILTER_VALUES), the last in "
                f"{key!r}; narrow the lists or split the recall"
            )
            raise UsageError(msg)


def _strings(key: str, value: Any, budget: _Budget) -> tuple[str, ...]:
    items = [value] if isinstance(value, str | Scope | MemoryType | Source) else value
    if not isinstance(items, list | tuple | set | frozenset) or not items:
        msg = f"filters[{key!r}] must be a string or a non-empty list of strings, got {value!r}"
        raise UsageError(msg)
    budget.take(len(items), key)
    out: list[str] = []
    for item in items:
        if isinstance(item, Scope | MemoryType | Source):
            out.append(item.value)
        elif isinstance(item, str):
            out.append(check_text(item, f"filters[{key!r}]"))
        else:
            msg = f"filters[{key!r}] holds {item!r}; use strings"
            raise UsageError(msg)
    return tuple(dict.fromkeys(out))


def _enum_values(key: str, value: Any, enum: type[Scope | MemoryType | Source], budget: _Budget) -> tuple[str, ...]:
    values = _strings(key, value, budget)
    allowed = {e.value for e in enum}
    bad = [v for v in values if v not in allowed]
    if bad:
        msg = f"filters[{key!r}] has unknown value(s) {bad}; use one of {sorted(allowed)}"
        raise UsageError(msg)
    return values


_INT64 = (-(2**63), 2**63 - 1)


def finite(value: Any) -> float | None:
    """``value`` as a finite float; ``None`` for bools, non-numbers, NaN and infinities."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _unit(key: str, value: Any) -> float:
    number = finite(value)
    if number is None or not 0 <= number <= 1:
        msg = f"filters[{key!r}] must be a number between 0 and 1, got {value!r}"
        raise UsageError(msg)
    return number


def to_timestamp(key: str, value: Any) -> float:
    """Seconds since the epoch from a number, an aware/naive ``datetime`` or an ISO 8601 string (naive = UTC).

    >>> to_timestamp("since", "1970-01-02")
    86400.0
    """
    if isinstance(value, str):
        try:
            value = _dt.datetime.fromisoformat(value.strip())
        except ValueError:
            msg = f"{key} must be seconds since the epoch, a datetime or an ISO 8601 date, got {value!r}"
            raise UsageError(msg) from None
    if isinstance(value, _dt.datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=_dt.timezone.utc)
        return float(aware.timestamp())
    number = finite(value)
    if number is None:
        msg = f"{key} must be seconds since the epoch, a datetime or an ISO 8601 date, got {value!r}"
        raise UsageError(msg)
    return number


def _scalar(key: str, value: Any) -> Scalar:
    if isinstance(value, str):
        return check_text(value, f"the metadata filter on {key!r}")
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int) and _INT64[0] <= value <= _INT64[1]:
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    msg = f"metadata filter on {key!r}: {value!r} is not a string, a finite number (64-bit for integers), bool or None"
    raise UsageError(msg)


def _logic(op: str, operand: Any, depth: int, budget: _Budget) -> tuple[str, str, Any]:
    """A ``("", "$and"|"$or"|"$not", ...)`` condition; its operand is parsed metadata filters."""
    if depth >= _MAX_DEPTH:
        msg = f"metadata filters nest {op} deeper than {_MAX_DEPTH} levels; flatten them"
        raise UsageError(msg)
    if op == "$not":
        return ("", op, _metadata(operand, depth + 1, budget))
    if not isinstance(operand, list | tuple) or not operand:
        msg = f"metadata filter {op} takes a non-empty list of metadata filters, got {operand!r}"
        raise UsageError(msg)
    return ("", op, tuple(_metadata(item, depth + 1, budget) for item in operand))


def _operand(key: str, op: str, raw: Any, budget: _Budget) -> Any:
    """The validated operand of one ``{key: {op: raw}}`` condition."""
    if op in ("$in", "$nin"):
        if not isinstance(raw, list | tuple | set | frozenset):
            msg = f"metadata filter on {key!r}: {op} takes a list, got {raw!r}"
            raise UsageError(msg)
        budget.take(len(raw), key)
        return tuple(_scalar(key, v) for v in raw)
    if op in ("$exists", "$empty"):
        if not isinstance(raw, bool):
            msg = f"metadata filter on {key!r}: {op} takes true or false, got {raw!r}"
            raise UsageError(msg)
        return raw
    if op in ("$icontains", "$like", "$ilike") and not isinstance(raw, str):
        msg = f"metadata filter on {key!r}: {op} takes a string, got {raw!r}"
        raise UsageError(msg)
    if op in ("$like", "$ilike"):
        return _pattern(key, op, raw)
    if op == "$between":
        return _between(key, raw)
    operand = _scalar(key, raw)
    if op in ("$gt", "$gte", "$lt", "$lte") and (operand is None or isinstance(operand, bool)):
        msg = f"metadata filter on {key!r}: {op} compares numbers or strings, got {operand!r}"
        raise UsageError(msg)
    return operand


def _pattern(key: str, op: str, raw: str) -> str:
    r"""A ``$like``/``$ilike`` pattern: ``%`` any run, ``_`` one character, ``\`` makes the next one literal."""
    pattern = check_text(raw, f"the metadata filter on {key!r}")
    if "\x00" in pattern:  # SQLite's LIKE and GLOB stop at NUL: the backends would disagree
        msg = f"metadata filter on {key!r}: the {op} pattern contains NUL (\\x00); remove it"
        raise UsageError(msg)
    if len(pattern) > MAX_PATTERN_LENGTH:
        msg = (
            f"metadata filter on {key!r}: the {op} pattern has {len(pattern):,} characters, "
            f"more than {MAX_PATTERN_LENGTH:,}; match a shorter part of the text"
        )
        raise UsageError(msg)
    if (len(pattern) - len(pattern.rstrip("\\"))) % 2:
        msg = (
            f"metadata filter on {key!r}: the {op} pattern {pattern!r} ends with a lone backslash; "
            "a backslash makes the next character literal (write two for a backslash itself)"
        )
        raise UsageError(msg)
    return pattern


def _between(key: str, raw: Any) -> tuple[Scalar, Scalar]:
    """The ``[low, high]`` of a ``$between``: two numbers or two strings, ``low <= high`` (both ends included)."""
    if not isinstance(raw, list | tuple) or len(raw) != 2:
        msg = f"metadata filter on {key!r}: $between takes [low, high], got {raw!r}"
        raise UsageError(msg)
    low, high = (_scalar(key, v) for v in raw)
    numbers = all(finite(v) is not None for v in (low, high))
    if not numbers and not (isinstance(low, str) and isinstance(high, str)):
        msg = f"metadata filter on {key!r}: $between takes two numbers or two strings, got {raw!r}"
        raise UsageError(msg)
    if low > high:  # type: ignore[operator]  # two numbers or two strings
        msg = f"metadata filter on {key!r}: $between [{low!r}, {high!r}] is empty (low > high); swap them"
        raise UsageError(msg)
    return low, high


def _metadata(value: Any, depth: int, budget: _Budget) -> tuple[tuple[str, str, Any], ...]:
    """Parsed ``filters["metadata"]``: ``(key, op, operand)`` conditions, all of which must hold.

    ``$and``/``$or``/``$not`` become ``("", op, operand)`` whose operand is a tuple of parsed
    filters (``$and``, ``$or``) or one parsed filter (``$not``).
    """
    if not isinstance(value, Mapping) or not value:
        msg = 'filters["metadata"] must be a non-empty dict like {"lang": "en", "n": {"$gt": 2}}'
        raise UsageError(msg)
    out: list[tuple[str, str, Any]] = []
    for key, cond in value.items():
        if key in METADATA_LOGIC:
            budget.condition()
            out.append(_logic(key, cond, depth, budget))
            continue
        if not isinstance(key, str) or not _METADATA_KEY.fullmatch(key):
            msg = (
                f"metadata filter key {key!r} is not allowed: use letters, digits, '_' or '-', "
                f"with '.' between nested keys (or one of {METADATA_LOGIC})"
            )
            raise UsageError(msg)
        conds = cond.items() if isinstance(cond, Mapping) else [("$eq", cond)]
        if isinstance(cond, Mapping) and not cond:
            msg = f"metadata filter on {key!r} is an empty dict; give an operator such as $eq"
            raise UsageError(msg)
        for op, raw in conds:
            if op not in METADATA_OPERATORS:
                msg = f"metadata filter on {key!r}: unknown operator {op!r}; use one of {METADATA_OPERATORS}"
                raise UsageError(msg)
            budget.condition()
            out.append((key, op, _operand(key, op, raw, budget)))
    return tuple(out)


@dataclass(frozen=True)
class Filters:
    """Validated recall filters. Build one with :meth:`parse`; empty fields filter nothing.

    Archived, soft-deleted and expired memories are always hidden from recall.
    """

    agent_ids: tuple[str, ...] = ()
    scopes: tuple[str, ...] = ()
    pools: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    session_ids: tuple[str, ...] = ()
    exclude_session_ids: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    exclude_kinds: tuple[str, ...] = ()
    tags_any: tuple[str, ...] = ()
    tags_all: tuple[str, ...] = ()
    min_confidence: float | None = None
    min_importance: float | None = None
    since: float | None = None
    until: float | None = None
    pinned: bool | None = None
    metadata: tuple[tuple[str, str, Any], ...] = ()

    @classmethod
    def parse(cls, filters: Mapping[str, Any] | Filters | None) -> Filters:
        """Validate a filter dict; unknown keys and bad values raise :class:`UsageError`."""
        if filters is None:
            return cls()
        if isinstance(filters, Filters):
            return filters
        if not isinstance(filters, Mapping):
            msg = f"filters must be a dict, got {type(filters).__name__}; e.g. filters={{'type': 'semantic'}}"
            raise UsageError(msg)
        unknown = sorted(set(filters) - set(_KEYS), key=str)
        if unknown:
            msg = f"unknown filter key(s) {unknown}; the keys are {list(_KEYS)}"
            raise UsageError(msg)
        f: dict[str, Any] = {}
        budget = _Budget()
        for key, value in filters.items():
            if value is None:
                continue
            if key == "agent_id":
                f["agent_ids"] = _strings(key, value, budget)
            elif key == "scope":
                f["scopes"] = _enum_values(key, value, Scope, budget)
            elif key == "pool":
                f["pools"] = _strings(key, value, budget)
            elif key == "type":
                f["types"] = _enum_values(key, value, MemoryType, budget)
            elif key == "source":
                f["sources"] = _enum_values(key, value, Source, budget)
            elif key == "session_id":
                f["session_ids"] = _strings(key, value, budget)
            elif key == "exclude_session_id":
                f["exclude_session_ids"] = _strings(key, value, budget)
            elif key == "kind":
                f["kinds"] = _strings(key, value, budget)
                bad = [k for k in f["kinds"] if k not in KINDS]
                if bad:
                    msg = f"filters['kind'] has unknown value(s) {bad}; use one of {list(KINDS)}"
                    raise UsageError(msg)
            elif key == "tags":
                f["tags_any"] = _strings(key, value, budget)
            elif key == "tags_all":
                f["tags_all"] = _strings(key, value, budget)
            elif key in ("min_confidence", "min_importance"):
                f[key] = _unit(key, value)
            elif key in ("since", "until"):
                f[key] = to_timestamp(f"filters[{key!r}]", value)
            elif key == "pinned":
                if not isinstance(value, bool):
                    msg = f"filters['pinned'] must be true or false, got {value!r}"
                    raise UsageError(msg)
                f["pinned"] = value
            else:
                f["metadata"] = _metadata(value, 0, budget)
        return cls(**f)

    def for_recall(self) -> Filters:
        """These filters as recall applies them: without a ``kind``, chat messages (:data:`UNRECALLED`) are left out.

        Such rows never have a vector, so only the keyword and listing legs need the condition.

        >>> Filters().for_recall().exclude_kinds, Filters(kinds=("message",)).for_recall().exclude_kinds
        (('message',), ())
        """
        return self if self.kinds else dataclasses.replace(self, exclude_kinds=UNRECALLED)

    @property
    def needs_row_check(self) -> bool:
        """True when some condition can only be checked against the stored row."""
        return bool(
            self.sources
            or self.exclude_session_ids
            or self.kinds
            or self.tags_any
            or self.tags_all
            or self.min_confidence is not None
            or self.min_importance is not None
            or self.since is not None
            or self.until is not None
            or self.pinned is not None
            or self.metadata
        )


def with_scope(filters: Any, scope: Any = None, pool: Any = None) -> Any:
    """``filters`` with recall()'s ``scope`` and ``pool`` arguments folded in.

    >>> with_scope({"type": "semantic"}, scope="shared", pool="team")
    {'type': 'semantic', 'scope': 'shared', 'pool': 'team'}
    """
    if scope is None and pool is None:
        return filters
    if filters is not None and not isinstance(filters, Mapping):
        return filters  # Filters.parse says what is wrong
    merged = dict(filters or {})
    for key, given in (("scope", scope), ("pool", pool)):
        if given is None:
            continue
        value = getattr(given, "value", given)
        if key in merged and merged[key] != value:  # not .get(key, value): NaN != NaN
            msg = f"{key}={value!r} conflicts with filters[{key!r}]={merged[key]!r}; pass it once"
            raise UsageError(msg)
        merged[key] = value
    return merged
