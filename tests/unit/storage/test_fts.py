"""The FTS5 query sanitiser."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from elastic_memory.storage.sqlite.driver import driver
from elastic_memory.storage.sqlite.fts import MAX_TERMS, match_expression, query_terms


def test_operators_and_punctuation_are_stripped() -> None:
    assert match_expression('dog* AND "cat" OR NOT(bird) NEAR/3') == '"dog" OR "cat" OR "bird" OR "near" OR "3"'


def test_stop_words_are_dropped() -> None:
    assert query_terms("What is the name of my dog?") == ["name", "dog"]


def test_only_stop_words_gives_no_expression() -> None:
    assert match_expression("what is it") is None


def test_terms_are_capped_and_deduplicated() -> None:
    terms = query_terms(" ".join(f"w{i} w{i}" for i in range(100)))
    assert len(terms) == MAX_TERMS
    assert len(set(terms)) == MAX_TERMS


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_any_text_gives_a_valid_match_expression(text: str) -> None:
    """Whatever the text, FTS5 accepts the expression (run against a real FTS5 table)."""
    expr = match_expression(text)
    conn = driver().module.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE f USING fts5(x, tokenize='porter unicode61')")
        conn.execute("INSERT INTO f VALUES ('some text')")
        if expr is not None:
            conn.execute("SELECT * FROM f WHERE f MATCH ?", (expr,)).fetchall()
    except driver().module.Error as e:  # pragma: no cover - reported as a failure
        raise AssertionError(f"{expr!r} was refused: {e}") from e
    finally:
        conn.close()
