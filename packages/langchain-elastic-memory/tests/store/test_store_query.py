"""ElasticMemoryStore: searches with a query, their ranking and scores, and the index fields."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings

from elastic_memory import Memory, UsageError
from langchain_elastic_memory import ElasticMemoryStore

from .support import DIMS, WORD, Clock, Words, cosine, indexed, keys


# ------------------------------------------------------------------ query search
def test_a_query_ranks_the_closest_item_first(vstore: ElasticMemoryStore) -> None:
    vstore.put(("docs",), "zebra", {"text": "zany zebra xerxes"})
    vstore.put(("docs",), "dogs", {"text": "something about dogs"})
    vstore.put(("docs",), "birds", {"text": "text about birds"})
    found = vstore.search(("docs",), query="zany xerxes")
    assert keys(found)[0] == "zebra"
    assert len(found) == 3


def test_semantic_scores_are_cosine_similarities(vstore: ElasticMemoryStore) -> None:
    vstore.put(("docs",), "a", {"text": "red apple pie"})
    (found,) = vstore.search(("docs",), query="apple tart")
    words = Words()
    assert found.score == pytest.approx(cosine(words.vector("apple tart"), words.vector("red apple pie")), abs=1e-5)


def test_scores_descend_and_pages_do_not_overlap(vstore: ElasticMemoryStore) -> None:
    for i, text in enumerate(["apple", "apple pie", "apple pie crust", "pie crust dough", "bread"]):
        vstore.put(("docs",), f"doc{i}", {"text": text})
    first = vstore.search(("docs",), query="apple pie", limit=2)
    second = vstore.search(("docs",), query="apple pie", limit=2, offset=2)
    everything = vstore.search(("docs",), query="apple pie", limit=10)
    assert keys(first) + keys(second) == keys(everything)[:4]
    scores = [i.score for i in everything]
    assert all(s is not None for s in scores)
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]


def test_a_query_search_respects_the_filter(vstore: ElasticMemoryStore) -> None:
    vstore.put(("docs",), "red-apple", {"text": "red apple", "color": "red"})
    vstore.put(("docs",), "red-car", {"text": "red car", "color": "red"})
    vstore.put(("docs",), "green-apple", {"text": "green apple", "color": "green"})
    assert keys(vstore.search(("docs",), query="apple", filter={"color": "red"})) == ["red-apple", "red-car"]


def test_a_query_search_stays_in_the_prefix(vstore: ElasticMemoryStore) -> None:
    vstore.put(("a",), "in-a", {"text": "apple"})
    vstore.put(("ab",), "in-ab", {"text": "apple"})
    assert keys(vstore.search(("a",), query="apple")) == ["in-a"]


def test_hybrid_search_ranks_matches_first(clock: Clock) -> None:
    with indexed(clock, search_mode="hybrid") as store:
        store.put(("docs",), "match", {"text": "the quarterly report on revenue"})
        store.put(("docs",), "other", {"text": "lunch menu for friday"})
        found = store.search(("docs",), query="revenue report")
        assert keys(found) == ["match", "other"]
        assert found[0].score is not None and found[1].score is not None
        assert found[0].score > found[1].score


def test_without_an_index_a_query_ranks_keyword_matches_then_the_rest(store: ElasticMemoryStore) -> None:
    """Nothing is lost against LangGraph's query-less semantics: non-matches follow."""
    store.put(("docs",), "other", {"text": "lunch menu"})
    store.put(("docs",), "match", {"text": "quarterly revenue"})
    assert keys(store.search(("docs",), query="revenue")) == ["match", "other"]


def test_without_an_index_every_score_is_none(store: ElasticMemoryStore) -> None:
    """As LangGraph's stores: no vectors, no score (the store returned BM25 near 1e-6 before)."""
    store.put(("docs",), "match", {"text": "quarterly revenue"})
    store.put(("docs",), "other", {"text": "lunch menu"})
    assert [i.score for i in store.search(("docs",), query="revenue")] == [None, None]


def test_keyword_mode_scores_are_bm25_without_an_index(clock: Clock) -> None:
    with ElasticMemoryStore(path=":memory:", clock=clock, search_mode="keyword") as store:
        store.put(("docs",), "match", {"text": "quarterly revenue"})
        store.put(("docs",), "other", {"text": "lunch menu"})
        found = store.search(("docs",), query="revenue")
        assert keys(found) == ["match", "other"]
        assert found[0].score is not None and found[0].score > 0
        assert found[1].score is None


# ------------------------------------------------------------------ scores
class Signed(Embeddings):
    """Deterministic signed bag-of-words vectors: unrelated texts can point apart (negative cosine)."""

    def vector(self, text: str) -> list[float]:
        out = [0.0] * DIMS
        for word in WORD.findall(text.lower()):
            h = int(hashlib.sha256(word.encode()).hexdigest(), 16)
            out[h % DIMS] += 1.0 if h >> 8 & 1 else -1.0
        if not any(out):
            out[0] = 1e-3
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.vector(text)


