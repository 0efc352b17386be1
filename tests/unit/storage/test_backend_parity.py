"""SQLite and PostgreSQL answer the same filters the same way, on the values where their SQL differs.

Each case stores a few memories and runs one metadata filter on both backends; the ids
returned must be the same. The cases are the ones a naive port gets wrong: integers past
float precision, dotted keys that look like array indexes, non-ASCII case folding, text
ordering, and NUL / U+0001 in tags and metadata (PostgreSQL's text cannot hold NUL).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from elastic_memory import AsyncMemory

BIG = 2**62 + 1

#: (what the case is about, the memories' metadata, the filter, the ids that must match)
CASES: list[tuple[str, list[dict[str, Any]], dict[str, Any], list[str]]] = [
    ("integers past float precision", [{"n": BIG}, {"n": BIG - 1}], {"n": BIG}, ["m0"]),
    ("integers past float precision in $in", [{"n": BIG}, {"n": BIG - 1}], {"n": {"$in": [BIG - 1]}}, ["m1"]),
    ("an int equals the same float", [{"n": 3}, {"n": 3.5}], {"n": {"$eq": 3.0}}, ["m0"]),
    ("a float compares by all its digits", [{"n": 0.1 + 0.2}, {"n": 0.3}], {"n": 0.1 + 0.2}, ["m0"]),
    ("$gt on 17-digit floats", [{"n": 0.30000000000000004}, {"n": 0.3}], {"n": {"$gt": 0.3}}, ["m0"]),
    ("$in with ints and floats", [{"n": 1}, {"n": 2.5}, {"n": 3}], {"n": {"$in": [1, 2.5]}}, ["m0", "m1"]),
    ("a digit key is an object key, not an index", [{"a": ["x", "y"]}, {"a": {"0": "x"}}], {"a.0": "x"}, ["m1"]),
    ("$icontains folds ASCII only", [{"t": "ÉCOLE"}, {"t": "école"}], {"t": {"$icontains": "éc"}}, ["m1"]),
    ("$icontains on list items", [{"t": ["Tea", "milk"]}, {"t": ["coffee"]}], {"t": {"$icontains": "tea"}}, ["m0"]),
    ("text order is bytewise", [{"s": "B"}, {"s": "a"}, {"s": "é"}], {"s": {"$gt": "Z"}}, ["m1", "m2"]),
    ("$ne matches a missing key", [{"c": "red"}, {}], {"c": {"$ne": "red"}}, ["m1"]),
    ("$nin matches a missing key", [{"c": "red"}, {}], {"c": {"$nin": ["red"]}}, ["m1"]),
    ("$eq null matches missing and null", [{"c": None}, {}, {"c": 0}], {"c": None}, ["m0", "m1"]),
    ("a bool is not a number", [{"f": True}, {"f": 1}], {"f": 1}, ["m1"]),
    ("$empty", [{"e": ""}, {"e": []}, {"e": "x"}, {}], {"e": {"$empty": True}}, ["m0", "m1", "m3"]),
    ("NUL in a metadata value", [{"k": "a\x00b"}, {"k": "ab"}], {"k": "a\x00b"}, ["m0"]),
    ("U+0001 in a metadata value", [{"k": "a\x01b"}, {"k": "a\x01\x01b"}], {"k": "a\x01b"}, ["m0"]),
    ("a key with a dash", [{"due-date": 1}, {"due_date": 1}], {"due-date": 1}, ["m0"]),
    ("a dotted path into nested objects", [{"a": {"b": {"c": 2}}}, {"a": {"b": 2}}], {"a.b.c": 2}, ["m0"]),
    # Equality on a list-valued field: the list holds the value ($ne: it does not; $in: any item).
    ("equality on a list", [{"t": ["plan", "x"]}, {"t": ["x"]}, {"t": "plan"}], {"t": "plan"}, ["m0", "m2"]),
    ("$ne on a list", [{"t": ["plan", "x"]}, {"t": ["x"]}, {"t": "plan"}, {}], {"t": {"$ne": "plan"}}, ["m1", "m3"]),
    ("$in on a list", [{"t": ["a", 2]}, {"t": [3]}, {"t": []}, {"t": 2}], {"t": {"$in": ["z", 2]}}, ["m0", "m3"]),
    ("$nin on a list", [{"t": ["a", 2]}, {"t": [3]}, {"t": []}, {}], {"t": {"$nin": [2, 3]}}, ["m2", "m3"]),
    ("list items past float precision", [{"n": [BIG]}, {"n": [BIG - 1]}], {"n": BIG}, ["m0"]),
    ("a list's bool is not a number", [{"f": [True]}, {"f": [1]}], {"f": 1}, ["m1"]),
    ("$eq null and a list holding null", [{"c": [None]}, {"c": [0]}, {"c": []}], {"c": None}, ["m0"]),
    ("a list holding the text, not a substring", [{"t": ["planning"]}, {"t": "planning"}], {"t": "plan"}, []),
    # $like / $ilike: SQL LIKE patterns on strings and list items; $between: inclusive, typed.
    (
        "$like is case-sensitive",
        [{"s": "Report 2024"}, {"s": "report 2024"}, {"s": "Report 24"}],
        {"s": {"$like": "Report 20__"}},
        ["m0"],
    ),
    ("$like with an escaped %", [{"s": "50% off"}, {"s": "500 off"}], {"s": {"$like": r"50\%%"}}, ["m0"]),
    ("$like: GLOB characters are literal", [{"s": "a*b?[c]"}, {"s": "axb?[c]"}], {"s": {"$like": "a*b?[c]"}}, ["m0"]),
    (
        "$like: _ is one character",
        [{"s": "aé"}, {"s": "ab"}, {"s": "a"}, {"s": "abc"}],
        {"s": {"$like": "a_"}},
        ["m0", "m1"],
    ),
    ("$like on list items", [{"t": ["Plan A", "x"]}, {"t": ["plan b"]}], {"t": {"$like": "Plan%"}}, ["m0"]),
    ("$like does not match numbers", [{"n": 30}, {"n": "30"}], {"n": {"$like": "3%"}}, ["m1"]),
    ("$ilike folds ASCII only", [{"s": "ÉCOLE"}, {"s": "école"}, {"s": "Ecole"}], {"s": {"$ilike": "éc%"}}, ["m1"]),
    ("$ilike on list items", [{"t": ["PLAN a"]}, {"t": ["x"]}], {"t": {"$ilike": "plan%"}}, ["m0"]),
    (
        "$between is inclusive and typed",
        [{"n": 1}, {"n": 2.5}, {"n": 3}, {"n": "2"}, {"n": 4}],
        {"n": {"$between": [1, 3]}},
        ["m0", "m1", "m2"],
    ),
    (
        "$between on strings is bytewise",
        [{"s": "B"}, {"s": "a"}, {"s": "é"}],
        {"s": {"$between": ["A", "b"]}},
        ["m0", "m1"],
    ),
]


@pytest.fixture(params=["sqlite", "postgres"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new store on each backend."""
    if request.param == "sqlite":
        return str(tmp_path / "memory.db")
    return str(request.getfixturevalue("pg_location"))


