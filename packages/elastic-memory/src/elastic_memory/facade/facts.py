"""``mem.facts`` and ``mem.lessons``: the async views, and the sync ones generated from them (tools/gen_sync.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import _runner
from ..loop.attach import loop_of
from ..types import Fact, FactHistory, MemoryRecord

if TYPE_CHECKING:
    from ..core import MemoryCore

__all__ = ["AsyncFacts", "AsyncLessons", "Facts", "Lessons"]


class AsyncFacts:
    """Versioned key-value facts of the agent, async API (``amem.facts``).

    Setting a key again supersedes the current version; :meth:`history` keeps every one.
    """

    def __init__(self, core: MemoryCore) -> None:
        self._core = core

    async def set(
        self,
        key: str,
        value: Any,
        *,
        category: str | None = None,
        valid_from: Any = None,
        importance: float = 0.7,
        source: str = "user_confirmed",
    ) -> Fact:
        """Set ``key`` (user-confirmed: confidence 1.0; automatic capture never overrides it).

        ``category`` is ``"profile"`` (always shown to the model) or ``"note"`` (shown when
        relevant); ``None`` picks profile for the documented profile keys (``user.name``,
        ``user.location``, ...). ``valid_from``: when it became true (default now).
        ``source="agent"``: the agent decided it, not the user: it is stored at the agent's
        confidence cap (``ExtractionPolicy.agent_confidence_cap``), never replaces a
        user-confirmed value, and the user's own later statement replaces it. Returns the
        current version (the old one if the write was outranked).
        """
        return await _runner.arun(
            loop_of(self._core).set_fact(
                key, value, category=category, valid_from=valid_from, importance=importance, source=source
            )
        )

    async def get(self, key: str, *, as_of: Any = None) -> Fact | None:
        """The current version of ``key``, or the one that held at ``as_of`` (a time)."""
        return await _runner.arun(loop_of(self._core).get_fact(key, as_of=as_of))

    async def history(self, key: str) -> FactHistory:
        """Every version of ``key``, oldest first (forgetting adds a tombstone version)."""
        return FactHistory(await _runner.arun(loop_of(self._core).fact_history(key)))

    async def forget(self, key: str) -> bool:
        """Tombstone ``key`` so it is no longer shown; ``False`` if it held no value."""
        return await _runner.arun(loop_of(self._core).forget_fact(key))

    async def list(self, *, category: str | None = None) -> list[Fact]:
        """The current facts, most important first."""
        return await _runner.arun(loop_of(self._core).list_facts(category=category))


class Facts:
    """Versioned key-value facts of the agent (``mem.facts``).

    >>> from elastic_memory import Memory
    >>> with Memory.open(":memory:", embedder=None) as mem:
    ...     _ = mem.facts.set("user.dog_name", "Biscuit")
    ...     _ = mem.facts.set("user.dog_name", "Rex")
    ...     [f.value for f in mem.facts.history("user.dog_name")], mem.facts.get("user.dog_name").value
    (['Biscuit', 'Rex'], 'Rex')
    """

    # ---- generated from AsyncFacts by packages/elastic-memory/tools/gen_sync.py: do not edit, run it ----

    def __init__(self, core: MemoryCore) -> None:
        self._core = core

    def set(
        self,
        key: str,
        value: Any,
        *,
        category: str | None = None,
        valid_from: Any = None,
        importance: float = 0.7,
        source: str = "user_confirmed",
    ) -> Fact:
        """Set ``key`` (user-confirmed: confidence 1.0; automatic capture never overrides it).

        ``category`` is ``"profile"`` (always shown to the model) or ``"note"`` (shown when
        relevant); ``None`` picks profile for the documented profile keys (``user.name``,
        ``user.location``, ...). ``valid_from``: when it became true (default now).
        ``source="agent"``: the agent decided it, not the user: it is stored at the agent's
        confidence cap (``ExtractionPolicy.agent_confidence_cap``), never replaces a
        user-confirmed value, and the user's own later statement replaces it. Returns the
        current version (the old one if the write was outranked).
        """
        return _runner.run(
            loop_of(self._core).set_fact(
                key, value, category=category, valid_from=valid_from, importance=importance, source=source
            ),
            "facts.set",
        )

    def get(self, key: str, *, as_of: Any = None) -> Fact | None:
        """The current version of ``key``, or the one that held at ``as_of`` (a time)."""
        return _runner.run(loop_of(self._core).get_fact(key, as_of=as_of), "facts.get")

    def history(self, key: str) -> FactHistory:
        """Every version of ``key``, oldest first (forgetting adds a tombstone version)."""
        return FactHistory(_runner.run(loop_of(self._core).fact_history(key), "facts.history"))

    def forget(self, key: str) -> bool:
        """Tombstone ``key`` so it is no longer shown; ``False`` if it held no value."""
        return _runner.run(loop_of(self._core).forget_fact(key), "facts.forget")

    def list(self, *, category: str | None = None) -> list[Fact]:
        """The current facts, most important first."""
        return _runner.run(loop_of(self._core).list_facts(category=category), "facts.list")

    # ---- end of generated code ----


class AsyncLessons:
    """Short operational lessons, injected into every plan (``amem.lessons``)."""

    def __init__(self, core: MemoryCore) -> None:
        self._core = core

    async def add(self, text: str, *, importance: float = 0.7, source: str = "user_confirmed") -> str:
        """Store a lesson (the same text twice is stored once); returns its memory id.

        ``source="agent"`` marks a lesson the agent wrote for itself (the guards apply alike).
        """
        return await _runner.arun(loop_of(self._core).add_lesson(text, importance=importance, source=source))

    async def list(self) -> list[MemoryRecord]:
        """Live lessons: pinned first, then most important, then most recent."""
        return await _runner.arun(loop_of(self._core).list_lessons())


class Lessons:
    """Short operational lessons, injected into every plan (``mem.lessons``).

    >>> from elastic_memory import Memory
    >>> with Memory.open(":memory:", embedder=None) as mem:
    ...     _ = mem.lessons.add("Answer in metric units.")
    ...     [lesson.content for lesson in mem.lessons.list()]
    ['Answer in metric units.']
    """

    # ---- generated from AsyncLessons by packages/elastic-memory/tools/gen_sync.py: do not edit, run it ----

    def __init__(self, core: MemoryCore) -> None:
        self._core = core

    def add(self, text: str, *, importance: float = 0.7, source: str = "user_confirmed") -> str:
        """Store a lesson (the same text twice is stored once); returns its memory id.

        ``source="agent"`` marks a lesson the agent wrote for itself (the guards apply alike).
        """
        return _runner.run(loop_of(self._core).add_lesson(text, importance=importance, source=source), "lessons.add")

    def list(self) -> list[MemoryRecord]:
        """Live lessons: pinned first, then most important, then most recent."""
        return _runner.run(loop_of(self._core).list_lessons(), "lessons.list")

    # ---- end of generated code ----