def _opposed() -> tuple[str, str]:
    """Two words whose Signed vectors have a negative cosine."""
    signed = Signed()
    words = [f"w{i}" for i in range(200)]
    return next((a, b) for a in words for b in words if cosine(signed.vector(a), signed.vector(b)) < 0)


def test_the_default_mode_is_semantic(store: ElasticMemoryStore) -> None:
    assert store.search_mode == "semantic"


def test_an_unrelated_query_does_not_score_one(clock: Clock) -> None:
    """The default mode scored every item 1.0 for ``query="zebra"`` (per-query min-max)."""
    with indexed(clock) as store:
        store.put(("docs",), "a", {"text": "apple pie"})
        store.put(("docs",), "b", {"text": "lunch menu"})
        found = store.search(("docs",), query="zebra")
        assert len(found) == 2
        assert all(i.score is not None and i.score < 0.5 for i in found)


def test_the_only_item_does_not_score_one_for_anything(clock: Clock) -> None:
    with indexed(clock) as store:
        store.put(("docs",), "a", {"text": "apple pie"})
        (found,) = store.search(("docs",), query="zebra crossing")
        assert found.score is not None and found.score < 0.5


def test_the_default_score_is_the_cosine(clock: Clock) -> None:
    with indexed(clock) as store:
        store.put(("docs",), "a", {"text": "red apple pie"})
        store.put(("docs",), "b", {"text": "green apple"})
        words = Words()
        query = words.vector("apple tart")
        found = {i.key: i.score for i in store.search(("docs",), query="apple tart")}
        assert found["a"] == pytest.approx(cosine(query, words.vector("red apple pie")), abs=1e-5)
        assert found["b"] == pytest.approx(cosine(query, words.vector("green apple")), abs=1e-5)


def test_a_negative_cosine_is_kept(clock: Clock) -> None:
    """SqliteStore returns -0.289 where the store returned 0.0."""
    word, opposite = _opposed()
    signed = Signed()
    index: Any = {"dims": DIMS, "embed": signed, "fields": ["text"]}
    with ElasticMemoryStore(path=":memory:", index=index, clock=clock) as store:
        store.put(("docs",), "a", {"text": opposite})
        (found,) = store.search(("docs",), query=word)
        expected = cosine(signed.vector(word), signed.vector(opposite))
        assert expected < 0
        assert found.score == pytest.approx(expected, abs=1e-5)


def test_hybrid_scores_are_absolute(clock: Clock) -> None:
    """The core's hybrid score in [0, 1]: the only item does not score 1.0 for an unrelated query."""
    with indexed(clock, search_mode="hybrid") as store:
        store.put(("docs",), "a", {"text": "apple pie"})
        (found,) = store.search(("docs",), query="zebra crossing")
        assert found.score is not None and 0 <= found.score < 0.5


def test_hybrid_scores_stay_in_the_unit_interval(clock: Clock) -> None:
    with indexed(clock, search_mode="hybrid") as store:
        store.put(("docs",), "a", {"text": "the quarterly report on revenue"})
        store.put(("docs",), "b", {"text": "lunch menu"})
        found = store.search(("docs",), query="quarterly revenue report")
        assert keys(found)[0] == "a"
        assert all(i.score is not None and 0 <= i.score <= 1 for i in found)


def test_keyword_mode_ranks_by_words_only(clock: Clock) -> None:
    with indexed(clock, search_mode="keyword") as store:
        store.put(("docs",), "other", {"text": "lunch menu"})
        store.put(("docs",), "match", {"text": "quarterly revenue"})
        found = store.search(("docs",), query="revenue")
        assert keys(found) == ["match", "other"]
        assert found[1].score is None


@pytest.mark.parametrize("query", ["", None, "test " * 100, "test!@#$%^&*()"])
def test_odd_queries_still_find_the_item(vstore: ElasticMemoryStore, query: str | None) -> None:
    vstore.put(("test",), "doc1", {"text": "test document"})
    assert keys(vstore.search(("test",), query=query)) == ["doc1"]


def test_an_unindexed_item_comes_after_the_ranked_ones_without_score(vstore: ElasticMemoryStore) -> None:
    vstore.put(("docs",), "a", {"text": "new text about dogs"})
    vstore.put(("docs",), "b", {"text": "cats"})
    vstore.put(("docs",), "hidden", {"text": "new text about dogs"}, index=False)
    found = vstore.search(("docs",), query="new text about dogs")
    assert keys(found) == ["a", "b", "hidden"]
    assert found[-1].score is None
    assert "hidden" not in keys(vstore.search(("docs",), query="new text about dogs", limit=2))


def test_an_unindexed_item_is_found_without_a_query(vstore: ElasticMemoryStore) -> None:
    vstore.put(("docs",), "hidden", {"text": "x"}, index=False)
    assert keys(vstore.search(("docs",))) == ["hidden"]


