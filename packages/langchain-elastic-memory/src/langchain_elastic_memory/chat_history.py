"""``ElasticMemoryChatMessageHistory``: a LangChain chat history per session, kept in the store.

Each message is one core memory of kind ``"message"`` (type ``episodic``) of a dedicated agent
id (default ``"<agent_id>:chat_history"``): never embedded, and left out of recall and
``build_context`` unless ``filters={"kind": "message"}`` asks for it, so the memory loop never
shows it to the model. The memory's ``session_id`` is the history's session, its content the
message text (keyword search), and its metadata holds ``seq`` (the message's position) and
``message`` (``message_to_dict``). Messages come back ordered by ``seq``: ``created_at`` can tie.
(Messages an earlier release stored as kind ``"note"`` are still read.)

Every history opened with the same ``path=`` (and options) in a process shares one store:
:meth:`~ElasticMemoryChatMessageHistory.close` on the last of them closes it; histories
dropped without ``close()`` leave it open for the next one, and it closes at exit. So the
factory idiom
``get_session_history=lambda sid: ElasticMemoryChatMessageHistory(sid, path="chat.db")``
opens the file once, not once per call; ``":memory:"`` is never shared (each is its own store).

``BaseChatMessageHistory`` is deprecated upstream (LangGraph persistence replaces it) but
``RunnableWithMessageHistory`` still uses it; for agents prefer ``ElasticMemoryMiddleware``.
"""

from __future__ import annotations

import atexit
import json
import threading
import weakref
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, message_to_dict, messages_from_dict

from elastic_memory import AsyncMemory, Embedder, Hit, Memory, UsageError
from elastic_memory.adapters import StoreLifecycle

from ._memory import Opened, open_memory

__all__ = ["ElasticMemoryChatMessageHistory"]

#: Messages read per recall (the core's largest ``k``).
_PAGE = 1_000
#: Newest messages looked at to find the next sequence number.
_RECENT = 50
#: Characters of a message's text kept as the memory's searchable content.
_INDEX_CHARS = 10_000
#: The core kind of a chat message (never embedded, not recalled unless asked for).
_KIND = "message"
#: The kinds read back: ``"note"`` is what earlier releases wrote.
_READ_KINDS = [_KIND, "note"]


class _Shared:
    """One store per path (and options) per process, shared by the histories opened on it."""

    def __init__(self, opened: Opened) -> None:
        self.opened = opened
        self.users = 0


_shared: dict[Hashable, _Shared] = {}
_shared_lock = threading.Lock()
_shared_lock_registered: list[bool] = []  # whether _close_all is registered with atexit


def _share_key(path: str | Path, embedding: Embeddings | None, embedder: Any, options: dict[str, Any]) -> Hashable:
    where = str(path)
    if "://" not in where:
        where = str(Path(where).expanduser().resolve())
    model = embedder if isinstance(embedder, str) or embedder is None else id(embedder)
    return (where, None if embedding is None else id(embedding), model, repr(sorted(options.items())))


def _acquire(
    path: str | Path, embedding: Embeddings | None, embedder: Any, options: dict[str, Any]
) -> tuple[Memory, Hashable]:
    key = _share_key(path, embedding, embedder, options)
    with _shared_lock:
        entry = _shared.get(key)
        if entry is None:
            entry = _Shared(open_memory(path, None, embedding=embedding, embedder=embedder, **options))
            if not _shared_lock_registered:
                # Registered after the first store opened, hence after the core's own exit hook:
                # atexit runs the last registered first, so these stores close before the core stops.
                atexit.register(_close_all)
                _shared_lock_registered.append(True)
            _shared[key] = entry
        entry.users += 1
        return entry.opened.sync, key


def _release(key: Hashable, *, close: bool) -> Opened | None:
    """One history fewer on the store of ``key``; the store to close if it was the last and ``close``."""
    with _shared_lock:
        entry = _shared.get(key)
        if entry is None:
            return None
        entry.users -= 1
        if entry.users > 0 or not close:
            return None
        del _shared[key]
    return entry.opened


class _Lease(Opened):
    """A history's share of a store opened once per process: its first close lets go, the last one closes it.

    ``held`` lets go without closing when the history is dropped unclosed (the store stays for reuse).
    """

    def __init__(self, memory: Memory, key: Hashable, held: weakref.finalize[Any, Any]) -> None:
        super().__init__(memory, owns=False)
        self._key = key
        self._held = held

    def close(self) -> None:
        if self._held.detach() is not None:  # the first close() lets go, once
            last = _release(self._key, close=True)
            if last is not None:
                last.close()

    async def aclose(self) -> None:
        if self._held.detach() is not None:
            last = _release(self._key, close=True)
            if last is not None:
                await last.aclose()


