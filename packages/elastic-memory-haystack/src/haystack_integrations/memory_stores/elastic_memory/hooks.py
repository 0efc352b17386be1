"""Agent hooks: recall before a haystack ``Agent`` run, record the exchange after it.

* :class:`ElasticMemoryRecallHook` (``before_run``): the memory loop's plan
  (``build_context``) for the latest user message, rendered, goes in as one system message
  right after the Agent's own leading system messages. The message carries
  ``meta={"elastic_memory": "context"}``; an earlier one (a history passed back in) is replaced,
  never stacked.
* :class:`ElasticMemoryRecordHook` (``after_run``): the latest user message and the last
  assistant message with text after it go to ``record_turn`` once per user message: the turn's
  key (a hash of the session and the conversation up to that user message) is stored on the
  exchange's chunks and looked up first, so running the same history again, a retry or a
  regenerated answer (even from a fresh Agent over the same file) records nothing new. It
  then removes the injected context message from the Agent's output messages.

The session is ``hook_context["session_id"]`` of the run (``agent.run(..., hook_context=...)``),
else the hook's ``session_id``. The user is ``hook_context["user_id"]`` (the key is the hooks'
``user_key``): the run reads and writes that user's memory only (``Memory.for_user``, one store
for every user); a run without one uses the agent's own memory, or is refused with
``require_user=True``. The recall hook passes the messages the model gets (its own context
message left out) as ``build_context``'s ``window``, so a turn the host trimmed or summarised
away is a plan candidate again.

Neither hook raises into the Agent on a memory failure: it is logged (logger
``haystack_integrations.elastic_memory``) and the run goes on without memory. A user that
cannot be served (not a valid id, another user than the hooks' own ``memory=`` handle serves,
none with ``require_user=True``) raises before anything is read or written.
Both have a truly async ``run_async`` on the store's ``AsyncMemory``.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

from haystack import default_from_dict, default_to_dict
from haystack.components.agents import State
from haystack.dataclasses import ChatMessage, ChatRole

from elastic_memory import AccessDeniedError, AsyncMemory, ContextPlan, Embedder, Memory, UsageError

from ._common import StoreOwner, check_name

__all__ = ["CONTEXT_META_KEY", "ElasticMemoryRecallHook", "ElasticMemoryRecordHook", "memory_hooks"]

logger = logging.getLogger("haystack_integrations.elastic_memory")

#: The ``meta`` key that marks the injected memory context message.
CONTEXT_META_KEY = "elastic_memory"
#: The chunk metadata key that marks a recorded turn.
_TURN_KEY = "haystack_turn"


def _replace(_old: Any, new: Any) -> Any:
    return new


def _is_context(message: ChatMessage) -> bool:
    return message.role == ChatRole.SYSTEM and message.meta.get(CONTEXT_META_KEY) == "context"


class _MemoryHook(StoreOwner):
    def __init__(
        self,
        *,
        path: str | Path | None,
        memory: Memory | AsyncMemory | None,
        session_id: str | None,
        user_key: str,
        require_user: bool,
        embedder: Embedder | str | None,
        options: dict[str, Any],
    ) -> None:
        self.session_id = check_name("session_id", session_id, optional=True)
        key = check_name("user_key", user_key)
        assert key is not None  # not optional: check_name() raised on None
        self.user_key = key
        if not isinstance(require_user, bool):
            msg = f"require_user must be True or False, got {require_user!r}"
            raise UsageError(msg)
        self.require_user = require_user
        # path=: one store per file and settings in the process (Agent.from_dict rebuilds both hooks from paths).
        super().__init__(path=path, memory=memory, embedder=embedder, options=options, shared=True)

    @staticmethod
    def _context(state: State) -> dict[str, Any]:
        context = state.get("hook_context") or {}
        return context if isinstance(context, dict) else {}

    def _session(self, state: State) -> str | None:
        session = self._context(state).get("session_id")
        return str(session) if session is not None else self.session_id

    def _user(self, state: State) -> str | None:
        """The run's user: ``hook_context[user_key]``, else the user of the store handle (``None``: the agent)."""
        given: str | None = self._context(state).get(self.user_key)  # Memory.for_user() checks it is an id
        own = self.memory.user_id
        if given is None:
            if own is None and self.require_user:
                msg = (
                    f"these memory hooks serve one user per run (require_user=True): pass it as "
                    f"agent.run(..., hook_context={{{self.user_key!r}: user_id}})"
                )
                raise UsageError(msg)
            return own
        if own is not None and given != own:
            msg = (
                f"these memory hooks were given user {own!r}'s memory, not {given!r}'s: "
                "give them the agent's own Memory to serve every user"
            )
            raise AccessDeniedError(msg)
        return given

    def _sync(self, state: State) -> Memory:
        """The run's user's handle on the store (sync facade)."""
        user = self._user(state)
        return self.memory if user == self.memory.user_id else self.memory.for_user(user)

    def _async(self, state: State) -> AsyncMemory:
        """The run's user's handle on the store (async facade)."""
        user = self._user(state)
        return self.async_memory if user == self.memory.user_id else self.async_memory.for_user(user)

    def _params(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "user_key": self.user_key,
            "require_user": self.require_user,
            **self._store_params(),
        }


