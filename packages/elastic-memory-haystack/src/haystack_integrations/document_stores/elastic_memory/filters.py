"""Haystack filters, compiled to the core's metadata filters (SQL on SQLite and PostgreSQL).

Haystack's filter DSL (``{"field": ..., "operator": ..., "value": ...}`` and
``{"operator": "AND" | "OR" | "NOT", "conditions": [...]}``) is compiled by :func:`compile_filters`
into the core's metadata filter language (``$between``, ``$in``, ``$eq``, ``$contains``,
``$and``, ``$or``, ``$not``...) over the stored document (metadata key ``_hs_doc``), which both
backends evaluate in SQL. Every condition compiles to a pair of core filters, one selecting a
subset of the matching documents and one a superset; where they are the same the condition is
*exact*. Exact in SQL (Python never sees the documents):

* ``==``, ``!=``, ``in``, ``not in`` with ``None``, a number, a bool or a string that is not an
  ISO date, Python's equality included (``1 == 1.0 == True``; a list value is not equal to one
  of its items);
* ``>``, ``>=``, ``<``, ``<=`` with a number or a bool (numbers and bools compared as Python does),
  or ``None`` (matches nothing);
* ``AND``, ``OR``, ``NOT`` of exact conditions, on ``meta.*`` fields (nested keys too), ``content``
  and ``id``.

The rest is narrowed in SQL and then checked with Haystack's own
:func:`haystack.utils.filters.document_matches_filter` (the function ``InMemoryDocumentStore``
uses) on the candidates only: ISO-date strings (compared as datetimes, naive and aware
reconciled), list or dict values, other fields (``blob``, ``embedding``...), field names the
core cannot address, and malformed conditions (their ``FilterError`` is raised when a candidate
is evaluated, as the reference raises it). One difference from the reference remains: a
number compared (``>``...) with a field holding text is no match, where the reference raises
``FilterError``.

>>> compile_filters({"field": "meta.n", "operator": ">", "value": 2})
Compiled(sql={'_hs_doc.meta.n': {'$gt': 2}}, never=False, exact=True)
>>> compile_filters({"field": "meta.when", "operator": ">", "value": "2024-01-01"}).exact
False
"""

from __future__ import annotations

import math
import operator
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from haystack import Document
from haystack.errors import FilterError
from haystack.utils.filters import document_matches_filter

from elastic_memory import UsageError
from elastic_memory.filters import Filters

__all__ = ["DOC_KEY", "ID_KEY", "Compiled", "compile_filters", "document_path", "select", "validate_filters"]

#: Metadata keys of a document note: the document (``Document.to_dict``) and its id.
DOC_KEY, ID_KEY = "_hs_doc", "_hs_id"
_PART = re.compile(r"[A-Za-z0-9_\-]+")
_DOCUMENT_FIELDS = ("id", "content", "blob", "meta", "score", "embedding", "sparse_embedding")
_INT64 = (-(2**63), 2**63 - 1)
_ORDER: dict[str, tuple[str, Callable[[Any, Any], bool]]] = {
    ">": ("$gt", operator.gt),
    ">=": ("$gte", operator.ge),
    "<": ("$lt", operator.lt),
    "<=": ("$lte", operator.le),
}
_COMPARISONS = ("==", "!=", "in", "not in", *_ORDER)
#: Any number passes ``$gte`` this (numbers only: a typed comparison); any text passes ``$gte ""``.
_ANY_NUMBER = -sys.float_info.max

# A condition is True (every document), False (none) or a core metadata filter (a dict).
Cond = bool | dict[str, Any]


def validate_filters(filters: dict[str, Any] | None) -> None:
    """Refuse the legacy filter syntax (no ``operator``/``conditions`` at the top), as the reference does.

    Raises:
        ValueError: ``filters`` is a non-empty dict in the legacy syntax.
        haystack.errors.FilterError: ``filters`` is not a dict.
    """
    if filters is not None and not isinstance(filters, Mapping):
        example = "{'field': 'meta.lang', 'operator': '==', 'value': 'en'}"
        msg = f"filters must be a dict such as {example}, got {type(filters).__name__}"
        raise FilterError(msg)
    if filters and "operator" not in filters and "conditions" not in filters:
        msg = "Invalid filter syntax. See https://docs.haystack.deepset.ai/docs/metadata-filtering for details."
        raise ValueError(msg)


