"""Metadata filters: $and/$or/$not (nested), $contains, $icontains, $empty, $like, $ilike, $between and
equality on list-valued fields, on every recall path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from elastic_memory import Filters, Memory, UsageError

MODES = ["keyword", "semantic", "hybrid"]
DOCS = {
    "a": {"lang": "en", "n": 1, "tags": ["red", "blue"], "title": "Quarterly REPORT"},
    "b": {"lang": "pt", "n": 2, "tags": ["green"], "title": "notes", "empty_list": [], "code": "50%_off*[x]"},
    "c": {"lang": "en", "n": 3, "tags": [], "title": ""},
    "d": {"n": 4, "title": None, "nums": [1, 2.5, True]},
}


@pytest.fixture
def seeded(mem: Memory) -> Memory:
    mem.remember_many(
        [{"content": f"document {key} about reports", "id": key, "metadata": md} for key, md in DOCS.items()]
    )
    return mem


def _ids(mem: Memory, metadata: dict[str, Any], mode: str = "keyword") -> set[str]:
    return {h.id for h in mem.recall("document reports", k=10, mode=mode, filters={"metadata": metadata})}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        ({"$or": [{"lang": "pt"}, {"n": {"$gte": 4}}]}, {"b", "d"}),
        ({"$and": [{"lang": "en"}, {"n": {"$gt": 1}}]}, {"c"}),
        ({"$not": {"lang": "en"}}, {"b", "d"}),
        ({"$not": {"n": {"$gt": 2}}}, {"a", "b"}),
        ({"lang": "en", "$not": {"$or": [{"n": 1}, {"n": 2}]}}, {"c"}),
        ({"$or": [{"$and": [{"lang": "en"}, {"n": 1}]}, {"$not": {"n": {"$exists": True}}}]}, {"a"}),
        ({"$not": {"$not": {"lang": "pt"}}}, {"b"}),
    ],
)
def test_logical_combinations_select_exactly(
    seeded: Memory, mode: str, metadata: dict[str, Any], expected: set[str]
) -> None:
    assert _ids(seeded, metadata, mode) == expected


def test_not_of_a_comparison_matches_a_missing_key(seeded: Memory) -> None:
    """NOT is two-valued: a key a comparison cannot test counts as not matching it."""
    assert _ids(seeded, {"$not": {"lang": {"$gt": "a"}}}) == {"d"}


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        ({"tags": {"$contains": "red"}}, {"a"}),
        ({"tags": {"$contains": "re"}}, set()),
        ({"title": {"$contains": "REP"}}, {"a"}),
        ({"title": {"$contains": "rep"}}, set()),
        ({"nums": {"$contains": 2.5}}, {"d"}),
        ({"nums": {"$contains": True}}, {"d"}),
        ({"nums": {"$contains": 1}}, {"d"}),
        ({"n": {"$contains": 1}}, set()),
        ({"title": {"$icontains": "report"}}, {"a"}),
        ({"tags": {"$icontains": "RED"}}, {"a"}),
        ({"$or": [{"tags": {"$contains": "green"}}, {"tags": {"$contains": "blue"}}]}, {"a", "b"}),
    ],
)
def test_contains(seeded: Memory, metadata: dict[str, Any], expected: set[str]) -> None:
    """A list holding the value, or a string holding it as a substring; $icontains ignores case."""
    assert _ids(seeded, metadata) == expected


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        ({"title": {"$empty": True}}, {"c", "d"}),
        ({"tags": {"$empty": True}}, {"c", "d"}),
        ({"empty_list": {"$empty": True}}, {"a", "b", "c", "d"}),
        ({"tags": {"$empty": False}}, {"a", "b"}),
        ({"n": {"$empty": True}}, set()),
    ],
)
def test_empty_is_missing_null_empty_string_or_empty_list(
    seeded: Memory, metadata: dict[str, Any], expected: set[str]
) -> None:
    assert _ids(seeded, metadata) == expected


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        ({"tags": "red"}, {"a"}),
        ({"tags": {"$eq": "blue"}}, {"a"}),
        ({"tags": "re"}, set()),
        ({"tags": {"$ne": "red"}}, {"b", "c", "d"}),
        ({"tags": {"$in": ["green", "blue"]}}, {"a", "b"}),
        ({"tags": {"$nin": ["red", "green"]}}, {"c", "d"}),
        ({"nums": 2.5}, {"d"}),
        ({"nums": True}, {"d"}),
        ({"nums": {"$in": [1]}}, {"d"}),
        ({"$not": {"tags": "red"}}, {"b", "c", "d"}),
    ],
)
def test_equality_on_a_list_means_the_list_holds_the_value(
    seeded: Memory, mode: str, metadata: dict[str, Any], expected: set[str]
) -> None:
    """{"tags": "red"} finds a list holding "red"; $ne: lists without it (and missing keys)."""
    assert _ids(seeded, metadata, mode) == expected


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        ({"title": {"$like": "Quarterly%"}}, {"a"}),
        ({"title": {"$like": "quarterly%"}}, set()),
        ({"title": {"$ilike": "quarterly%"}}, {"a"}),
        ({"title": {"$like": "n_tes"}}, {"b"}),
        ({"title": {"$like": "%"}}, {"a", "b", "c"}),
        ({"tags": {"$like": "gr%"}}, {"b"}),
        ({"tags": {"$ilike": "RE_"}}, {"a"}),
        ({"n": {"$like": "1%"}}, set()),
        ({"code": {"$like": "50%"}}, {"b"}),
        ({"code": {"$like": r"50\%\_off*[x]"}}, {"b"}),
        ({"code": {"$like": r"5\_%"}}, set()),
        ({"$not": {"title": {"$like": "%e%"}}}, {"c", "d"}),
    ],
)
def test_like_and_ilike_match_sql_like_patterns(
    seeded: Memory, mode: str, metadata: dict[str, Any], expected: set[str]
) -> None:
    """% is any run, _ one character, a backslash makes the next one literal; $ilike ignores ASCII case."""
    assert _ids(seeded, metadata, mode) == expected


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        ({"n": {"$between": [2, 3]}}, {"b", "c"}),
        ({"n": {"$between": [1.5, 2.5]}}, {"b"}),
        ({"n": {"$between": [4, 4]}}, {"d"}),
        ({"lang": {"$between": ["a", "f"]}}, {"a", "c"}),
        ({"$not": {"n": {"$between": [2, 3]}}}, {"a", "d"}),
    ],
)
def test_between_includes_both_ends(seeded: Memory, mode: str, metadata: dict[str, Any], expected: set[str]) -> None:
    assert _ids(seeded, metadata, mode) == expected


def test_logic_filters_a_listing_too(seeded: Memory) -> None:
    """An empty query lists memories with the same filters."""
    hits = seeded.recall("", filters={"metadata": {"$or": [{"n": 1}, {"n": 4}]}})
    assert {h.id for h in hits} == {"a", "d"}


def test_parse_keeps_the_tree() -> None:
    parsed = Filters.parse({"metadata": {"a": 1, "$or": [{"b": 2}, {"$not": {"c": {"$empty": True}}}]}})
    assert parsed.metadata == (
        ("a", "$eq", 1),
        ("", "$or", ((("b", "$eq", 2),), (("", "$not", (("c", "$empty", True),)),))),
    )


@pytest.mark.parametrize(
    "metadata",
    [
        {"$or": []},
        {"$or": {"a": 1}},
        {"$and": [{}]},
        {"$not": []},
        {"$not": {}},
        {"$xor": [{"a": 1}]},
        {"a": {"$icontains": 3}},
        {"a": {"$empty": "yes"}},
        {"a": {"$contains": [1]}},
        {"a": {"$contains": float("nan")}},
        {"a": {"$like": 3}},
        {"a": {"$ilike": None}},
        {"a": {"$like": "ends with \\"}},
        {"a": {"$between": [1]}},
        {"a": {"$between": "1,3"}},
        {"a": {"$between": [1, "3"]}},
        {"a": {"$between": [True, 3]}},
        {"a": {"$between": [None, 3]}},
        {"a": {"$between": [3, 1]}},
        {"a": {"$between": [1, float("inf")]}},
    ],
)
def test_bad_logic_or_operands_are_usage_errors(metadata: dict[str, Any]) -> None:
    with pytest.raises(UsageError):
        Filters.parse({"metadata": metadata})


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ({"a": {"$like": "x\\"}}, "ends with a lone backslash"),
        ({"a": {"$ilike": "a\x00%"}}, "contains NUL"),
        ({"a": {"$between": [3, 1]}}, r"is empty \(low > high\); swap them"),
        ({"a": {"$between": [1, "z"]}}, "two numbers or two strings"),
    ],
)
def test_new_operators_say_what_is_wrong(metadata: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        Filters.parse({"metadata": metadata})


def test_a_like_pattern_sqlite_would_find_too_complex_is_a_usage_error(tmp_path: Path) -> None:
    """SQLite refuses LIKE/GLOB patterns over 50,000 bytes with a storage error: refused up front instead."""
    with Memory.open(tmp_path / "m.db", embedder=None) as mem:
        mem.remember("x", metadata={"s": "x"})
        with pytest.raises(UsageError, match="shorter part"):
            mem.recall("", filters={"metadata": {"s": {"$like": "*" * 20_000}}})


def test_a_like_pattern_may_end_with_an_escaped_backslash() -> None:
    assert Filters.parse({"metadata": {"a": {"$like": "x\\\\"}}}).metadata == (("a", "$like", "x\\\\"),)


def test_parse_keeps_between_as_one_condition() -> None:
    assert Filters.parse({"metadata": {"n": {"$between": [1, 3]}}}).metadata == (("n", "$between", (1, 3)),)


def test_nesting_is_bounded() -> None:
    deep: dict[str, Any] = {"a": 1}
    for _ in range(40):
        deep = {"$not": deep}
    with pytest.raises(UsageError, match="deeper than"):
        Filters.parse({"metadata": deep})
