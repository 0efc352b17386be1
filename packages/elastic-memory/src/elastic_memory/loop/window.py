"""The host's window: which of the live session's turns the model will see verbatim (pure).

A plan leaves out the moments the model already has in its messages. Without word from the
host, that is the live session's last ``keep_last_n_turns`` turns (what the plan asks the host
to keep). A host that trims or summarises its own history (LangChain's
``SummarizationMiddleware``, a chat buffer with a token limit) shows fewer: it passes the
messages the model will actually get as ``window``, and only the turns found there count as
seen, so a fact that fell out of the window is a candidate for the plan again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..types import Hit

__all__ = ["InWindow", "by_count", "by_turns", "turn_of", "window_texts"]

#: Whether a recalled memory is already in the model's window.
InWindow = Callable[[Hit], bool]

#: Where :func:`turn_of` puts memories that are not a turn's chunk: after every turn.
LATEST = 1 << 62


def turn_of(hit: Hit) -> int:
    """The turn number stored on a chunk (``metadata["turn"]``); other memories count as the latest."""
    turn = hit.metadata.get("turn") if hit.kind == "chunk" else None
    return turn if isinstance(turn, int) and not isinstance(turn, bool) else LATEST


def by_count(session: str, turns: int, keep_last_n_turns: int) -> InWindow:
    """The host keeps the last ``keep_last_n_turns`` of the session's ``turns`` (the plan's own assumption)."""
    after = turns - keep_last_n_turns
    return lambda h: h.session_id == session and turn_of(h) > after


def by_turns(session: str, shown: set[int]) -> InWindow:
    """The host shows the live session's turns numbered ``shown`` (their user message is among those it passed).

    Memories of the session that are not a turn's chunk (a preference, a how-to) count as unseen.
    """
    return lambda h: h.session_id == session and h.kind == "chunk" and turn_of(h) in shown


#: The most messages of a window looked up (the latest ones; each is bound twice, as given and
#: stripped: 400 values, under SQLite's 999).
MAX_WINDOW = 200


def window_texts(messages: Iterable[Any], as_text: Callable[[Any], str]) -> list[str]:
    """The texts of the host's latest ``messages`` (any shape ``as_text`` reads), as sent and stripped."""
    texts = [as_text(m) for m in messages]
    out = {variant for text in texts[-MAX_WINDOW:] if text.strip() for variant in (text, text.strip())}
    return sorted(out)