class ElasticMemoryRecallHook(_MemoryHook):
    """``before_run``: add the memory plan for the latest user message as a system message.

    The plan is the run's user's (``hook_context[user_key]``), and leaves out the turns of the
    session the model gets in its messages (``build_context(window=...)``). Registered under
    ``before_llm`` instead, it plans again before every model call, after the hooks listed
    before it (a compaction hook) changed the messages.

    Args:
        path: A database file (or ``":memory:"``) to open; :meth:`close` closes it.
        memory: An open elastic-memory ``Memory`` or ``AsyncMemory`` (left open by :meth:`close`);
            a user's handle (``Memory.for_user``) serves that user only.
        session_id: The session when a run's ``hook_context`` names none.
        user_key: The ``hook_context`` key that names a run's user.
        require_user: Refuse (``UsageError``) a run whose ``hook_context`` names no user, instead
            of serving it the agent's own memory.
        max_tokens: Cap the injected plan at this many tokens (``ContextPlan.truncate``).
        embedder: The core's embedder for ``path`` (``"auto"``: the built-in offline model, ``None``: none).
        **options: More ``Memory.open`` options for ``path`` (``loop=``, ``context_tokens=``, ...).
    """

    def __init__(
        self,
        *,
        path: str | Path | None = None,
        memory: Memory | AsyncMemory | None = None,
        session_id: str | None = None,
        user_key: str = "user_id",
        require_user: bool = False,
        max_tokens: int | None = None,
        embedder: Embedder | str | None = "auto",
        **options: Any,
    ) -> None:
        if max_tokens is not None and (
            isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1
        ):
            msg = f"max_tokens must be a positive integer or None, got {max_tokens!r}"
            raise UsageError(msg)
        super().__init__(
            path=path,
            memory=memory,
            session_id=session_id,
            user_key=user_key,
            require_user=require_user,
            embedder=embedder,
            options=options,
        )
        self.max_tokens = max_tokens

    def to_dict(self) -> dict[str, Any]:
        """Serialise: the (absolute) path, the session, the user key and the settings."""
        return default_to_dict(self, max_tokens=self.max_tokens, **self._params())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ElasticMemoryRecallHook:
        """Reopen the hook a :meth:`to_dict` describes."""
        return default_from_dict(cls, data)

    def run(self, state: State) -> None:
        """Inject the plan for the latest user message (a memory failure is logged, the run goes on).

        Raises:
            UsageError: The run's user cannot be served (see the module docstring).
        """
        mem = self._sync(state)
        try:
            query, window = _query_and_window(state)
            if query is None:
                return
            plan = mem.build_context(query, session_id=self._session(state), touch=_first(state), window=window)
            self._inject(state, plan)
        except Exception:
            logger.warning("elastic-memory: no memory context for this run", exc_info=True)

    async def run_async(self, state: State) -> None:
        """:meth:`run` on the store's ``AsyncMemory``."""
        mem = self._async(state)
        try:
            query, window = _query_and_window(state)
            if query is None:
                return
            plan = await mem.build_context(query, session_id=self._session(state), touch=_first(state), window=window)
            self._inject(state, plan)
        except Exception:
            logger.warning("elastic-memory: no memory context for this run", exc_info=True)

    def _inject(self, state: State, plan: ContextPlan) -> None:
        if self.max_tokens is not None:
            plan = plan.truncate(self.max_tokens)
        text = plan.render()
        messages = [m for m in state.get("messages") or [] if not _is_context(m)]
        if text.strip():
            at = next((i for i, m in enumerate(messages) if m.role != ChatRole.SYSTEM), len(messages))
            context = ChatMessage.from_system(text, meta={CONTEXT_META_KEY: "context"})
            messages = [*messages[:at], context, *messages[at:]]
        state.set("messages", messages, handler_override=_replace)


