"""Every public method of Memory, AsyncMemory and their facts/lessons/graph APIs, under hostile input.

For each call: it returns or raises an ``ElasticMemoryError``, and if it raised, every row
of every table is what it was before.
"""

from __future__ import annotations

import contextlib
import inspect
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from elastic_memory import (
    AsyncFacts,
    AsyncGraph,
    AsyncLessons,
    AsyncMemory,
    ElasticMemoryError,
    Facts,
    Graph,
    Lessons,
    Memory,
)

from . import strategies as hs
from .calls import METHODS, UNFUZZED, calls, confined
from .conftest import FUZZ
from .harness import SETUPS, Fuzzer

#: Background threads (psycopg_pool's maintenance draws its jitter from the global ``random``)
#: may touch the global ``random`` while Hypothesis draws a call; Hypothesis then notes it as
#: "random inside a strategy" and renders the strategy, whose repr (every seed row) is
#: megabytes long and warns. Neither note is a failure of the library under test.
pytestmark = [
    pytest.mark.filterwarnings("ignore:Generating overly large repr:hypothesis.errors.HypothesisWarning"),
    pytest.mark.filterwarnings(
        "ignore:Do not use the `random` module inside strategies:hypothesis.errors.HypothesisDeprecationWarning"
    ),
]

SUBS = {"facts": (Facts, AsyncFacts), "lessons": (Lessons, AsyncLessons), "graph": (Graph, AsyncGraph)}


def _public(cls: type) -> set[str]:
    return {n for n in dir(cls) if not n.startswith("_")}


def run_property(fz: Fuzzer, method: str, *, use_async: bool = False) -> None:
    strategy = calls(fz.seeds, fz.folder, fz.setup.dim)[method]

    @FUZZ
    @given(call=strategy)
    def prop(call: tuple[tuple[Any, ...], dict[str, Any]]) -> None:
        args, kwargs = call
        fz.check(method, args, kwargs, use_async=use_async)

    prop()


# ----------------------------------------------------------------------------- coverage
@pytest.mark.parametrize("cls", [Memory, AsyncMemory], ids=lambda c: c.__name__)
def test_every_public_method_is_fuzzed(cls: type) -> None:
    """A new public method needs a strategy in tests/fuzz/calls.py (or a reason in UNFUZZED).

    If this fails, add the method to ``calls()`` with hostile arguments for each parameter.
    """
    fuzzed = {m for m in METHODS if "." not in m}
    assert sorted(_public(cls) - fuzzed - set(UNFUZZED)) == []
    assert sorted(fuzzed - _public(cls)) == []


@pytest.mark.parametrize("sub", sorted(SUBS))
def test_every_sub_api_method_is_fuzzed(sub: str) -> None:
    """Each method of mem.facts, mem.lessons and mem.graph (sync and async) has a strategy."""
    fuzzed = {m.split(".", 1)[1] for m in METHODS if m.startswith(f"{sub}.")}
    for cls in SUBS[sub]:
        assert sorted(_public(cls) ^ fuzzed) == [], cls.__name__


def test_async_signatures_match_sync() -> None:
    """The async facade is fuzzed with the sync table, so the two must take the same parameters."""
    for name in METHODS:
        owner, _, attr = name.rpartition(".")
        sync_cls, async_cls = SUBS[owner] if owner else (Memory, AsyncMemory)
        sync = inspect.signature(getattr(sync_cls, attr))
        asyn = inspect.signature(getattr(async_cls, attr))
        assert list(sync.parameters) == list(asyn.parameters), name


# ----------------------------------------------------------------------------- the property
@pytest.mark.parametrize("method", METHODS)
def test_sync_call_raises_only_library_errors_and_keeps_the_store(fuzzer: Fuzzer, method: str) -> None:
    """Hostile arguments: a result or an ElasticMemoryError, and no change to the store when it raised.

    If this fails, the message names the exception, the method and the (shrunk) arguments:
    validate that argument before any I/O, or roll the write back whole.
    """
    run_property(fuzzer, method)


#: The async facade hands the same coroutines to the core: one setup is enough for it.
ON_FAKE = pytest.mark.parametrize("setup", [SETUPS[0]], ids=[SETUPS[0].name], indirect=True)
#: Validation rules: one setup (no embedder) is enough.
ON_NONE = pytest.mark.parametrize("setup", [SETUPS[1]], ids=[SETUPS[1].name], indirect=True)


@ON_FAKE
@pytest.mark.parametrize("method", METHODS)
def test_async_call_raises_only_library_errors_and_keeps_the_store(fuzzer: Fuzzer, method: str) -> None:
    """The same property through AsyncMemory (each example awaited on a fresh event loop)."""
    run_property(fuzzer, method, use_async=True)


# ----------------------------------------------------------------------------- open / for_agent
@FUZZ
@given(
    name=hs.names(),
    agent_id=hs.names(),
    options=st.fixed_dictionaries(
        {},
        optional={
            "vector_index": hs.names(),
            "ram_budget_bytes": hs.ints(),
            "ann_threshold": hs.ints(),
            "timeout": hs.floats(),
            "context_tokens": hs.ints(),
            "recall": hs.bad_scalars(),
            "loop": hs.bad_scalars(),
            "clock": hs.bad_scalars(),
            "embedder": st.one_of(hs.names(), st.just([None, "x"])),
        },
    ),
)
def test_open_raises_only_library_errors(
    tmp_path_factory: pytest.TempPathFactory, name: Any, agent_id: Any, options: dict[str, Any]
) -> None:
    """Memory.open with a hostile path (kept inside a temporary folder), agent id and options."""
    folder = tmp_path_factory.mktemp("open")
    path = confined(folder, name)
    options.setdefault("embedder", None)
    with contextlib.suppress(ElasticMemoryError):
        Memory.open(path, agent_id=agent_id, **options).close()


@FUZZ
@given(agent_id=hs.names(), pools=st.one_of(st.lists(hs.names(), max_size=3), hs.bad_scalars()))
def test_for_agent_raises_only_library_errors(
    tmp_path_factory: pytest.TempPathFactory, agent_id: Any, pools: Any
) -> None:
    """Memory.for_agent with a hostile agent id (it names a folder) and pool names."""
    home = tmp_path_factory.mktemp("home")
    with contextlib.suppress(ElasticMemoryError):
        Memory.for_agent(agent_id, home=home, pools=pools, embedder=None).close()
    # nothing escapes the home folder: every file the federation made is under it
    assert all(Path(p).resolve().is_relative_to(home.resolve()) for p in home.rglob("*"))


# ----------------------------------------------------------------------------- findings as behaviour
@ON_NONE
def test_an_id_with_a_trailing_newline_is_refused(fuzzer: Fuzzer) -> None:
    """``$`` in the id pattern matches before a final newline: ``"a\\n"`` must be refused like ``"a\\x00"``."""
    with pytest.raises(ElasticMemoryError):
        fuzzer.mem.remember("text", id="a\n")


@ON_NONE
def test_a_huge_or_filter_is_a_usage_error(fuzzer: Fuzzer) -> None:
    """20,000 ``$or`` branches are refused before any I/O (UsageError), not failed by the database."""
    from elastic_memory import UsageError

    with pytest.raises(UsageError):
        fuzzer.mem.recall("dog", filters={"metadata": {"$or": [{"n": i} for i in range(20_000)]}})
