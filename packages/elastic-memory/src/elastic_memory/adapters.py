"""What framework adapters share: the store an adapter works on, from its ``path=`` or ``memory=``.

Every adapter class takes keyword-only ``path=`` (a database file, or ``":memory:"``, which the
adapter opens and closes) or ``memory=`` (an open :class:`Memory` or :class:`AsyncMemory`, left
open). :class:`Opened` holds both facades over that one store, and :class:`StoreLifecycle` gives an
adapter class its lifecycle over it: the facades, closing and the context managers.

>>> from elastic_memory.testing import FakeEmbedder
>>> opened = open_memory(":memory:", None, embedder=FakeEmbedder())
>>> opened.owns, opened.aio.path == opened.sync.path
(True, True)
>>> opened.close()
"""

from __future__ import annotations

from collections.abc import Coroutine, Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from . import _runner
from .errors import UsageError
from .facade.async_memory import AsyncMemory
from .facade.base import agent_handle
from .facade.memory import Memory
from .filters import check_text
from .types import Hit

__all__ = [
    "Opened",
    "StoreLifecycle",
    "agent_handle",
    "aopen_memory",
    "items_arg",
    "open_memory",
    "provenance",
    "run_sync",
    "text_arg",
]

T = TypeVar("T")
_S = TypeVar("_S", bound="StoreLifecycle")


def run_sync(coro: Coroutine[Any, Any, T], name: str = "call") -> T:
    """Run a coroutine of :class:`AsyncMemory` calls on the library's loop and wait: an adapter's sync twin.

    An adapter writes each operation once, as a coroutine, and offers it both ways: awaited
    (async) and through this (sync). Calling it from the library's own loop raises a
    :class:`UsageError` naming ``name`` instead of deadlocking.
    """
    return _runner.run(coro, name)


def text_arg(value: Any, name: str) -> str:
    r"""``value`` if it is a ``str`` that can be stored; an adapter's check of a query, a key, an id.

    Every adapter argument of the wrong type raises the library's :class:`UsageError` (also a
    ``ValueError``, the error the frameworks document for bad input), never an ``AttributeError``
    from deep inside.

    >>> text_arg(None, "query")
    Traceback (most recent call last):
    ...
    elastic_memory.UsageError: query must be a string, got NoneType
    """
    if not isinstance(value, str):
        msg = f"{name} must be a string, got {type(value).__name__}"
        raise UsageError(msg)
    return check_text(value, name)


def items_arg(value: Any, name: str) -> list[Any]:
    """``value`` as a list if it is a list or another iterable of items (not a str, bytes or dict).

    >>> items_arg(("a", "b"), "texts"), items_arg(iter([1]), "ids")
    (['a', 'b'], [1])
    >>> items_arg("abc", "texts")
    Traceback (most recent call last):
    ...
    elastic_memory.UsageError: texts must be a list, got str
    """
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        msg = f"{name} must be a list, got {type(value).__name__}"
        raise UsageError(msg)
    return list(value)


class Opened:
    """The core's two facades over one open store, and whether the adapter opened it (and closes it)."""

    def __init__(self, memory: Memory, *, owns: bool) -> None:
        self.sync = memory
        self.aio: AsyncMemory = memory.as_async()
        self.owns = owns

    def close(self) -> None:
        """Close the store if the adapter opened it (idempotent)."""
        if self.owns:
            self.sync.close()

    async def aclose(self) -> None:
        """Close the store if the adapter opened it, from async code (idempotent)."""
        if self.owns:
            await self.aio.close()


class StoreLifecycle:
    """The lifecycle of an adapter class over the :class:`Opened` store it keeps in ``_opened``.

    :attr:`memory` and :attr:`amemory` are the store's sync and async facades; :meth:`close` and
    :meth:`aclose` close it if the adapter opened it (``path=``) and leave a ``memory=`` it was
    given open; both are idempotent, and ``with`` / ``async with`` call them on exit. A class with
    more to release overrides them and calls ``super()``; one that opens its store on first use
    leaves ``_opened`` ``None`` until then and overrides :meth:`_store`. A mixin without
    state of its own, so pydantic models take it too (they declare ``_opened`` a ``PrivateAttr``).

    >>> from elastic_memory.testing import FakeEmbedder
    >>> class Notes(StoreLifecycle):
    ...     def __init__(self, path: str) -> None:
    ...         self._opened = open_memory(path, None, embedder=FakeEmbedder())
    >>> with Notes(":memory:") as notes:
    ...     _ = notes.memory.remember("tea")
    ...     notes.amemory.path == notes.memory.path
    True
    >>> notes.close()  # closed already: nothing to do
    """

    #: The store; ``None`` only where it opens on first use.
    _opened: Opened | None

    def _store(self) -> Opened:
        """The open store (overridden by a class that opens it on first use)."""
        opened = self._opened
        if opened is None:
            msg = f"this {type(self).__name__} has no store open"
            raise UsageError(msg)
        return opened

    @property
    def memory(self) -> Memory:
        """The store underneath (sync facade)."""
        return self._store().sync

    @property
    def amemory(self) -> AsyncMemory:
        """The store underneath (async facade)."""
        return self._store().aio

    def close(self) -> None:
        """Close the store if this object opened it (``path=``); a given ``memory=`` stays open. Idempotent."""
        if self._opened is not None:
            self._opened.close()

    async def aclose(self) -> None:
        """:meth:`close` from async code."""
        if self._opened is not None:
            await self._opened.aclose()

    def __enter__(self: _S) -> _S:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    async def __aenter__(self: _S) -> _S:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


