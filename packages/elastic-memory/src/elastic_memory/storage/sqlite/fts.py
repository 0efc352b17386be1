"""Turn any user text into a safe FTS5 MATCH expression.

Operators and punctuation are stripped, every token is double-quoted (so nothing the user
types is FTS5 syntax), stop words are dropped (an OR over very common words touches most
of the index), and the term count is capped, so a query never raises and never goes
quadratic.

>>> match_expression("What is my dog's NAME? OR NEAR(x)")
'"dog" OR "name" OR "near" OR "x"'
>>> match_expression("the of and") is None
True
"""

from __future__ import annotations

import re

__all__ = ["MAX_TERMS", "STOP_WORDS", "match_expression", "phrases", "query_terms"]

#: At most this many distinct terms reach FTS5.
MAX_TERMS = 24
_MAX_TERM_CHARS = 64
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_PHRASE = re.compile(r'"([^"]*)"')

STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are aren't as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just let me more most my myself no nor not now of off on once only or other our
    ours ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    s t d ll m re ve don didn doesn isn wasn weren won wouldn shouldn couldn
    """.split()
)


def query_terms(text: str) -> list[str]:
    """The distinct lower-cased word tokens of ``text`` minus stop words, capped."""
    tokens = dict.fromkeys(t[:_MAX_TERM_CHARS] for t in _TOKEN.findall(text.casefold()))
    return [t for t in tokens if t not in STOP_WORDS][:MAX_TERMS]


def match_expression(text: str) -> str | None:
    """An OR of quoted terms for ``MATCH``, or ``None`` when no searchable word is left."""
    terms = query_terms(text)
    if not terms:
        return None
    return " OR ".join(f'"{t}"' for t in terms)


def phrases(match: str) -> list[str]:
    """The quoted terms of a :func:`match_expression`, in order.

    >>> phrases('"dog" OR "name"')
    ['dog', 'name']
    """
    return _PHRASE.findall(match)
