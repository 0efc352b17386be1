"""Hostile inputs for the fuzz suite: text, JSON, numbers, vectors and wrong types.

Everything here is a hypothesis strategy; nothing opens a store. The adapter packages'
``tests/test_fuzz.py`` load this file by path, so it imports only hypothesis and the stdlib.
"""

from __future__ import annotations

import math
import sys
from typing import Any

from hypothesis import strategies as st

__all__ = [
    "DEEP",
    "FTS5",
    "HUGE_TEXT",
    "PATHS",
    "SQL",
    "any_value",
    "bad_scalars",
    "deep_json",
    "floats",
    "hostile_text",
    "ints",
    "json_values",
    "limits",
    "metadata",
    "names",
    "short_text",
    "tag_lists",
    "vectors",
]

#: FTS5 query syntax: operators, quotes, column filters, prefixes, NEAR groups.
FTS5 = [
    '"',
    '""',
    "'",
    "*",
    "^",
    "-",
    "+",
    ":",
    "AND",
    "OR",
    "NOT",
    "NEAR(",
    "NEAR(a b, 3)",
    'NEAR("a" "b", -1)',
    "content:",
    "{content tags}: x",
    "a* ^b -c +d",
    "((((((((((",
    "))))",
    'col:value "unterminated',
]
#: SQL fragments that would hurt if anything formatted them into a statement.
SQL = [
    "'; DROP TABLE memories;--",
    '"; DROP TABLE memories;--',
    "') OR 1=1 --",
    "1; DELETE FROM memories",
    "%",
    "_",
    "\\%",
    "$1",
    "?",
    ":name",
    "/*",
    "*/",
    "E'\\x00'",
    "json_extract(metadata, '$.a')",
    "$.a[0]",
]
#: Path fragments: traversal, separators, drive letters, devices, URLs.
PATHS = [
    "../",
    "../../etc/passwd",
    "..\\..\\",
    "\\",
    "/",
    "C:\\",
    "//server/share",
    "~",
    "/dev/null",
    "NUL",
    "con",
    "file:///etc",
    "postgresql://x@y/z",
    ":memory:",
    ".",
    "..",
]
#: Characters that look like others, or change how text renders or normalises.
LOOKALIKES = [
    "\u0430",  # Cyrillic a
    "\u212a",  # Kelvin sign, NFKC -> K
    "\ufb01",  # fi ligature
    "\u200b",  # zero-width space
    "\u200d",  # zero-width joiner
    "\u202e",  # right-to-left override
    "\ufeff",  # BOM
    "\u00a0",  # no-break space
    "\u2028",  # line separator
    "\u0301",  # combining acute
    "\U0001f436",  # dog emoji
    "\uff21",  # fullwidth A
    "I\u0307",  # dotted I
    "ß",
    "中文",
    "עברית",
]
SURROGATES = ["\ud800", "\udfff", "\udc80", "\ud83d"]  # lone halves; \ud83d starts an emoji pair
CONTROLS = ["\x00", "\x01", "\x07", "\x08", "\x1b[31m", "\x7f", "\r", "\n", "\t", "\x0b", "\x0c", "\x85"]
ATOMS = FTS5 + SQL + PATHS + LOOKALIKES + SURROGATES + CONTROLS

#: The "10 MB string" case; kept to a few examples (see ``hostile_text(huge=True)``).
HUGE_TEXT = "x" * (10 * 1024 * 1024)
#: How deep the deep JSON goes: past CPython's default recursion limit.
DEEP = 2_000


def _joined(atoms: list[str], max_size: int) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(atoms) | st.text(max_size=4), min_size=1, max_size=max_size).map("".join)


def short_text(max_size: int = 40) -> st.SearchStrategy[str]:
    """Short hostile text: any code point (surrogates too), atoms glued together."""
    return st.one_of(
        st.sampled_from(ATOMS),
        st.text(st.characters(codec=None), max_size=max_size),
        _joined(ATOMS, 6),
    )


def hostile_text(*, huge: bool = False) -> st.SearchStrategy[str]:
    """Any hostile text, including long runs; ``huge`` adds the 10 MB string (rarely drawn)."""
    long = st.one_of(
        st.integers(1_000, 200_000).map(lambda n: "a" * n),
        st.integers(100, 5_000).map(lambda n: " ".join(["word"] * n)),
        st.integers(10, 2_000).map(lambda n: "\x00" * n),
        st.integers(10, 500).map(lambda n: "NEAR(" * n),
        st.integers(1, 1_000).map(lambda n: "\ud800" * n),
    )
    options = [short_text(), _joined(ATOMS, 30), long, st.sampled_from(["", " ", "\n\t ", "\x00"])]
    if huge:
        options.append(st.just(HUGE_TEXT))
    return st.one_of(*options)


