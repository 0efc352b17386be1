"""What the host passes, made usable: turn values as text, session ids, message lists, the loop's open arguments."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import UsageError

__all__ = ["DEFAULT_SESSION", "MAX_TURN_CHARS", "as_messages", "as_session", "as_text", "check_loop_args"]

#: Characters of one side of a turn kept verbatim; beyond, the text is cut with a marker.
MAX_TURN_CHARS = 1_000_000
DEFAULT_SESSION = "default"


def as_text(value: Any) -> str:
    """Any turn value as text: ``None`` is empty, bytes are decoded, other objects ``str()``-ed.

    Chat-message-like objects (``.content``) and dicts (``["content"]``) give their content;
    lone surrogates are replaced so the text can always be stored.
    """
    if value is None:
        text = ""
    elif isinstance(value, str):
        text = value
    elif isinstance(value, bytes | bytearray):
        text = bytes(value).decode("utf-8", "replace")
    elif isinstance(value, dict) and "content" in value:
        return as_text(value["content"])
    elif hasattr(value, "content") and not isinstance(value, type):
        return as_text(value.content)
    elif isinstance(value, list | tuple):
        text = "\n".join(as_text(v) for v in value)
    else:
        try:
            text = str(value)
        except Exception:  # noqa: BLE001 - a hostile __str__ must not break the host
            text = f"<unprintable {type(value).__name__}>"
    text = text.encode("utf-8", "replace").decode("utf-8")
    if len(text) > MAX_TURN_CHARS:
        text = text[:MAX_TURN_CHARS] + f" [... {len(text) - MAX_TURN_CHARS} characters cut]"
    return text.replace("\x00", "")


def as_session(session_id: Any) -> str:
    """A usable session id: ``None`` is ``"default"``, anything else its text (at most 200 chars)."""
    if session_id is None:
        return DEFAULT_SESSION
    text = as_text(session_id).strip()[:200]
    return text or DEFAULT_SESSION


def as_messages(value: Any) -> Iterable[Any]:
    """The host's messages as an iterable: one message (text, dict, chat message) is a list of one."""
    if value is None:
        return []
    if isinstance(value, str | bytes | dict) or hasattr(value, "content"):
        return [value]
    try:
        return list(value)
    except TypeError:
        return [value]


def check_loop_args(llm: Any, context_tokens: Any) -> None:
    """Validate :meth:`Memory.open`'s ``llm`` and ``context_tokens``."""
    if llm is not None and not callable(llm):
        msg = f"llm must be a callable taking a prompt and returning text, got {llm!r}"
        raise UsageError(msg)
    if isinstance(context_tokens, bool) or not isinstance(context_tokens, int) or context_tokens <= 0:
        msg = f"context_tokens must be the model's context size in tokens (a positive int), got {context_tokens!r}"
        raise UsageError(msg)
