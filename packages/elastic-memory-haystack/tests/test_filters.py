"""Filters: the store's results and errors equal InMemoryDocumentStore's, filter by filter."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from haystack import Document
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack.errors import FilterError
from haystack.testing.document_store import create_filterable_docs

from haystack_integrations.document_stores.elastic_memory import ElasticMemoryDocumentStore
from haystack_integrations.document_stores.elastic_memory.filters import select, validate_filters

EXTRA = [
    Document(id="d-naive", content="naive date", meta={"when": "2024-01-01T10:00:00"}),
    Document(id="d-aware", content="aware date", meta={"when": "2024-01-01T10:00:00+00:00"}),
    Document(id="d-later", content="later date", meta={"when": "2025-06-01"}),
    Document(id="nested", content="nested", meta={"a": {"b": 3}}),
    Document(id="nometa", content="no meta"),
    Document(id="blob-only", meta={"kind": "blob"}),
]

CASES: list[dict[str, Any]] = [
    {"field": "meta.number", "operator": "==", "value": 100},
    {"field": "meta.number", "operator": "==", "value": None},
    {"field": "meta.number", "operator": "!=", "value": 100},
    {"field": "meta.number", "operator": "!=", "value": None},
    {"field": "meta.number", "operator": ">", "value": 0},
    {"field": "meta.number", "operator": "<=", "value": -2},
    {"field": "meta.number", "operator": "in", "value": [2, 100, 7]},
    {"field": "meta.number", "operator": "not in", "value": [2, 100]},
    {"field": "meta.name", "operator": "in", "value": ["name_0", "name_1"]},
    {"field": "meta.date", "operator": ">", "value": "1972-12-11T19:54:58"},
    {"field": "meta.date", "operator": "<=", "value": "1989-11-09T17:53:00"},
    {"field": "meta.when", "operator": "==", "value": "2024-01-01T10:00:00Z"},
    {"field": "meta.when", "operator": ">=", "value": "2024-01-01T10:00:00"},
    {"field": "meta.when", "operator": "<", "value": "2025-01-01T00:00:00+02:00"},
    {"field": "meta.a.b", "operator": "==", "value": 3},
    {"field": "meta.a.b", "operator": "!=", "value": 3},
    {"field": "id", "operator": "in", "value": ["nested", "nometa"]},
    {"field": "content", "operator": "==", "value": "no meta"},
    {"field": "number", "operator": ">", "value": 1},  # legacy field without "meta." reads meta
    {"field": "meta.chapter", "operator": "==", "value": "intro"},
    {"field": "meta.chapter", "operator": "!=", "value": "intro"},
    {"operator": "NOT", "conditions": [{"field": "meta.number", "operator": "==", "value": 100}]},
    {
        "operator": "NOT",
        "conditions": [
            {"field": "meta.number", "operator": ">", "value": 0},
            {"field": "meta.chapter", "operator": "==", "value": "intro"},
        ],
    },
    {
        "operator": "OR",
        "conditions": [
            {"field": "meta.number", "operator": "<", "value": 0},
            {
                "operator": "AND",
                "conditions": [
                    {"field": "meta.chapter", "operator": "==", "value": "abstract"},
                    {"field": "meta.page", "operator": "in", "value": ["90", "123"]},
                ],
            },
        ],
    },
]

ERRORS: list[Any] = [
    {"field": "meta.number", "operator": ">", "value": "1"},  # not a date
    {"field": "meta.number", "operator": ">", "value": [1]},
    {"field": "meta.number", "operator": "in", "value": (1, 2)},
    {"field": "meta.number", "operator": "not in", "value": "abc"},
    {"field": "meta.number", "operator": "=~", "value": 1},
    {"field": "meta.number", "value": 1, "operator": None},
    {"operator": "AND"},
    {"operator": "XOR", "conditions": []},
    {"conditions": [{"field": "meta.number", "operator": "==", "value": 1}]},
    {"field": "meta.number", "operator": "=="},
]


@pytest.fixture
def docs() -> list[Document]:
    return create_filterable_docs() + EXTRA


@pytest.fixture
def stores(docs: list[Document]) -> Iterator[tuple[ElasticMemoryDocumentStore, InMemoryDocumentStore]]:
    ours = ElasticMemoryDocumentStore(path=":memory:")
    reference = InMemoryDocumentStore(shared=False)
    assert ours.write_documents(docs) == reference.write_documents(docs) == len(docs)
    yield ours, reference
    ours.close()
    reference.shutdown()


def _outcome(store: Any, filters: Any) -> Any:
    try:
        return [d.id for d in store.filter_documents(filters)]
    except (FilterError, ValueError) as e:
        return type(e)


@pytest.mark.parametrize("filters", CASES + ERRORS)
def test_same_result_as_reference(stores: tuple[Any, Any], filters: dict[str, Any]) -> None:
    ours, reference = stores
    expected = _outcome(reference, filters)
    assert _outcome(ours, filters) == expected
    if isinstance(expected, list):
        assert ours.count_documents_by_filter(filters) == len(expected)


@pytest.mark.parametrize("filters", CASES + ERRORS)
async def test_same_result_as_reference_async(stores: tuple[Any, Any], filters: dict[str, Any]) -> None:
    ours, reference = stores
    try:
        got: Any = [d.id for d in await ours.filter_documents_async(filters)]
    except (FilterError, ValueError) as e:
        got = type(e)
    assert got == _outcome(reference, filters)


@pytest.mark.parametrize("filters", ERRORS)
def test_malformed_filters_raise_filter_error_once_evaluated(stores: tuple[Any, Any], filters: Any) -> None:
    ours, _ = stores
    legacy = "operator" not in filters and "conditions" not in filters
    expected = ValueError if legacy else FilterError
    with pytest.raises(expected):
        ours.filter_documents(filters)


def test_malformed_filters_on_an_empty_store_are_not_evaluated() -> None:
    """The reference raises FilterError only when it evaluates a document: an empty store returns []."""
    reference = InMemoryDocumentStore(shared=False)
    store = ElasticMemoryDocumentStore(path=":memory:")
    try:
        bad = {"field": "meta.number", "operator": "in", "value": (1, 2)}
        assert store.filter_documents(bad) == reference.filter_documents(bad) == []
        with pytest.raises(ValueError, match="Invalid filter syntax"):
            store.filter_documents({"number": 1})  # the legacy syntax is refused up front, like the reference
    finally:
        store.close()


def test_select_and_validate() -> None:
    docs = [Document(id="a", content="x", meta={"n": 1}), Document(id="b", content="y")]
    assert select(docs, None) == docs
    assert select(docs, {}) == docs
    assert [d.id for d in select(docs, {"field": "meta.n", "operator": "!=", "value": 1})] == ["b"]
    validate_filters(None)
    validate_filters({"operator": "AND", "conditions": []})
    with pytest.raises(ValueError, match="Invalid filter syntax"):
        validate_filters({"n": 1})


def test_strict_datetime_comparison_is_passed_on() -> None:
    store = ElasticMemoryDocumentStore(path=":memory:", strict_datetime_comparison=True)
    reference = InMemoryDocumentStore(shared=False, strict_datetime_comparison=True)
    try:
        store.write_documents(EXTRA[:3])
        reference.write_documents(EXTRA[:3])
        f = {"field": "meta.when", "operator": ">=", "value": "2024-01-01T10:00:00+00:00"}
        assert _outcome(store, f) == _outcome(reference, f)
    finally:
        store.close()