def names() -> st.SearchStrategy[Any]:
    """Values passed where a short name (id, tag, agent, session, pool, key) is expected."""
    return st.one_of(
        short_text(),
        st.sampled_from(["", " ", "a\n", "a\r\n", "\na", "x" * 257, "x" * 10_000, "a\x00b", "default"]),
        bad_scalars(),
    )


def ints() -> st.SearchStrategy[Any]:
    """Integers at and beyond every boundary, and things that are almost integers."""
    return st.one_of(
        st.sampled_from([0, 1, -1, 2, 999, 1000, 1001, 10**6, 2**31, 2**63, 2**64, -(2**63), 10**100]),
        st.integers(),
        st.booleans(),
        st.sampled_from([1.0, 1.5, math.nan, math.inf, -math.inf, "5", b"5", None]),
    )


limits = ints


def floats() -> st.SearchStrategy[Any]:
    """Floats at the edges: NaN, infinities, the largest and smallest, -0.0, subnormals; bools and ints too."""
    return st.one_of(
        st.sampled_from(
            [math.nan, math.inf, -math.inf, 1e308, -1e308, sys.float_info.max, 5e-324, -0.0, 0.0, 1.0, 2.0, -1.0]
        ),
        st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.booleans(),
        st.sampled_from(["0.5", None, b"1"]),
    )


def vectors(dim: int = 16) -> st.SearchStrategy[Any]:
    """Vectors of the store's width with hostile entries, of wrong widths, and non-vectors."""
    finite_huge = st.sampled_from([1e308, -1e308, 3.4e38, 1e39, 5e-324, 1e-300])
    entry = st.one_of(st.floats(allow_nan=True, allow_infinity=True), finite_huge)
    return st.one_of(
        st.lists(entry, min_size=dim, max_size=dim),
        st.lists(finite_huge, min_size=dim, max_size=dim),
        st.just([0.0] * dim),
        st.just([math.nan] * dim),
        st.just([1e308] * dim),
        st.lists(st.floats(-1, 1), min_size=0, max_size=dim * 3),
        st.just([1.0] * 100_000),
        st.lists(st.sampled_from(["a", None, b"x", [1.0], True]), min_size=dim, max_size=dim),
        st.sampled_from(["vector", b"\x00" * 64, 3.0, {"a": 1.0}, None]),
    )


def deep_json(depth: int = DEEP, *, container: str = "dict") -> Any:
    """One JSON value nested ``depth`` levels (built iteratively, so building it cannot recurse)."""
    value: Any = "leaf"
    for _ in range(depth):
        value = {"k": value} if container == "dict" else [value]
    return value


def json_values(max_leaves: int = 8) -> st.SearchStrategy[Any]:
    """JSON-ish values with hostile leaves (NaN, huge ints, surrogates) and non-JSON leaves."""
    leaves = st.one_of(
        st.none(),
        st.booleans(),
        st.sampled_from([2**64, -(2**63) - 1, 10**100, math.nan, math.inf, -0.0, 1e308]),
        st.integers(),
        st.floats(),
        short_text(),
    )
    return st.recursive(
        leaves,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(short_text(12), inner, max_size=4),
        max_leaves=max_leaves,
    )


def metadata() -> st.SearchStrategy[Any]:
    """Metadata arguments: hostile keys and values, deep, wide, and not a dict at all."""
    deep = st.sampled_from([50, 500, 900, 1_000, DEEP]).map(lambda d: {"deep": deep_json(d)})
    deep_list = st.sampled_from([900, DEEP]).map(lambda d: {"deep": deep_json(d, container="list")})
    wide = st.integers(100, 20_000).map(lambda n: {f"k{i}": i for i in range(n)})
    odd_keys = st.sampled_from([{1: "a"}, {None: 1}, {(1, 2): 1}, {"": 1}, {"$gt": 1}, {"a.b": 1}, {"\ud800": 1}])
    return st.one_of(
        st.dictionaries(short_text(12), json_values(), max_size=4),
        deep,
        deep_list,
        wide,
        odd_keys,
        st.just({"x": object()}),
        st.just({"x": b"bytes"}),
        st.just({"x": {1, 2}}),
        bad_scalars(),
    )


def tag_lists() -> st.SearchStrategy[Any]:
    """``tags=`` arguments: lists of hostile names, a bare string, huge lists, non-iterables."""
    return st.one_of(
        st.lists(names(), max_size=5),
        st.just(["t"] * 10_000),
        st.just([f"t{i}" for i in range(5_000)]),
        short_text(),
        bad_scalars(),
    )


def bad_scalars() -> st.SearchStrategy[Any]:
    """Wrong types: None, bytes, numbers, containers, objects."""
    return st.sampled_from(
        [None, b"bytes", b"\xff\xfe", bytearray(b"x"), 0, -1, 1.5, math.nan, True, [], {}, (), {"a"}, object(), ...]
    )


def any_value() -> st.SearchStrategy[Any]:
    """Anything at all: text, numbers, JSON, wrong types."""
    return st.one_of(short_text(), ints(), floats(), json_values(), bad_scalars())
