"""Fuzzing an adapter's public methods from their signatures (loaded by path by packages/*/tests/test_fuzz.py).

Each parameter gets hostile values by its name (text for queries and keys, boundary
integers for ``k``/``limit``, hostile filters, lists of framework objects built from
hostile text); anything else gets any value at all. A call returns, or raises the
library's error or one the framework documents for bad input; when it raised, the
store's rows are unchanged.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

import strategies as hs  # type: ignore[import-not-found]  # loaded by path with tests/fuzz on sys.path
from harness import short_repr  # type: ignore[import-not-found]
from hypothesis import strategies as st

from elastic_memory import ElasticMemoryError

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


def check(
    label: str,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    allowed: tuple[type[BaseException], ...],
    digest: Callable[[], str],
) -> None:
    """One hostile call: a result, a library or documented error, and no change to the store when it raised."""
    before = digest()
    try:
        result = fn(*args, **kwargs)
        if inspect.isawaitable(result):
            asyncio.run(_await(result))
    except (ElasticMemoryError, *allowed) as e:
        assert digest() == before, (
            f"{label}(*{short_repr(args)}, **{short_repr(kwargs)}) raised {e!r} and changed the store"
        )
    except (Exception, RuntimeWarning) as e:
        if not _reached_our_code(e):  # the framework's base class refused the call before any adapter code ran
            assert digest() == before, f"{label} raised {e!r} in the framework and changed the store"
            return
        raise AssertionError(
            f"{type(e).__name__} from {label}(*{short_repr(args)}, **{short_repr(kwargs)}): {short_repr(e, 200)}"
        ) from e


#: Folders of elastic-memory's own code: the core and the three adapters.
OURS = ("/elastic_memory/", "/langchain_elastic_memory/")


def _reached_our_code(error: BaseException) -> bool:
    """Whether a frame of the core or an adapter is on the error's traceback (else the framework raised it).

    An inherited method such as LangGraph's ``BaseStore.list_namespaces(prefix=1)`` fails in
    LangGraph's own argument handling for every store; that is the framework's behaviour, not
    a finding against the adapter.
    """
    tb = error.__traceback__
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame.f_code.co_filename.replace("\\", "/"))
        tb = tb.tb_next
    return any(any(part in f for part in OURS) for f in frames[1:])


async def _await(result: Any) -> Any:
    return await result
