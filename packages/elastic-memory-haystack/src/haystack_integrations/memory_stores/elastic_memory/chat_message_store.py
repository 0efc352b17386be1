"""``ElasticMemoryChatMessageStore``: the haystack-experimental ``ChatMessageStore`` protocol, kept in the store.

Each message is one core memory (type ``episodic``, pinned, so neither ``prune`` nor the
consolidation sweep ever archives a transcript) of a dedicated agent id (default
``"<agent_id>:haystack_chat"``), so the store's own memory loop never plans it into a prompt.
Its ``session_id`` is the ``chat_history_id``; over a user's handle (``memory=mem.for_user("alice")``)
its rows are that user's (the core's owner: the dedicated agent id and the user), so each
user's ``chat_history_id`` names their own history. Its content the message text (searchable); its
metadata ``seq`` (an explicit position: times can tie), ``chat_message_id`` and ``message``
(``ChatMessage.to_dict()``, read back with ``ChatMessage.from_dict``: exact round-trip).

Like haystack-experimental's ``InMemoryChatMessageStore``, a message without
``meta["chat_message_id"]`` gets its position as that id, a message whose id is stored already
is skipped (so writing back a retrieved history plus new messages adds only the new ones;
messages without an id are always new, as in the in-memory store), system messages are
skipped by default, and ``last_k`` counts rounds (a user message up to the assistant's text
reply, tool calls and results included), never splitting a tool call from its result.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from haystack import default_from_dict, default_to_dict
from haystack.dataclasses import ChatMessage, ChatRole

from elastic_memory import AsyncMemory, Embedder, Hit, Memory, UsageError

from ._common import StoreOwner, agent_suffix, check_name

__all__ = ["ElasticMemoryChatMessageStore"]

#: The largest ``k`` of one recall.
_PAGE = 1_000
#: Characters of a message's text kept as the memory's searchable content.
_INDEX_CHARS = 10_000


class ElasticMemoryChatMessageStore(StoreOwner):
    """Chat histories, one per ``chat_history_id``, stored exactly in an elastic-memory file.

    >>> from haystack.dataclasses import ChatMessage
    >>> with ElasticMemoryChatMessageStore(path=":memory:", embedder=None) as store:
    ...     store.write_messages("chat-1", [ChatMessage.from_user("Hi"), ChatMessage.from_assistant("Hello!")])
    ...     [m.text for m in store.retrieve_messages("chat-1")]
    2
    ['Hi', 'Hello!']

    Args:
        path: A database file (or ``":memory:"``) to open; :meth:`close` closes it.
        memory: An open elastic-memory ``Memory`` or ``AsyncMemory`` (left open by :meth:`close`);
            a user's handle (``Memory.for_user``) keeps that user's chat histories only.
        agent_id: The agent id messages are stored under (default ``"<agent_id>:haystack_chat"``).
        skip_system_messages: Do not store system messages (default, as the in-memory store).
        last_k: Rounds :meth:`retrieve_messages` returns when it is given no ``last_k`` (``None``: all).
        embedder: The core's embedder for ``path`` (``"auto"``: the built-in offline model, ``None``: none).
        **options: More ``Memory.open`` options for ``path``.
    """

    def __init__(
        self,
        *,
        path: str | Path | None = None,
        memory: Memory | AsyncMemory | None = None,
        agent_id: str | None = None,
        skip_system_messages: bool = True,
        last_k: int | None = 10,
        embedder: Embedder | str | None = "auto",
        **options: Any,
    ) -> None:
        if not isinstance(skip_system_messages, bool):
            msg = f"skip_system_messages must be True or False, got {skip_system_messages!r}"
            raise UsageError(msg)
        _check_last_k(last_k)
        super().__init__(path=path, memory=memory, embedder=embedder, options=options)
        self._given_agent_id = agent_id
        self.agent_id = agent_suffix(self._opened, agent_id, ":haystack_chat")
        self.skip_system_messages = skip_system_messages
        self.last_k = last_k

    def to_dict(self) -> dict[str, Any]:
        """Serialise: the (absolute) path, the agent id and the settings."""
        return default_to_dict(
            self,
            agent_id=self._given_agent_id,
            skip_system_messages=self.skip_system_messages,
            last_k=self.last_k,
            **self._store_params(),
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ElasticMemoryChatMessageStore:
        """Reopen the store a :meth:`to_dict` describes."""
        return default_from_dict(cls, data)

    # --------------------------------------------------------------------- rows
    def _filters(self, chat_history_id: str | None, first: int | None = None) -> dict[str, Any]:
        filters = self.owner_fields(self.agent_id)
        if chat_history_id is not None:
            filters["session_id"] = chat_history_id
        if first is not None:
            filters["metadata"] = {"seq": {"$gte": first, "$lt": first + _PAGE - 1}}
        return filters

    def _hits(self, chat_history_id: str | None) -> list[Hit]:
        mem = self.owner_memory
        hits = mem.recall("", k=_PAGE, mode="keyword", filters=self._filters(chat_history_id), touch=False)
        if len(hits) < _PAGE or chat_history_id is None:
            return hits
        last = _next_seq(hits)
        out: list[Hit] = []
        for first in range(0, last + _PAGE, _PAGE - 1):
            out += mem.recall("", k=_PAGE, mode="keyword", filters=self._filters(chat_history_id, first), touch=False)
        return out

    # ---------------------------------------------------------------- protocol
    def count_messages(self, chat_history_id: str) -> int:
        """How many messages the chat history holds."""
        return len(self._hits(_chat(chat_history_id)))

    def write_messages(self, chat_history_id: str, messages: list[ChatMessage]) -> int:
        """Append the messages not stored yet (by ``meta["chat_message_id"]``); returns how many were written.

        Raises:
            ValueError: ``messages`` is not a list of ``ChatMessage``.
        """
        chat = _chat(chat_history_id)
        if isinstance(messages, ChatMessage | str) or not isinstance(messages, list | tuple):
            msg = "Please provide a list of ChatMessages."
            raise ValueError(msg)
        if any(not isinstance(m, ChatMessage) for m in messages):
            msg = "Please provide a list of ChatMessages."
            raise ValueError(msg)
        hits = self._hits(chat)
        seq = _next_seq(hits)
        known = {h.metadata.get("chat_message_id") for h in hits}
        items: list[dict[str, Any]] = []
        for message in messages:
            if self.skip_system_messages and message.is_from(ChatRole.SYSTEM):
                continue
            if message.meta.get("chat_message_id") is None:
                message = dataclasses.replace(message, _meta={"chat_message_id": str(seq), **message.meta})  # noqa: PLW2901
            message_id = str(message.meta["chat_message_id"])
            if message_id in known:
                continue
            known.add(message_id)
            data = message.to_dict()
            try:
                json.dumps(data, allow_nan=False)
            except (TypeError, ValueError) as e:
                msg = f"a {message.role.value} message cannot be stored: a field is not JSON-serialisable: {e}"
                raise UsageError(msg) from e
            text = (message.text or "").strip()
            items.append(
                {
                    "content": text[:_INDEX_CHARS] if text else f"({message.role.value} message)",
                    "type": "episodic",
                    **self.owner_fields(self.agent_id),
                    "session_id": chat,
                    "pinned": True,
                    "metadata": {"seq": seq, "chat_message_id": message_id, "message": data},
                }
            )
            seq += 1
        if items:
            self.owner_memory.remember_many(items, dedupe=False)
        return len(items)

    def retrieve_messages(self, chat_history_id: str, last_k: int | None = None) -> list[ChatMessage]:
        """The chat history, oldest first: its last ``last_k`` rounds (default: the constructor's).

        Raises:
            ValueError: ``last_k`` is negative.
        """
        chat = _chat(chat_history_id)
        if last_k is not None and (isinstance(last_k, bool) or not isinstance(last_k, int)):
            msg = f"last_k must be an integer or None, got {last_k!r}"
            raise ValueError(msg)
        if last_k is not None and last_k < 0:
            msg = "last_k must be 0 or greater"
            raise ValueError(msg)
        resolved = last_k if last_k is not None else self.last_k
        if resolved == 0:
            return []
        messages = _decode(self._hits(chat))
        return messages if resolved is None else _last_rounds(messages, resolved)

    def delete_messages(self, chat_history_id: str) -> None:
        """Erase one chat history (other histories and the rest of the store stay)."""
        self._erase(_chat(chat_history_id))

    def delete_all_messages(self) -> None:
        """Erase every chat history of this store's agent id (of its handle's user: see ``memory``)."""
        self._erase(None)

    def _erase(self, chat: str | None) -> None:
        mem = self.owner_memory
        while hits := mem.recall("", k=_PAGE, mode="keyword", filters=self._filters(chat), touch=False):
            mem.forget([hit.id for hit in hits], hard=True)


def _chat(chat_history_id: Any) -> str:
    name = check_name("chat_history_id", chat_history_id)
    assert name is not None
    return name


def _check_last_k(last_k: Any) -> None:
    if last_k is not None and (isinstance(last_k, bool) or not isinstance(last_k, int) or last_k < 0):
        msg = f"last_k must be a non-negative integer or None, got {last_k!r}"
        raise UsageError(msg)


def _seq(hit: Hit) -> int | None:
    seq = hit.metadata.get("seq")
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else None


def _next_seq(hits: list[Hit]) -> int:
    return max((s + 1 for h in hits if (s := _seq(h)) is not None), default=0)


def _decode(hits: list[Hit]) -> list[ChatMessage]:
    """The stored messages in ``seq`` order (ties by time); rows that hold no message are skipped."""
    seen: set[str] = set()
    kept = []
    for hit in reversed(hits):
        seq, data = _seq(hit), hit.metadata.get("message")
        if seq is None or not isinstance(data, dict) or hit.id in seen:
            continue
        seen.add(hit.id)
        kept.append((seq, hit.created_at, data))
    kept.sort(key=lambda k: (k[0], k[1]))
    return [ChatMessage.from_dict(data) for _, _, data in kept]


def _last_rounds(messages: list[ChatMessage], last_k: int) -> list[ChatMessage]:
    """The last ``last_k`` rounds: a user message up to the assistant's text reply (tool calls inside)."""
    rounds: list[list[ChatMessage]] = []
    current: list[ChatMessage] = []
    for message in messages:
        if message.role == ChatRole.SYSTEM:
            rounds.append([message])
            continue
        current.append(message)
        if message.role == ChatRole.ASSISTANT and message.text and not message.tool_calls:
            rounds.append(current)
            current = []
    if current:
        rounds.append(current)
    return [m for r in rounds[-last_k:] for m in r]
