"""LangGraph's ``index["embed"]`` made callable from the core's worker threads."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Awaitable, Callable
from typing import TypeVar

from langchain_core.embeddings import Embeddings
from langgraph.store.base.embed import EmbeddingsLambda

__all__ = ["callable_from_threads"]

_T = TypeVar("_T")


class _AsyncOnlyEmbeddings(Embeddings):
    """An async-only embedding function made callable from the core's worker threads."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """The async function's vectors, awaited on a loop of its own."""
        return _wait(lambda: self.inner.aembed_documents(list(texts)))

    def embed_query(self, text: str) -> list[float]:
        """The async function's query vector, awaited on a loop of its own."""
        return _wait(lambda: self.inner.aembed_query(text))

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        """The async function's vectors."""
        return await self.inner.aembed_documents(texts)

    async def aembed_query(self, text: str) -> list[float]:
        """The async function's query vector."""
        return await self.inner.aembed_query(text)


def _wait(make: Callable[[], Awaitable[_T]]) -> _T:
    """Run a coroutine to the end from sync code, in a thread of its own if this one runs a loop."""

    async def run() -> _T:
        return await make()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(run())
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, run()).result()


def callable_from_threads(embeddings: Embeddings) -> Embeddings:
    """``embeddings``, or an async-only embedding function wrapped to be callable from sync code too."""
    if isinstance(embeddings, EmbeddingsLambda) and getattr(embeddings, "func", None) is None:
        return _AsyncOnlyEmbeddings(embeddings)
    return embeddings
