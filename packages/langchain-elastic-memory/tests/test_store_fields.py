"""ElasticMemoryStore with several index fields: one vector per field, an item scored by its best one.

LangGraph's ``InMemoryStore`` embeds each text at each ``fields`` path (every element of a
``[*]`` path) and scores an item by its best vector. The store keeps those vectors in hidden
field rows of the core; these tests check the scores beside ``InMemoryStore`` (same
embeddings, same items, same queries), and that the field rows follow their item through
puts, deletes, TTL expiry and sweeps without ever showing in a listing.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings
from langgraph.store.base import Item, PutOp
from langgraph.store.memory import InMemoryStore

from langchain_elastic_memory import ElasticMemoryStore

DIMS = 64
_WORD = re.compile(r"\w+")


class Hashed(Embeddings):
    """Words hashed to three signed, unequal weights each: shared words align, ties are rare."""

    def vector(self, text: str) -> list[float]:
        out = [0.0] * DIMS
        for word in _WORD.findall(text.lower()):
            digest = hashlib.sha256(word.encode()).digest()
            for j in range(3):
                sign = 1.0 if digest[16 + j] & 1 else -1.0
                out[digest[j] % DIMS] += sign * (digest[8 + j] / 255 + 0.25)
        if not any(out):
            out[0] = 1e-3
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.vector(text)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / (math.hypot(*a) * math.hypot(*b))


class Clock:
    """Seconds since the epoch, moved only by the test."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


NOTES: dict[str, dict[str, Any]] = {
    "cat": {"text": "The cat sleeps on the warm windowsill", "tags": ["pets", "home", "sleep"]},
    "budget": {"text": "Quarterly budget review with the finance team", "tags": ["finance", "meeting"]},
    "hike": {"text": "Weekend hike to the mountain lake", "tags": ["outdoor", "travel"]},
    "vet": {"text": "Take the dog to the vet on Monday", "tags": ["dog", "health"]},
    "taxes": {"tags": ["money", "deadline", "taxes"]},
    "recipe": {"text": "Lentil soup recipe with cumin and lemon"},
    "flight": {"text": "Book the flight to Lisbon", "tags": ["trip", "lisbon"]},
    "gym": {"text": "Morning run and gym session", "tags": ["fitness", "rest"]},
}
QUERIES = ["pets at home", "money deadline", "travel to the mountains", "health and rest", "soup recipe"]
FIELDS = [["text", "tags"], ["text", "tags[*]"], ["$", "text"], ["tags[0]", "text"]]


def index(fields: list[str]) -> Any:
    return {"dims": DIMS, "embed": Hashed(), "fields": fields}


def store(fields: list[str], clock: Clock | None = None, **kwargs: Any) -> ElasticMemoryStore:
    options: dict[str, Any] = {"clock": clock} if clock is not None else {}
    return ElasticMemoryStore(path=kwargs.pop("path", ":memory:"), index=index(fields), **options, **kwargs)


def keys(items: Sequence[Item]) -> list[str]:
    return [i.key for i in items]


def rows(s: ElasticMemoryStore) -> int:
    """The core memories of the store: items and their field rows."""
    total: int = s.memory.stats()["total_memories"]
    return total


def top(s: Any, query: str, **kwargs: Any) -> list[tuple[str, Any]]:
    return [(i.key, i.score) for i in s.search(("notes",), query=query, **kwargs)]


def best(query: str, *texts: str) -> float:
    """The best cosine similarity of ``query`` with the texts, as InMemoryStore scores an item."""
    words = Hashed()
    return max(cosine(words.vector(query), words.vector(text)) for text in texts)


def assert_same_ranking(ours: list[tuple[str, Any]], theirs: list[tuple[str, Any]]) -> None:
    assert [key for key, _ in ours] == [key for key, _ in theirs]
    for (_, mine), (_, reference) in zip(ours, theirs, strict=True):
        assert mine == pytest.approx(reference, abs=1e-4)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def tagged(clock: Clock) -> Iterator[ElasticMemoryStore]:
    """A semantic store on ``text`` and each element of ``tags``."""
    with store(["text", "tags[*]"], clock) as s:
        yield s


# ------------------------------------------------------------------ beside InMemoryStore
@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("fields", FIELDS, ids="+".join)
def test_the_top_three_match_in_memory_store(fields: list[str], query: str, location: str) -> None:
    reference = InMemoryStore(index=index(fields))
    with store(fields, path=location) as ours:
        for key, value in NOTES.items():
            reference.put(("notes",), key, value)
            ours.put(("notes",), key, value)
        theirs = top(reference, query, limit=4)
        assert min(a[1] - b[1] for a, b in itertools.pairwise(theirs)) > 1e-3  # no tie to order by chance
        assert_same_ranking(top(ours, query, limit=3), theirs[:3])


