"""Entity names: exact canonicalisation and the query n-grams that detect them (pure).

>>> canonical("  Dr. Okonkwo's  CLINIC ")
"dr okonkwo's clinic"
>>> ngrams("Where is Dr. Okonkwo?", 2)
['where', 'where is', 'is', 'is dr', 'dr', 'dr okonkwo', 'okonkwo']
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["MAX_NAME_CHARS", "canonical", "ngrams"]

#: Longest entity name kept (longer names are cut before canonicalisation).
MAX_NAME_CHARS = 200
_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")


def canonical(name: str) -> str:
    """The key two spellings of one name share: NFKC, case-folded, words only, single spaces.

    Punctuation between words goes (``"Dr. Okonkwo"`` and ``"dr okonkwo"`` are one entity);
    an apostrophe inside a word stays. Returns ``""`` for a name without any word.
    """
    text = unicodedata.normalize("NFKC", name[:MAX_NAME_CHARS]).casefold().replace("\u2019", "'")
    return " ".join(_WORD.findall(text))


def ngrams(text: str, longest: int = 4, *, limit: int = 2_000) -> list[str]:
    """Canonical word n-grams of ``text`` up to ``longest`` words, in order, deduplicated.

    These are the keys looked up to find the entities a query names (no NER model).
    """
    words = _WORD.findall(unicodedata.normalize("NFKC", text[:20_000]).casefold().replace("\u2019", "'"))
    out: dict[str, None] = {}
    for i in range(len(words)):
        for n in range(1, longest + 1):
            if i + n > len(words):
                break
            out[" ".join(words[i : i + n])] = None
            if len(out) >= limit:
                return list(out)
    return list(out)
