"""``ElasticMemoryMiddleware``: persistent memory for any ``create_agent`` agent in one line.

Before each model call the memory loop's plan for the latest user message is added to the
system message of that call; after the run the exchange is recorded.

The plan goes into the model request (``wrap_model_call``), not into the agent state: a
state update from ``before_model`` would append the memory block to the thread's messages,
where the checkpointer keeps it, every later call sends it again, and stale copies pile up
turn after turn. Changing only the request keeps the thread history exactly what the user
and the model said, the way LangChain's own ``dynamic_prompt`` works.

The plan is built for the messages the model is about to get (``request.messages``, after
every ``before_model`` hook such as ``SummarizationMiddleware`` has run): a fact that a
summary or a trim took out of the window is a candidate for the memory block again. List
this middleware last so that ``wrap_model_call`` editors listed before it (such as
``ContextEditingMiddleware``) have edited the request it reads.

Each run belongs to a user when its ``context`` (``agent.invoke(..., context=...)``: an
attribute or key named ``user_key``, ``"user_id"`` by default) or its config
(``config["configurable"]["user_id"]``) names one: then every plan and recorded turn is that
user's (``Memory.for_user``), on the one shared store. A run naming no user uses the
agent's own memory.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState, ExtendedModelResponse, ModelRequest, ModelResponse
from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage
from langgraph.config import get_config
from langgraph.runtime import Runtime

from elastic_memory import AsyncMemory, ContextPlan, Embedder, Memory, UsageError
from elastic_memory.adapters import StoreLifecycle

from ._memory import Opened, open_memory

__all__ = ["ElasticMemoryMiddleware"]

logger = logging.getLogger("langchain_elastic_memory")

#: Plans and recorded turns remembered per middleware (oldest dropped first).
_MEMO_SIZE = 256

_ModelResult = ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]


class ElasticMemoryMiddleware(StoreLifecycle, AgentMiddleware[AgentState[Any], Any, Any]):
    """Long-term memory for a ``create_agent`` agent: recall before the model, record after the run.

    >>> from langchain.agents import create_agent
    >>> from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    >>> with ElasticMemoryMiddleware(path=":memory:", embedder=None) as memory:
    ...     agent = create_agent(GenericFakeChatModel(messages=iter(["What a lovely name!"])), middleware=[memory])
    ...     config = {"configurable": {"thread_id": "t1"}}
    ...     _ = agent.invoke({"messages": [("user", "My dog is called Biscuit.")]}, config)
    ...     memory.memory.facts.get("user.dog_name").value
    'Biscuit'

    Args:
        path: A database file (or ``":memory:"``) to open; the middleware closes it in :meth:`close`.
        memory: An open elastic-memory ``Memory`` or ``AsyncMemory`` (left open by :meth:`close`).
        session_id: The session when a run has no ``thread_id`` in its config; by default a
            run's session is its thread.
        record: Record each run's exchange with ``record_turn`` (``False``: recall only).
        max_tokens: Cap the injected plan at this many tokens (``ContextPlan.truncate``);
            the plan's own budget comes from the store's ``LoopConfig``/``context_tokens``.
        embedding: A LangChain ``Embeddings`` for the store opened at ``path``.
        embedder: The core's embedder for ``path`` (``"auto"``: the built-in offline model,
            ``None``: keyword recall only).
        user_key: The name of the user id in a run's ``context`` (attribute or key) or in
            ``config["configurable"]``; a run naming a user reads and writes only that user's
            memory (``Memory.for_user``). A user id must be a non-empty string (or an int) of
            at most 256 characters without control characters; a run with another value gets
            no memory and records nothing (logged), never the agent's shared memory.
        **options: More ``Memory.open`` options for ``path`` (``loop=``, ``context_tokens=``, ...).

    The turn recorded is the run's last human message and the last AI message after it that
    has text. Neither hook raises into the agent: a failure is logged (logger
    ``langchain_elastic_memory``) and the model is called without memory.
    """

    _opened: Opened

    def __init__(
        self,
        *,
        path: str | Path | None = None,
        memory: Memory | AsyncMemory | None = None,
        session_id: str | None = None,
        record: bool = True,
        max_tokens: int | None = None,
        embedding: Embeddings | None = None,
        embedder: Embedder | str | None = "auto",
        user_key: str = "user_id",
        **options: Any,
    ) -> None:
        super().__init__()
        if not isinstance(user_key, str) or not user_key:
            msg = f"user_key must be a non-empty string (the name of the user id in a run's context), got {user_key!r}"
            raise UsageError(msg)
        if session_id is not None and (not isinstance(session_id, str) or not session_id.strip()):
            msg = f"session_id must be a non-empty string or None, got {session_id!r}"
            raise UsageError(msg)
        if not isinstance(record, bool):
            msg = f"record must be True or False, got {record!r}"
            raise UsageError(msg)
        if max_tokens is not None and (
            isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1
        ):
            msg = f"max_tokens must be a positive integer or None, got {max_tokens!r}"
            raise UsageError(msg)
        self._opened = open_memory(path, memory, embedding=embedding, embedder=embedder, **options)
        self.session_id = session_id
        self.user_key = user_key
        self.record = record
        self.max_tokens = max_tokens
        self._plans: OrderedDict[Hashable, str] = OrderedDict()
        self._recorded: OrderedDict[Hashable, None] = OrderedDict()
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ recall
    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> _ModelResult:
        """Call the model with the memory plan for the latest user message added to its system message."""
        return handler(self._inject(request, self._plan_sync(request)))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> _ModelResult:
        """Async :meth:`wrap_model_call`, on the store's ``AsyncMemory``."""
        return await handler(self._inject(request, await self._plan_async(request)))

    def _plan_sync(self, request: ModelRequest[Any]) -> str:
        try:
            key, query, session, user = self._query(request)
            if key is not None and (cached := self._cached(key)) is not None:
                return cached
            mem = self._sync_for(user)
            plan = mem.build_context(query, session_id=session, window=_window(request.messages))
            return self._remember_plan(key, plan)
        except Exception:
            logger.warning("elastic-memory: no memory context for this model call", exc_info=True)
            return ""

    async def _plan_async(self, request: ModelRequest[Any]) -> str:
        try:
            key, query, session, user = self._query(request)
            if key is not None and (cached := self._cached(key)) is not None:
                return cached
            mem = self._async_for(user)
            plan = await mem.build_context(query, session_id=session, window=_window(request.messages))
            return self._remember_plan(key, plan)
        except Exception:
            logger.warning("elastic-memory: no memory context for this model call", exc_info=True)
            return ""

    def _query(self, request: ModelRequest[Any]) -> tuple[Hashable | None, str, str | None, str | None]:
        """The memo key (one plan per user message: tool-loop calls reuse it), query, session and user."""
        session, user = self._session(request.runtime), self._user(request.runtime)
        human = _last_human(request.messages)
        if human is None:
            return None, "", session, user
        return (None if human.id is None else (user, session, human.id)), str(human.text), session, user

    def _cached(self, key: Hashable) -> str | None:
        with self._lock:
            text = self._plans.get(key)
            if text is not None:
                self._plans.move_to_end(key)
            return text

    def _remember_plan(self, key: Hashable | None, plan: ContextPlan) -> str:
        if self.max_tokens is not None:
            plan = plan.truncate(self.max_tokens)
        text = plan.render()
        if key is not None:
            with self._lock:
                self._plans[key] = text
                while len(self._plans) > _MEMO_SIZE:
                    self._plans.popitem(last=False)
        return text

    @staticmethod
    def _inject(request: ModelRequest[Any], text: str) -> ModelRequest[Any]:
        if not text:
            return request
        try:
            return request.override(system_message=_with_memory(request.system_message, text))
        except Exception:  # memory must never break the agent
            logger.warning("elastic-memory: the memory context could not be added to the system message", exc_info=True)
            return request

    # ------------------------------------------------------------------ record
    def after_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Record the run's exchange (last user message, final AI reply) with ``record_turn``."""
        try:
            turn = self._turn(state, runtime)
            if turn is not None:
                receipt = self._sync_for(turn.user_id).record_turn(
                    turn.user, turn.reply, session_id=turn.session_id, metadata=turn.metadata
                )
                self._after_record(turn, receipt.ok, receipt.error)
        except Exception:
            logger.warning("elastic-memory: the turn was not recorded", exc_info=True)
        return None

    async def aafter_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Async :meth:`after_agent`, on the store's ``AsyncMemory``."""
        try:
            turn = self._turn(state, runtime)
            if turn is not None:
                receipt = await self._async_for(turn.user_id).record_turn(
                    turn.user, turn.reply, session_id=turn.session_id, metadata=turn.metadata
                )
                self._after_record(turn, receipt.ok, receipt.error)
        except Exception:
            logger.warning("elastic-memory: the turn was not recorded", exc_info=True)
        return None

    def _turn(self, state: AgentState[Any], runtime: Runtime[Any]) -> _Turn | None:
        """``record_turn``'s arguments for this run, or ``None`` (recording off, nothing new, already done)."""
        if not self.record:
            return None
        messages: Sequence[AnyMessage] = state.get("messages") or []
        start = next((i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], HumanMessage)), None)
        if start is None:
            return None
        human = messages[start]
        reply = next(
            (m for m in reversed(messages[start + 1 :]) if isinstance(m, AIMessage) and str(m.text).strip()), None
        )
        user_text, reply_text = str(human.text), "" if reply is None else str(reply.text)
        if not user_text.strip() and not reply_text.strip():
            return None
        session, user = self._session(runtime), self._user(runtime)
        key = None if human.id is None else (user, session, human.id, None if reply is None else reply.id)
        if key is not None:
            with self._lock:
                if key in self._recorded:
                    return None  # this exchange was recorded by an earlier run (e.g. a resumed thread)
        metadata = {name: m.id for name, m in (("human_message_id", human), ("ai_message_id", reply)) if m and m.id}
        return _Turn(user_text, reply_text, session, metadata or None, key, user)

    def _after_record(self, turn: _Turn, ok: bool, error: str | None) -> None:
        if not ok:
            logger.warning("elastic-memory: the turn was not recorded: %s", error)
        elif turn.key is not None:
            with self._lock:
                self._recorded[turn.key] = None
                while len(self._recorded) > _MEMO_SIZE:
                    self._recorded.popitem(last=False)

    def _session(self, runtime: Runtime[Any] | None) -> str | None:
        """The run's thread id, else the constructor's ``session_id`` (``None``: the core's default session)."""
        info = getattr(runtime, "execution_info", None)
        thread = getattr(info, "thread_id", None)
        return self.session_id if thread is None else str(thread)

    def _sync_for(self, user: str | None) -> Memory:
        """The handle serving ``user``: the store as given when the run names none."""
        return self._opened.sync if user is None else self._opened.sync.for_user(user)

    def _async_for(self, user: str | None) -> AsyncMemory:
        """:meth:`_sync_for` on the store's ``AsyncMemory``."""
        return self._opened.aio if user is None else self._opened.aio.for_user(user)

    def _user(self, runtime: Runtime[Any] | None) -> str | None:
        """The run's user: ``context.<user_key>`` (or ``context[user_key]``), else ``config["configurable"]``.

        An int is taken as its text. Any other value that is not ``None`` raises (the hooks log it
        and the call goes on without memory): a malformed user must never fall back to the
        agent's shared memory.
        """
        context = getattr(runtime, "context", None)
        value = context.get(self.user_key) if isinstance(context, Mapping) else getattr(context, self.user_key, None)
        if value is None:
            try:
                configurable = get_config().get("configurable") or {}
            except RuntimeError:  # outside a run (a hook called directly)
                configurable = {}
            value = configurable.get(self.user_key)
        if value is None:
            return None
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            msg = f"the run's {self.user_key} must be a string or an int, got {type(value).__name__}"
            raise UsageError(msg)
        return value


@dataclass(frozen=True)
class _Turn:
    """What ``record_turn`` gets for one run, and the key that marks it recorded."""

    user: str
    reply: str
    session_id: str | None
    metadata: dict[str, Any] | None
    key: Hashable | None
    user_id: str | None = None


def _window(messages: Sequence[AnyMessage]) -> list[str]:
    """The texts of the messages the model is about to get (the plan leaves out turns found there)."""
    return [str(m.text) for m in messages]


def _last_human(messages: Sequence[AnyMessage]) -> HumanMessage | None:
    return next((m for m in reversed(messages) if isinstance(m, HumanMessage)), None)


def _with_memory(system: SystemMessage | None, text: str) -> SystemMessage:
    """``system`` with ``text`` appended (one system message: some providers accept no second one)."""
    if system is None:
        return SystemMessage(content=text)
    content = system.content
    if isinstance(content, str):
        merged: str | list[str | dict[str, Any]] = f"{content}\n\n{text}" if content.strip() else text
    else:
        merged = [*content, {"type": "text", "text": text}]
    return system.model_copy(update={"content": merged})
