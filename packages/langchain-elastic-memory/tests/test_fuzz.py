"""Hostile input through the LangChain and LangGraph adapters (the core's fuzz suite, tests/fuzz).

Every public method of the vector store, the LangGraph store (its ``BaseStore`` API), the
chat history and the retriever, with arguments drawn from each parameter's name. A call
returns, or raises the library's ``ElasticMemoryError`` or what LangChain documents for bad
input (``ValueError``, of which ``InvalidNamespaceError`` and pydantic's ``ValidationError``
are kinds); when it raised, the SQLite file's rows are unchanged.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from elastic_memory import Memory
from elastic_memory.testing import FakeEmbedder, built_or_raw, check_hostile_call
from langchain_elastic_memory import (
    ElasticMemoryChatMessageHistory,
    ElasticMemoryRetriever,
    ElasticMemoryStore,
    ElasticMemoryVectorStore,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests" / "fuzz"))
import adapters  # type: ignore[import-not-found]
import harness  # type: ignore[import-not-found]
import strategies as hs  # type: ignore[import-not-found]

#: Derandomized, as the core's fuzz suite (tests/fuzz/conftest.py); benchmarks/fuzz.py explores at random.
FUZZ = settings(max_examples=8, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
ALLOWED: tuple[type[BaseException], ...] = (ValueError,)


OBJECTS = st.one_of(
    st.builds(
        built_or_raw(lambda t, m, i: Document(page_content=t, metadata=m, id=i)),
        hs.hostile_text(),
        hs.metadata(),
        hs.names(),
    ),
    st.builds(built_or_raw(HumanMessage), hs.hostile_text()),
    st.builds(built_or_raw(AIMessage), hs.short_text()),
    st.builds(built_or_raw(SystemMessage), hs.short_text()),
    st.builds(built_or_raw(lambda ns: (tuple(ns),)), st.lists(hs.names(), max_size=3)),
)

#: Own public methods that take no hostile input (``from_conn_string`` opens a file named by its argument).
EXEMPT = {"close", "aclose", "model_post_init", "from_texts", "afrom_texts", "from_conn_string"}
CLASSES = [ElasticMemoryVectorStore, ElasticMemoryStore, ElasticMemoryChatMessageHistory, ElasticMemoryRetriever]
#: The framework's public API these adapters implement (inherited, so not in their own vars).
INHERITED = {
    ElasticMemoryStore: [
        "get",
        "search",
        "put",
        "delete",
        "list_namespaces",
        "aget",
        "asearch",
        "aput",
        "adelete",
        "alist_namespaces",
    ],
    ElasticMemoryRetriever: ["invoke", "ainvoke"],
    ElasticMemoryVectorStore: ["similarity_search_with_relevance_scores", "search", "as_retriever"],
}


def targets() -> list[tuple[type, str]]:
    return [
        (c, m) for c in CLASSES for m in [*adapters.own_public_methods(c), *INHERITED.get(c, [])] if m not in EXEMPT
    ]


@pytest.fixture
def opened(tmp_path: Path) -> Iterator[tuple[Memory, Callable[[], str]]]:
    path = tmp_path / "memory.db"
    with Memory.open(path, embedder=FakeEmbedder()) as mem:
        mem.remember("The user's dog is called Biscuit.", id="doc-1", metadata={"lang": "en"})
        yield mem, lambda: harness.sqlite_digest(path)


def _instance(cls: type, mem: Memory) -> Any:
    if cls is ElasticMemoryChatMessageHistory:
        return cls("s", memory=mem)
    return cls(memory=mem)


@pytest.mark.parametrize(("cls", "method"), targets(), ids=[f"{c.__name__}.{m}" for c, m in targets()])
def test_method_raises_only_documented_errors_and_keeps_the_store(
    opened: tuple[Memory, Callable[[], str]], cls: type, method: str
) -> None:
    """A result, an ElasticMemoryError or a ValueError; and no change to the store when it raised."""
    mem, digest = opened
    obj = _instance(cls, mem)
    fn = getattr(obj, method)

    @FUZZ
    @given(call=adapters.calls_for(fn, OBJECTS))
    def prop(call: tuple[tuple[Any, ...], dict[str, Any]]) -> None:
        check_hostile_call(f"{cls.__name__}.{method}", fn, call[0], call[1], ALLOWED, digest)

    try:
        prop()
    finally:
        if isinstance(obj, ElasticMemoryStore):
            assert obj.stop_ttl_sweeper(timeout=10), "the TTL sweeper a fuzzed call started did not stop"


def test_every_public_method_is_fuzzed() -> None:
    """Each class's own public methods are fuzzed unless exempt (a new method fails here until it is)."""
    fuzzed = {(c, m) for c, m in targets()}
    for cls in CLASSES:
        for m in adapters.own_public_methods(cls):
            assert (cls, m) in fuzzed or m in EXEMPT, f"{cls.__name__}.{m}"
