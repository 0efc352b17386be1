"""ElasticMemoryRetriever takes Haystack's filter DSL over the documents it returns."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from haystack.utils.filters import document_matches_filter

from elastic_memory import Memory
from elastic_memory.testing import FakeEmbedder
from haystack_integrations.components.retrievers.elastic_memory import ElasticMemoryRetriever


@pytest.fixture
def mem() -> Iterator[Memory]:
    memory = Memory.open(":memory:", embedder=FakeEmbedder())
    memory.remember("tea is green", metadata={"lang": "en", "n": 3, "when": "2024-01-02"})
    memory.remember("tea is black", metadata={"lang": "fr", "n": 5, "when": "2023-01-02"}, session_id="s1")
    memory.remember("coffee and tea", metadata={"lang": "en", "n": 9}, tags=["drinks"])
    yield memory
    memory.close()


CASES: list[dict[str, Any]] = [
    {"field": "meta.metadata.lang", "operator": "==", "value": "en"},
    {"field": "meta.metadata.n", "operator": ">", "value": 4},
    {"field": "meta.metadata.when", "operator": ">", "value": "2023-06-01"},
    {"field": "meta.session_id", "operator": "==", "value": "s1"},
    {"field": "content", "operator": "!=", "value": "tea is green"},
    {
        "operator": "AND",
        "conditions": [
            {"field": "meta.type", "operator": "in", "value": ["semantic", "episodic"]},
            {"field": "meta.metadata.lang", "operator": "not in", "value": ["fr"]},
        ],
    },
    {
        "operator": "OR",
        "conditions": [
            {"field": "meta.session_id", "operator": "==", "value": "s1"},
            {"field": "meta.metadata.n", "operator": "==", "value": 9},
        ],
    },
]


@pytest.mark.parametrize("filters", CASES)
def test_haystack_filters_keep_exactly_the_matching_documents(mem: Memory, filters: dict[str, Any]) -> None:
    retriever = ElasticMemoryRetriever(memory=mem, top_k=10, mode="keyword")
    everything = retriever.run("tea")["documents"]
    expected = [d.id for d in everything if document_matches_filter(filters, d)]
    assert [d.id for d in retriever.run("tea", filters=filters)["documents"]] == expected


def test_haystack_filters_given_to_the_constructor_apply(mem: Memory) -> None:
    retriever = ElasticMemoryRetriever(
        memory=mem, mode="keyword", filters={"field": "meta.metadata.lang", "operator": "==", "value": "fr"}
    )
    assert [d.content for d in retriever.run("tea")["documents"]] == ["tea is black"]


async def test_haystack_filters_apply_in_run_async(mem: Memory) -> None:
    retriever = ElasticMemoryRetriever(memory=mem, mode="keyword")
    found = await retriever.run_async("tea", filters={"field": "meta.metadata.n", "operator": "<", "value": 4})
    assert [d.content for d in found["documents"]] == ["tea is green"]


def test_the_cores_filter_dict_still_works(mem: Memory) -> None:
    retriever = ElasticMemoryRetriever(memory=mem, mode="keyword", filters={"tags": ["drinks"]})
    assert [d.content for d in retriever.run("tea")["documents"]] == ["coffee and tea"]
