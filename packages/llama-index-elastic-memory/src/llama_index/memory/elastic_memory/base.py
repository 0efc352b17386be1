"""``ElasticMemoryBlock`` and ``ElasticMemory``: persistent long-term memory for LlamaIndex's ``Memory``.

:class:`ElasticMemoryBlock` is a ``BaseMemoryBlock[str]``: what it is put is recorded in
elastic-memory (``record_turn``: the transcript, chunks, facts and graph), and what it gives
back is the memory loop's plan (``build_context``) for the latest user message, rendered and
fitted to the block's token share. Unlike LlamaIndex's ``FactExtractionMemoryBlock``, whose
facts live in the block object, everything stays in the database file, across processes.

LlamaIndex's ``Memory`` puts messages into its blocks only when its short-term FIFO overflows,
so a short conversation would never reach the block. :class:`ElasticMemory` (a ``Memory``
subclass) therefore records each user→assistant turn as it is put (``aput``/``aput_messages``
and their sync wrappers), and builds its block with ``accept_short_term_memory=False``, so the
same messages are not recorded a second time when the FIFO later flushes them. A standalone
block in a plain ``Memory`` keeps LlamaIndex's behaviour: it records what the FIFO flushes.

Both take ``user_id=``: one store, one model and one worker serve every user of an agent, and
each user's memory (turns, facts, plans, chat history) is their own (``Memory.for_user``).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from banks import Prompt  # type: ignore[import-untyped]  # RichPromptTemplate's engine (a llama-index-core dependency)
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock, ToolCallBlock
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.memory import BaseMemoryBlock, InsertMethod, Memory
from llama_index.core.memory.memory import DEFAULT_FLUSH_SIZE, DEFAULT_MEMORY_BLOCKS_TEMPLATE, DEFAULT_TOKEN_LIMIT
from llama_index.core.prompts import RichPromptTemplate
from llama_index.core.storage.chat_store.base_db import AsyncDBChatStore
from llama_index.core.utils import get_tokenizer

from elastic_memory import AsyncMemory, ContextPlan, Embedder, TurnReceipt, UsageError
from elastic_memory import Memory as CoreMemory
from elastic_memory.adapters import Opened, StoreLifecycle, aopen_memory
from elastic_memory.context import PREAMBLE
from llama_index.storage.chat_store.elastic_memory import ElasticMemoryAsyncChatStore
from llama_index.storage.chat_store.elastic_memory._users import open_for_user
from llama_index.vector_stores.elastic_memory._embedder import core_choice, core_embedder

__all__ = ["ElasticMemory", "ElasticMemoryBlock"]

logger = logging.getLogger("llama_index.memory.elastic_memory")

#: Plans remembered per block so ``atruncate`` can trim by section (oldest dropped first).
_MEMO_SIZE = 32

Tokenizer = Callable[[str], list[Any]]


class ElasticMemoryBlock(StoreLifecycle, BaseMemoryBlock[str]):
    """Long-term memory in one SQLite file as a LlamaIndex memory block.

    >>> import asyncio
    >>> from llama_index.core.llms import ChatMessage
    >>> block = ElasticMemoryBlock(path=":memory:", embedder=None)
    >>> said = [ChatMessage(role="user", content="My dog is called Biscuit."),
    ...         ChatMessage(role="assistant", content="What a lovely name!")]
    >>> asyncio.run(block.aput(said, session_id="monday"))
    >>> asked = [ChatMessage(role="user", content="What's my dog called?")]
    >>> '"Biscuit" (key=user.dog_name)' in asyncio.run(block.aget(asked, session_id="tuesday"))
    True
    >>> block.close()

    Args:
        path: A database file (or ``":memory:"``) to open; :meth:`close` closes it. Serialised
            (``model_dump``), so ``ElasticMemoryBlock(**block.model_dump())`` reopens the same file.
        memory: An open elastic-memory ``Memory`` or ``AsyncMemory`` (left open by :meth:`close`).
        embed_model: A LlamaIndex embedding model for the store opened at ``path``.
        embedder: The core's embedder for ``path`` (``"auto"``: the built-in offline model,
            ``None``: keyword recall only); ``embed_model`` wins.
        **data: The block's fields (``name``, ``priority``, ``max_tokens``, ``session_id``,
            ``user_id``, ...); any other keyword is a ``Memory.open`` option for ``path``
            (``agent_id=``, ``loop=``, ``context_tokens=``).

    ``user_id`` makes the block one user's memory: ``path`` opens as that user's handle
    (``Memory.open(..., user_id=...)``) and ``memory`` becomes ``memory.for_user(user_id)``,
    so it records and recalls that user's turns, facts and plans only, and one store serves
    every user (a ``memory=`` that serves another user is refused). Without it the block is the
    memory of the user ``memory=`` serves, else the agent's own.

    Putting messages records each user→assistant turn among them (tool messages and tool-call
    steps are skipped; the turn's reply is its last assistant message with text) in the session
    LlamaIndex's ``Memory`` passes (else :attr:`session_id`). Getting returns the plan for the
    latest user message among the messages given, which are the plan's window: LlamaIndex's
    ``Memory`` gives its blocks the short-term history the LLM gets beside them, so the
    session's turns found there are not repeated and a turn the token-limited history
    archived is recalled again (no messages: the plan assumes the host keeps the session's
    last turns). Neither raises into LlamaIndex: a failure is logged (logger
    ``llama_index.memory.elastic_memory``) and the block is empty.
    """

    name: str = Field(default="ElasticMemory", description="The name of the memory block.")
    description: str | None = Field(
        default="Facts, lessons and past moments from earlier conversations, kept by elastic-memory.",
        description="A description of the memory block.",
    )
    priority: int = Field(
        default=1,
        description="LlamaIndex truncation priority (0 = never truncate); over budget, atruncate trims by section.",
    )
    path: str | None = Field(default=None, description="The database file; reopened when the block is rebuilt.")
    agent_id: str | None = Field(
        default=None, description="The store's agent (set from the store; reopened with path)."
    )
    user_id: str | None = Field(
        default=None, description="The user whose memory this is (None: the agent's own); reopened with path."
    )
    session_id: str | None = Field(
        default=None, description="The session used when LlamaIndex passes none (its Memory always passes its own)."
    )
    max_tokens: int | None = Field(
        default=None,
        gt=0,
        description="The block's token share: the rendered plan is trimmed (by section priority) to fit it.",
    )
    record: bool = Field(default=True, description="Record the turns put into the block (False: recall only).")
    tokenizer_fn: Tokenizer = Field(
        default_factory=get_tokenizer, exclude=True, description="Counts tokens for max_tokens and atruncate."
    )

    _opened: Opened | None = PrivateAttr(default=None)
    _plans: OrderedDict[str, ContextPlan] = PrivateAttr(default_factory=OrderedDict)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def __init__(
        self,
        *,
        path: str | Path | None = None,
        memory: CoreMemory | AsyncMemory | None = None,
        embed_model: BaseEmbedding | None = None,
        embedder: Embedder | str | None = "auto",
        **data: Any,
    ) -> None:
        fields = {k: v for k, v in data.items() if k in type(self).model_fields}
        options = {k: v for k, v in data.items() if k not in fields}
        if fields.get("agent_id") is not None:
            options["agent_id"] = fields.pop("agent_id")  # Memory.open's (an open memory= refuses it)
        if (path is None) == (memory is None):
            msg = "pass exactly one of path= (a database file or ':memory:') or memory= (an open Memory/AsyncMemory)"
            raise UsageError(msg)
        super().__init__(**fields)
        self._opened = _open(path, memory, embed_model, embedder, options, self.user_id)
        self._own(self._opened)

    @classmethod
    def class_name(cls) -> str:
        """The LlamaIndex class name."""
        return "ElasticMemoryBlock"

    # ------------------------------------------------------------------ recall
    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        """The plan for the latest user message in ``messages``, rendered within :attr:`max_tokens`.

        ``messages`` are what the LLM gets beside the block (LlamaIndex's ``Memory`` passes its
        short-term history), so they are the plan's window: the session's turns found there are
        left out, and those the token-limited history no longer holds come back as candidates.
        """
        try:
            opened = await self._astore()
            session = _session(block_kwargs.get("session_id"), self.session_id)
            query = _latest_user_text(messages or [])
            plan = await opened.aio.build_context(query, session_id=session, window=messages)
            if self.max_tokens is not None:
                plan = self._fit(plan, self.max_tokens)
            text = plan.render()
            if text:
                with self._lock:
                    self._plans[text] = plan
                    self._plans.move_to_end(text)
                    while len(self._plans) > _MEMO_SIZE:
                        self._plans.popitem(last=False)
            return text
        except Exception:
            logger.warning("elastic-memory: no memory context for this call", exc_info=True)
            return ""

    async def atruncate(self, content: str, tokens_to_truncate: int) -> str | None:
        """``content`` made ``tokens_to_truncate`` tokens shorter, lowest-priority sections' last items first.

        Sections go in the plan's priority order (related topics, then past moments, summary,
        facts, lessons; profile facts last); ``None`` when nothing is left.
        """
        try:
            if not isinstance(content, str) or not content.strip():
                return None
            limit = self._count(content) - max(int(tokens_to_truncate), 0)
            if limit <= 0:
                return None
            with self._lock:
                plan = self._plans.get(content)
            text = self._fit(plan, limit).render() if plan is not None else _trim_rendered(content, limit, self._count)
            return text or None
        except Exception:
            logger.warning("elastic-memory: the memory context could not be trimmed; dropping it", exc_info=True)
            return None

    def _count(self, text: str) -> int:
        return len(self.tokenizer_fn(text)) if text else 0

    def _fit(self, plan: ContextPlan, limit: int) -> ContextPlan:
        """The largest ``plan.truncate(n)`` whose rendering counts at most ``limit`` by :attr:`tokenizer_fn`."""
        if self._count(plan.render()) <= limit:
            return plan
        low, high = 0, plan.tokens
        while low < high:
            middle = (low + high + 1) // 2
            if self._count(plan.truncate(middle).render()) <= limit:
                low = middle
            else:
                high = middle - 1
        return plan.truncate(low)

    # ------------------------------------------------------------------ record
    async def _aput(self, messages: list[ChatMessage]) -> None:
        """Record the user→assistant turns in ``messages`` (never raises)."""
        if self.record:
            await self.arecord_messages(messages)

    async def arecord_messages(self, messages: Sequence[ChatMessage], *, session_id: str | None = None) -> int:
        """Record the user→assistant turns in ``messages`` with ``record_turn``; returns how many were kept.

        The session is ``session_id``, else the one LlamaIndex stamped on the messages
        (``additional_kwargs["session_id"]``), else :attr:`session_id`. Never raises.
        """
        kept = 0
        for turn in _turns(messages):
            try:
                opened = await self._astore()
                session = _session(turn.session_id if session_id is None else session_id, self.session_id)
                receipt = await opened.aio.record_turn(turn.user, turn.reply, session_id=session)
            except Exception:
                logger.warning("elastic-memory: the turn was not recorded", exc_info=True)
                continue
            kept += _kept(receipt)
        return kept

    def record_messages(self, messages: Sequence[ChatMessage], *, session_id: str | None = None) -> int:
        """:meth:`arecord_messages` for sync code."""
        kept = 0
        for turn in _turns(messages):
            try:
                session = _session(turn.session_id if session_id is None else session_id, self.session_id)
                receipt = self._store().sync.record_turn(turn.user, turn.reply, session_id=session)
            except Exception:
                logger.warning("elastic-memory: the turn was not recorded", exc_info=True)
                continue
            kept += _kept(receipt)
        return kept

    # ------------------------------------------------------------------ store
    def _own(self, opened: Opened) -> None:
        """Record where the store is and whose memory the block serves (serialised, for reopening)."""
        handle = opened.sync
        self.path, self.agent_id, self.user_id = handle.path, handle.agent_id, handle.user_id

    def _reopen_options(self) -> dict[str, Any]:
        return {"agent_id": self.agent_id or "default", "user_id": self.user_id}

    def _store(self) -> Opened:
        """The open store; a block rebuilt with ``model_validate`` opens its serialised path here."""
        if self._opened is None:  # rebuilt with model_validate: reopen the serialised path
            self._opened = _open(self._path(), None, None, "auto", self._reopen_options(), None)
        return self._opened

    async def _astore(self) -> Opened:
        if self._opened is None:
            self._opened = await aopen_memory(
                self._path(), None, embedder=core_choice("auto"), **self._reopen_options()
            )
        return self._opened

    def _path(self) -> str:
        if self.path is None:
            msg = "this ElasticMemoryBlock has neither a store nor a path to open"
            raise UsageError(msg)
        return self.path


class ElasticMemory(StoreLifecycle, Memory):
    """LlamaIndex's ``Memory`` with persistent long-term memory, in one line.

    ``ElasticMemory.from_defaults("chat.db", session_id="monday")`` keeps the short-term chat
    history in the file (elastic-memory's async chat store), records every user→assistant turn
    in the memory loop as it is put, and recalls, through an :class:`ElasticMemoryBlock`, what
    earlier sessions taught, in any later process. Pass it as a chat engine's or agent's
    ``memory=``.

    >>> import asyncio
    >>> from llama_index.core.llms import ChatMessage
    >>> async def chat():
    ...     async with ElasticMemory.from_defaults(":memory:", session_id="monday", embedder=None) as memory:
    ...         await memory.aput(ChatMessage(role="user", content="I live in Leeds."))
    ...         await memory.aput(ChatMessage(role="assistant", content="Lovely city!"))
    ...         return memory.memory.facts.get("user.location").value
    >>> asyncio.run(chat())
    'Leeds'

    A turn is recorded when its final reply is put (an assistant message with text and no tool
    calls), so a tool-calling agent's steps are not recorded as replies; a turn still open is
    recorded by :meth:`close`. The FIFO's later flush of the same messages is not recorded again
    (the block has ``accept_short_term_memory=False``). Recording never raises into LlamaIndex.

    The chat history's messages are stored as kind ``message``: never embedded (putting one
    runs no model) and out of recall and plans, where the loop's own chunks of the same turns
    are. A ``path`` is opened once per process, shared by every class of the package that
    names it with the same settings and closed with the last of them, so a request handler
    that builds one per request while the app holds the file (or passes ``memory=``) opens
    nothing per request.

    Many users: open the store once and give each request its user,
    ``ElasticMemory.from_defaults(memory=mem, user_id="alice", session_id=...)``. The memory
    loop, the plans and the chat history (its keys are the user's own session ids) are then
    Alice's only; the same ``session_id`` of two users names two conversations.
    """

    path: str | None = Field(default=None, description="The elastic-memory database file (serialised).")

    _open_turn: list[ChatMessage] = PrivateAttr(default_factory=list)

    @classmethod
    def class_name(cls) -> str:
        """The LlamaIndex class name."""
        return "ElasticMemory"

    @classmethod
    def from_defaults(  # type: ignore[override]
        cls,
        path: str | Path | None = None,
        *,
        memory: CoreMemory | AsyncMemory | None = None,
        user_id: str | None = None,
        session_id: str | None = None,
        chat_history: list[ChatMessage] | None = None,
        token_limit: int = DEFAULT_TOKEN_LIMIT,
        chat_history_token_ratio: float = 0.7,
        token_flush_size: int = DEFAULT_FLUSH_SIZE,
        max_tokens: int | None = None,
        block_name: str = "ElasticMemory",
        block_priority: int = 1,
        record: bool = True,
        memory_blocks: list[BaseMemoryBlock[Any]] | None = None,
        tokenizer_fn: Tokenizer | None = None,
        memory_blocks_template: RichPromptTemplate = DEFAULT_MEMORY_BLOCKS_TEMPLATE,
        insert_method: InsertMethod = InsertMethod.SYSTEM,
        chat_store: AsyncDBChatStore | None = None,
        embed_model: BaseEmbedding | None = None,
        embedder: Embedder | str | None = "auto",
        **options: Any,
    ) -> ElasticMemory:
        """A ready ``Memory`` over the elastic-memory store at ``path`` (or the open ``memory``).

        Args:
            path: The database file (or ``":memory:"``); :meth:`close` closes it.
            memory: An open elastic-memory ``Memory``/``AsyncMemory`` instead (left open).
            user_id: The user this memory serves (``memory.for_user(user_id)`` of the store):
                their turns, facts, plans and chat history only, so one store serves many
                users; ``None``: the user ``memory=`` serves, else the agent's own memory.
            session_id: This conversation (LlamaIndex's chat-store key and the memory loop's
                session, both within the user's own); a random one by default.
            chat_history: Messages to start the short-term history with (not recorded).
            token_limit: LlamaIndex's overall token limit.
            chat_history_token_ratio: The share of ``token_limit`` kept for the chat history.
            token_flush_size: How many tokens the FIFO flushes at a time.
            max_tokens: The block's token share; default ``token_limit * (1 - chat_history_token_ratio)``.
            block_name: The block's name (its tag in the memory template).
            block_priority: The block's truncation priority (0: never truncate).
            record: Record each turn as it is put (``False``: recall only).
            memory_blocks: More blocks, after the elastic-memory one.
            tokenizer_fn: Token counter for LlamaIndex and the block (LlamaIndex's default).
            memory_blocks_template: LlamaIndex's template for the blocks (its default is used
                compiled once: LlamaIndex compiles the template on every ``get``).
            insert_method: Where the blocks go (the system message, or the latest user message).
            chat_store: The short-term history's ``AsyncDBChatStore``; default elastic-memory's
                ``ElasticMemoryAsyncChatStore`` on the same store (and user), so the history
                persists too. An ``ElasticMemoryAsyncChatStore`` of another user is refused.
            embed_model: A LlamaIndex embedding model for the store opened at ``path``.
            embedder: The core's embedder for ``path`` (``"auto"``: the built-in offline model,
                ``None``: keyword recall only); ``embed_model`` wins.
            **options: More ``Memory.open`` options for ``path`` (``loop=``, ``context_tokens=``, ...).
        """
        if not 0 < chat_history_token_ratio < 1:
            msg = f"chat_history_token_ratio must be between 0 and 1, got {chat_history_token_ratio!r}"
            raise UsageError(msg)
        for extra in memory_blocks or []:
            if isinstance(extra, ElasticMemoryBlock) and extra.accept_short_term_memory:
                msg = (
                    "ElasticMemory records every turn already; an extra ElasticMemoryBlock would record the "
                    "FIFO's flushes a second time (build it with accept_short_term_memory=False)"
                )
                raise UsageError(msg)
        tokenizer = tokenizer_fn or get_tokenizer()
        share = max_tokens if max_tokens is not None else max(int(token_limit * (1 - chat_history_token_ratio)), 1)
        opened = _open(path, memory, embed_model, embedder, options, user_id)
        try:
            block = ElasticMemoryBlock(
                memory=opened.sync,
                name=block_name,
                priority=block_priority,
                record=record,
                max_tokens=share,
                session_id=session_id,
                accept_short_term_memory=False,
                tokenizer_fn=tokenizer,
            )
            block._opened = opened  # the block owns what was opened here, and closes it
            store = chat_store if chat_store is not None else _chat_store(opened.sync)
            _check_history_user(store, opened.sync.user_id)
            built = super().from_defaults(
                session_id=session_id,
                chat_history=chat_history,
                token_limit=token_limit,
                memory_blocks=[block, *(memory_blocks or [])],
                tokenizer_fn=tokenizer,
                chat_history_token_ratio=chat_history_token_ratio,
                token_flush_size=token_flush_size,
                memory_blocks_template=_template(memory_blocks_template),
                insert_method=insert_method,
                chat_store=store,
            )
        except BaseException:
            opened.close()
            raise
        assert isinstance(built, ElasticMemory)
        built.path = block.path
        if block.session_id is None:
            block.session_id = built.session_id
        return built

    def to_dict(self, **kwargs: Any) -> dict[str, Any]:
        """LlamaIndex's dict, plus the block's settings (``record``, ``max_tokens``, ``agent_id``, ``user_id``).

        They are under ``"elastic_memory"``; :meth:`from_dict` reopens the same user's memory.
        """
        data = super().to_dict(**kwargs)
        block = self.block
        data["elastic_memory"] = {
            "record": block.record,
            "max_tokens": block.max_tokens,
            "agent_id": block.agent_id,
            "user_id": block.user_id,
        }
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], **kwargs: Any) -> ElasticMemory:
        """Rebuild from :meth:`to_dict` (reopens :attr:`path`); ``kwargs`` are :meth:`from_defaults`'s."""
        settings = ("session_id", "token_limit", "chat_history_token_ratio", "token_flush_size", "insert_method")
        chosen: dict[str, Any] = {k: data[k] for k in settings if k in data}
        if isinstance(chosen.get("insert_method"), str):
            chosen["insert_method"] = InsertMethod(chosen["insert_method"])
        ours = next((b for b in data.get("memory_blocks") or [] if isinstance(b, dict)), None)
        if ours is not None:
            chosen.update(block_name=ours.get("name", "ElasticMemory"), block_priority=ours.get("priority", 1))

        chosen.update(data.get("elastic_memory") or {})
        chosen.update(kwargs)
        if "memory" not in chosen:
            chosen.setdefault("path", data.get("path"))
        elif "agent_id" not in kwargs:
            chosen.pop("agent_id", None)  # a given memory= has its agent
        return cls.from_defaults(**chosen)

    # ------------------------------------------------------------------ store
    @property
    def block(self) -> ElasticMemoryBlock:
        """The elastic-memory block (the first :class:`ElasticMemoryBlock` among the memory blocks)."""
        block = next((b for b in self.memory_blocks if isinstance(b, ElasticMemoryBlock)), None)
        if block is None:
            msg = "this ElasticMemory has no ElasticMemoryBlock; build it with ElasticMemory.from_defaults"
            raise UsageError(msg)
        return block

    def _store(self) -> Opened:
        """The block's store: the block holds (and closes) what :meth:`from_defaults` opened."""
        return self.block._store()

    @property
    def user_id(self) -> str | None:
        """The user this memory serves (``None``: the agent's own memory)."""
        return self.block.user_id

    def close(self) -> None:
        """Record a turn still open, then close the store if :meth:`from_defaults` opened it."""
        turn, self._open_turn = self._open_turn, []
        try:
            if turn and self.block.record:
                self.block.record_messages(turn, session_id=self.session_id)
        finally:
            self.block.close()

    async def aclose(self) -> None:
        """:meth:`close` from async code."""
        try:
            await self._flush_open_turn()
        finally:
            await self.block.aclose()

    # ------------------------------------------------------------------ record as put
    async def aput(self, message: ChatMessage) -> None:
        """Add ``message`` (LlamaIndex's FIFO) and record the turn it completes."""
        await super().aput(message)
        await self._track([message])

    async def aput_messages(self, messages: list[ChatMessage]) -> None:
        """Add ``messages`` (LlamaIndex's FIFO) and record the turns they complete."""
        await super().aput_messages(messages)
        await self._track(messages)

    async def aset(self, messages: list[ChatMessage]) -> None:
        """Replace the short-term history (the turns in it are not recorded; an open turn is forgotten)."""
        self._open_turn = []
        await super().aset(messages)

    async def _track(self, messages: Sequence[ChatMessage]) -> None:
        """Follow the conversation: a user message opens a turn, the final reply records it."""
        try:
            if not self.block.record:
                return
            for message in messages:
                if message.role == MessageRole.USER:
                    await self._flush_open_turn()  # a user message that got no reply
                    self._open_turn = [message]
                elif self._open_turn:
                    self._open_turn.append(message)
                    if message.role == MessageRole.ASSISTANT and _is_final(message):
                        await self._flush_open_turn()
        except Exception:
            logger.warning("elastic-memory: the conversation could not be recorded", exc_info=True)

    async def _flush_open_turn(self) -> None:
        turn, self._open_turn = self._open_turn, []
        if turn and self.block.record:
            await self.block.arecord_messages(turn, session_id=self.session_id)


# ---------------------------------------------------------------------- the blocks' template
class _NoRenderCache:
    """A banks render cache that keeps nothing (a shared compiled prompt must not grow per call)."""

    def get(self, context: dict[str, Any]) -> str | None:
        return None

    def set(self, context: dict[str, Any], prompt: str) -> None:
        return None

    def clear(self) -> None:
        return None


class _CompiledTemplate(RichPromptTemplate):
    """A ``RichPromptTemplate`` compiled once.

    LlamaIndex's ``Memory`` formats its blocks' template on every ``get`` that has block
    content, and ``RichPromptTemplate`` compiles the Jinja template each time: the largest
    single cost of a chat with a block. This one compiles it on first use and renders text
    messages itself; a message with other content (images, audio) goes through LlamaIndex's
    own ``format_messages``, as does a template with an output parser.
    """

    _compiled: Any = PrivateAttr(default=None)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def format_messages(self, llm: Any = None, **kwargs: Any) -> list[ChatMessage]:
        if self.output_parser is not None:
            return super().format_messages(llm, **kwargs)
        with self._lock:
            if self._compiled is None:
                self._compiled = Prompt(self.template_str, render_cache=_NoRenderCache())
        rendered = self._compiled.chat_messages(data=self._map_all_vars({**self.kwargs, **kwargs}))
        out: list[ChatMessage] = []
        for message in rendered:
            if isinstance(message.content, str):
                out.append(ChatMessage(role=message.role, content=message.content))
            elif all(part.type.value == "text" for part in message.content):
                out.append(
                    ChatMessage(role=message.role, blocks=[TextBlock(text=p.text or "") for p in message.content])
                )
            else:
                return super().format_messages(llm, **kwargs)
        return out


#: LlamaIndex's default template for the blocks, compiled once for every ElasticMemory.
_DEFAULT_ARGS: dict[str, Any] = {"template_str": DEFAULT_MEMORY_BLOCKS_TEMPLATE.template_str}
_DEFAULT_TEMPLATE = _CompiledTemplate(**_DEFAULT_ARGS)


def _template(given: RichPromptTemplate) -> RichPromptTemplate:
    """``given``, or its compiled-once twin when it is LlamaIndex's default."""
    return _DEFAULT_TEMPLATE if given is DEFAULT_MEMORY_BLOCKS_TEMPLATE else given


# ---------------------------------------------------------------------- helpers
@dataclass(frozen=True)
class _Turn:
    user: str
    reply: str
    session_id: str | None


def _open(
    path: str | Path | None,
    memory: CoreMemory | AsyncMemory | None,
    embed_model: BaseEmbedding | None,
    embedder: Embedder | str | None,
    options: dict[str, Any],
    user_id: str | None,
) -> Opened:
    """The store at ``path`` (or ``memory``) as ``user_id``'s handle (``None``: as given, or the agent's)."""
    chosen: Any = core_choice(embedder)
    if embed_model is not None and memory is None:
        chosen = core_embedder(embed_model)
    arg = None if embed_model is None else "embed_model"
    return open_for_user(path, memory, user_id, embedder=chosen, embedder_arg=arg, **options)


def _chat_store(memory: CoreMemory) -> AsyncDBChatStore:
    """elastic-memory's async chat store on the same store."""
    return ElasticMemoryAsyncChatStore(memory=memory)


def _check_history_user(store: AsyncDBChatStore, user_id: str | None) -> None:
    """Refuse a chat store of elastic-memory's that keeps another user's conversations."""
    if isinstance(store, ElasticMemoryAsyncChatStore) and store.user_id != user_id:
        msg = (
            f"chat_store= keeps the conversations of user {store.user_id!r}, and this memory serves user "
            f"{user_id!r}: build it with user_id={user_id!r} (their session ids would mix otherwise)"
        )
        raise UsageError(msg)


def _kept(receipt: TurnReceipt) -> int:
    if not receipt.ok:
        logger.warning("elastic-memory: the turn was not recorded: %s", receipt.error)
    return int(receipt.ok)


def _session(given: Any, fallback: str | None) -> str | None:
    return given if isinstance(given, str) and given.strip() else fallback


def _text(message: ChatMessage) -> str:
    """The message's text blocks (images, tool calls and the like are not text)."""
    return (message.content or "").strip()


def _has_tool_calls(message: ChatMessage) -> bool:
    return bool(message.additional_kwargs.get("tool_calls")) or any(
        isinstance(block, ToolCallBlock) for block in message.blocks
    )


def _is_final(message: ChatMessage) -> bool:
    """An assistant reply that ends the turn: it has text and calls no tool."""
    return bool(_text(message)) and not _has_tool_calls(message)


def _latest_user_text(messages: Sequence[ChatMessage]) -> str:
    return next((_text(m) for m in reversed(messages) if m.role == MessageRole.USER), "")


def _turns(messages: Sequence[ChatMessage]) -> list[_Turn]:
    """The user→assistant turns in ``messages``: each user message and its last assistant reply with text.

    Tool messages and tool-call steps are skipped (a reply that calls a tool counts only when
    no later reply of the turn has text); assistant messages before the first user message
    are not a turn.
    """
    turns: list[_Turn] = []
    user: ChatMessage | None = None
    final: ChatMessage | None = None
    fallback: ChatMessage | None = None

    def close() -> None:
        if user is None:
            return
        reply = final or fallback
        user_text, reply_text = _text(user), "" if reply is None else _text(reply)
        if user_text or reply_text:
            stamped = user.additional_kwargs.get("session_id")
            turns.append(_Turn(user_text, reply_text, stamped if isinstance(stamped, str) else None))

    for message in messages:
        if message.role == MessageRole.USER:
            close()
            user, final, fallback = message, None, None
        elif message.role == MessageRole.ASSISTANT and user is not None and _text(message):
            if _has_tool_calls(message):
                fallback = message
            else:
                final = message
    close()
    return turns


def _trim_rendered(text: str, limit: int, count: Callable[[str], int]) -> str:
    """``text`` (a plan's rendering) without its last item lines until it counts at most ``limit``.

    A rendering lists its sections in priority order, one quoted item per line, so dropping
    the last line is dropping the last item of the lowest-priority section, as
    ``ContextPlan.truncate`` does; a section left without items loses its header too.
    """
    preamble, *blocks = text.split("\n\n")
    if preamble != PREAMBLE:
        return ""  # not a plan rendering: nothing can be kept safely
    sections = [block.split("\n") for block in blocks]

    def render() -> str:
        kept = ["\n".join(lines) for lines in sections if len(lines) > 1]
        return "\n\n".join([PREAMBLE, *kept]) if kept else ""

    out = render()
    while out and count(out) > limit:
        last = next(lines for lines in reversed(sections) if len(lines) > 1)
        last.pop()
        out = render()
    return out
