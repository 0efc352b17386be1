"""Metadata filters: $and/$or/$not (nested), $contains, $icontains and $empty, on every recall path."""

from __future__ import annotations

from typing import Any

import pytest

from elastic_memory import Filters, Memory, UsageError

MODES = ["keyword", "semantic", "hybrid"]
DOCS = {
    "a": {"lang": "en", "n": 1, "tags": ["red", "blue"], "title": "Quarterly REPORT"},
    "b": {"lang": "pt", "n": 2, "tags": ["green"], "title": "notes", "empty_list": []},
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
    ],
)
def test_bad_logic_or_operands_are_usage_errors(metadata: dict[str, Any]) -> None:
    with pytest.raises(UsageError):
        Filters.parse({"metadata": metadata})


def test_nesting_is_bounded() -> None:
    deep: dict[str, Any] = {"a": 1}
    for _ in range(40):
        deep = {"$not": deep}
    with pytest.raises(UsageError, match="deeper than"):
        Filters.parse({"metadata": deep})
