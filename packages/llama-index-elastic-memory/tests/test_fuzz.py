"""Hostile input through the LlamaIndex adapter (the core's fuzz suite, tests/fuzz).

Every own public method of the adapter's classes, with arguments drawn from each
parameter's name. A call returns, or raises the library's ``ElasticMemoryError`` or what
LlamaIndex documents for bad input (``ValueError``, pydantic's ``ValidationError`` among them);
when it raised, the SQLite file's rows are unchanged.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import VectorStoreQuery

from elastic_memory import Memory
from elastic_memory.testing import FakeEmbedder, built_or_raw, check_hostile_call
from llama_index.retrievers.elastic_memory import ElasticMemoryRetriever
from llama_index.storage.chat_store.elastic_memory import ElasticMemoryChatStore
from llama_index.vector_stores.elastic_memory import ElasticMemoryVectorStore

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests" / "fuzz"))
import adapters  # type: ignore[import-not-found]
import harness  # type: ignore[import-not-found]
import strategies as hs  # type: ignore[import-not-found]

#: Derandomized, as the core's fuzz suite (tests/fuzz/conftest.py); benchmarks/fuzz.py explores at random.
FUZZ = settings(max_examples=8, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


ALLOWED: tuple[type[BaseException], ...] = (ValueError,)
OBJECTS = st.one_of(
    st.builds(
        built_or_raw(lambda t, m, i: TextNode(text=t, metadata=m, id_=i, embedding=[0.25] * 16)),
        hs.hostile_text(),
        hs.metadata(),
        hs.names(),
    ),
    st.builds(built_or_raw(lambda t: ChatMessage(role="user", content=t)), hs.hostile_text()),
    st.builds(
        built_or_raw(lambda t, k: VectorStoreQuery(query_str=t, similarity_top_k=k, query_embedding=[0.25] * 16)),
        hs.hostile_text(),
        hs.ints(),
    ),
)
#: Own public methods that take no hostile input (lifecycle, serialisation, pydantic hooks).
EXEMPT = {
    "close",
    "aclose",
    "model_post_init",
    "class_name",
    "from_dict",
    "to_dict",
    "custom_model_dump",
    "serialize_store",
}
CLASSES = [ElasticMemoryVectorStore, ElasticMemoryChatStore, ElasticMemoryRetriever]


def instance(cls: type, mem: Memory) -> Any:
    return cls(memory=mem)


def targets() -> list[tuple[type, str]]:
    return [(c, m) for c in CLASSES for m in adapters.own_public_methods(c) if m not in EXEMPT]


@pytest.fixture
def opened(tmp_path: Path) -> Iterator[tuple[Memory, Callable[[], str]]]:
    path = tmp_path / "memory.db"
    with Memory.open(path, embedder=FakeEmbedder()) as mem:
        mem.remember("The user's dog is called Biscuit.", id="doc-1", metadata={"lang": "en"})
        yield mem, lambda: harness.sqlite_digest(path)


@pytest.mark.parametrize(("cls", "method"), targets(), ids=[f"{c.__name__}.{m}" for c, m in targets()])
def test_method_raises_only_documented_errors_and_keeps_the_store(
    opened: tuple[Memory, Callable[[], str]], cls: type, method: str
) -> None:
    """A result, an ElasticMemoryError or a documented error; and no change to the store when it raised."""
    mem, digest = opened
    fn = getattr(instance(cls, mem), method)

    @FUZZ
    @given(call=adapters.calls_for(fn, OBJECTS))
    def prop(call: tuple[tuple[Any, ...], dict[str, Any]]) -> None:
        check_hostile_call(f"{cls.__name__}.{method}", fn, call[0], call[1], ALLOWED, digest)

    prop()


def test_every_public_method_is_fuzzed() -> None:
    """Each class's own public methods are fuzzed unless exempt (a new method fails here until it is)."""
    fuzzed = set(targets())
    for cls in CLASSES:
        for m in adapters.own_public_methods(cls):
            assert (cls, m) in fuzzed or m in EXEMPT, f"{cls.__name__}.{m}"
