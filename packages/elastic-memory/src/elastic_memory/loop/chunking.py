r"""Condensing an exchange into chunks: one per exchange, sentence-split past a token target.

>>> split_exchange("My dog is called Biscuit.", "Nice name!", target_tokens=120, count=len)
['User: My dog is called Biscuit.\nAssistant: Nice name!']
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["MAX_CHUNKS", "asked_in", "split_exchange"]

#: Chunks indexed per exchange; text beyond stays in the verbatim transcript only.
MAX_CHUNKS = 32
_SENTENCE = re.compile(r"(?<=[.!?…])\s+|\n+")


def _pieces(text: str, target: int, count: Callable[[str], int]) -> list[str]:
    """Sentences of ``text``, each cut by words when it alone exceeds ``target``."""
    out: list[str] = []
    for raw in _SENTENCE.split(text):
        sentence = raw.strip()
        if not sentence:
            continue
        if count(sentence) <= target:
            out.append(sentence)
            continue
        words: list[str] = []
        for word in sentence.split():
            if words and count(" ".join([*words, word])) > target:
                out.append(" ".join(words))
                words = []
            words.append(word[: target * 8])
            if len(out) > MAX_CHUNKS:
                break
        if words:
            out.append(" ".join(words))
        if len(out) > MAX_CHUNKS:
            break
    return out


def split_exchange(user: str, reply: str, *, target_tokens: int, count: Callable[[str], int]) -> list[str]:
    """The chunks of one exchange, labelled ``User:`` / ``Assistant:``; at most :data:`MAX_CHUNKS`."""
    sides = [(label, text.strip()) for label, text in (("User", user), ("Assistant", reply)) if text.strip()]
    whole = "\n".join(f"{label}: {text}" for label, text in sides)
    if not whole or count(whole) <= target_tokens:
        return [whole] if whole else []
    chunks: list[str] = []
    for label, text in sides:
        current = ""
        for piece in _pieces(text, target_tokens, count):
            candidate = f"{current} {piece}" if current else f"{label}: {piece}"
            if current and count(candidate) > target_tokens:
                chunks.append(current)
                current = f"{label}: {piece}"
            else:
                current = candidate
            if len(chunks) >= MAX_CHUNKS:
                return chunks
        if current:
            chunks.append(current)
    return chunks[:MAX_CHUNKS]


def asked_in(chunk: str) -> str | None:
    r"""What the user said in an exchange's (first) chunk, whitespace collapsed; ``None`` for other chunks.

    >>> asked_in("User: Suggest a  salsa recipe.\nAssistant: Try pico de gallo.")
    'Suggest a salsa recipe.'
    """
    if not chunk.startswith("User: "):
        return None
    said, _, _ = chunk[len("User: ") :].partition("\nAssistant: ")
    return " ".join(said.split())