class ElasticMemoryRecordHook(_MemoryHook):
    """``after_run``: record the run's exchange with ``record_turn``, once.

    Args:
        path: A database file (or ``":memory:"``) to open; :meth:`close` closes it.
        memory: An open elastic-memory ``Memory`` or ``AsyncMemory`` (left open by :meth:`close`);
            a user's handle (``Memory.for_user``) serves that user only.
        session_id: The session when a run's ``hook_context`` names none.
        user_key: The ``hook_context`` key that names a run's user (whose memory the turn goes to).
        require_user: Refuse (``UsageError``) a run whose ``hook_context`` names no user, instead
            of recording it in the agent's own memory.
        strip_context: Remove the recall hook's context message from the Agent's output messages.
        embedder: The core's embedder for ``path`` (``"auto"``: the built-in offline model, ``None``: none).
        **options: More ``Memory.open`` options for ``path``.
    """

    def __init__(
        self,
        *,
        path: str | Path | None = None,
        memory: Memory | AsyncMemory | None = None,
        session_id: str | None = None,
        user_key: str = "user_id",
        require_user: bool = False,
        strip_context: bool = True,
        embedder: Embedder | str | None = "auto",
        **options: Any,
    ) -> None:
        if not isinstance(strip_context, bool):
            msg = f"strip_context must be True or False, got {strip_context!r}"
            raise UsageError(msg)
        super().__init__(
            path=path,
            memory=memory,
            session_id=session_id,
            user_key=user_key,
            require_user=require_user,
            embedder=embedder,
            options=options,
        )
        self.strip_context = strip_context

    def to_dict(self) -> dict[str, Any]:
        """Serialise: the (absolute) path, the session, the user key and the settings."""
        return default_to_dict(self, strip_context=self.strip_context, **self._params())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ElasticMemoryRecordHook:
        """Reopen the hook a :meth:`to_dict` describes."""
        return default_from_dict(cls, data)

    def run(self, state: State) -> None:
        """Record the exchange unless it was recorded before (a memory failure is logged, the run goes on).

        Raises:
            UsageError: The run's user cannot be served (see the module docstring).
        """
        mem = self._sync(state)
        try:
            turn = self._turn(state)
            if turn is not None:
                user, reply, session, key = turn
                if not mem.recall("", k=1, mode="keyword", filters=_turn_filter(key), touch=False):
                    receipt = mem.record_turn(user, reply, session_id=session, metadata={_TURN_KEY: key})
                    if not receipt.ok:
                        logger.warning("elastic-memory: the turn was not recorded: %s", receipt.error)
        except Exception:
            logger.warning("elastic-memory: the turn was not recorded", exc_info=True)
        self._strip(state)

    async def run_async(self, state: State) -> None:
        """:meth:`run` on the store's ``AsyncMemory``."""
        mem = self._async(state)
        try:
            turn = self._turn(state)
            if turn is not None:
                user, reply, session, key = turn
                if not await mem.recall("", k=1, mode="keyword", filters=_turn_filter(key), touch=False):
                    receipt = await mem.record_turn(user, reply, session_id=session, metadata={_TURN_KEY: key})
                    if not receipt.ok:
                        logger.warning("elastic-memory: the turn was not recorded: %s", receipt.error)
        except Exception:
            logger.warning("elastic-memory: the turn was not recorded", exc_info=True)
        self._strip(state)

    def _turn(self, state: State) -> tuple[str, str, str | None, str] | None:
        """(user, reply, session, key) of the run's exchange, or ``None`` when there is nothing to record."""
        messages = [m for m in state.get("messages") or [] if m.role != ChatRole.SYSTEM]
        start = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == ChatRole.USER), None)
        if start is None:
            return None
        user = (messages[start].text or "").strip()
        reply = next(
            (
                (m.text or "").strip()
                for m in reversed(messages[start + 1 :])
                if m.role == ChatRole.ASSISTANT and (m.text or "").strip()
            ),
            "",
        )
        if not user or not reply:
            return None  # an unanswered message is recorded with its answer, by a later run
        session = self._session(state)
        # the conversation up to the user message: a retry or a regenerated answer is the same turn
        prefix = [(m.role.value, m.text or "") for m in messages[: start + 1]]
        raw = json.dumps([session, prefix], ensure_ascii=False)
        # surrogatepass: a lone surrogate never fails the hash; record_turn() stores the text cleaned.
        return user, reply, session, hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:40]

    def _strip(self, state: State) -> None:
        if not self.strip_context:
            return
        messages = state.get("messages") or []
        if any(_is_context(m) for m in messages):
            state.set("messages", [m for m in messages if not _is_context(m)], handler_override=_replace)