@pytest.mark.parametrize("query", QUERIES)
def test_a_page_past_the_first_matches_in_memory_store(query: str) -> None:
    reference = InMemoryStore(index=index(["text", "tags[*]"]))
    with store(["text", "tags[*]"]) as ours:
        for key, value in NOTES.items():
            reference.put(("notes",), key, value)
            ours.put(("notes",), key, value)
        assert_same_ranking(top(ours, query, limit=3, offset=2), top(reference, query, limit=3, offset=2))


@pytest.mark.parametrize("query", QUERIES)
def test_put_index_overrides_match_in_memory_store(query: str) -> None:
    reference = InMemoryStore(index=index(["text"]))
    with store(["text"]) as ours:
        for key, value in NOTES.items():
            paths = ["tags[*]"] if key in ("cat", "gym") else ["text", "tags"]
            reference.put(("notes",), key, value, index=paths)
            ours.put(("notes",), key, value, index=paths)
        assert_same_ranking(top(ours, query, limit=3), top(reference, query, limit=3))


async def test_async_search_matches_in_memory_store() -> None:
    reference = InMemoryStore(index=index(["text", "tags[*]"]))
    async with store(["text", "tags[*]"]) as ours:
        for key, value in NOTES.items():
            await reference.aput(("notes",), key, value)
            await ours.aput(("notes",), key, value)
        mine = [(i.key, i.score) for i in await ours.asearch(("notes",), query="health and rest", limit=3)]
        theirs = [(i.key, i.score) for i in await reference.asearch(("notes",), query="health and rest", limit=3)]
        assert_same_ranking(mine, theirs)


# ------------------------------------------------------------------ scores
def test_an_item_scores_its_best_field(tagged: ElasticMemoryStore) -> None:
    tagged.put(("notes",), "a", {"text": "quarterly revenue grew", "tags": ["gardening", "roses"]})
    (found,) = tagged.search(("notes",), query="roses")
    assert found.score == pytest.approx(1.0, abs=1e-5)


def test_an_item_missing_a_field_scores_by_the_others(tagged: ElasticMemoryStore) -> None:
    tagged.put(("notes",), "a", {"tags": ["soup recipe", "lemon"]})
    (found,) = tagged.search(("notes",), query="lentil soup")
    assert found.score == pytest.approx(best("lentil soup", "soup recipe", "lemon"), abs=1e-5)


def test_an_item_missing_every_field_follows_unscored(tagged: ElasticMemoryStore) -> None:
    tagged.put(("notes",), "none", {"title": "soup"})
    tagged.put(("notes",), "soup", {"text": "soup"})
    found = tagged.search(("notes",), query="soup")
    assert [(i.key, i.score is None) for i in found] == [("soup", False), ("none", True)]


def test_a_list_field_without_a_wildcard_is_one_text(clock: Clock) -> None:
    with store(["text", "tags"], clock) as s:
        s.put(("notes",), "a", {"text": "unrelated words", "tags": ["pets", "home"]})
        (found,) = s.search(("notes",), query="pets")
        expected = best("pets", "unrelated words", json.dumps(["pets", "home"]))
        assert found.score == pytest.approx(expected, abs=1e-5)


def test_a_wildcard_list_field_scores_its_best_element(tagged: ElasticMemoryStore) -> None:
    tagged.put(("notes",), "a", {"text": "unrelated words", "tags": ["pets", "home", "lisbon"]})
    (found,) = tagged.search(("notes",), query="lisbon")
    assert found.score == pytest.approx(1.0, abs=1e-5)


def test_the_whole_value_path_is_a_field_beside_the_others(clock: Clock) -> None:
    with store(["$", "title"], clock) as s:
        value = {"title": "violin lessons", "body": "every tuesday"}
        s.put(("notes",), "a", value)
        (found,) = s.search(("notes",), query="every tuesday")
        expected = best("every tuesday", json.dumps(value, sort_keys=True), "violin lessons")
        assert found.score == pytest.approx(expected, abs=1e-5)


def test_an_item_comes_once_however_many_fields_match(tagged: ElasticMemoryStore) -> None:
    tagged.put(("notes",), "many", {"text": "soup", "tags": ["soup", "hot soup", "soup bowl", "soup pot", "more soup"]})
    tagged.put(("notes",), "one", {"text": "bread"})
    tagged.put(("notes",), "two", {"text": "cake"})
    assert sorted(keys(tagged.search(("notes",), query="soup", limit=3))) == ["many", "one", "two"]


