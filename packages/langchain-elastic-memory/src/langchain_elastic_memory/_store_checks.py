"""What a store batch is checked against before any I/O, and what ``list_namespaces`` returns.

The shapes of the operations, page sizes, namespace match conditions, the JSON values of puts
and their TTLs; then the namespaces read from the ``lg:n:`` tags.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    MatchCondition,
    NotProvided,
    PutOp,
    SearchOp,
)

from elastic_memory import UsageError
from elastic_memory.adapters import items_arg, text_arg

__all__ = [
    "NAMESPACE_TAG",
    "PAGE",
    "check_shape",
    "checked_list",
    "checked_search",
    "json_value",
    "listed_namespaces",
    "tag_prefix",
    "ttl_minutes",
]

#: The tag of an item's namespace: ``lg:n:`` and its labels joined by ``.``.
NAMESPACE_TAG = "lg:n:"
#: The most memories one core recall returns.
PAGE = 1000


def _labels(value: Any, what: str) -> None:
    """A namespace (or a match path) is a tuple of string labels; else LangGraph's namespace error."""
    if not isinstance(value, tuple | list) or not all(isinstance(label, str) for label in value):
        msg = f"{what} must be a tuple of strings such as ('users', '123'), got {value!r:.200}"
        raise InvalidNamespaceError(msg)


def check_shape(op: Any) -> None:
    """The types of an op's fields, before LangGraph's own namespace checks read them."""
    if isinstance(op, GetOp | PutOp):
        _labels(op.namespace, "namespace")
        text_arg(op.key, "key")
    elif isinstance(op, SearchOp):
        _labels(op.namespace_prefix, "namespace_prefix")
    elif isinstance(op, ListNamespacesOp):
        conditions = op.match_conditions or ()
        for condition in items_arg(conditions, "match_conditions"):
            if not isinstance(condition, MatchCondition):
                msg = f"match_conditions must be MatchCondition values, got {type(condition).__name__}"
                raise UsageError(msg)
            _labels(condition.path, "a match path")


def checked_search(op: SearchOp) -> SearchOp:
    """``op`` once its page (at most :data:`PAGE` items) and its query are valid; else ``ValueError``."""
    for name in ("limit", "offset"):
        number = getattr(op, name)
        if isinstance(number, bool) or not isinstance(number, int) or number < 0:
            msg = f"search {name} must be a non-negative integer, got {number!r}"
            raise ValueError(msg)
    if op.offset + op.limit > PAGE:
        msg = f"offset + limit is at most {PAGE} for one search, got {op.offset} + {op.limit}"
        raise ValueError(msg)
    if op.query is not None:
        text_arg(op.query, "query")
    return op


def checked_list(op: ListNamespacesOp) -> ListNamespacesOp:
    """``op`` once its page, ``max_depth`` and match types are valid; else ``ValueError``."""
    for name in ("limit", "offset"):
        number = getattr(op, name)
        if isinstance(number, bool) or not isinstance(number, int) or number < 0:
            msg = f"list_namespaces {name} must be a non-negative integer, got {number!r}"
            raise ValueError(msg)
    depth = op.max_depth
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        msg = f"max_depth must be a positive integer or None, got {depth!r}"
        raise ValueError(msg)
    for condition in op.match_conditions or ():
        if condition.match_type not in ("prefix", "suffix"):
            msg = f"match_type must be 'prefix' or 'suffix', got {condition.match_type!r}"
            raise ValueError(msg)
    return op


def tag_prefix(op: ListNamespacesOp) -> str:
    """The ``lg:n:`` tags worth reading: those starting with the literal labels of a prefix condition."""
    for condition in op.match_conditions or ():
        if condition.match_type == "prefix":
            literal = []
            for label in condition.path:
                if label == "*":
                    break
                literal.append(label)
            return NAMESPACE_TAG + ".".join(literal)
    return NAMESPACE_TAG


def _matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[len(namespace) - len(path) :]
    return all(want in ("*", got) for got, want in zip(part, path, strict=True))


def listed_namespaces(op: ListNamespacesOp, tags: Mapping[str, int]) -> list[tuple[str, ...]]:
    """The namespaces in the ``lg:n:`` ``tags`` that ``op`` matches, cut to its depth, sorted, one page."""
    found = {tuple(tag[len(NAMESPACE_TAG) :].split(".")) for tag in tags if tag.startswith(NAMESPACE_TAG)}
    kept = {ns for ns in found if all(_matches(c, ns) for c in op.match_conditions or ())}
    if op.max_depth is not None:
        kept = {ns[: op.max_depth] for ns in kept}
    return sorted(kept)[op.offset : op.offset + op.limit]


def json_value(value: Any) -> dict[str, Any]:
    """A plain JSON copy of a put's value; raises for what JSON cannot hold."""
    if not isinstance(value, Mapping):
        msg = f"a store value must be a dict, got {type(value).__name__}"
        raise UsageError(msg)
    copied: dict[str, Any] = _json(value, "value")
    return copied


def _json(obj: Any, where: str) -> Any:
    if obj is None or isinstance(obj, bool | int):
        return obj
    if isinstance(obj, str):
        try:
            obj.encode("utf-8")
        except UnicodeEncodeError as e:
            msg = f"{where} is not valid Unicode ({e.reason} at position {e.start})"
            raise ValueError(msg) from None
        return obj
    if isinstance(obj, float):
        if not math.isfinite(obj):
            msg = f"{where} is {obj!r}: JSON has no NaN or infinity"
            raise ValueError(msg)
        return obj
    if isinstance(obj, Mapping):
        out: dict[str, Any] = {}
        for key, item in obj.items():
            if not isinstance(key, str):
                msg = f"{where} has the key {key!r}: JSON object keys are strings"
                raise UsageError(msg)
            out[_json(key, f"key of {where}")] = _json(item, f"{where}[{key!r}]")
        return out
    if isinstance(obj, list | tuple):
        return [_json(item, f"{where}[{n}]") for n, item in enumerate(obj)]
    msg = f"{where} is a {type(obj).__name__}, which JSON cannot hold; store str, numbers, bool, None, lists and dicts"
    raise UsageError(msg)


def ttl_minutes(ttl: Any) -> float | None:
    """A put's TTL in minutes (``None``: no TTL); refused unless positive and finite."""
    if ttl is None or isinstance(ttl, NotProvided):
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not math.isfinite(ttl) or ttl <= 0:
        msg = f"ttl must be a positive number of minutes or None, got {ttl!r}"
        raise ValueError(msg)
    return float(ttl)
