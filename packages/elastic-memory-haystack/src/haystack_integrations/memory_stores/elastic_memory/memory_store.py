"""``ElasticMemoryStore``: the haystack-experimental ``MemoryStore`` protocol over an elastic-memory store.

What a memory is: one chat message's text (user or assistant; system messages, tool results and
messages without text are skipped), stored as one core memory of a dedicated agent id (default
``"<agent_id>:haystack_memory"``) so the store's own memory loop never plans it into a prompt.
Its ``session_id`` is the user (``user_id``, or ``"default"`` when none is given). Over a user's
handle (``memory=mem.for_user("alice")``) the store serves that user only: its rows are the
user's (the core's owner: the dedicated agent id and the user), ``user_id`` defaults to that
user and naming another raises ``AccessDeniedError``. Its id is
derived from the user, the role and the text (``"hsmem-" + sha256``), so adding the same
message again (agents resend the whole history every run) is a no-op. Its metadata keeps the
role and the message's ``meta`` (plus the ``metadata=`` keyword of :meth:`add_memories`).

``search_memories`` ranks the user's memories with the core's recall (hybrid, or keyword
without an embedder; an empty query lists the newest first) and returns them as system
messages whose ``meta`` holds the stored meta plus ``memory_id``, ``role``, ``user_id`` and
``score``. Haystack filters apply to that meta (``meta.<key>`` or a bare key) and to ``content``:
in SQL for the stored meta's keys (the recall ranks only the matching memories), in Python for
the others, and for what SQL cannot express exactly (as the document store does).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from haystack import Document, default_from_dict, default_to_dict
from haystack.dataclasses import ChatMessage, ChatRole
from haystack.utils.filters import document_matches_filter

from elastic_memory import AccessDeniedError, AsyncMemory, Embedder, Hit, Memory, UsageError
from haystack_integrations.document_stores.elastic_memory.filters import DOC_KEY, compile_filters, document_path

from ._common import StoreOwner, agent_suffix, check_name

__all__ = ["ElasticMemoryStore"]

#: The largest ``k`` of one recall.
_PAGE = 1_000
#: The user key memories are stored under when no ``user_id`` is given.
DEFAULT_USER = "default"
_ROLES = (ChatRole.USER, ChatRole.ASSISTANT)
#: Keys of a found memory's ``meta`` that are not its stored meta (they shadow stored keys of the same name).
_COMPUTED = ("memory_id", "role", "user_id", "score")
_STORED_META = f"{DOC_KEY}.meta."


def _stored_path(field: Any) -> str | None:
    """The core metadata key of a filter field in a memory's stored meta; ``None``: checked in Python."""
    path = document_path(field)
    if path is None or not path.startswith(_STORED_META):
        return None
    keys = path[len(_STORED_META) :]
    return None if keys.split(".")[0] in _COMPUTED else f"meta.{keys}"


