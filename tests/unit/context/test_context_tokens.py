"""The model-free token estimator and the guard around host token counters."""

from __future__ import annotations

from importlib import resources
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from elastic_memory.context import check_counter, estimate_tokens
from elastic_memory.errors import UsageError

# Varied English: chat turns, stored facts, technical notes, numbers, punctuation-heavy text.
CORPUS = [
    "Hello! How are you doing today?",
    "My name is Ada and I live in Lisbon with my two cats.",
    "I'm allergic to peanuts, so please never suggest recipes that use them.",
    "The user prefers dark mode in every editor and terminal they use.",
    "Can you remind me what we decided about the database migration last week?",
    "We agreed to move the billing service to PostgreSQL 16 before the end of Q3, "
    "keeping the old MySQL replica read-only for ninety days as a fallback.",
    "User drinks a flat white every morning, but switched to decaf after 4 p.m.",
    "Meeting notes (2026-05-01): budget approved; hiring freeze lifted; next review on June 12th.",
    "Error: ConnectionRefusedError: [Errno 111] Connection refused while connecting to localhost:5432.",
    "To install the package, run pip install elastic-memory and then import it in your script.",
    "The quick brown fox jumps over the lazy dog near the riverbank at sunset.",
    "She said, \"I'll be there at 7:30 — don't start without me!\"",
    "Photosynthesis converts light energy into chemical energy stored in glucose molecules.",
    "The committee's recommendations, although controversial, were ultimately adopted unanimously.",
    "Remember: the deadline is Friday, and the report must include all quarterly figures.",
    "Our internationalization effort covers twelve languages, including right-to-left scripts.",
    "I usually go running along the beach on Saturday mornings, weather permitting.",
    "The function returns None when the cache is empty; otherwise it yields the oldest entry first.",
    "Temperatures reached 38.5 degrees Celsius in Seville on August 3, breaking a 20-year record.",
    "Please summarise the last three chapters in under two hundred words.",
    "He bought 3 apples, 12 oranges and a 2-kilogram bag of rice for $14.99.",
    "My daughter's birthday is on the 14th of February; she turns seven this year.",
    "Lesson: when the user asks for code, show a minimal runnable example before explaining it.",
    "The rolling summary condenses evicted turns into a short digest the model can still read.",
    "Why does my Python script raise a KeyError when the dictionary clearly contains the key?",
    "Neuroscientists hypothesize that sleep consolidates declarative memories through hippocampal replay.",
    "Traffic on the motorway was unbearable, so we took the scenic route through the mountains.",
    "I've been learning Portuguese for six months and can now hold simple conversations.",
    "Set the environment variable ELASTIC_MEMORY_CACHE=/tmp/cache before running the tests.",
    "Once upon a time, in a small village by the sea, there lived an old fisherman and his wife. "
    "Every morning he rowed out past the lighthouse, and every evening he came home with a story.",
    "Thanks so much, that was really helpful. Talk to you tomorrow!",
    "The API accepts JSON payloads up to 1 MB; larger uploads must use multipart/form-data.",
]


def _wordpiece() -> Any:
    tokenizers = pytest.importorskip("tokenizers")
    path = resources.files("elastic_memory") / "_assets" / "minilm" / "tokenizer.json"
    tokenizer = tokenizers.Tokenizer.from_str(path.read_text(encoding="utf-8"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def test_estimate_is_within_twenty_percent_of_wordpiece_on_english() -> None:
    """If this fails, the estimator's per-word ratios drifted: recalibrate against the corpus above."""
    tokenizer = _wordpiece()
    real = sum(len(tokenizer.encode(text, add_special_tokens=False).ids) for text in CORPUS)
    estimated = sum(estimate_tokens(text) for text in CORPUS)
    assert abs(estimated - real) / real <= 0.20


def test_estimate_of_each_text_is_within_sixty_percent_of_wordpiece() -> None:
    tokenizer = _wordpiece()
    ratios = np.array([estimate_tokens(t) / len(tokenizer.encode(t, add_special_tokens=False).ids) for t in CORPUS])
    assert ratios.min() >= 0.6
    assert ratios.max() <= 1.6


def test_empty_and_blank_text_count_zero() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens(" \n\t ") == 0


def test_each_punctuation_mark_counts_one() -> None:
    assert estimate_tokens("?!.,;") == 5


def test_each_cjk_character_counts_one() -> None:
    assert estimate_tokens("我喜欢咖啡") == 5


def test_long_words_count_more_than_short_ones() -> None:
    assert estimate_tokens("internationalization") > estimate_tokens("cat") == 1


@given(st.text(), st.text(), st.sampled_from([" ", "\n", "\n\n", "\t"]))
def test_estimate_is_additive_across_whitespace(a: str, b: str, gap: str) -> None:
    assert estimate_tokens(a + gap + b) == estimate_tokens(a) + estimate_tokens(b)


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_the_ascii_fast_path_agrees_with_the_general_one(text: str) -> None:
    # Appending one non-ASCII letter sends the whole text down the general path.
    assert estimate_tokens(text + " \u00e9") == estimate_tokens(text) + 1


@given(st.text())
def test_estimate_is_non_negative_and_never_raises(text: str) -> None:
    assert estimate_tokens(text) >= 0


def test_check_counter_keeps_a_good_counter() -> None:
    assert check_counter(len)("abcd") == 4


def test_check_counter_returns_the_estimator_unwrapped() -> None:
    assert check_counter(estimate_tokens) is estimate_tokens


def test_check_counter_is_idempotent() -> None:
    checked = check_counter(len)
    assert check_counter(checked) is checked


@pytest.mark.parametrize(
    "bad",
    [lambda _: -3, lambda _: 2.5, lambda _: "7", lambda _: None, lambda _: True, lambda _: 1 // 0],
    ids=["negative", "float", "str", "none", "bool", "raises"],
)
def test_check_counter_falls_back_to_the_estimate(bad: object) -> None:
    checked = check_counter(bad)  # type: ignore[arg-type]
    assert checked("Hello, world!") == estimate_tokens("Hello, world!")


def test_check_counter_accepts_numpy_integers() -> None:
    assert check_counter(lambda t: np.int64(len(t)))("abc") == 3


def test_check_counter_counts_empty_text_as_zero_without_asking() -> None:
    assert check_counter(lambda _: 99)("") == 0


def test_check_counter_rejects_a_non_callable() -> None:
    with pytest.raises(UsageError, match="callable"):
        check_counter(42)  # type: ignore[arg-type]


def test_remembered_counts_stay_bounded_and_equal_fresh_ones() -> None:
    from elastic_memory.context import tokens

    texts = [f"memory number {i} about the quarterly budget review" for i in range(tokens._COUNTS_MAX + 10)]
    first = [estimate_tokens(t) for t in texts]
    assert len(tokens._COUNTS) <= tokens._COUNTS_MAX
    assert [estimate_tokens(t) for t in texts] == first == [tokens._estimate(t) for t in texts]
    long = "word " * 2_000
    assert estimate_tokens(long) == 2_000 and long not in tokens._COUNTS
