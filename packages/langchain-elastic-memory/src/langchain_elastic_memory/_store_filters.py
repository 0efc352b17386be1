"""LangGraph's value filters as the core's metadata filters, compared as ``InMemoryStore`` compares.

:func:`value_filter` is what :class:`~langchain_elastic_memory.ElasticMemoryStore` searches with;
the module docstring of ``store.py`` says how a filter compares.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from elastic_memory import Filters, UsageError

__all__ = ["value_filter"]

_OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")
_INT64 = (-(2**63), 2**63 - 1)
_FLOAT_MAX = 1.7976931348623157e308


def value_filter(spec: Mapping[str, Any] | None) -> dict[str, Any]:
    """LangGraph's value filter as the core's metadata filter on ``value.<key>``, compared as ``InMemoryStore``."""
    conditions: list[dict[str, Any]] = []

    def walk(prefix: str, spec: Mapping[str, Any]) -> None:
        for key, wanted in spec.items():
            if not isinstance(key, str) or not key:
                msg = f"filter keys must be non-empty strings, got {key!r}"
                raise ValueError(msg)
            path = f"{prefix}.{key}"
            if isinstance(wanted, Mapping) and any(isinstance(k, str) and k.startswith("$") for k in wanted):
                for op, operand in wanted.items():
                    conditions.append(_condition(path, op, operand))
            elif isinstance(wanted, Mapping):
                if not wanted:
                    msg = f"the filter on {path[len('value.') :]!r} is an empty dict; give a value or an operator"
                    raise ValueError(msg)
                walk(path, wanted)
            else:
                conditions.append(_condition(path, "$eq", wanted))

    if spec is None:
        return {}
    if not isinstance(spec, Mapping):
        msg = f"filter must be a dict, got {type(spec).__name__}"
        raise UsageError(msg)
    walk("value", spec)
    if not conditions:
        return {}
    out = conditions[0] if len(conditions) == 1 else {"$and": conditions}
    Filters.parse({"metadata": out})  # the core's own checks (keys, operands, size), before any I/O
    return out


# How a LangGraph condition becomes core operators. InMemoryStore compares with Python's
# ``==``, ``!=`` and ``float(...) >``: a scalar never equals a list (``"x" != ["x", "y"]``),
# ``None`` equals a missing key, and a nested dict (or an ``"a.b"`` path here) holds only
# where its parent is a dict. The core's ``$eq``, ``$ne``, ``$in``, ``$nin``, ``$contains``
# and ``$like`` also look into lists (``$eq`` matches a list holding the operand), while
# ``$gt $gte $lt $lte $between`` compare scalars of the operand's type only (SQLite and
# PostgreSQL alike). So:
# - equal to a string or a number: ``$between [v, v]`` (strings compare bytewise on both
#   backends; a number equals the same number as int or float, never a bool or a string);
# - equal to a bool or None: ``$eq`` and not ``$contains`` (``$contains`` is the list
#   half of ``$eq``); ``None`` also matches a missing key;
# - ``$ne``: ``$not`` of that equality;
# - ``$gt $gte $lt $lte``: the core's, numbers with numbers and strings with strings;
# - below the top level, ``None`` and ``$ne`` also need the parent to be a dict, see
#   :func:`_is_dict`.
def _condition(path: str, op: str, operand: Any) -> dict[str, Any]:
    """One LangGraph condition on ``path`` as a core metadata filter."""
    where = path[len("value.") :]
    if op not in _OPERATORS:
        msg = f"unsupported filter operator {op!r} on {where!r}; use one of {list(_OPERATORS)}"
        raise ValueError(msg)
    operand = _operand(path, operand)
    if op not in ("$eq", "$ne"):
        return {path: {op: operand}}
    equal = _equal(path, operand)
    parent = path.rpartition(".")[0]
    if (op == "$eq" and operand is not None) or parent == "value":
        return equal if op == "$eq" else {"$not": equal}
    # InMemoryStore's nested dict fails where the parent is not a dict, but the core reads
    # a key below a list, a scalar or nothing as missing: None would equal it, $ne hold.
    return {"$and": [_is_dict(parent), equal if op == "$eq" else {"$not": equal}]}


def _equal(path: str, operand: Any) -> dict[str, Any]:
    """The value at ``path`` is ``operand`` itself, not a list holding it (``None``: or missing)."""
    if operand is None or isinstance(operand, bool):
        return {path: {"$eq": operand}, "$not": {path: {"$contains": operand}}}
    return {path: {"$between": [operand, operand]}}


def _is_dict(path: str) -> dict[str, Any]:
    """The value at ``path`` is a dict, or else a non-empty list holding no string, bool or None.

    The core has no test of a dict: this one leaves out what is missing, ``None``, a bool,
    a number (``$gte 0`` or ``$lt 0``), a string, an empty list and a list holding a string,
    a bool or ``None`` (``$in`` and ``$like`` look into lists). A list of numbers, dicts or
    lists only passes: no core operator tells it from a dict.
    """
    return {
        path: {"$empty": False},
        "$not": {
            "$or": [
                {path: {"$in": [True, False, None]}},
                {path: {"$like": "%"}},
                {path: {"$gte": 0}},
                {path: {"$lt": 0}},
            ]
        },
    }


def _operand(path: str, operand: Any) -> Any:
    if isinstance(operand, list | tuple | Mapping):
        msg = (
            f"the filter on {path[len('value.') :]!r} compares with {operand!r}; "
            "lists and dicts cannot be compared here, filter on their scalar fields"
        )
        raise ValueError(msg)
    if isinstance(operand, float) and math.isinf(operand):
        return math.copysign(_FLOAT_MAX, operand)
    if isinstance(operand, int) and not isinstance(operand, bool) and not _INT64[0] <= operand <= _INT64[1]:
        return float(operand)
    return operand