def _close_all() -> None:
    """Close the stores still open at exit (histories dropped without ``close()`` leave theirs open for reuse)."""
    with _shared_lock:
        entries = list(_shared.values())
        _shared.clear()
    for entry in entries:
        entry.opened.close()


def shared_stores() -> int:
    """How many stores the process's chat histories hold open (one per path and options)."""
    with _shared_lock:
        return len(_shared)


class ElasticMemoryChatMessageHistory(StoreLifecycle, BaseChatMessageHistory):
    """The messages of one chat session, stored exactly (types, content blocks, tool calls, ids).

    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> with ElasticMemoryChatMessageHistory("chat-1", path=":memory:", embedder=None) as history:
    ...     history.add_messages([HumanMessage("Hi, I am Ada."), AIMessage("Hello Ada!")])
    ...     [m.content for m in history.messages]
    ['Hi, I am Ada.', 'Hello Ada!']

    Args:
        session_id: The chat session.
        path: A database file (or ``":memory:"``) to open: one store per file and options is
            shared by the process's histories (:meth:`close` on the last one closes it; else
            it closes at exit).
        memory: An open elastic-memory ``Memory`` or ``AsyncMemory`` (left open by :meth:`close`).
        agent_id: The agent id the messages are stored under (default ``"<agent_id>:chat_history"``).
        record: Also feed each human message and the AI reply that follows it to the memory
            loop (``record_turn``), so facts are captured and later ``build_context`` calls
            recall them. Off by default: an agent with ``ElasticMemoryMiddleware`` records
            its turns already.
        embedding: A LangChain ``Embeddings`` for the store opened at ``path``.
        embedder: The core's embedder for ``path``. ``"auto"`` (the default): the built-in
            offline model with ``record=True``, else none (chat messages are never embedded,
            so the history loads no model); ``None``: no vectors.
        **options: More ``Memory.open`` options for ``path``.

    ``add_messages`` writes a batch in one transaction. Two writers appending to one session
    at the same instant may give two messages the same ``seq``; both are kept, in time order.
    """

    _opened: Opened

    def __init__(
        self,
        session_id: str,
        *,
        path: str | Path | None = None,
        memory: Memory | AsyncMemory | None = None,
        agent_id: str | None = None,
        record: bool = False,
        embedding: Embeddings | None = None,
        embedder: Embedder | str | None = "auto",
        **options: Any,
    ) -> None:
        super().__init__()
        if not isinstance(session_id, str) or not session_id.strip():
            msg = f"session_id must be a non-empty string, got {session_id!r}"
            raise UsageError(msg)
        if agent_id is not None and (not isinstance(agent_id, str) or not agent_id.strip()):
            msg = f"agent_id must be a non-empty string or None, got {agent_id!r}"
            raise UsageError(msg)
        if not isinstance(record, bool):
            msg = f"record must be True or False, got {record!r}"
            raise UsageError(msg)
        if embedding is None and not record and isinstance(embedder, str) and embedder == "auto":
            embedder = None  # messages are never embedded: without record, the history needs no model
        if path is not None and memory is None and str(path) != ":memory:":
            shared, key = _acquire(path, embedding, embedder, options)
            self._opened = _Lease(shared, key, weakref.finalize(self, _release, key, close=False))
        else:
            self._opened = open_memory(path, memory, embedding=embedding, embedder=embedder, **options)
        self.session_id = session_id
        self.agent_id = agent_id or f"{self._opened.sync.agent_id}:chat_history"
        self.record = record
        self._waiting: list[str] = []  # human texts not yet answered (record=True)

    # ------------------------------------------------------------------- read
    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]  # the base declares a plain attribute
        """Every message of the session, oldest first."""
        return _decode(self._stored())

    async def aget_messages(self) -> list[BaseMessage]:
        """Every message of the session, oldest first (async)."""
        return _decode(await self._astored())

    def _filters(self, first: int | None = None) -> dict[str, Any]:
        filters: dict[str, Any] = {"agent_id": self.agent_id, "session_id": self.session_id, "kind": _READ_KINDS}
        if first is not None:
            filters["metadata"] = {"seq": {"$gte": first, "$lt": first + _PAGE}}
        return filters

    def _stored(self) -> list[Hit]:
        """The session's memories: one recall, or sequence ranges when there are more than a page."""
        mem = self._opened.sync
        hits = mem.recall("", k=_PAGE, mode="keyword", filters=self._filters(), touch=False)
        if len(hits) < _PAGE:
            return hits
        last = _next_seq(hits)  # the newest page holds the highest sequence number
        return [
            hit
            for first in range(0, last, _PAGE)
            for hit in mem.recall("", k=_PAGE, mode="keyword", filters=self._filters(first), touch=False)
        ]

    async def _astored(self) -> list[Hit]:
        mem = self._opened.aio
        hits = await mem.recall("", k=_PAGE, mode="keyword", filters=self._filters(), touch=False)
        if len(hits) < _PAGE:
            return hits
        out: list[Hit] = []
        for first in range(0, _next_seq(hits), _PAGE):
            out += await mem.recall("", k=_PAGE, mode="keyword", filters=self._filters(first), touch=False)
        return out

    # ------------------------------------------------------------------ write
    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Append ``messages`` in one transaction (and, with ``record``, feed their exchanges to the loop)."""
        batch = _checked(messages)
        if not batch:
            return
        mem = self._opened.sync
        recent = mem.recall("", k=_RECENT, mode="keyword", filters=self._filters(), touch=False)
        mem.remember_many(self._items(batch, _next_seq(recent)), dedupe=False)
        for user, reply in self._exchanges(batch):
            mem.record_turn(user, reply, session_id=self.session_id)

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Append ``messages`` in one transaction (async)."""
        batch = _checked(messages)
        if not batch:
            return
        mem = self._opened.aio
        recent = await mem.recall("", k=_RECENT, mode="keyword", filters=self._filters(), touch=False)
        await mem.remember_many(self._items(batch, _next_seq(recent)), dedupe=False)
        for user, reply in self._exchanges(batch):
            await mem.record_turn(user, reply, session_id=self.session_id)

    def clear(self) -> None:
        """Erase this session's messages (other sessions and the rest of the store stay)."""
        ids = [hit.id for hit in self._stored()]
        if ids:
            self._opened.sync.forget(ids, hard=True)
        self._waiting.clear()

    async def aclear(self) -> None:
        """Erase this session's messages (async)."""
        ids = [hit.id for hit in await self._astored()]
        if ids:
            await self._opened.aio.forget(ids, hard=True)
        self._waiting.clear()

    def _items(self, batch: list[BaseMessage], first: int) -> list[dict[str, Any]]:
        items = []
        for n, message in enumerate(batch):
            data = message_to_dict(message)
            try:
                json.dumps(data, allow_nan=False)
            except (TypeError, ValueError) as e:
                msg = (
                    f"messages[{n}] ({type(message).__name__}) cannot be stored: a field is not JSON-serialisable: {e}"
                )
                raise UsageError(msg) from e
            text = str(message.text).strip()
            items.append(
                {
                    "content": text[:_INDEX_CHARS] if text else f"({message.type} message)",
                    "type": "episodic",
                    "kind": _KIND,
                    "agent_id": self.agent_id,
                    "session_id": self.session_id,
                    "metadata": {"seq": first + n, "message": data},
                }
            )
        return items

    def _exchanges(self, batch: list[BaseMessage]) -> list[tuple[str, str]]:
        """With ``record``: (human text, reply) for each AI message with text that answers waiting human ones."""
        if not self.record:
            return []
        out = []
        for message in batch:
            text = str(message.text).strip()
            if isinstance(message, HumanMessage) and text:
                self._waiting.append(text)
            elif isinstance(message, AIMessage) and text and self._waiting:
                out.append(("\n".join(self._waiting), text))
                self._waiting.clear()
        return out


def _checked(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    if isinstance(messages, BaseMessage | str) or not isinstance(messages, Sequence):
        msg = f"add_messages takes a sequence of messages, got {type(messages).__name__}"
        raise UsageError(msg)
    batch = list(messages)
    for n, message in enumerate(batch):
        if not isinstance(message, BaseMessage):
            msg = f"messages[{n}] is a {type(message).__name__}, not a LangChain message"
            raise UsageError(msg)
    return batch


def _seq(hit: Hit) -> int | None:
    seq = hit.metadata.get("seq")
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else None


def _next_seq(hits: list[Hit]) -> int:
    return max((s + 1 for h in hits if (s := _seq(h)) is not None), default=0)


def _decode(hits: list[Hit]) -> list[BaseMessage]:
    """The stored messages in ``seq`` order (ties by time); memories that hold no message are skipped."""
    # recall lists newest first: reversed, full ties keep insertion order through the stable sort
    kept = [(seq, h.created_at, h.metadata["message"]) for h in reversed(hits) if (seq := _seq(h)) is not None]
    kept = [k for k in kept if isinstance(k[2], dict)]
    kept.sort(key=lambda k: (k[0], k[1]))
    return messages_from_dict([data for _, _, data in kept])
