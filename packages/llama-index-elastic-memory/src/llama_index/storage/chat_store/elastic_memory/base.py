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

from pathlib import Path
from typing import Any

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

from elastic_memory import AsyncMemory, Embedder, Memory, UsageError
from elastic_memory.adapters import Opened, StoreLifecycle, agent_handle
from llama_index.embeddings.elastic_memory.base import core_choice
from llama_index.storage.chat_store.elastic_memory._transcript import (
    ACTIVE,
    AGENT_SUFFIX,
    IN_MEMORY,
    Plan,
    T,
    Transcript,
    adrive,
    check_count,
    check_index,
    check_key,
    check_message,
    check_messages,
    check_status,
    drive,
    pick,
)
from llama_index.storage.chat_store.elastic_memory._users import open_for_user

__all__ = ["ElasticMemoryAsyncChatStore", "ElasticMemoryChatStore"]


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
    _transcript: Transcript = PrivateAttr()

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
            self._transcript = Transcript(resolved, user)
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
        if self.path == IN_MEMORY:
            data["db_data"] = self._run(self._transcript.everything())
        return data

    @property
    def async_memory(self) -> AsyncMemory:
        """:attr:`amemory`, under its earlier name."""
        return self.amemory

    def _run(self, plan: Plan[T]) -> T:
        return drive(plan, self._agent.sync)

    async def _arun(self, plan: Plan[T]) -> T:
        return await adrive(plan, self._agent.aio)

    # --------------------------------------------------------------- plans
    def _set(self, key: str, messages: list[ChatMessage]) -> Plan[None]:
        yield from self._transcript.replace(check_key(key), check_messages(messages), MessageStatus.ACTIVE.value)

    def _get(self, key: str) -> Plan[list[ChatMessage]]:
        return [r.message() for r in (yield from self._transcript.rows(check_key(key)))]

    def _add(self, key: str, message: ChatMessage, idx: int | None) -> Plan[None]:
        checked, one, active = check_key(key), check_message(message), MessageStatus.ACTIVE.value
        if idx is None:
            yield from self._transcript.append(checked, [one], active)
        else:
            yield from self._transcript.insert(checked, one, check_index(idx), active)

    def _delete_all(self, key: str) -> Plan[list[ChatMessage] | None]:
        rows = yield from self._transcript.rows(check_key(key))
        if not rows:
            return None
        yield from self._transcript.erase(rows)
        return [r.message() for r in rows]

    def _delete_at(self, key: str, idx: int) -> Plan[ChatMessage | None]:
        position = check_index(idx)
        row = pick((yield from self._transcript.rows(check_key(key))), position)
        if row is None:
            return None
        yield from self._transcript.erase([row])
        return row.message()

    def _delete_last(self, key: str) -> Plan[ChatMessage | None]:
        row = yield from self._transcript.newest(check_key(key))
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
    _transcript: Transcript = PrivateAttr()

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
            self._transcript = Transcript(resolved, user, listing=ACTIVE)
            if db_data is not None:
                drive(self._transcript.restore(db_data), agent.sync)
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
        if self.path == IN_MEMORY:
            data["db_data"] = drive(self._transcript.everything(), self._agent.sync)
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

    async def _arun(self, plan: Plan[T]) -> T:
        return await adrive(plan, self._agent.aio)

    async def get_messages(
        self,
        key: str,
        status: MessageStatus | None = MessageStatus.ACTIVE,
        limit: int | None = None,
        offset: int | None = None,
    ) -> list[ChatMessage]:
        """The messages of ``key`` with ``status`` (``None``: all), oldest first: ``offset`` skipped, ``limit`` kept."""
        statuses = check_status(status, optional=True)
        first = check_count("offset", offset, optional=True) or 0
        size = check_count("limit", limit, optional=True)
        rows = await self._arun(self._transcript.rows(check_key(key), statuses))
        return [r.message() for r in rows[first : None if size is None else first + size]]

    async def count_messages(self, key: str, status: MessageStatus | None = MessageStatus.ACTIVE) -> int:
        """How many messages ``key`` holds with ``status`` (``None``: all)."""
        statuses = check_status(status, optional=True)
        counts = await self._arun(self._transcript.counts(check_key(key)))
        return sum(counts[s] for s in statuses)

    async def add_message(self, key: str, message: ChatMessage, status: MessageStatus = MessageStatus.ACTIVE) -> None:
        """Append ``message`` to ``key`` with ``status``."""
        value = check_status(status, optional=False)[0]
        await self._arun(self._transcript.append(check_key(key), [check_message(message)], value))

    async def add_messages(
        self, key: str, messages: list[ChatMessage], status: MessageStatus = MessageStatus.ACTIVE
    ) -> None:
        """Append ``messages`` to ``key`` with ``status``, in one transaction."""
        value = check_status(status, optional=False)[0]
        await self._arun(self._transcript.append(check_key(key), check_messages(messages), value))

    async def set_messages(
        self, key: str, messages: list[ChatMessage], status: MessageStatus = MessageStatus.ACTIVE
    ) -> None:
        """Replace every message of ``key`` (both statuses) by ``messages`` with ``status``."""
        value = check_status(status, optional=False)[0]
        await self._arun(self._transcript.replace(check_key(key), check_messages(messages), value))

    async def delete_message(self, key: str, idx: int) -> ChatMessage | None:
        """Erase the message at position ``idx`` of the whole transcript; ``None`` when out of range."""
        position = check_index(idx)
        transcript = self._transcript

        def plan() -> Plan[ChatMessage | None]:
            row = pick((yield from transcript.rows(check_key(key))), position)
            if row is None:
                return None
            yield from transcript.erase([row])
            return row.message()

        return await self._arun(plan())

    async def delete_messages(self, key: str, status: MessageStatus | None = None) -> None:
        """Erase the messages of ``key`` with ``status`` (``None``: all)."""
        statuses = check_status(status, optional=True)
        transcript = self._transcript

        def plan() -> Plan[None]:
            yield from transcript.erase((yield from transcript.rows(check_key(key), statuses)))

        await self._arun(plan())

    async def delete_oldest_messages(self, key: str, n: int) -> list[ChatMessage]:
        """Erase the ``n`` oldest active messages of ``key`` and return them."""
        return await self._arun(self._oldest(key, n, archive=False))

    async def archive_oldest_messages(self, key: str, n: int) -> list[ChatMessage]:
        """Mark the ``n`` oldest active messages of ``key`` archived and return them."""
        return await self._arun(self._oldest(key, n, archive=True))

    def _oldest(self, key: str, n: int, *, archive: bool) -> Plan[list[ChatMessage]]:
        count = check_count("n", n)
        checked = check_key(key)
        rows = (yield from self._transcript.rows(checked, (MessageStatus.ACTIVE.value,)))[:count]
        if archive:
            yield from self._transcript.archive(checked, rows)
        else:
            yield from self._transcript.erase(rows)
        return [r.message() for r in rows]

    async def get_keys(self) -> list[str]:
        """Every key holding messages (of either status), sorted."""
        return await self._arun(self._transcript.keys())
