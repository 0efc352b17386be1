"""LlamaIndex chat stores kept in an elastic-memory store.

* :class:`ElasticMemoryChatStore` is a classic ``BaseChatStore`` (``ChatMemoryBuffer`` and
  the ``llama-index-storage-chat-store-*`` family).
* :class:`ElasticMemoryAsyncChatStore` is an ``AsyncDBChatStore``, the store the new
  ``llama_index.core.memory.Memory`` keeps its FIFO in:
  ``Memory.from_defaults(session_id=..., chat_store=ElasticMemoryAsyncChatStore(path=...))``.

Both keep one message as one core memory (kind ``message``, type ``episodic``, pinned) of a
dedicated agent id, by default ``"<agent_id>:llama_index_chat"``. The core never embeds a
``message`` and leaves it out of recall and plans unless ``filters={"kind": "message"}`` asks
for it, so writing a message runs no model, and neither ``Memory.recall``, a retriever nor
the memory loop's plans show the raw transcript beside the loop's own chunks (the loop records
and embeds each turn itself). Neither a file-wide ``prune`` nor the consolidation sweep ever
archives or erases a transcript. Messages written before the ``message`` kind existed (kind
``note``) are read and rewritten as before. The memory's ``session_id`` is the
chat key; its content is the message text (searchable); its metadata holds ``seq`` (an
explicit position: times can tie) and ``message`` (``ChatMessage.model_dump(mode="json")``,
read back with ``ChatMessage.model_validate``); its tags say the key (``chat-key:<key>``)
and the status (``chat-status:active`` or ``chat-status:archived``), which is how keys and
counts are read in one grouped query. Archiving changes the status tag of the existing
rows, nothing else.

The two classes share the format and the default agent id: the classic store shows a key's
whole transcript (active and archived, in order) and writes active messages.

**Users.** LlamaIndex scopes a conversation by its key alone (``Memory.from_defaults(session_id=...)``,
``ChatMemoryBuffer.from_defaults(chat_store_key=...)``), so an app serving many users either gives
each user keys of their own or opens the store for one user: ``user_id="alice"`` (or a
``memory=`` that is ``mem.for_user("alice")``) keeps that user's messages in a partition of
their own (the chat agent id's rows of user alice), so Alice's and Bob's ``"chat_history"``
are two conversations, and ``get_keys`` lists the user's keys only. The messages are read
and written through the agent's own handle, because a user's handle reads only its user's
memory loop; the store never reads another user's partition.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from llama_index.core.bridge.pydantic import (
    Field,
    PrivateAttr,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
)
from llama_index.core.llms import ChatMessage
from llama_index.core.storage.chat_store.base import BaseChatStore
from llama_index.core.storage.chat_store.base_db import AsyncDBChatStore, MessageStatus

from elastic_memory import AsyncMemory, Embedder, Hit, Memory, UsageError
from elastic_memory.adapters import Opened, StoreLifecycle, agent_handle
from llama_index.embeddings.elastic_memory.base import core_choice
from llama_index.storage.chat_store.elastic_memory._users import open_for_user

__all__ = ["ElasticMemoryAsyncChatStore", "ElasticMemoryChatStore"]

T = TypeVar("T")

#: Messages read per recall (the core's largest ``k``).
_PAGE = 1_000
#: Sequence numbers per paged read: one less than a page, so only duplicate numbers fill a page.
_WINDOW = _PAGE - 1
#: Newest messages looked at first to find the highest sequence number.
_RECENT = 50
#: Characters of a message's text kept as the memory's searchable content.
_INDEX_CHARS = 10_000
#: Tag prefixes: the chat key, and the message status.
KEY_TAG = "chat-key:"
STATUS_TAG = "chat-status:"
#: Longest key: a tag holds at most 256 characters.
MAX_KEY_CHARS = 256 - len(KEY_TAG)
#: The agent id suffix used when none is given.
AGENT_SUFFIX = ":llama_index_chat"
_STATUSES = (MessageStatus.ACTIVE.value, MessageStatus.ARCHIVED.value)
#: The kind a message is stored as (never embedded, left out of recall unless asked for).
KIND = "message"
#: The kinds a message is read from: ``note`` is what the stores wrote before ``message`` existed.
_READ_KINDS = [KIND, "note"]
_IN_MEMORY = ":memory:"


# --------------------------------------------------------------------------- plans
@dataclass(frozen=True)
class _Call:
    """One call of a method that :class:`Memory` and :class:`AsyncMemory` both have."""

    name: Literal["recall", "remember_many", "forget", "update", "tags"]
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)


#: The logic of an operation, written once: it yields the core calls it needs and is sent their results.
_Plan = Generator[_Call, Any, T]


def _drive(plan: _Plan[T], memory: Memory) -> T:
    """Run ``plan`` on the sync facade."""
    try:
        call = next(plan)
        while True:
            call = plan.send(getattr(memory, call.name)(*call.args, **call.kwargs))
    except StopIteration as done:
        result: T = done.value
        return result
    finally:
        plan.close()


async def _adrive(plan: _Plan[T], memory: AsyncMemory) -> T:
    """Run ``plan`` on the async facade (never the sync one)."""
    try:
        call = next(plan)
        while True:
            call = plan.send(await getattr(memory, call.name)(*call.args, **call.kwargs))
    except StopIteration as done:
        result: T = done.value
        return result
    finally:
        plan.close()


# ---------------------------------------------------------------------- validation
def _key(key: Any) -> str:
    if not isinstance(key, str) or not key or len(key) > MAX_KEY_CHARS:
        shown = repr(key) if not isinstance(key, str) or len(key) <= 80 else f"a string of {len(key)} characters"
        msg = f"a chat key must be a non-empty string of at most {MAX_KEY_CHARS} characters, got {shown}"
        raise UsageError(msg)
    return key


def _status(status: Any, *, optional: bool) -> tuple[str, ...]:
    """The status values a call covers (``None``, where allowed: both)."""
    if status is None and optional:
        return _STATUSES
    try:
        return (MessageStatus(status).value,)
    except ValueError:
        allowed = "MessageStatus.ACTIVE, MessageStatus.ARCHIVED" + (" or None" if optional else "")
        msg = f"status must be {allowed}, got {status!r}"
        raise UsageError(msg) from None


def _count(name: str, value: Any, *, optional: bool = False) -> int | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        msg = f"{name} must be a non-negative integer{' or None' if optional else ''}, got {value!r}"
        raise UsageError(msg)
    return value


def _index(idx: Any) -> int:
    if isinstance(idx, bool) or not isinstance(idx, int):
        msg = f"idx must be an integer position (negative counts from the end), got {idx!r}"
        raise UsageError(msg)
    return idx


def _messages(messages: Any) -> list[ChatMessage]:
    if isinstance(messages, ChatMessage | str | bytes | Mapping) or not isinstance(messages, Sequence):
        msg = f"messages must be a list of ChatMessage, got {type(messages).__name__}"
        raise UsageError(msg)
    batch = list(messages)
    for n, message in enumerate(batch):
        if not isinstance(message, ChatMessage):
            msg = f"messages[{n}] is a {type(message).__name__}, not a llama_index ChatMessage"
            raise UsageError(msg)
    return batch


def _message(message: Any) -> ChatMessage:
    if not isinstance(message, ChatMessage):
        msg = f"message must be a llama_index ChatMessage, got {type(message).__name__}"
        raise UsageError(msg)
    return message


#: A message ready to store: its status, searchable text and exact JSON form.
_Encoded = tuple[str, str, dict[str, Any]]


def _encoded(message: ChatMessage, n: int, status: str) -> _Encoded:
    """``message`` ready to store (refused when a field is not JSON-serialisable)."""
    try:
        data = message.model_dump(mode="json")
        json.dumps(data, allow_nan=False)
    except (TypeError, ValueError) as e:  # PydanticSerializationError is a ValueError
        msg = (
            f"messages[{n}] ({message.role.value}) cannot be stored: a field (additional_kwargs?) "
            f"is not JSON-serialisable: {e}"
        )
        raise UsageError(msg) from e
    text = (message.content or "").strip()[:_INDEX_CHARS]
    text = text.encode("utf-8", "replace").decode("utf-8")
    return status, text or f"({message.role.value} message)", data


def _encode(messages: list[ChatMessage], status: str) -> list[_Encoded]:
    return [_encoded(m, n, status) for n, m in enumerate(messages)]


# ---------------------------------------------------------------------------- rows
@dataclass(frozen=True)
class _Row:
    """One stored message."""

    id: str
    seq: int
    created_at: float
    status: str
    data: dict[str, Any]
    content: str

    def message(self) -> ChatMessage:
        return ChatMessage.model_validate(self.data)

    def record(self, key: str) -> dict[str, Any]:
        return {"key": key, "status": self.status, "message": self.data}


def _row(hit: Hit) -> _Row | None:
    """The message ``hit`` holds, or ``None`` for a memory that is not one (skipped)."""
    seq = hit.metadata.get("seq")
    data = hit.metadata.get("message")
    status = next((t[len(STATUS_TAG) :] for t in hit.tags if t.startswith(STATUS_TAG)), None)
    if isinstance(seq, bool) or not isinstance(seq, int) or seq < 0 or not isinstance(data, dict):
        return None
    if status not in _STATUSES:
        return None
    return _Row(hit.id, seq, hit.created_at, status, data, hit.content)


def _ordered(hits: Iterable[Hit]) -> list[_Row]:
    """Messages in position order; equal positions (two writers at once) by time, then as written."""
    rows = [r for hit in reversed(list(hits)) if (r := _row(hit)) is not None]  # recall lists newest first
    rows.sort(key=lambda r: (r.seq, r.created_at))  # stable: full ties keep the order written
    return rows


def _highest(rows: Iterable[_Row]) -> _Row | None:
    best: _Row | None = None
    for r in rows:
        if best is None or (r.seq, r.created_at) >= (best.seq, best.created_at):
            best = r
    return best


class _Transcript:
    """The chat messages of one agent id (and one of its users) in one store, as plans either facade can run.

    The plans run on the agent's own handle: a user's handle reads and writes its user's memory
    loop only, while the messages belong to the chat agent id's partition of that user.
    """

    def __init__(self, agent_id: str, user_id: str | None = None) -> None:
        self.agent_id = agent_id
        #: Whose rows: the chat agent id, and the user when the store serves one.
        self.owner: dict[str, str] = (
            {"agent_id": agent_id} if user_id is None else {"agent_id": agent_id, "user_id": user_id}
        )

    def _filters(
        self, key: str | None, statuses: tuple[str, ...] = _STATUSES, seq: dict[str, int] | None = None
    ) -> dict[str, Any]:
        filters: dict[str, Any] = {**self.owner, "kind": _READ_KINDS, "tags": [STATUS_TAG + s for s in statuses]}
        if key is not None:
            filters["session_id"] = key
        if seq is not None:
            filters["metadata"] = {"seq": seq}
        return filters

    def _list(self, key: str, statuses: tuple[str, ...], k: int = _PAGE, seq: dict[str, int] | None = None) -> _Call:
        filters = self._filters(key, statuses, seq)
        return _Call("recall", ("",), {"k": k, "mode": "keyword", "filters": filters, "touch": False})

    # ----------------------------------------------------------------- reads
    def rows(self, key: str, statuses: tuple[str, ...] = _STATUSES) -> _Plan[list[_Row]]:
        """Every message of ``key`` with one of ``statuses``, in order (paged beyond one recall)."""
        hits: list[Hit] = yield self._list(key, statuses)
        if len(hits) < _PAGE:
            return _ordered(hits)
        counts = yield from self.counts(key)
        total = sum(counts[s] for s in statuses)
        top = yield from self._newest(key, statuses, [r for h in hits if (r := _row(h)) is not None])
        found: list[Hit] = []
        high = top.seq + 1 if top is not None else 0
        while high > 0 and len(found) < total:  # down from the newest: active messages are found first
            low = max(0, high - _WINDOW)
            found += yield from self._window(key, statuses, low, high)
            high = low
        return _ordered(found)

    def _window(self, key: str, statuses: tuple[str, ...], low: int, high: int) -> _Plan[list[Hit]]:
        """The messages with ``low <= seq < high``; a full page (duplicate numbers) is split in two."""
        hits: list[Hit] = yield self._list(key, statuses, seq={"$gte": low, "$lt": high})
        if len(hits) < _PAGE or high - low < 2:
            return hits
        middle = (low + high) // 2
        return (yield from self._window(key, statuses, low, middle)) + (
            yield from self._window(key, statuses, middle, high)
        )

    def newest(self, key: str) -> _Plan[_Row | None]:
        """The message with the highest position (of any status), or ``None``."""
        hits: list[Hit] = yield self._list(key, _STATUSES, k=_RECENT)
        return (yield from self._newest(key, _STATUSES, [r for h in hits if (r := _row(h)) is not None]))

    def _newest(self, key: str, statuses: tuple[str, ...], seen: list[_Row]) -> _Plan[_Row | None]:
        """The highest-positioned of ``seen`` unless a higher one exists (a clock that went back)."""
        best = _highest(seen)
        while best is not None:
            hits: list[Hit] = yield self._list(key, statuses, seq={"$gt": best.seq})
            higher = _highest(r for h in hits if (r := _row(h)) is not None)
            if higher is None:
                break
            best = higher
        return best

    def counts(self, key: str) -> _Plan[dict[str, int]]:
        """Messages of ``key`` by status."""
        tags: dict[str, int] = yield _Call(
            "tags", kwargs={"filters": {**self.owner, "session_id": key}, "prefix": STATUS_TAG}
        )
        return {s: tags.get(STATUS_TAG + s, 0) for s in _STATUSES}

    def keys(self) -> _Plan[list[str]]:
        """Every key with at least one message, sorted."""
        tags: dict[str, int] = yield _Call("tags", kwargs={"filters": self.owner, "prefix": KEY_TAG})
        return [t[len(KEY_TAG) :] for t, n in tags.items() if n > 0]

    def everything(self) -> _Plan[list[dict[str, Any]]]:
        """Every message of every key, as ``{"key", "status", "message"}`` records (for serialisation)."""
        out: list[dict[str, Any]] = []
        for key in (yield from self.keys()):
            out += [r.record(key) for r in (yield from self.rows(key))]
        return out

    # ---------------------------------------------------------------- writes
    def _item(self, key: str, seq: int, encoded: _Encoded) -> dict[str, Any]:
        status, text, data = encoded
        return {
            "content": text,
            "kind": KIND,
            "type": "episodic",
            **self.owner,
            "session_id": key,
            "pinned": True,
            "tags": [KEY_TAG + key, STATUS_TAG + status],
            "metadata": {"seq": seq, "message": data},
        }

    def _items(self, key: str, batch: list[_Encoded], first: int) -> list[dict[str, Any]]:
        return [self._item(key, first + n, encoded) for n, encoded in enumerate(batch)]

    def append(self, key: str, messages: list[ChatMessage], status: str) -> _Plan[None]:
        """Add ``messages`` after the newest one, in one transaction."""
        batch = _encode(messages, status)  # bad input is refused before any I/O
        if not batch:
            return
        top = yield from self.newest(key)
        yield _Call("remember_many", (self._items(key, batch, top.seq + 1 if top else 0),), {"dedupe": False})

    def insert(self, key: str, message: ChatMessage, idx: int, status: str) -> _Plan[None]:
        """Put ``message`` at position ``idx`` as ``list.insert`` does, in one transaction.

        The message takes the position after the one before it; the messages after it that
        would not sort after it move up one (rewritten with their ids and times).
        """
        batch = _encode([message], status)
        rows = yield from self.rows(key)
        at = _insertion_point(len(rows), idx)
        seq = last = rows[at - 1].seq + 1 if at else 0
        moved: list[tuple[_Row, int]] = []
        for row in rows[at:]:
            last = last + 1 if row.seq <= last else row.seq
            if last != row.seq:
                moved.append((row, last))
        items = [self._item(key, seq, batch[0])]
        items += [{**self._item(key, to, (r.status, r.content, r.data)), "id": r.id} for r, to in moved]
        yield _Call("remember_many", (items,), {"dedupe": False})

    def replace(self, key: str, messages: list[ChatMessage], status: str) -> _Plan[list[_Row]]:
        """Write ``messages``, then erase what ``key`` held before (a failed write loses nothing)."""
        batch = _encode(messages, status)
        old = yield from self.rows(key)
        if batch:
            top = _highest(old)
            yield _Call("remember_many", (self._items(key, batch, top.seq + 1 if top else 0),), {"dedupe": False})
        yield from self.erase(old)
        return old

    def restore(self, records: Any) -> _Plan[None]:
        """Append serialised ``{"key", "status", "message"}`` records, in order, in one transaction."""
        if not isinstance(records, list):
            msg = f"db_data must be a list of {{'key', 'status', 'message'}} records, got {type(records).__name__}"
            raise UsageError(msg)
        by_key: dict[str, list[_Encoded]] = {}
        for n, record in enumerate(records):
            if not isinstance(record, Mapping) or not {"key", "status", "message"} <= set(record):
                msg = f"db_data[{n}] is not a {{'key', 'status', 'message'}} record: {record!r}"
                raise UsageError(msg)
            try:
                message = ChatMessage.model_validate(record["message"])
            except ValueError as e:
                msg = f"db_data[{n}]['message'] is not a ChatMessage: {e}"
                raise UsageError(msg) from e
            status = _status(record["status"], optional=False)[0]
            by_key.setdefault(_key(record["key"]), []).append(_encoded(message, n, status))
        items: list[dict[str, Any]] = []
        for key, batch in by_key.items():
            top = yield from self.newest(key)
            items += self._items(key, batch, top.seq + 1 if top else 0)
        if items:
            yield _Call("remember_many", (items,), {"dedupe": False})

    def erase(self, rows: Sequence[_Row]) -> _Plan[None]:
        """Hard-delete ``rows`` in one transaction."""
        if rows:
            yield _Call("forget", ([r.id for r in rows],), {"hard": True})

    def archive(self, key: str, rows: Sequence[_Row]) -> _Plan[None]:
        """Mark ``rows`` archived: their status tag changes, content and position stay."""
        for r in rows:
            yield _Call("update", (r.id,), {"tags": [KEY_TAG + key, STATUS_TAG + MessageStatus.ARCHIVED.value]})


def _pick(rows: list[_Row], idx: int) -> _Row | None:
    return rows[idx] if -len(rows) <= idx < len(rows) else None


def _insertion_point(size: int, idx: int) -> int:
    """Where ``list.insert(idx, ...)`` puts an item in a list of ``size`` (negative counts from the end, clamped)."""
    return max(0, size + idx) if idx < 0 else min(idx, size)


# ---------------------------------------------------------------- opening, shared
def _open(
    path: str | Path | None,
    memory: Memory | AsyncMemory | None,
    agent_id: Any,
    user_id: Any,
    embedder: Embedder | str | None,
    options: dict[str, Any],
) -> tuple[Opened, Opened, str]:
    """The handle the store serves (a user's, or the agent's), the agent's own handle, and the chat agent id."""
    if agent_id is not None and (not isinstance(agent_id, str) or not agent_id.strip() or len(agent_id) > 256):
        msg = f"agent_id must be a non-empty string of at most 256 characters or None, got {agent_id!r}"
        raise UsageError(msg)
    if memory is not None and embedder is not None:
        msg = "embedder= applies when the store opens the file (path=); an open memory= has its embedder"
        raise UsageError(msg)
    opened = open_for_user(path, memory, user_id, embedder=core_choice(embedder), **options)
    served = opened.sync
    agent = opened if served.user_id is None else Opened(agent_handle(served), owns=False)
    return opened, agent, agent_id or f"{served.agent_id}{AGENT_SUFFIX}"


