"""Conformance: hostile query text never raises."""

from __future__ import annotations

import pytest

from .drivers import MemoryDriver

HOSTILE = [
    '"',
    "'",
    "AND OR NOT",
    "NEAR(a b, 3)",
    'col:value "unterminated',
    "a* ^b -c +d",
    "\x00\x00null bytes\x00",
    "emoji 🐶🦴 and ünïcödé and 中文 and עברית",
    "x" * 10_000,
    " ".join(["word"] * 5_000),
    "((((((((((",
    "SELECT * FROM memories; DROP TABLE memories; --",
    "\ud800 lone surrogate",
    "",
    "   \n\t ",
]


@pytest.mark.parametrize("query", HOSTILE, ids=range(len(HOSTILE)))
@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
async def test_hostile_query_never_raises(driver: MemoryDriver, query: str, mode: str) -> None:
    """Any text is a valid query: operators are stripped, tokens quoted, length capped.

    If this fails, check fts.match_expression and that the embedder gets a bounded string.
    """
    await driver.remember("NEAR the word memories with unicode 中文 🐶")
    hits = await driver.recall(query, mode=mode)
    assert isinstance(hits, list)


async def test_hostile_content_is_stored_verbatim(driver: MemoryDriver) -> None:
    """Content with quotes, operators and NUL round-trips byte for byte.

    If this fails, check that content is bound, never formatted into SQL.
    """
    text = '\'); DROP TABLE memories; -- "NEAR" \x00 🐶'
    mid = await driver.remember(text)
    assert (await driver.get(mid)).content == text  # type: ignore[union-attr]
