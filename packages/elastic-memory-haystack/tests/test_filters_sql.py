"""Filters compiled to SQL: the same documents as InMemoryDocumentStore, and SQL alone where it is exact."""

from __future__ import annotations

from typing import Any

import pytest
from haystack import Document
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack.errors import FilterError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from haystack_integrations.document_stores.elastic_memory import ElasticMemoryDocumentStore
from haystack_integrations.document_stores.elastic_memory import document_store as ds_module
from haystack_integrations.document_stores.elastic_memory.filters import compile_filters

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))

NUMBERS = st.sampled_from([0, 1, -1, 2, 2.5, 1.0, 0.0, 100, -10])
SCALARS = st.one_of(NUMBERS, st.booleans(), st.none(), st.sampled_from(["a", "b", "", "A", "1", "name_0"]))
DATES = st.sampled_from(
    ["2024-01-01", "2024-01-01T00:00:00", "2024-01-01T10:00:00+00:00", "2023-12-31T23:00:00-02:00", "1999-05-05"]
)
VALUES = st.one_of(SCALARS, DATES, st.lists(SCALARS, max_size=3), st.fixed_dictionaries({"k": SCALARS}))
FIELDS = ["meta.n", "meta.s", "meta.d", "meta.x", "meta.x.k", "meta.missing", "content", "id", "n"]


@st.composite
def documents(draw: Any) -> list[Document]:
    docs = []
    for i in range(draw(st.integers(3, 10))):
        meta: dict[str, Any] = {}
        for key, values in (("n", st.one_of(NUMBERS, st.booleans(), st.none())), ("s", SCALARS), ("d", DATES)):
            if draw(st.booleans()):
                meta[key] = draw(values)
        if draw(st.booleans()):
            meta["x"] = draw(VALUES)
        docs.append(Document(id=f"d{i}", content=draw(st.sampled_from(["a", "b", "text", None])), meta=meta))
    return docs


def comparison(draw: Any) -> dict[str, Any]:
    field = draw(st.sampled_from(FIELDS))
    op = draw(st.sampled_from(["==", "!=", "in", "not in", ">", ">=", "<", "<="]))
    if op in ("in", "not in"):
        value: Any = draw(st.lists(st.one_of(SCALARS, DATES), max_size=4))
    elif op in ("==", "!="):
        value = draw(VALUES)
    elif field in ("meta.n", "n"):
        value = draw(st.one_of(NUMBERS, st.booleans(), st.none()))
    else:
        field = "meta.d"
        value = draw(st.one_of(DATES, st.none()))
    return {"field": field, "operator": op, "value": value}


@st.composite
def filters(draw: Any, depth: int = 0) -> dict[str, Any]:
    if depth >= 2 or draw(st.booleans()):
        return comparison(draw)
    op = draw(st.sampled_from(["AND", "OR", "NOT"]))
    return {"operator": op, "conditions": [draw(filters(depth + 1)) for _ in range(draw(st.integers(1, 3)))]}


def _outcome(store: Any, f: Any) -> Any:
    try:
        return [d.id for d in store.filter_documents(f)]
    except FilterError as e:
        return type(e)


@SETTINGS
@given(docs=documents(), f=filters())
def test_compiled_filters_select_what_the_reference_selects(docs: list[Document], f: dict[str, Any]) -> None:
    ours = ElasticMemoryDocumentStore(path=":memory:")
    reference = InMemoryDocumentStore(shared=False)
    try:
        ours.write_documents(docs)
        reference.write_documents(docs)
        assert _outcome(ours, f) == _outcome(reference, f)
    finally:
        ours.close()


EXACT = [
    {"field": "meta.n", "operator": "==", "value": 1},
    {"field": "meta.n", "operator": "!=", "value": None},
    {"field": "meta.s", "operator": "in", "value": ["a", "b", 3, True, None]},
    {"field": "meta.s", "operator": "not in", "value": ["a"]},
    {"field": "meta.n", "operator": ">", "value": 0},
    {"field": "meta.n", "operator": "<=", "value": 2.5},
    {"field": "meta.a.b", "operator": ">=", "value": 1},
    {"field": "content", "operator": "==", "value": "x"},
    {"field": "id", "operator": "in", "value": ["a"]},
    {
        "operator": "NOT",
        "conditions": [
            {"operator": "OR", "conditions": [{"field": "meta.n", "operator": "<", "value": 1}]},
            {"field": "meta.s", "operator": "==", "value": "a"},
        ],
    },
]
PYTHON = [
    {"field": "meta.d", "operator": ">", "value": "2024-01-01"},
    {"field": "meta.d", "operator": "==", "value": "2024-01-01"},
    {"field": "meta.x", "operator": "==", "value": [1, 2]},
    {"field": "embedding", "operator": "==", "value": None},
    {"field": "meta.n", "operator": "in", "value": "not a list"},
]


@pytest.mark.parametrize("f", EXACT)
def test_exact_filters_run_in_sql_alone(f: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    assert compile_filters(f).exact
    store = ElasticMemoryDocumentStore(path=":memory:")
    try:
        store.write_documents([Document(id="a", content="x", meta={"n": 1, "s": "a", "a": {"b": 2}})])
        monkeypatch.setattr(ds_module, "select", None)  # Python filtering would fail
        store.filter_documents(f)
        store.count_documents_by_filter(f)
    finally:
        store.close()


@pytest.mark.parametrize("f", PYTHON)
def test_what_sql_cannot_decide_is_checked_in_python(f: dict[str, Any]) -> None:
    assert not compile_filters(f).exact


def test_a_filter_nothing_can_match_runs_no_query() -> None:
    assert compile_filters({"field": "meta.n", "operator": ">", "value": None}).never


def test_retrieval_with_a_python_checked_filter_fills_top_k() -> None:
    store = ElasticMemoryDocumentStore(path=":memory:")
    try:
        docs = [
            Document(id=f"d{i}", content="apple " * (40 - i), meta={"d": f"20{10 + i % 15}-01-01"}) for i in range(40)
        ]
        store.write_documents(docs)
        f = {"field": "meta.d", "operator": ">=", "value": "2023-01-01"}
        ranked = [d.id for d in store.bm25_retrieval("apple", top_k=40)]
        allowed = {d.id for d in store.filter_documents(f)}
        got = [d.id for d in store.bm25_retrieval("apple", filters=f, top_k=3)]
        assert got == [i for i in ranked if i in allowed][:3]
    finally:
        store.close()


def test_filters_on_postgres_select_what_the_reference_selects(location: str) -> None:
    ours = ElasticMemoryDocumentStore(path=location)
    reference = InMemoryDocumentStore(shared=False)
    docs = [
        Document(id="a", content="x", meta={"n": 1, "s": "a", "l": ["a", 1]}),
        Document(id="b", content="y", meta={"n": True, "s": "b"}),
        Document(id="c", content="z", meta={"n": 2.5, "s": None, "l": "a"}),
        Document(id="d", content=None, meta={}),
    ]
    try:
        ours.write_documents(docs)
        reference.write_documents(docs)
        for f in [
            *EXACT,
            {"field": "meta.l", "operator": "==", "value": "a"},
            {"field": "meta.n", "operator": "==", "value": 1},
        ]:
            assert _outcome(ours, f) == _outcome(reference, f), f
    finally:
        ours.close()