async def _matching(where: str, metadata: list[dict[str, Any]], flt: dict[str, Any]) -> list[str]:
    async with await AsyncMemory.open(where, embedder=None) as mem:
        await mem.remember_many(
            [{"content": f"note {i}", "id": f"m{i}", "metadata": m} for i, m in enumerate(metadata)], dedupe=False
        )
        return sorted(h.id for h in await mem.recall("", k=50, filters={"metadata": flt}))


@pytest.mark.parametrize(("case", "metadata", "flt", "expected"), CASES, ids=[c[0] for c in CASES])
async def test_a_metadata_filter_matches_the_same_memories(
    where: str, case: str, metadata: list[dict[str, Any]], flt: dict[str, Any], expected: list[str]
) -> None:
    assert await _matching(where, metadata, flt) == expected, case


@pytest.mark.parametrize("tag", ["nul\x00tag", "soh\x01tag", "plain"])
async def test_a_tag_with_control_characters_round_trips_and_filters(where: str, tag: str) -> None:
    async with await AsyncMemory.open(where, embedder=None) as mem:
        mid = await mem.remember("tagged note", tags=[tag])
        await mem.remember("other note", tags=["else"])
        assert (await mem.get(mid)).tags == (tag,)  # type: ignore[union-attr]
        assert [h.id for h in await mem.recall("", filters={"tags": [tag]})] == [mid]


async def test_metadata_with_control_characters_round_trips(where: str) -> None:
    value = {"k\x00": "v\x00\x01", "nested": ["\x01", {"x": "\\u0000"}]}
    async with await AsyncMemory.open(where, embedder=None) as mem:
        mid = await mem.remember("a note", metadata=value)
        assert (await mem.get(mid)).metadata == value  # type: ignore[union-attr]
