"""Fuzzing an adapter's public methods from their signatures (loaded by path by packages/*/tests/test_fuzz.py).

Each parameter gets hostile values by its name (text for queries and keys, boundary
integers for ``k``/``limit``, hostile filters, lists of framework objects built from
hostile text); anything else gets any value at all. Each drawn call goes through
:func:`elastic_memory.testing.check_hostile_call`: it returns, or raises the library's
error or one the framework documents for bad input; when it raised, the store's rows
are unchanged.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import strategies as hs  # type: ignore[import-not-found]  # loaded by path with tests/fuzz on sys.path
from hypothesis import strategies as st

TEXT = ("query", "text", "key", "session", "chat", "id", "name", "field", "user", "content", "message", "source")
INTS = ("k", "top_k", "limit", "offset", "fetch_k", "last_k", "max_depth", "n")
FLOATS = ("lambda_mult", "score", "threshold", "weight", "ttl")
#: Parameters the framework's own base classes read and check (a Runnable's ``config``): not the adapter's input.
FRAMEWORK_OWNED = ("config", "run_manager", "callbacks")


def own_public_methods(cls: type) -> list[str]:
    """The public methods a class defines itself (not those inherited from the framework)."""
    return sorted(
        n
        for n, v in vars(cls).items()
        if not n.startswith("_") and (inspect.isfunction(v) or isinstance(v, classmethod | staticmethod))
    )


def for_parameter(name: str, objects: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Hostile values for one parameter, picked by its name."""
    low = name.lower()
    if low in {"filters", "filter", "where"}:
        return st.one_of(
            hs.metadata(), hs.json_values(), st.dictionaries(hs.short_text(12), hs.any_value(), max_size=3)
        )
    if low in {"ids", "document_ids", "node_ids", "keys", "ref_doc_ids"}:
        return st.one_of(st.lists(hs.names(), max_size=4), hs.bad_scalars(), hs.short_text())
    if low in {"embedding", "query_embedding", "vector"}:
        return hs.vectors(16)
    if low in INTS or low.endswith("_k") or low.endswith("limit"):
        return hs.ints()
    if any(f in low for f in FLOATS):
        return hs.floats()
    if low in {"documents", "messages", "nodes", "texts", "ops", "metadatas", "memories", "state"} or low.endswith("s"):
        return st.one_of(
            st.lists(st.one_of(objects, hs.short_text(), hs.bad_scalars()), max_size=4),
            hs.bad_scalars(),
            hs.short_text(),
        )
    if any(t in low for t in TEXT):
        return st.one_of(hs.hostile_text(), hs.bad_scalars())
    return hs.any_value()


def calls_for(
    fn: Callable[..., Any], objects: st.SearchStrategy[Any]
) -> st.SearchStrategy[tuple[tuple[Any, ...], dict[str, Any]]]:
    """``(args, kwargs)`` for ``fn``: positional-only by position, the rest by name, optional ones sometimes."""
    sig = inspect.signature(fn)
    positional, required, optional = [], {}, {}
    for p in sig.parameters.values():
        if p.name in {"self", "cls"} or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name in FRAMEWORK_OWNED and p.default is not p.empty:
            continue
        strategy = for_parameter(p.name, objects)
        if p.kind is p.POSITIONAL_ONLY:
            positional.append(strategy)
        elif p.default is p.empty:
            required[p.name] = strategy
        else:
            optional[p.name] = strategy
    return st.tuples(st.tuples(*positional), st.fixed_dictionaries(required, optional=optional))