def test_an_item_without_text_at_the_fields_is_unranked(vstore: ElasticMemoryStore) -> None:
    vstore.put(("docs",), "textless", {"other": "apple"})
    vstore.put(("docs",), "apple", {"text": "apple"})
    found = vstore.search(("docs",), query="apple")
    assert keys(found) == ["apple", "textless"]
    assert found[1].score is None


def test_put_index_fields_override_the_configured_ones(vstore: ElasticMemoryStore) -> None:
    vstore.put(("docs",), "doc3", {"key0": "aaa", "key1": "bbb", "key2": "ccc"}, index=["key0", "key1"])
    vstore.put(("docs",), "doc4", {"key0": "eee", "key1": "bbb", "key3": "ggg"}, index=["key1", "key3"])
    assert keys(vstore.search(("docs",), query="aaa"))[0] == "doc3"
    assert keys(vstore.search(("docs",), query="ggg"))[0] == "doc4"
    ranked = vstore.search(("docs",), query="ccc")
    assert all(i.score is not None and i.score < 0.5 for i in ranked)


def test_a_nested_field_path_is_indexed(clock: Clock) -> None:
    with indexed(clock, index={"fields": ["meta.title"]}, search_mode="semantic") as store:
        store.put(("docs",), "a", {"meta": {"title": "gardening tips"}, "text": "unrelated"})
        store.put(("docs",), "b", {"meta": {"title": "car repair"}, "text": "gardening"})
        found = store.search(("docs",), query="gardening tips")
        assert keys(found)[0] == "a"
        assert found[0].score == pytest.approx(1.0, abs=1e-5)


def test_an_array_wildcard_path_indexes_every_element(clock: Clock) -> None:
    with indexed(clock, index={"fields": ["messages[*].text"]}, search_mode="semantic") as store:
        store.put(("chats",), "a", {"messages": [{"text": "hello there"}, {"text": "weather in oslo"}]})
        store.put(("chats",), "b", {"messages": [{"text": "hello there"}]})
        assert keys(store.search(("chats",), query="oslo weather"))[0] == "a"


def test_the_whole_value_is_indexed_by_default(clock: Clock) -> None:
    with ElasticMemoryStore(path=":memory:", index={"dims": DIMS, "embed": Words()}, clock=clock) as store:
        store.put(("docs",), "a", {"note": "violin lessons"})
        store.put(("docs",), "b", {"note": "bicycle"})
        assert keys(store.search(("docs",), query="violin"))[0] == "a"


def test_an_updated_item_is_embedded_again(vstore: ElasticMemoryStore) -> None:
    vstore.put(("docs",), "a", {"text": "zany zebra"})
    vstore.put(("docs",), "b", {"text": "dogs"})
    before = vstore.search(("docs",), query="zany zebra")[0]
    vstore.put(("docs",), "a", {"text": "more about dogs"})
    after = {i.key: i.score for i in vstore.search(("docs",), query="zany zebra")}
    assert before.key == "a"
    assert before.score is not None and after["a"] is not None
    assert after["a"] < before.score


def test_the_embed_option_may_be_a_function(clock: Clock) -> None:
    words = Words()
    index: Any = {"dims": DIMS, "embed": words.embed_documents, "fields": ["text"]}
    with ElasticMemoryStore(path=":memory:", index=index, clock=clock, search_mode="semantic") as store:
        store.put(("docs",), "a", {"text": "apple"})
        store.put(("docs",), "b", {"text": "pear"})
        assert keys(store.search(("docs",), query="apple"))[0] == "a"


def test_the_embed_option_may_be_an_async_function(clock: Clock) -> None:
    words = Words()

    async def embed(texts: Sequence[str]) -> list[list[float]]:
        await asyncio.sleep(0)
        return words.embed_documents(list(texts))

    index: Any = {"dims": DIMS, "embed": embed, "fields": ["text"]}
    with ElasticMemoryStore(path=":memory:", index=index, clock=clock, search_mode="semantic") as store:
        store.put(("docs",), "a", {"text": "apple"})
        store.put(("docs",), "b", {"text": "pear"})
        assert keys(store.search(("docs",), query="apple"))[0] == "a"


def test_dims_must_match_the_embeddings() -> None:
    with pytest.raises(UsageError, match="dims"):
        ElasticMemoryStore(path=":memory:", index={"dims": DIMS + 1, "embed": Words()})


def test_unknown_index_keys_are_refused() -> None:
    with pytest.raises(UsageError, match="text_fields"):
        ElasticMemoryStore(path=":memory:", index={"dims": DIMS, "embed": Words(), "text_fields": ["a"]})  # type: ignore[arg-type]


def test_embed_does_not_apply_to_an_open_memory(clock: Clock) -> None:
    with Memory.open(":memory:", embedder=None, clock=clock) as mem, pytest.raises(UsageError, match="memory="):
        ElasticMemoryStore(memory=mem, index={"dims": DIMS, "embed": Words()})
