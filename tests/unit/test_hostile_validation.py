"""Hostile arguments get a UsageError naming the argument, and the failed call changes nothing.

Lone surrogates in every text the API takes, metadata nested past the limit, import files
that are not JSON or not UTF-8, names with a trailing newline, filters larger than the
documented limits. Each test opens a fresh store; ``backend`` runs it on SQLite and PostgreSQL.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from elastic_memory import Edge, Memory, UsageError
from elastic_memory._validate import MAX_METADATA_DEPTH
from elastic_memory.filters import MAX_FILTER_CONDITIONS, MAX_FILTER_VALUES
from elastic_memory.testing import FakeEmbedder

LONE = "\ud800"


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Memory]:
    """A fresh store holding one memory (id ``"known"``), on a file or a PostgreSQL schema."""
    location = str(request.getfixturevalue("pg_location")) if request.param == "postgres" else str(tmp_path / "m.db")
    with Memory.open(location, embedder=FakeEmbedder()) as mem:
        mem.remember("the known memory", id="known", tags=["kept"], metadata={"k": "v"})
        yield mem


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[Memory]:
    """A fresh SQLite store (the memory loop, facts and graph run on SQLite only)."""
    with Memory.open(tmp_path / "m.db", embedder=FakeEmbedder()) as mem:
        mem.remember("the known memory", id="known")
        yield mem


def _snapshot(mem: Memory) -> list[tuple[str, str, tuple[str, ...], str]]:
    return sorted((r.id, r.content, tuple(r.tags), repr(r.metadata)) for r in mem.get_many(["known"]))


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": 1}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


# -------------------------------------------------------------- lone surrogates
WRITES: dict[str, Callable[[Memory], Any]] = {
    "tags": lambda m: m.remember("x", tags=["ok", LONE]),
    "metadata key": lambda m: m.remember("x", metadata={LONE: 1}),
    "metadata value": lambda m: m.remember("x", metadata={"k": LONE}),
    "nested metadata value": lambda m: m.remember("x", metadata={"k": [{"deep": "a" + LONE}]}),
    "id": lambda m: m.remember("x", id="a" + LONE),
    "session_id": lambda m: m.remember("x", session_id=LONE),
    "agent_id": lambda m: m.remember("x", agent_id=LONE),
    "pool": lambda m: m.remember("x", scope="shared", pool=LONE),
    "update tags": lambda m: m.update("known", tags=[LONE]),
    "update metadata": lambda m: m.update("known", metadata={"k": LONE}),
    "update id": lambda m: m.update(LONE, importance=0.1),
    "forget": lambda m: m.forget(["known", LONE]),
    "archive": lambda m: m.archive([LONE]),
    "remember_many": lambda m: m.remember_many(["fine", {"content": "bad", "tags": [LONE]}]),
}
NAMES = {
    "tags": "tags",
    "metadata key": "a metadata key",
    "metadata value": "metadata['k']",
    "nested metadata value": "metadata['k'][0]['deep']",
    "id": "id",
    "session_id": "session_id",
    "agent_id": "agent_id",
    "pool": "pool",
    "update tags": "tags",
    "update metadata": "metadata['k']",
    "update id": "id",
    "forget": "id",
    "archive": "id",
    "remember_many": "items[1]: tags",
}


@pytest.mark.parametrize("call", list(WRITES))
def test_a_lone_surrogate_in_a_write_is_refused_and_nothing_changes(store: Memory, call: str) -> None:
    """Every text a write takes is checked before any I/O; the message names the argument.

    If this fails, check that the argument goes through _validate (build_row, check_id, check_tags).
    """
    before = _snapshot(store)
    with pytest.raises(UsageError, match=f"^{re.escape(NAMES[call])}"):
        WRITES[call](store)
    assert _snapshot(store) == before
    assert [h.id for h in store.recall("", k=10)] == ["known"]


READS: dict[str, Callable[[Memory], Any]] = {
    "get": lambda m: m.get(LONE),
    "get_many": lambda m: m.get_many(["known", LONE]),
    "vectors": lambda m: m.vectors([LONE]),
    "tags prefix": lambda m: m.tags(prefix=LONE),
    "filter tags": lambda m: m.recall("known", filters={"tags": ["kept", LONE]}),
    "filter agent_id": lambda m: m.recall("known", filters={"agent_id": LONE}),
    "filter session_id": lambda m: m.recall("known", filters={"session_id": [LONE]}),
    "filter pool": lambda m: m.recall("known", filters={"pool": LONE}),
    "filter metadata": lambda m: m.recall("known", filters={"metadata": {"k": LONE}}),
    "filter metadata $in": lambda m: m.recall("known", filters={"metadata": {"k": {"$in": ["v", LONE]}}}),
    "filter metadata $or": lambda m: m.recall("", filters={"metadata": {"$or": [{"k": {"$icontains": LONE}}]}}),
}


@pytest.mark.parametrize("call", list(READS))
def test_a_lone_surrogate_in_a_read_is_a_usage_error(store: Memory, call: str) -> None:
    """Ids, tag prefixes and filter values are checked like writes, never UnicodeEncodeError.

    If this fails, check filters._strings/_scalar, _validate.check_id and check_prefix.
    """
    with pytest.raises(UsageError, match=r"not valid Unicode|lone surrogates"):
        READS[call](store)


LOOP_CALLS: dict[str, Callable[[Memory], Any]] = {
    "facts.set": lambda m: m.facts.set("user.name", "Ana" + LONE),
    "graph.add_edges": lambda m: m.graph.add_edges([Edge("known", "b" + LONE, "links", "test")]),
    "graph.replace_source": lambda m: m.graph.replace_source("test", [Edge("known", "b", "links" + LONE, "test")]),
    "graph.neighbors": lambda m: m.graph.neighbors(LONE),
    "graph.entity": lambda m: m.graph.entity(LONE),
}


@pytest.mark.parametrize("call", list(LOOP_CALLS))
def test_a_lone_surrogate_in_facts_or_the_graph_is_refused(sqlite_store: Memory, call: str) -> None:
    """Facts and graph edges check their text like memories do, and write nothing.

    If this fails, check check_fact_value, storage.graph_tables._edge_row and graph.api._name.
    """
    with pytest.raises(UsageError, match="not valid Unicode"):
        LOOP_CALLS[call](sqlite_store)
    assert sqlite_store.facts.list() == []
    assert sqlite_store.graph.stats()["memory_edges"] == 0


def test_valid_non_ascii_text_is_still_accepted(store: Memory) -> None:
    """The check refuses lone surrogates only: accents, CJK and emoji (surrogate pairs in UTF-16) pass.

    If this fails, check that check_text encodes instead of refusing non-ASCII.
    """
    mid = store.remember(
        "ünïcödé 中文 🐶", tags=["café", "🐶"], metadata={"cle": ["中文", {"é": "🦴"}]}, session_id="séance"
    )
    record = store.get(mid)
    assert record is not None
    assert record.tags == ("café", "🐶")
    assert record.metadata == {"cle": ["中文", {"é": "🦴"}]}
    assert [h.id for h in store.recall("", filters={"tags": "🐶", "metadata": {"cle": {"$contains": "中文"}}})] == [mid]


# ------------------------------------------------------------- metadata depth
@pytest.mark.parametrize("depth", [MAX_METADATA_DEPTH + 1, 900, 100_000])
def test_metadata_nested_past_the_limit_is_refused(store: Memory, depth: int) -> None:
    """Nesting is checked without recursion: a UsageError naming the limit, never RecursionError.

    If this fails, check _validate._walk_metadata.
    """
    with pytest.raises(UsageError, match="MAX_METADATA_DEPTH"):
        store.remember("deep", metadata=_nested(depth))
    with pytest.raises(UsageError, match="MAX_METADATA_DEPTH"):
        store.update("known", metadata=_nested(depth))
    assert _snapshot(store) == [("known", "the known memory", ("kept",), "{'k': 'v'}")]


def test_metadata_at_the_depth_limit_round_trips(store: Memory) -> None:
    """Exactly MAX_METADATA_DEPTH levels are accepted and come back equal.

    If this fails, check the off-by-one in _walk_metadata (the top dict is level 1).
    """
    deep = _nested(MAX_METADATA_DEPTH)
    mid = store.remember("deep enough", metadata=deep)
    record = store.get(mid)
    assert record is not None and record.metadata == deep


# ------------------------------------------------------------------ import
def test_import_of_a_line_nested_100000_deep_is_a_usage_error(sqlite_store: Memory, tmp_path: Path) -> None:
    """The JSON parser's RecursionError becomes a UsageError naming the file and line.

    If this fails, check maintenance.export.import_jsonl's except clause.
    """
    path = tmp_path / "deep.jsonl"
    path.write_text("\n" + "[" * 100_000 + "\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"deep\.jsonl:2: not JSON \(maximum recursion depth"):
        sqlite_store.import_jsonl(path)
    assert [h.id for h in sqlite_store.recall("", k=10)] == ["known"]


# ------------------------------------------------------------ trailing newlines
def test_an_id_with_a_trailing_newline_is_refused(store: Memory) -> None:
    """Ids are matched whole: ``$`` would let ``"abc\\n"`` through.

    If this fails, check that _validate.check_id uses fullmatch.
    """
    with pytest.raises(UsageError, match=r"^id must be"):
        store.remember("x", id="abc\n")
    assert store.get_many(["abc", "known"])[0].id == "known"


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"agent_id": "alice\n"}, "agent_id"),
        ({"agent_id": "alice", "pools": ["team\n"]}, "a pool name"),
        ({"agent_id": "alice", "pools": ["team", "ops" + LONE]}, "a pool name"),
        ({"agent_id": "alice", "moderators": {"global": ["root\n"]}}, "moderator"),
        ({"agent_id": "alice", "vector_index": "bogus"}, "vector_index"),
        ({"agent_id": "alice", "timeout": "soon"}, "timeout"),
        ({"agent_id": "alice", "not_an_option": 1}, "unknown option"),
        ({"agent_id": "alice", "weights": 0.5}, "weights"),
        ({"agent_id": "alice", "on_degraded": "log"}, "on_degraded"),
    ],
    ids=[
        "agent",
        "pool",
        "pool-surrogate",
        "moderator",
        "vector_index",
        "timeout",
        "unknown",
        "weights",
        "on_degraded",
    ],
)
def test_for_agent_checks_every_argument_before_creating_a_folder(
    tmp_path: Path, kwargs: dict[str, Any], named: str
) -> None:
    """A bad agent id, pool, moderator or option is a UsageError and the home folder stays empty.

    If this fails, check federation.config.check_name (fullmatch) and the checks at the top of build_federation.
    """
    home = tmp_path / "home"
    home.mkdir()
    with pytest.raises(UsageError, match=named):
        Memory.for_agent(home=home, embedder=FakeEmbedder(), **kwargs)
    assert list(os.walk(home)) == [(str(home), [], [])]


@pytest.mark.parametrize("home", [f"/tmp/elastic{LONE}memory", "/tmp/a\x00b", 42])
def test_for_agent_refuses_a_home_the_file_system_cannot_name(home: Any) -> None:
    """The home folder is checked like any other argument: UsageError, never TypeError or UnicodeEncodeError.

    If this fails, check _validate.check_path in build_federation.
    """
    with pytest.raises(UsageError, match=r"^home must be a path"):
        Memory.for_agent("alice", home=home, embedder=FakeEmbedder())


@pytest.mark.parametrize("path", [f"memory{LONE}.db", "memory\x00.db"])
def test_open_refuses_a_path_the_file_system_cannot_name(path: str) -> None:
    """Memory.open checks its path before SQLite sees it.

    If this fails, check MemoryCore._checked.
    """
    with pytest.raises(UsageError, match=r"^path must be a path"):
        Memory.open(path, embedder=None)


# ------------------------------------------------------------------ filter size
def test_an_or_of_20000_branches_is_a_usage_error_naming_the_limit(store: Memory) -> None:
    """Filters are bounded at parse time, well under SQLite's expression depth of 1,000.

    If this fails, check filters._Budget.condition.
    """
    branches = [{"k": f"v{i}"} for i in range(20_000)]
    with pytest.raises(UsageError, match="MAX_FILTER_CONDITIONS"):
        store.recall("known", filters={"metadata": {"$or": branches}})


def test_an_in_list_past_the_limit_is_a_usage_error_naming_the_limit(store: Memory) -> None:
    """``$in`` lists and list filters share one budget of values.

    If this fails, check filters._Budget.take.
    """
    with pytest.raises(UsageError, match="MAX_FILTER_VALUES"):
        store.recall("known", filters={"metadata": {"k": {"$in": list(range(MAX_FILTER_VALUES + 1))}}})
    with pytest.raises(UsageError, match="MAX_FILTER_VALUES"):
        store.recall("known", filters={"tags": [f"t{i}" for i in range(MAX_FILTER_VALUES + 1)]})


def test_a_filter_nested_past_the_depth_limit_is_a_usage_error(store: Memory) -> None:
    """``$not`` nested 10,000 deep is refused at parse time, never RecursionError.

    If this fails, check filters._logic's depth check.
    """
    nested: dict[str, Any] = {"k": "v"}
    for _ in range(10_000):
        nested = {"$not": nested}
    with pytest.raises(UsageError, match="deeper than 32 levels"):
        store.recall("known", filters={"metadata": nested})


@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
def test_a_filter_at_every_limit_runs(store: Memory, mode: str) -> None:
    """The largest filter the limits allow runs on the backend: the limits stay under the engine's own.

    MAX_FILTER_CONDITIONS conditions (30 ``$not`` around an ``$or`` of the costliest operators,
    31 levels) and MAX_FILTER_VALUES values. If this fails, lower the limits in filters.py.
    """
    nots = 30
    branches: list[dict[str, Any]] = [{"k": {"$in": ["v", *range(MAX_FILTER_VALUES - 2)]}}]
    for i in range(MAX_FILTER_CONDITIONS - nots - 2):
        branches.append({f"n{i}": {"$empty": False}} if i % 2 else {f"s{i}": {"$icontains": "x"}})
    condition: dict[str, Any] = {"$or": branches}
    for _ in range(nots):  # an even number: the same condition
        condition = {"$not": condition}
    hits = store.recall("known memory", mode=mode, filters={"metadata": condition, "tags": ["kept"]})
    assert [h.id for h in hits] == ["known"]


# ----------------------------------------------------- found by the fuzz suite
def test_a_quarantine_id_past_sqlite_integers_is_a_usage_error(sqlite_store: Memory) -> None:
    """Item ids are SQLite integers: ``2**63`` is refused by the check, not by an OverflowError in the driver.

    If this fails, check the item_id range in loop.engine's _item.
    """
    for call in (sqlite_store.release_quarantined, sqlite_store.discard_quarantined):
        with pytest.raises(UsageError, match="item_id"):
            call(2**63)


@pytest.mark.parametrize("edges", [None, 0, "ab", {"src_id": "a"}], ids=["none", "int", "str", "dict"])
def test_graph_edges_that_are_not_a_list_are_a_usage_error(sqlite_store: Memory, edges: Any) -> None:
    """``add_edges`` and ``replace_source`` take an iterable of Edge; anything else names the argument.

    If this fails, check _edges in facade/graph.py.
    """
    with pytest.raises(UsageError, match="edges must be an iterable of Edge"):
        sqlite_store.graph.add_edges(edges)
    with pytest.raises(UsageError, match="edges must be an iterable of Edge"):
        sqlite_store.graph.replace_source("wikilinks", edges)
    assert sqlite_store.graph.stats()["memory_edges"] == 0


def test_a_relation_with_a_lone_surrogate_is_a_usage_error(sqlite_store: Memory) -> None:
    """``graph.neighbors(node, relation)`` checks the relation as it checks the node id."""
    sqlite_store.graph.add_edges([Edge("known", "other", "related", "test")])
    with pytest.raises(UsageError, match="relation"):
        sqlite_store.graph.neighbors("known", LONE)
    assert sqlite_store.graph.neighbors("known", "related") == ["other"]


def test_a_nan_pool_is_a_usage_error(store: Memory) -> None:
    """``recall(pool=nan)`` is refused as a pool that is not a string (NaN never equals itself).

    If this fails, check filters.with_scope.
    """
    with pytest.raises(UsageError, match="pool"):
        store.recall("known", pool=float("nan"))


@pytest.mark.parametrize("pools", [0, "team", b"team", {"team": 1}], ids=["int", "str", "bytes", "dict"])
def test_for_agent_pools_that_are_not_a_list_are_a_usage_error(tmp_path: Path, pools: Any) -> None:
    """``pools="team"`` would be read letter by letter: a list of names is required, and no folder is made."""
    home = tmp_path / "home"
    home.mkdir()
    with pytest.raises(UsageError, match="pools must be a list"):
        Memory.for_agent("alice", home=home, pools=pools, embedder=FakeEmbedder())
    assert list(os.walk(home)) == [(str(home), [], [])]


class _EqualsEveryType(type):
    """A metaclass whose classes compare equal to (and hash like) ``int``: a type check by ``==`` is fooled."""

    def __eq__(cls, other: object) -> bool:
        return True

    def __hash__(cls) -> int:
        return hash(int)


class _PosingAsInt(str, metaclass=_EqualsEveryType):
    pass


def test_a_lone_surrogate_in_a_str_subclass_posing_as_a_number_is_refused(mem: Memory) -> None:
    with pytest.raises(UsageError, match="not valid Unicode"):
        mem.remember("text", metadata={"a": _PosingAsInt("\ud800")})
    assert mem.stats()["total_memories"] == 0