class ElasticMemoryStore(StoreOwner):
    """Long-term memories of chat messages, per user, idempotent and searchable.

    >>> from haystack.dataclasses import ChatMessage
    >>> store = ElasticMemoryStore(path=":memory:", embedder=None)
    >>> history = [ChatMessage.from_user("I live in Leeds."), ChatMessage.from_assistant("Noted.")]
    >>> store.add_memories(messages=history, user_id="ada")
    >>> store.add_memories(messages=history, user_id="ada")  # a resend stores nothing new
    >>> [m.text for m in store.search_memories(query="Leeds", user_id="ada")]
    ['I live in Leeds.']
    >>> store.close()

    Args:
        path: A database file (or ``":memory:"``) to open; :meth:`close` closes it.
        memory: An open elastic-memory ``Memory`` or ``AsyncMemory`` (left open by :meth:`close`);
            a user's handle (``Memory.for_user``) serves that user only.
        agent_id: The agent id memories are stored under (default ``"<agent_id>:haystack_memory"``).
        mode: The recall mode of searches: ``"hybrid"``, ``"keyword"`` or ``"semantic"``.
        embedder: The core's embedder for ``path`` (``"auto"``: the built-in offline model,
            ``None``: keyword search only).
        **options: More ``Memory.open`` options for ``path``.
    """

    def __init__(
        self,
        *,
        path: str | Path | None = None,
        memory: Memory | AsyncMemory | None = None,
        agent_id: str | None = None,
        mode: str = "hybrid",
        embedder: Embedder | str | None = "auto",
        **options: Any,
    ) -> None:
        if mode not in ("hybrid", "keyword", "semantic"):
            msg = f"mode must be 'hybrid', 'keyword' or 'semantic', got {mode!r}"
            raise UsageError(msg)
        super().__init__(path=path, memory=memory, embedder=embedder, options=options)
        self._given_agent_id = agent_id
        self.agent_id = agent_suffix(self._opened, agent_id, ":haystack_memory")
        self.mode = mode

    # ------------------------------------------------------------ serialisation
    def to_dict(self) -> dict[str, Any]:
        """Serialise: the (absolute) path, the agent id and the options."""
        return default_to_dict(self, agent_id=self._given_agent_id, mode=self.mode, **self._store_params())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ElasticMemoryStore:
        """Reopen the store a :meth:`to_dict` describes."""
        return default_from_dict(cls, data)

    # -------------------------------------------------------------------- write
    def add_memories(
        self,
        *,
        messages: list[ChatMessage],
        user_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Store the user and assistant messages with text that the user has not stored yet.

        Args:
            messages: Chat messages (a whole history may be passed again: known ones are skipped).
            user_id: The user the memories belong to (default ``"default"``, or the handle's user).
            metadata: Meta merged over every message's own ``meta``.
            **kwargs: Accepted for protocol compatibility and ignored.
        """
        user = self._user(user_id)
        if metadata is not None and not isinstance(metadata, dict):
            msg = f"metadata must be a dict or None, got {type(metadata).__name__}"
            raise UsageError(msg)
        items = self._items(_checked(messages), user, metadata or {})
        if not items:
            return
        mem = self.owner_memory
        known = {record.id for record in mem.get_many([item["id"] for item in items])}
        new = [item for item in items if item["id"] not in known]
        if new:
            mem.remember_many(new, dedupe=False)

    def _items(self, messages: list[ChatMessage], user: str, extra: dict[str, Any]) -> list[dict[str, Any]]:
        items: dict[str, dict[str, Any]] = {}
        for message in messages:
            text = (message.text or "").strip()
            if message.role not in _ROLES or not text:
                continue
            meta = {**message.meta, **extra}
            try:
                json.dumps(meta, allow_nan=False)
            except (TypeError, ValueError) as e:
                msg = f"the meta of a message cannot be stored: a value is not JSON-serialisable: {e}"
                raise UsageError(msg) from e
            memory_id = _memory_id(user, message.role.value, text)
            items.setdefault(
                memory_id,
                {
                    "id": memory_id,
                    "content": text,
                    "type": "semantic",
                    **self.owner_fields(self.agent_id),
                    "session_id": user,
                    "metadata": {"role": message.role.value, "meta": meta},
                },
            )
        return list(items.values())

    # --------------------------------------------------------------------- read
    def search_memories(
        self,
        *,
        query: str | None = None,
        filters: dict[str, Any] | None = None,
        top_k: int = 5,
        user_id: str | None = None,
        **kwargs: Any,
    ) -> list[ChatMessage]:
        """The user's ``top_k`` memories that best match ``query`` and ``filters``, as system messages.

        Raises:
            haystack.errors.FilterError: ``filters`` is malformed.
        """
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 0:
            msg = f"top_k must be a non-negative integer, got {top_k!r}"
            raise UsageError(msg)
        if query is not None and not isinstance(query, str):
            msg = f"query must be a string or None, got {type(query).__name__}"
            raise UsageError(msg)
        user = self._user(user_id)
        if filters:
            document_matches_filter(filters, Document(content="", meta={}))  # malformed filters raise now
        compiled = compile_filters(filters, _stored_path)
        if top_k == 0 or compiled.never:
            return []
        scope: dict[str, Any] = {**self.owner_fields(self.agent_id), "session_id": user}
        if compiled.sql is not None:
            scope["metadata"] = compiled.sql
        hits = self.owner_memory.recall(
            query or "",
            k=min(top_k, _PAGE) if compiled.exact else _PAGE,
            mode=self.mode if query else "keyword",
            filters=scope,
            touch=False,
        )
        out: list[ChatMessage] = []
        for hit in hits:
            meta = _meta(hit, user)
            if (
                filters
                and not compiled.exact
                and not document_matches_filter(filters, Document(content=hit.content, meta=meta))
            ):
                continue
            out.append(ChatMessage.from_system(hit.content, meta=meta))
            if len(out) == top_k:
                break
        return out

    # ------------------------------------------------------------------- delete
    def delete_all_memories(self, *, user_id: str | None = None, **kwargs: Any) -> None:
        """Erase the memories of ``user_id``; without one, every memory of this store's agent id (and handle's user)."""
        filters = self.owner_fields(self.agent_id)
        if user_id is not None:
            filters["session_id"] = self._user(user_id)
        mem = self.owner_memory
        while hits := mem.recall("", k=_PAGE, mode="keyword", filters=filters, touch=False):
            mem.forget([hit.id for hit in hits], hard=True)

    def delete_memory(self, memory_id: str, **kwargs: Any) -> None:
        """Erase one memory (its ``meta["memory_id"]``); an unknown id is ignored."""
        check_name("memory_id", memory_id)
        mem = self.owner_memory
        record = mem.get(memory_id)
        if record is not None and (record.agent_id, record.user_id) == (self.agent_id, self.user_id):
            mem.forget([memory_id], hard=True)

    def _user(self, user_id: str | None) -> str:
        """The user a call is for: ``user_id``, else the handle's user, else ``"default"``."""
        given = check_name("user_id", user_id, optional=True)
        if self.user_id is None:
            return given or DEFAULT_USER
        if given is not None and given != self.user_id:
            msg = f"this store serves user {self.user_id!r} (memory=mem.for_user(...)), not {given!r}"
            raise AccessDeniedError(msg)
        return self.user_id


def _checked(messages: Any) -> list[ChatMessage]:
    if isinstance(messages, ChatMessage | str) or not isinstance(messages, list | tuple):
        msg = f"messages must be a list of ChatMessage, got {type(messages).__name__}"
        raise UsageError(msg)
    for n, message in enumerate(messages):
        if not isinstance(message, ChatMessage):
            msg = f"messages[{n}] is a {type(message).__name__}, not a haystack ChatMessage"
            raise UsageError(msg)
    return list(messages)


def _memory_id(user: str, role: str, text: str) -> str:
    # surrogatepass: text that is not valid Unicode gets an id, and remember_many() refuses it with a UsageError.
    raw = json.dumps([user, role, text], ensure_ascii=False).encode("utf-8", "surrogatepass")
    digest = hashlib.sha256(raw).hexdigest()
    return f"hsmem-{digest[:40]}"


def _meta(hit: Hit, user: str) -> dict[str, Any]:
    stored = hit.metadata.get("meta")
    meta: dict[str, Any] = dict(stored) if isinstance(stored, dict) else {}
    meta.update(memory_id=hit.id, role=hit.metadata.get("role", "user"), user_id=user, score=hit.score)
    return meta
