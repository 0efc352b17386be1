"""Keyword queries of frequent terms: scored in RAM, ranked exactly as the contract's BM25 ranks them.

The tier starts at 50,000 rows in production; here the thresholds are lowered so a few
hundred rows build it. Every check compares with ``testing.reference_bm25`` (the index's
tokens, scored in Python) on a second connection.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from elastic_memory import Memory, _runner
from elastic_memory.storage.sqlite import bm25, frequent_terms
from elastic_memory.storage.sqlite.driver import driver
from elastic_memory.storage.sqlite.fts import match_expression
from elastic_memory.testing import reference_bm25

#: Scores agree to this (both are sums of the same doubles, added in another order).
TOLERANCE = 1e-9
FREQUENT = ("otter", "river", "harbour", "boat", "weather", "one")
RARE = ("kingfisher", "lighthouse", "anchor")
FILLER = tuple(f"w{i}" for i in range(60))
QUERIES = (
    "otter river harbour",
    "boat weather",
    "river otter boat weather harbour",
    "kingfisher otter river",
    "lighthouse weather",
    "rivers otters",  # stemmed to the frequent terms
    "harbour-boat",  # split into two terms
    "anchor",  # rare only: FTS5 alone
    "one river",  # "one" is stemmed to "on", a stop word's stem
)


def _text(rng: np.random.Generator) -> str:
    """12-40 words: frequent terms in about a third of rows each, rare ones in a few, repeated now and then."""
    words = list(rng.choice(FILLER, size=int(rng.integers(12, 41))))
    for word in FREQUENT:
        if rng.random() < 0.35:
            words[int(rng.integers(len(words)))] = word
            if rng.random() < 0.3:
                words.append(word)
    if rng.random() < 0.05:
        words.append(str(rng.choice(RARE)))
    return " ".join(words)


def _rows(n: int, seed: int = 7) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    return [
        {"content": _text(rng), "id": f"m{i}", "tags": ["river"] if i % 9 == 0 else []}  # a tag counts half
        for i in range(n)
    ]


@pytest.fixture(autouse=True)
def _small_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(frequent_terms, "MIN_ROWS", 200)
    monkeypatch.setattr(frequent_terms, "FREQUENT_MIN", 20)
    monkeypatch.setattr(frequent_terms, "FREQUENT_SHARE", 10)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Memory]:
    mem = Memory.open(tmp_path / "m.db", embedder=None)
    mem.remember_many(_rows(400))
    mem.load_index()
    yield mem
    mem.close()


def _tier(mem: Memory) -> Any:
    return mem._core.store._frequent  # type: ignore[attr-defined]


def _fts5(mem: Memory, query: str, k: int = 10) -> list[tuple[str, float]]:
    """The contract's BM25 top ``k`` (live rows) from the index's tokens alone, as ids and relevance: the truth."""
    conn = driver().connect(str(mem._core.store.path), timeout=5.0)  # type: ignore[attr-defined]
    try:
        scores = reference_bm25(conn, query)
        live = dict(conn.execute("SELECT seq, id FROM memories WHERE deleted_at IS NULL AND archived = 0").fetchall())
    finally:
        conn.close()
    ranked = sorted((-score, seq) for seq, score in scores.items() if seq in live)[:k]
    return [(str(live[seq]), -negative) for negative, seq in ranked]


def _keyword(mem: Memory, query: str, k: int = 10) -> list[tuple[str, float]]:
    return [(h.id, h.score) for h in mem.recall(query, k=k, mode="keyword")]


def _assert_exact(mem: Memory, query: str, k: int = 10) -> None:
    """Troubleshooting: a wrong order points at the BM25 formula (weights, IDF, lengths), a missing row at catch-up."""
    got, truth = _keyword(mem, query, k), _fts5(mem, query, k)
    assert [i for i, _ in got] == [i for i, _ in truth], query
    for (_, x), (_, y) in zip(got, truth, strict=True):
        assert x == pytest.approx(y, abs=TOLERANCE, rel=0)


def _served(mem: Memory, query: str) -> bool:
    """Whether the tier itself ranks ``query`` (not FTS5)."""
    ranked = _runner.run(_tier(mem).ranking(match_expression(query) or "", 10), "test")
    return ranked is not None


def test_the_tier_is_built_by_load_index(store: Memory) -> None:
    assert _tier(store).loaded
    assert _served(store, "otter river")


def test_stats_report_the_tier(store: Memory) -> None:
    """The tier holds every term in at least a tenth of the 400 rows (the lowered thresholds)."""
    conn = driver().connect(str(store._core.store.path), timeout=5.0)  # type: ignore[attr-defined]
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, memories_fts, row)")
        frequent = conn.execute("SELECT count(*) FROM temp.v WHERE doc >= 40").fetchone()[0]
    finally:
        conn.close()
    stats = store.stats()
    assert stats["keyword_tier_terms"] == frequent > len(FREQUENT)
    assert stats["keyword_tier_bytes"] > 400 * 24
    assert stats["keyword_tier_error"] is None


@pytest.mark.parametrize("query", QUERIES)
def test_rankings_equal_fts5(store: Memory, query: str) -> None:
    _assert_exact(store, query)


def test_a_word_stemmed_to_a_stop_word_is_served(store: Memory) -> None:
    """ "one" becomes "on": stop words' stems keep postings (only the query's own stop words are dropped)."""
    assert _served(store, "one")


def test_a_query_of_rare_terms_is_left_to_fts5(store: Memory) -> None:
    assert not _served(store, "kingfisher lighthouse")


def test_rows_added_after_the_build_are_ranked(store: Memory) -> None:
    store.remember("otter otter otter river", id="new")
    assert _served(store, "otter river")  # caught up at once, not dropped and rebuilt
    _assert_exact(store, "otter river")
    assert _keyword(store, "otter river")[0][0] == "new"


def test_rows_without_a_word_count_in_the_statistics(store: Memory) -> None:
    """FTS5 counts a row whose text has no token in N and the average length: so must the reference."""
    store.remember_many([{"content": "?!", "id": f"blank{i}"} for i in range(30)])
    _assert_exact(store, "otter river")


def test_a_hard_delete_drops_the_tier_and_answers_stay_exact(store: Memory) -> None:
    best = _fts5(store, "otter river")[0][0]
    store.forget(best, hard=True)
    _assert_exact(store, "otter river")
    assert best not in [i for i, _ in _keyword(store, "otter river")]
    store.load_index()
    assert _served(store, "otter river")


def test_a_changed_text_is_ranked_by_its_new_words(store: Memory) -> None:
    store.update("m5", content="weather weather weather boat")
    _assert_exact(store, "weather boat")
    assert _keyword(store, "weather boat")[0][0] == "m5"


def test_forgotten_and_archived_memories_are_left_out(store: Memory) -> None:
    top = [i for i, _ in _fts5(store, "boat weather", 3)]
    store.forget(top[0])
    store.archive(top[1])
    got = [i for i, _ in _keyword(store, "boat weather")]
    assert top[0] not in got
    assert top[1] not in got
    _assert_exact(store, "boat weather")


def test_refusing_ram_drops_the_tier(store: Memory) -> None:
    store._core.store.allow_ram_index(False)  # type: ignore[attr-defined]
    assert not _tier(store).loaded
    _assert_exact(store, "otter river harbour")


def test_an_error_in_the_tier_leaves_fts5_answering(store: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any) -> None:
        raise ValueError("boom")

    monkeypatch.setattr(frequent_terms.FrequentTerms, "_add_scores", staticmethod(broken))
    _assert_exact(store, "otter river")
    assert store.stats()["keyword_tier_error"] == "ValueError: boom"


def test_a_small_file_keeps_fts5(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "m.db", embedder=None) as mem:
        mem.remember_many(_rows(150))
        mem.load_index()
        assert not _tier(mem).loaded
        _assert_exact(mem, "otter river")


def test_the_counter_moves_on_rewrites_only(tmp_path: Path) -> None:
    """Migration v8: deletes and text changes count; appends and bookkeeping do not."""
    path = tmp_path / "m.db"

    def rewrites() -> int:
        conn = driver().connect(str(path), timeout=5.0)
        try:
            return int(conn.execute("SELECT value FROM store_state WHERE key = 'fts_rewrites'").fetchone()[0])
        finally:
            conn.close()

    with Memory.open(path, embedder=None) as mem:
        mem.remember_many(_rows(5))
        mem.recall("otter", mode="keyword")  # access tracking
        mem.archive("m1")
        assert rewrites() == 0
        mem.update("m2", content="a new text")
        assert rewrites() == 1
        mem.forget("m3", hard=True)
        assert rewrites() == 2


def test_a_store_with_no_indexed_text_yet_answers(tmp_path: Path) -> None:
    """FTS5 writes an empty averages record before any row: the size check reads it as zero rows."""
    with Memory.open(tmp_path / "m.db", embedder=None) as mem:
        mem.facts.set("user.dog_name", "Biscuit")
        assert mem.recall("dog", mode="keyword") == []
        assert mem.build_context("what is my dog called?").section("facts") is not None


@pytest.mark.parametrize(
    ("blob", "values"),
    [
        (b"\x00\x05", [0, 5]),
        (b"\x86\x8d\x20", [100_000]),
        (b"\x81\x00\x7f", [128, 127]),
        (b"\xff" * 8 + b"\x01", [(2**56 - 1) << 8 | 1]),
    ],
)
def test_sqlite_varints_decode(blob: bytes, values: list[int]) -> None:
    assert bm25.varints(blob) == values