def _turn_filter(key: str) -> dict[str, Any]:
    return {"metadata": {_TURN_KEY: key}}


def _query_and_window(state: State) -> tuple[str | None, list[str]]:
    """The latest user message's text, and the texts of the messages the model gets (the context message left out)."""
    messages = [m for m in state.get("messages") or [] if not _is_context(m)]
    return _latest_user_text(messages), [m.text or "" for m in messages]


def _first(state: State) -> bool:
    """Whether the model has not been called yet in this run: a plan counts as an access once per run."""
    return not state.get("step_count")


def _latest_user_text(messages: list[ChatMessage]) -> str | None:
    for message in reversed(messages):
        if message.role == ChatRole.USER:
            text = (message.text or "").strip()
            return text or None
    return None


def memory_hooks(
    *,
    path: str | Path | None = None,
    memory: Memory | AsyncMemory | None = None,
    session_id: str | None = None,
    user_key: str = "user_id",
    require_user: bool = False,
    max_tokens: int | None = None,
    embedder: Embedder | str | None = "auto",
    **options: Any,
) -> dict[str, list[Any]]:
    """``Agent(hooks=memory_hooks(path="memory.db"))``: recall before each run, record after it.

    Both hooks work on one store: with ``path`` the recall hook opens it (and closes it when the
    Agent closes), the record hook shares it. Hooks built from ``path=`` (as ``Agent.from_dict``
    rebuilds them) share one store per file and settings in the process: one connection, one
    worker, one model load; the last of them to close closes it. A run's user is ``hook_context[user_key]``
    (``agent.run(..., hook_context={"user_id": "alice"})``): one store, each user's memory apart;
    a run without one uses the agent's own memory, unless ``require_user=True`` refuses it.
    """
    recall = ElasticMemoryRecallHook(
        path=path,
        memory=memory,
        session_id=session_id,
        user_key=user_key,
        require_user=require_user,
        max_tokens=max_tokens,
        embedder=embedder,
        **options,
    )
    record = ElasticMemoryRecordHook(
        memory=recall.memory, session_id=session_id, user_key=user_key, require_user=require_user
    )
    record.serialise_like(recall)
    return {"before_run": [recall], "after_run": [record]}