def test_a_limit_counts_items_not_field_rows(tagged: ElasticMemoryStore) -> None:
    """Thirty field rows of one item outrank the others' rows: the two best items still come back."""
    tagged.put(("notes",), "many", {"tags": [" ".join(["soup"] * n) for n in range(1, 31)]})
    tagged.put(("notes",), "near", {"text": "soup kitchen"})
    tagged.put(("notes",), "far", {"text": "train schedule"})
    found = tagged.search(("notes",), query="soup", limit=2)
    assert [(i.key, i.score) for i in found] == [
        ("many", pytest.approx(1.0, abs=1e-5)),
        ("near", pytest.approx(best("soup", "soup kitchen"), abs=1e-5)),
    ]


def test_a_filter_applies_to_the_field_rows(tagged: ElasticMemoryStore) -> None:
    tagged.put(("notes",), "draft", {"text": "x", "tags": ["soup"], "status": "draft"})
    tagged.put(("notes",), "done", {"text": "y", "tags": ["soup recipe"], "status": "done"})
    assert keys(tagged.search(("notes",), query="soup", filter={"status": "done"})) == ["done"]


def test_a_namespace_prefix_applies_to_the_field_rows(tagged: ElasticMemoryStore) -> None:
    tagged.put(("notes", "ana"), "a", {"text": "x", "tags": ["soup"]})
    tagged.put(("notes", "bob"), "b", {"text": "y", "tags": ["soup"]})
    assert keys(tagged.search(("notes", "bob"), query="soup")) == ["b"]


def test_keyword_mode_ranks_an_item_by_its_best_field(clock: Clock) -> None:
    with store(["text", "tags[*]"], clock, search_mode="keyword") as s:
        s.put(("notes",), "other", {"text": "lunch menu", "tags": ["food"]})
        s.put(("notes",), "match", {"text": "meeting notes", "tags": ["revenue", "plans"]})
        found = s.search(("notes",), query="revenue")
        assert [(i.key, i.score is not None) for i in found] == [("match", True), ("other", False)]


def test_index_false_keeps_the_item_out_of_ranking(tagged: ElasticMemoryStore) -> None:
    tagged.put(("notes",), "quiet", {"text": "soup", "tags": ["soup", "bowl"]}, index=False)
    tagged.put(("notes",), "loud", {"text": "bread"})
    found = tagged.search(("notes",), query="soup")
    assert [(i.key, i.score is None) for i in found] == [("loud", False), ("quiet", True)]


def test_a_put_index_override_replaces_the_configured_fields(tagged: ElasticMemoryStore) -> None:
    tagged.put(("notes",), "a", {"text": "soup", "tags": ["soup"], "title": "train schedule"}, index=["title"])
    (found,) = tagged.search(("notes",), query="soup")
    assert found.score == pytest.approx(best("soup", "train schedule"), abs=1e-5)


# ------------------------------------------------------------------ field rows follow their item
def test_each_distinct_text_gets_one_field_row(tagged: ElasticMemoryStore) -> None:
    tagged.put(("notes",), "a", {"text": "soup", "tags": ["soup", "bowl", "bowl"]})
    assert rows(tagged) == 1 + 2


def test_an_item_with_one_text_has_no_field_row(tagged: ElasticMemoryStore) -> None:
    tagged.put(("notes",), "a", {"text": "soup"})
    assert rows(tagged) == 1


def test_a_put_again_erases_the_old_field_rows(tagged: ElasticMemoryStore) -> None:
    tagged.put(("notes",), "a", {"text": "soup", "tags": ["one", "two", "three"]})
    tagged.put(("notes",), "a", {"text": "bread", "tags": ["four"]})
    assert rows(tagged) == 1 + 2


def test_a_put_again_ranks_by_the_new_fields_only(tagged: ElasticMemoryStore) -> None:
    tagged.put(("notes",), "a", {"text": "soup", "tags": ["lisbon", "trip"]})
    tagged.put(("notes",), "a", {"text": "bread", "tags": ["oven"]})
    (found,) = tagged.search(("notes",), query="lisbon")
    assert found.score == pytest.approx(best("lisbon", "bread", "oven"), abs=1e-5)


def test_a_put_again_with_one_text_leaves_only_the_item(tagged: ElasticMemoryStore) -> None:
    tagged.put(("notes",), "a", {"text": "soup", "tags": ["one", "two"]})
    tagged.put(("notes",), "a", {"text": "bread"})
    assert rows(tagged) == 1


