r"""How a Markdown folder ranks notes for a query (pure): its whole search engine.

A note's relevance to a query is BM25-lite over two fields, summed over the distinct
query tokens ``t`` (lowercase ``\w+`` words) that occur in the note::

    relevance = Σ_t idf(t) · (sat(tf_body(t)) + TITLE_WEIGHT · sat(tf_title(t)))
    sat(tf)   = tf · (K1 + 1) / (tf + K1)                      # K1 = 1.2, TITLE_WEIGHT = 2
    idf(t)    = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))     # N notes in the folder, df(t) holding t

so repeating a word saturates, a rare word counts more than a common one, and a title
match counts twice a body match. There is no length normalisation.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from ..types import MemoryType

__all__ = ["K1", "TITLE_WEIGHT", "NoteFilter", "idf", "relevance", "tokens"]

K1 = 1.2
TITLE_WEIGHT = 2.0
_WORD = re.compile(r"\w+")
_FILTER_KEYS = ("tags", "tags_all", "type", "pinned", "min_importance")


def tokens(text: str) -> list[str]:
    """The lowercase word tokens of ``text``.

    >>> tokens("Metric units, METRIC!")
    ['metric', 'units', 'metric']
    """
    return _WORD.findall(text.lower())


def idf(query: Iterable[str], documents: Iterable[tuple[Counter[str], Counter[str]]]) -> dict[str, float]:
    """``idf(t)`` of each query token over ``(body, title)`` token counts of every note."""
    wanted = set(query)
    df = dict.fromkeys(wanted, 0)
    n = 0
    for body, title in documents:
        n += 1
        for t in wanted:
            if t in body or t in title:
                df[t] += 1
    return {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}


def relevance(weights: Mapping[str, float], body: Counter[str], title: Counter[str]) -> float:
    """The relevance of one note (see the module docstring); 0 when no query token occurs.

    >>> relevance({"dog": 1.0}, Counter(dog=1), Counter()) < relevance({"dog": 1.0}, Counter(), Counter(dog=1))
    True
    """
    score = 0.0
    for t, weight in weights.items():
        score += weight * (_sat(body.get(t, 0)) + TITLE_WEIGHT * _sat(title.get(t, 0)))
    return score


def _sat(tf: int) -> float:
    return tf * (K1 + 1) / (tf + K1) if tf else 0.0


@dataclass(frozen=True)
class NoteFilter:
    """The ``filters=`` of a folder search: tags (any of), tags_all, type, pinned, min_importance."""

    tags: frozenset[str] | None = None
    tags_all: frozenset[str] = frozenset()
    types: frozenset[MemoryType] | None = None
    pinned: bool | None = None
    min_importance: float = 0.0

    @classmethod
    def parse(cls, filters: Mapping[str, Any] | None) -> NoteFilter:
        """A filter from a ``filters`` dict.

        Raises:
            UsageError: An unknown key or a value of the wrong form.
        """
        if filters is None:
            return cls()
        if not isinstance(filters, Mapping):
            msg = f"filters must be a dict such as {{'tags': ['work']}}, got {type(filters).__name__}"
            raise UsageError(msg)
        unknown = sorted(set(filters) - set(_FILTER_KEYS))
        if unknown:
            msg = f"a Markdown folder cannot filter on {unknown}; it filters on {list(_FILTER_KEYS)}"
            raise UsageError(msg)
        pinned = filters.get("pinned")
        if pinned is not None and not isinstance(pinned, bool):
            msg = f"filters['pinned'] must be True or False, got {pinned!r}"
            raise UsageError(msg)
        floor = filters.get("min_importance", 0.0)
        if isinstance(floor, bool) or not isinstance(floor, int | float):
            msg = f"filters['min_importance'] must be a number from 0 to 1, got {floor!r}"
            raise UsageError(msg)
        tags = filters.get("tags")
        return cls(
            tags=None if tags is None else _words("tags", tags),
            tags_all=_words("tags_all", filters.get("tags_all", ())),
            types=None if "type" not in filters else _types(filters["type"]),
            pinned=pinned,
            min_importance=float(floor),
        )

    def accepts(self, tags: Sequence[str], type_: MemoryType, pinned: bool, importance: float) -> bool:
        """Whether a note with these fields passes."""
        have = set(tags)
        return (
            (self.tags is None or bool(self.tags & have))
            and self.tags_all <= have
            and (self.types is None or type_ in self.types)
            and (self.pinned is None or pinned is self.pinned)
            and importance >= self.min_importance
        )


def _words(key: str, value: Any) -> frozenset[str]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list | tuple | set | frozenset) or not all(isinstance(t, str) for t in items):
        msg = f"filters[{key!r}] must be a tag or a list of tags, got {value!r}"
        raise UsageError(msg)
    return frozenset(t.strip().lstrip("#").lower() for t in items)


def _types(value: Any) -> frozenset[MemoryType]:
    items = [value] if isinstance(value, str | MemoryType) else value
    try:
        return frozenset(MemoryType(t) for t in items)
    except (TypeError, ValueError):
        msg = f"filters['type'] must be one of {[t.value for t in MemoryType]} or a list of them, got {value!r}"
        raise UsageError(msg) from None