def select(
    documents: Iterable[Document], filters: dict[str, Any] | None, *, strict_datetime_comparison: bool = False
) -> list[Document]:
    """The documents among ``documents`` that match ``filters`` (all of them when ``filters`` is empty), in Python.

    >>> docs = [Document(id="a", content="x", meta={"n": 1}), Document(id="b", content="y", meta={"n": 5})]
    >>> [d.id for d in select(docs, {"field": "meta.n", "operator": ">", "value": 2})]
    ['b']

    Raises:
        ValueError: legacy filter syntax.
        haystack.errors.FilterError: a malformed condition, met while evaluating a document.
    """
    if not filters:
        return list(documents)
    validate_filters(filters)
    return [
        d
        for d in documents
        if document_matches_filter(filters=filters, document=d, strict_datetime_comparison=strict_datetime_comparison)
    ]


@dataclass(frozen=True)
class Compiled:
    """A Haystack filter compiled for the core.

    ``sql``: the core metadata filter selecting the candidates (``None``: every document);
    ``never``: no document can match (no query needed); ``exact``: the candidates are exactly
    the matching documents, else check them with :func:`select`.
    """

    sql: dict[str, Any] | None
    never: bool
    exact: bool


@dataclass(frozen=True)
class _Bounds:
    low: Cond  # matched only by matching documents
    high: Cond  # matched by every matching document
    exact: bool


_UNKNOWN = _Bounds(False, True, False)


def _same(cond: Cond) -> _Bounds:
    return _Bounds(cond, cond, True)


def _and(parts: list[Cond]) -> Cond:
    if any(p is False for p in parts):
        return False
    kept = [p for p in parts if p is not True]
    if not kept:
        return True
    return kept[0] if len(kept) == 1 else {"$and": kept}


def _or(parts: list[Cond]) -> Cond:
    if any(p is True for p in parts):
        return True
    kept = [p for p in parts if p is not False]
    if not kept:
        return False
    return kept[0] if len(kept) == 1 else {"$or": kept}


def _not(cond: Cond) -> Cond:
    return (not cond) if isinstance(cond, bool) else {"$not": cond}


def _all(parts: list[_Bounds]) -> _Bounds:
    return _Bounds(_and([p.low for p in parts]), _and([p.high for p in parts]), all(p.exact for p in parts))


def _any(parts: list[_Bounds]) -> _Bounds:
    return _Bounds(_or([p.low for p in parts]), _or([p.high for p in parts]), all(p.exact for p in parts))


def _negate(b: _Bounds) -> _Bounds:
    return _Bounds(_not(b.high), _not(b.low), b.exact)


def document_path(field: Any) -> str | None:
    """The core metadata key holding ``field``'s value, or ``None`` when the core cannot address it."""
    if not isinstance(field, str):
        return None
    if field == "id":
        return ID_KEY
    if field == "content":
        return f"{DOC_KEY}.content"
    if "." in field:
        parts = field.split(".")
        if parts[0] != "meta" or len(parts) < 2:
            return None
        keys = parts[1:]
    elif field in _DOCUMENT_FIELDS:
        return None
    else:
        keys = [field]  # a legacy field name without "meta.": Haystack reads it from meta
    if not all(_PART.fullmatch(k) for k in keys):
        return None
    return ".".join([DOC_KEY, "meta", *keys])


def _number(value: Any) -> int | float | None:
    """``value`` as a number the core compares exactly (a bool as 0/1), else ``None``."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value if _INT64[0] <= value <= _INT64[1] else None
    if isinstance(value, float) and math.isfinite(value):
        return value
    return None


def _looks_like_date(value: str) -> bool:
    """What Haystack may compare as an ISO date (``==`` reconciles ``2024-01-01`` and ``2024-01-01T00:00``)."""
    return len(value) >= 10 and value[4:5] == "-" and value[7:8] == "-" and value[:4].isdigit()


def _is_bool(path: str, flag: bool) -> Cond:
    """The value is the JSON ``flag`` itself (not a list holding it)."""
    return {"$and": [{path: {"$eq": flag}}, {"$not": {path: {"$contains": flag}}}]}


def _is_number(path: str, value: float) -> Cond:
    """The value is a number equal to ``value``, or the bool Python finds equal to it (``True == 1``)."""
    parts: list[Cond] = [{path: {"$between": [value, value]}}]
    if value in (0, 1):
        parts.append(_is_bool(path, bool(value)))
    return _or(parts)


def _equals(path: str, value: Any) -> _Bounds:
    """``doc_value == value`` as Haystack's ``==`` (Python equality, or the same ISO date)."""
    if value is None:
        return _same({"$and": [{path: {"$eq": None}}, {"$not": {path: {"$contains": None}}}]})
    if isinstance(value, bool):
        return _same(_or([_is_bool(path, value), {path: {"$between": [int(value), int(value)]}}]))
    number = _number(value)
    if number is not None:
        return _same(_is_number(path, number))
    if isinstance(value, str):
        exact = {path: {"$between": [value, value]}}
        if _looks_like_date(value):  # also equal to another spelling of the same date: checked in Python
            return _Bounds(exact, {path: {"$like": "____-__-__%"}}, False)
        return _same(exact)
    return _UNKNOWN