def test_a_delete_erases_the_field_rows(tagged: ElasticMemoryStore) -> None:
    tagged.put(("notes",), "a", {"text": "soup", "tags": ["one", "two"]})
    tagged.delete(("notes",), "a")
    assert rows(tagged) == 0


def test_a_batch_putting_a_key_twice_keeps_the_last_fields(tagged: ElasticMemoryStore) -> None:
    tagged.batch(
        [
            PutOp(("notes",), "a", {"text": "soup", "tags": ["one", "two"]}),
            PutOp(("notes",), "a", {"text": "bread", "tags": ["three"]}),
        ]
    )
    assert rows(tagged) == 1 + 2


def test_an_expired_item_does_not_rank_by_its_fields(tagged: ElasticMemoryStore, clock: Clock) -> None:
    tagged.put(("notes",), "short", {"text": "soup", "tags": ["soup", "bowl"]}, ttl=1)
    tagged.put(("notes",), "long", {"text": "bread"})
    clock.now += 61
    assert keys(tagged.search(("notes",), query="soup")) == ["long"]


def test_a_sweep_erases_the_field_rows_with_the_item(tagged: ElasticMemoryStore, clock: Clock) -> None:
    tagged.put(("notes",), "short", {"text": "soup", "tags": ["soup", "bowl"]}, ttl=1)
    tagged.put(("notes",), "long", {"text": "bread", "tags": ["oven"]})
    clock.now += 61
    assert (tagged.sweep_ttl(), rows(tagged)) == (1, 1 + 2)


def test_a_refreshed_item_keeps_ranking_by_its_fields(tagged: ElasticMemoryStore, clock: Clock) -> None:
    tagged.put(("notes",), "a", {"text": "bread", "tags": ["soup", "bowl"]}, ttl=1)
    clock.now += 50
    assert tagged.get(("notes",), "a") is not None
    clock.now += 50
    tagged.sweep_ttl()
    (found,) = tagged.search(("notes",), query="soup")
    assert found.score == pytest.approx(1.0, abs=1e-5)


def test_a_sweep_spares_the_fields_of_an_item_put_again_meanwhile(
    tagged: ElasticMemoryStore, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A put from another thread landing just before the sweep's erase keeps its new field rows."""
    tagged.put(("notes",), "a", {"text": "bread", "tags": ["old", "older"]}, ttl=1)
    clock.now += 61
    sweep = tagged._sweep

    def racing() -> Any:
        plan, reply = sweep(), None
        try:
            while True:
                name, args, kwargs = plan.send(reply)
                if name == "purge":
                    tagged.put(("notes",), "a", {"text": "bread", "tags": ["soup", "bowl"]}, ttl=60)
                reply = yield name, args, kwargs
        except StopIteration as done:
            return done.value

    monkeypatch.setattr(tagged, "_sweep", racing)
    tagged.sweep_ttl()
    (found,) = tagged.search(("notes",), query="soup")
    assert (found.score, rows(tagged)) == (pytest.approx(1.0, abs=1e-5), 1 + 3)


# ------------------------------------------------------------------ never listed
def test_list_namespaces_shows_only_item_namespaces(tagged: ElasticMemoryStore) -> None:
    tagged.put(("notes", "ana"), "a", {"text": "soup", "tags": ["one", "two"]})
    tagged.put(("other",), "b", {"text": "bread", "tags": ["three", "four"]})
    assert tagged.list_namespaces() == [("notes", "ana"), ("other",)]


def test_a_search_without_a_query_lists_each_item_once(tagged: ElasticMemoryStore) -> None:
    tagged.put(("notes",), "a", {"text": "soup", "tags": ["one", "two"]})
    tagged.put(("notes",), "b", {"text": "bread", "tags": ["three"]})
    assert (keys(tagged.search(("notes",))), keys(tagged.search(()))) == (["a", "b"], ["a", "b"])


def test_a_page_without_a_query_counts_items(tagged: ElasticMemoryStore) -> None:
    for key in "abcd":
        tagged.put(("notes",), key, {"text": key, "tags": [f"{key}1", f"{key}2"]})
    assert keys(tagged.search(("notes",), limit=2, offset=1)) == ["b", "c"]


def test_a_query_with_no_ranked_match_lists_each_item_once(clock: Clock) -> None:
    with store(["text", "tags[*]"], clock, search_mode="keyword") as s:
        s.put(("notes",), "a", {"text": "soup", "tags": ["one", "two"]})
        s.put(("notes",), "b", {"text": "bread", "tags": ["three"]})
        assert keys(s.search(("notes",), query="zebra")) == ["a", "b"]