_PATH_DOC = (
    "The database file this store reads and writes (for a memory= store, that memory's file). "
    "':memory:' stores serialise their messages instead (db_data)."
)
_AGENT_DOC = "The agent id the messages are stored under (default '<store agent>:llama_index_chat')."
_USER_DOC = "The user whose conversations these are (None: the agent's own); each user has keys of their own."


# ----------------------------------------------------------------- classic store
class ElasticMemoryChatStore(StoreLifecycle, BaseChatStore):
    """A ``BaseChatStore`` kept in an elastic-memory store: messages stored exactly, in order.

    >>> from llama_index.core.llms import ChatMessage
    >>> store = ElasticMemoryChatStore(path=":memory:")
    >>> store.add_message("chat-1", ChatMessage(role="user", content="Hi, I am Ada."))
    >>> [m.content for m in store.get_messages("chat-1")], store.get_keys()
    (['Hi, I am Ada.'], ['chat-1'])
    >>> store.close()

    Args:
        path: A database file (or ``":memory:"``) to open; :meth:`close` closes it.
        memory: An open elastic-memory ``Memory`` or ``AsyncMemory`` (left open by :meth:`close`).
        agent_id: The agent id the messages are stored under (default
            ``"<agent_id>:llama_index_chat"``, shared with :class:`ElasticMemoryAsyncChatStore`).
        user_id: The user whose conversations the store holds (default: the user ``memory=``
            serves, else none: the agent's own). Each user's keys are their own; a ``memory=``
            that serves another user is refused.
        embedder: The core's embedder for ``path`` (default ``None``: no model is loaded). Messages
            are never embedded, whatever the store's embedder; it serves the store's other
            memories (``"auto"``: the built-in model, shared by the process).
        db_data: Records ``{"key", "status", "message"}`` to append on opening (what
            serialising a ``":memory:"`` store carries).
        **options: More ``Memory.open`` options for ``path`` (``clock``, ``timeout``, ...).

    Keys are non-empty strings of at most 247 characters; other keys raise ``UsageError``
    (a ``ValueError``). Reading a key that holds nothing returns ``[]``; deleting from it
    returns ``None``. ``get_messages`` shows the whole transcript of a key, archived messages
    (from an async store on the same agent id) included. ``add_message(key, message, idx)``
    inserts as ``list.insert`` does (``SimpleChatStore``'s semantics; the async twin takes
    ``idx`` too). Writes of a batch, and an insert with the messages it moves, are one
    transaction. Two writers appending to one key at the same instant may give two messages
    the same position; both are kept, in time order. Differences from ``SimpleChatStore``:
    docs/llamaindex.md.

    Serialisation (``to_dict``/``model_dump``) carries ``path``, ``agent_id`` (and ``user_id``), so
    ``from_dict`` reopens the same file (with ``embedder=None`` and default options); for a
    ``memory=`` store the path is that memory's file. A ``":memory:"`` store carries its
    messages (``db_data``) instead, as ``SQLAlchemyChatStore`` does.
    """

    path: str = Field(description=_PATH_DOC)
    agent_id: str = Field(description=_AGENT_DOC)
    user_id: str | None = Field(default=None, description=_USER_DOC)

    _opened: Opened = PrivateAttr()
    #: The agent's own handle on the same store, which the transcript plans run on.
    _agent: Opened = PrivateAttr()
    _transcript: _Transcript = PrivateAttr()

    def __init__(
        self,
        *,
        path: str | Path | None = None,
        memory: Memory | AsyncMemory | None = None,
        agent_id: str | None = None,
        user_id: str | None = None,
        embedder: Embedder | str | None = None,
        db_data: list[dict[str, Any]] | None = None,
        **options: Any,
    ) -> None:
        opened, agent, resolved = _open(path, memory, agent_id, user_id, embedder, options)
        try:
            user = opened.sync.user_id
            fields: dict[str, Any] = {"path": opened.sync.path, "agent_id": resolved, "user_id": user}
            super().__init__(**fields)  # pydantic fields (a dict: mypy runs without the pydantic plugin)
            self._opened = opened
            self._agent = agent
            self._transcript = _Transcript(resolved, user)
            if db_data is not None:
                self._run(self._transcript.restore(db_data))
        except BaseException:
            opened.close()
            raise

    @classmethod
    def class_name(cls) -> str:
        """The name serialisation records."""
        return "ElasticMemoryChatStore"

    @model_serializer(mode="wrap")
    def custom_model_dump(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> dict[str, Any]:
        """``path``, ``agent_id`` and ``class_name``; plus the messages (``db_data``) of a ``":memory:"`` store."""
        data: dict[str, Any] = handler(self)
        data["class_name"] = self.class_name()
        if data.get("user_id") is None:
            data.pop("user_id", None)  # the agent's own store: the format written before users existed
        if self.path == _IN_MEMORY:
            data["db_data"] = self._run(self._transcript.everything())
        return data

    @property
    def async_memory(self) -> AsyncMemory:
        """:attr:`amemory`, under its earlier name."""
        return self.amemory

    def _run(self, plan: _Plan[T]) -> T:
        return _drive(plan, self._agent.sync)

    async def _arun(self, plan: _Plan[T]) -> T:
        return await _adrive(plan, self._agent.aio)

    # --------------------------------------------------------------- plans
    def _set(self, key: str, messages: list[ChatMessage]) -> _Plan[None]:
        yield from self._transcript.replace(_key(key), _messages(messages), MessageStatus.ACTIVE.value)

    def _get(self, key: str) -> _Plan[list[ChatMessage]]:
        return [r.message() for r in (yield from self._transcript.rows(_key(key)))]

    def _add(self, key: str, message: ChatMessage, idx: int | None) -> _Plan[None]:
        checked, one, active = _key(key), _message(message), MessageStatus.ACTIVE.value
        if idx is None:
            yield from self._transcript.append(checked, [one], active)
        else:
            yield from self._transcript.insert(checked, one, _index(idx), active)

    def _delete_all(self, key: str) -> _Plan[list[ChatMessage] | None]:
        rows = yield from self._transcript.rows(_key(key))
        if not rows:
            return None
        yield from self._transcript.erase(rows)
        return [r.message() for r in rows]

    def _delete_at(self, key: str, idx: int) -> _Plan[ChatMessage | None]:
        position = _index(idx)
        row = _pick((yield from self._transcript.rows(_key(key))), position)
        if row is None:
            return None
        yield from self._transcript.erase([row])
        return row.message()

    def _delete_last(self, key: str) -> _Plan[ChatMessage | None]:
        row = yield from self._transcript.newest(_key(key))
        if row is None:
            return None
        yield from self._transcript.erase([row])
        return row.message()

    # ---------------------------------------------------------------- sync
    def set_messages(self, key: str, messages: list[ChatMessage]) -> None:
        """Replace the messages of ``key`` (the new ones are written before the old ones go)."""
        self._run(self._set(key, messages))

    def get_messages(self, key: str) -> list[ChatMessage]:
        """The messages of ``key``, oldest first (``[]`` for a key that holds none)."""
        return self._run(self._get(key))

    def add_message(self, key: str, message: ChatMessage, idx: int | None = None) -> None:
        """Append ``message`` to ``key``, or insert it at position ``idx`` as ``list.insert`` does."""
        self._run(self._add(key, message, idx))

    def delete_messages(self, key: str) -> list[ChatMessage] | None:
        """Erase the messages of ``key`` and return them (``None`` when it held none)."""
        return self._run(self._delete_all(key))

    def delete_message(self, key: str, idx: int) -> ChatMessage | None:
        """Erase the message at position ``idx`` (negative counts from the end); ``None`` when out of range."""
        return self._run(self._delete_at(key, idx))

    def delete_last_message(self, key: str) -> ChatMessage | None:
        """Erase the newest message of ``key`` and return it (``None`` when it held none)."""
        return self._run(self._delete_last(key))

    def get_keys(self) -> list[str]:
        """Every key holding messages, sorted."""
        return self._run(self._transcript.keys())

    # --------------------------------------------------------------- async
    async def aset_messages(self, key: str, messages: list[ChatMessage]) -> None:
        """:meth:`set_messages` on the async facade."""
        await self._arun(self._set(key, messages))

    async def aget_messages(self, key: str) -> list[ChatMessage]:
        """:meth:`get_messages` on the async facade."""
        return await self._arun(self._get(key))

    async def async_add_message(self, key: str, message: ChatMessage, idx: int | None = None) -> None:
        """:meth:`add_message` on the async facade."""
        await self._arun(self._add(key, message, idx))

    async def adelete_messages(self, key: str) -> list[ChatMessage] | None:
        """:meth:`delete_messages` on the async facade."""
        return await self._arun(self._delete_all(key))

    async def adelete_message(self, key: str, idx: int) -> ChatMessage | None:
        """:meth:`delete_message` on the async facade."""
        return await self._arun(self._delete_at(key, idx))

    async def adelete_last_message(self, key: str) -> ChatMessage | None:
        """:meth:`delete_last_message` on the async facade."""
        return await self._arun(self._delete_last(key))

    async def aget_keys(self) -> list[str]:
        """:meth:`get_keys` on the async facade."""
        return await self._arun(self._transcript.keys())


# ------------------------------------------------------------------- async store
class ElasticMemoryAsyncChatStore(StoreLifecycle, AsyncDBChatStore):
    """An ``AsyncDBChatStore`` (the FIFO of ``llama_index.core.memory.Memory``) kept in elastic-memory.

    >>> import asyncio
    >>> from llama_index.core.llms import ChatMessage
    >>> from llama_index.core.storage.chat_store.base_db import MessageStatus
    >>> async def main():
    ...     store = ElasticMemoryAsyncChatStore(path=":memory:")
    ...     await store.add_messages("s", [ChatMessage(role="user", content="hi"), ChatMessage(content="yo")])
    ...     archived = await store.archive_oldest_messages("s", 1)
    ...     counts = [await store.count_messages("s", status=s) for s in MessageStatus]
    ...     await store.aclose()
    ...     return [m.content for m in archived], counts
    >>> asyncio.run(main())
    (['hi'], [1, 1])

    Every method runs on the core's ``AsyncMemory``. Arguments as for
    :class:`ElasticMemoryChatStore` (same format, same default agent id). Semantics follow
    ``SQLAlchemyChatStore`` with these differences: ``delete_message(key, idx)`` takes a
    position in the key's whole transcript (both statuses, oldest first; negative counts
    from the end), not a database row id, which this API never shows; ``get_keys`` is
    sorted; ``status`` may also be given as ``"active"``/``"archived"``; an empty batch is a
    no-op; bad input raises ``UsageError`` (a ``ValueError``) before anything is written.
    ``archive_oldest_messages`` updates each archived row's status in place (one small
    transaction per row); every other write is one transaction.

    The store is opened on construction (a quick file open; no model is loaded with the
    default ``embedder=None``). Serialisation: as :class:`ElasticMemoryChatStore`: rebuild
    with ``from_dict(store.to_dict())`` or ``ElasticMemoryAsyncChatStore(**dump)`` (pydantic's
    ``model_validate`` skips the constructor, so it opens nothing).
    """

    path: str = Field(description=_PATH_DOC)
    agent_id: str = Field(description=_AGENT_DOC)
    user_id: str | None = Field(default=None, description=_USER_DOC)

    _opened: Opened = PrivateAttr()
    #: The agent's own handle on the same store, which the transcript plans run on.
    _agent: Opened = PrivateAttr()
    _transcript: _Transcript = PrivateAttr()

    def __init__(
        self,
        *,
        path: str | Path | None = None,
        memory: Memory | AsyncMemory | None = None,
        agent_id: str | None = None,
        user_id: str | None = None,
        embedder: Embedder | str | None = None,
        db_data: list[dict[str, Any]] | None = None,
        **options: Any,
    ) -> None:
        opened, agent, resolved = _open(path, memory, agent_id, user_id, embedder, options)
        try:
            user = opened.sync.user_id
            fields: dict[str, Any] = {"path": opened.sync.path, "agent_id": resolved, "user_id": user}
            super().__init__(**fields)  # pydantic fields (a dict: mypy runs without the pydantic plugin)
            self._opened = opened
            self._agent = agent
            self._transcript = _Transcript(resolved, user)
            if db_data is not None:
                _drive(self._transcript.restore(db_data), agent.sync)
        except BaseException:
            opened.close()
            raise

    @classmethod
    def class_name(cls) -> str:
        """The name serialisation records."""
        return "ElasticMemoryAsyncChatStore"

    @model_serializer(mode="wrap")
    def serialize_store(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> dict[str, Any]:
        """``path``, ``agent_id`` and ``class_name``; plus the messages (``db_data``) of a ``":memory:"`` store."""
        data: dict[str, Any] = handler(self)
        data["class_name"] = self.class_name()
        if data.get("user_id") is None:
            data.pop("user_id", None)  # the agent's own store: the format written before users existed
        if self.path == _IN_MEMORY:
            data["db_data"] = _drive(self._transcript.everything(), self._agent.sync)
        return data

    def to_dict(self, **kwargs: Any) -> dict[str, Any]:
        """The serialised store: ``path``, ``agent_id``, ``class_name`` (and ``db_data`` for ``":memory:"``)."""
        return self.model_dump(**kwargs)

    @classmethod
    def from_dict(cls, data: dict[str, Any], **kwargs: Any) -> ElasticMemoryAsyncChatStore:
        """A store rebuilt from :meth:`to_dict` (``kwargs`` override or add constructor arguments)."""
        given = {**data, **kwargs}
        given.pop("class_name", None)
        return cls(**given)

    @property
    def async_memory(self) -> AsyncMemory:
        """:attr:`amemory`, under its earlier name."""
        return self.amemory

    async def _arun(self, plan: _Plan[T]) -> T:
        return await _adrive(plan, self._agent.aio)

    async def get_messages(
        self,
        key: str,
        status: MessageStatus | None = MessageStatus.ACTIVE,
        limit: int | None = None,
        offset: int | None = None,
    ) -> list[ChatMessage]:
        """The messages of ``key`` with ``status`` (``None``: all), oldest first: ``offset`` skipped, ``limit`` kept."""
        statuses = _status(status, optional=True)
        first = _count("offset", offset, optional=True) or 0
        size = _count("limit", limit, optional=True)
        rows = await self._arun(self._transcript.rows(_key(key), statuses))
        return [r.message() for r in rows[first : None if size is None else first + size]]

    async def count_messages(self, key: str, status: MessageStatus | None = MessageStatus.ACTIVE) -> int:
        """How many messages ``key`` holds with ``status`` (``None``: all)."""
        statuses = _status(status, optional=True)
        counts = await self._arun(self._transcript.counts(_key(key)))
        return sum(counts[s] for s in statuses)

    async def add_message(self, key: str, message: ChatMessage, status: MessageStatus = MessageStatus.ACTIVE) -> None:
        """Append ``message`` to ``key`` with ``status``."""
        value = _status(status, optional=False)[0]
        await self._arun(self._transcript.append(_key(key), [_message(message)], value))

    async def add_messages(
        self, key: str, messages: list[ChatMessage], status: MessageStatus = MessageStatus.ACTIVE
    ) -> None:
        """Append ``messages`` to ``key`` with ``status``, in one transaction."""
        value = _status(status, optional=False)[0]
        await self._arun(self._transcript.append(_key(key), _messages(messages), value))

    async def set_messages(
        self, key: str, messages: list[ChatMessage], status: MessageStatus = MessageStatus.ACTIVE
    ) -> None:
        """Replace every message of ``key`` (both statuses) by ``messages`` with ``status``."""
        value = _status(status, optional=False)[0]
        await self._arun(self._transcript.replace(_key(key), _messages(messages), value))

    async def delete_message(self, key: str, idx: int) -> ChatMessage | None:
        """Erase the message at position ``idx`` of the whole transcript; ``None`` when out of range."""
        position = _index(idx)
        transcript = self._transcript

        def plan() -> _Plan[ChatMessage | None]:
            row = _pick((yield from transcript.rows(_key(key))), position)
            if row is None:
                return None
            yield from transcript.erase([row])
            return row.message()

        return await self._arun(plan())

    async def delete_messages(self, key: str, status: MessageStatus | None = None) -> None:
        """Erase the messages of ``key`` with ``status`` (``None``: all)."""
        statuses = _status(status, optional=True)
        transcript = self._transcript

        def plan() -> _Plan[None]:
            yield from transcript.erase((yield from transcript.rows(_key(key), statuses)))

        await self._arun(plan())

    async def delete_oldest_messages(self, key: str, n: int) -> list[ChatMessage]:
        """Erase the ``n`` oldest active messages of ``key`` and return them."""
        return await self._arun(self._oldest(key, n, archive=False))

    async def archive_oldest_messages(self, key: str, n: int) -> list[ChatMessage]:
        """Mark the ``n`` oldest active messages of ``key`` archived and return them."""
        return await self._arun(self._oldest(key, n, archive=True))

    def _oldest(self, key: str, n: int, *, archive: bool) -> _Plan[list[ChatMessage]]:
        count = _count("n", n)
        checked = _key(key)
        rows = (yield from self._transcript.rows(checked, (MessageStatus.ACTIVE.value,)))[:count]
        if archive:
            yield from self._transcript.archive(checked, rows)
        else:
            yield from self._transcript.erase(rows)
        return [r.message() for r in rows]

    async def get_keys(self) -> list[str]:
        """Every key holding messages (of either status), sorted."""
        return await self._arun(self._transcript.keys())