def _given(memory: Memory | AsyncMemory, embedder_arg: str | None, options: dict[str, Any]) -> Opened:
    if embedder_arg is not None:
        msg = f"{embedder_arg}= applies when the adapter opens the store (path=); an open memory= has its embedder"
        raise UsageError(msg)
    if options:
        msg = f"{sorted(options)} apply when the adapter opens the store (path=); an open memory= is already set up"
        raise UsageError(msg)
    if isinstance(memory, AsyncMemory):
        return Opened(memory.as_sync(), owns=False)
    if isinstance(memory, Memory):
        return Opened(memory, owns=False)
    msg = f"memory must be an elastic_memory Memory or AsyncMemory, got {type(memory).__name__}"
    raise UsageError(msg)


def _check(path: str | Path | None, memory: Memory | AsyncMemory | None) -> None:
    if (path is None) == (memory is None):
        msg = "pass exactly one of path= (a database file or ':memory:') or memory= (an open Memory/AsyncMemory)"
        raise UsageError(msg)


def open_memory(
    path: str | Path | None,
    memory: Memory | AsyncMemory | None,
    *,
    embedder: Any = "auto",
    embedder_arg: str | None = None,
    **options: Any,
) -> Opened:
    """The store an adapter works on: ``memory`` as given, or a file opened at ``path``.

    ``embedder`` is what :meth:`Memory.open` takes (``"auto"``: the built-in offline model,
    ``None``: keyword only, or an :class:`~elastic_memory.Embedder`); ``embedder_arg`` names the
    framework argument the caller chose a model with (``"embedding"``, ``"embed_model"``), which
    an already open ``memory`` refuses, as it refuses ``options``.

    Raises:
        UsageError: Neither or both of ``path``/``memory``, or options that cannot apply.
    """
    _check(path, memory)
    if memory is not None:
        return _given(memory, embedder_arg, options)
    assert path is not None
    return Opened(Memory.open(path, embedder=embedder, **options), owns=True)


async def aopen_memory(
    path: str | Path | None,
    memory: Memory | AsyncMemory | None,
    *,
    embedder: Any = "auto",
    embedder_arg: str | None = None,
    **options: Any,
) -> Opened:
    """:func:`open_memory` for async code: a file is opened with :meth:`AsyncMemory.open`."""
    _check(path, memory)
    if memory is not None:
        return _given(memory, embedder_arg, options)
    assert path is not None
    opened = await AsyncMemory.open(path, embedder=embedder, **options)
    return Opened(opened.as_sync(), owns=True)


def provenance(hit: Hit) -> dict[str, Any]:
    """Where a recalled memory came from, as a framework document's metadata (JSON values).

    The memory's own metadata sits under ``"metadata"``, so its keys never collide with these.

    >>> from elastic_memory.testing import FakeEmbedder
    >>> with Memory.open(":memory:", embedder=FakeEmbedder()) as mem:
    ...     _ = mem.remember("tea", metadata={"from": "chat"})
    ...     meta = provenance(mem.recall("tea")[0])
    >>> meta["type"], meta["tags"], meta["metadata"]
    ('semantic', [], {'from': 'chat'})
    """
    return {
        "id": hit.id,
        "score": hit.score,
        "keyword_score": hit.keyword_score,
        "vector_score": hit.vector_score,
        "tier": hit.tier,
        "type": hit.type.value,
        "kind": hit.kind,
        "source": hit.source.value,
        "agent_id": hit.agent_id,
        "scope": hit.scope.value,
        "pool": hit.pool,
        "session_id": hit.session_id,
        "created_at": hit.created_at,
        "importance": hit.importance,
        "confidence": hit.confidence,
        "pinned": hit.pinned,
        "tags": list(hit.tags),
        "metadata": dict(hit.metadata),
    }