def _one_of(path: str, values: Any) -> _Bounds:
    """Haystack's ``in``: equal to one of ``values`` (a list)."""
    if not isinstance(values, list):
        return _UNKNOWN  # Haystack raises FilterError when it evaluates it
    texts = [v for v in values if isinstance(v, str) and not _looks_like_date(v)]
    numbers = [v for v in values if not isinstance(v, bool) and _number(v) is not None]
    parts: list[_Bounds] = []
    if texts:
        parts.append(_same({path: {"$in": texts, "$gte": ""}}))
    if numbers:
        parts.append(_same({path: {"$in": numbers, "$gte": _ANY_NUMBER}}))
        parts += [_same(_is_bool(path, bool(n))) for n in {n for n in numbers if n in (0, 1)}]
    parts += [_equals(path, v) for v in values if not (v in texts or v in numbers)]
    return _any(parts) if parts else _same(False)


def _ordered(path: str, op: str, value: Any) -> _Bounds:
    """Haystack's ``>``, ``>=``, ``<``, ``<=``."""
    if value is None:
        return _same(False)
    number = _number(value)
    if number is not None:
        core_op, compare = _ORDER[op]
        parts: list[Cond] = [{path: {core_op: number}}]
        parts += [_is_bool(path, flag) for flag in (False, True) if compare(int(flag), number)]
        return _same(_or(parts))
    if isinstance(value, str):  # dates: Haystack parses and compares datetimes (or raises), in Python
        return _Bounds(False, {path: {"$exists": True}}, False)
    return _UNKNOWN


def _condition(node: Any, path_of: Callable[[Any], str | None]) -> _Bounds:
    if not isinstance(node, Mapping):
        return _UNKNOWN
    if "field" not in node:
        conditions = node.get("conditions")
        if node.get("operator") not in ("AND", "OR", "NOT") or not isinstance(conditions, list):
            return _UNKNOWN
        parts = [_condition(c, path_of) for c in conditions]
        if node["operator"] == "OR":
            return _any(parts)
        both = _all(parts)
        return _negate(both) if node["operator"] == "NOT" else both
    op, path = node.get("operator"), path_of(node["field"])
    if path is None or op not in _COMPARISONS or "value" not in node:
        return _UNKNOWN
    value = node["value"]
    if op == "==":
        return _equals(path, value)
    if op == "!=":
        return _negate(_equals(path, value))
    if op == "in":
        return _one_of(path, value)
    if op == "not in":
        return _negate(_one_of(path, value))
    return _ordered(path, op, value)


def compile_filters(filters: dict[str, Any] | None, path_of: Callable[[Any], str | None] = document_path) -> Compiled:
    """``filters`` (Haystack's DSL, already checked by :func:`validate_filters`) for the core.

    ``path_of`` maps a Haystack field to the core metadata key holding its value (``None``: the
    core cannot address it, Python checks it); by default a field of the stored document.
    """
    if not filters:
        return Compiled(None, never=False, exact=True)
    bounds = _condition(filters, path_of)
    high = bounds.high
    if high is False:
        return Compiled(None, never=True, exact=True)
    if high is True:
        return Compiled(None, never=False, exact=bounds.exact and bounds.low is True)
    try:
        Filters.parse({"metadata": high})  # within the core's limits (conditions, values, text)?
    except UsageError:
        return Compiled(None, never=False, exact=False)  # too big for SQL: everything checked in Python
    return Compiled(high, never=False, exact=bounds.exact)
