"""Arguments of the wrong type get a library or Haystack error, never an AttributeError or TypeError.

Found by the fuzz suite (issue 21, finding E): ``count_documents_by_filter(b"...")`` raised
``TypeError``, ``get_metadata_field_min_max(None)`` an ``AttributeError``. Each test uses a
fresh SQLite file.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from haystack import Document
from haystack.errors import FilterError

from elastic_memory import UsageError
from haystack_integrations.document_stores.elastic_memory import ElasticMemoryDocumentStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ElasticMemoryDocumentStore]:
    s = ElasticMemoryDocumentStore(path=str(tmp_path / "h.db"))
    s.write_documents([Document(id="kept", content="kept", meta={"n": 1})])
    yield s
    s.close()


@pytest.mark.parametrize("filters", [b"bytes", "text", 3, ["a"]], ids=["bytes", "str", "int", "list"])
def test_filters_that_are_not_a_dict_are_a_filter_error(store: ElasticMemoryDocumentStore, filters: Any) -> None:
    """If this fails, check validate_filters in the adapter's filters.py."""
    with pytest.raises(FilterError, match="filters must be a dict"):
        store.count_documents_by_filter(filters)
    with pytest.raises(FilterError, match="filters must be a dict"):
        store.delete_by_filter(filters)
    assert store.count_documents() == 1


@pytest.mark.parametrize("field", [None, 3], ids=["none", "int"])
def test_a_metadata_field_that_is_not_text_is_a_usage_error(store: ElasticMemoryDocumentStore, field: Any) -> None:
    with pytest.raises(UsageError, match="metadata_field must be a string"):
        store.get_metadata_field_min_max(field)
    with pytest.raises(UsageError, match="metadata_field must be a string"):
        store.get_metadata_field_unique_values(field)


@pytest.mark.parametrize("page", [{"from_": "0"}, {"size": -1}, {"from_": True}], ids=["str", "negative", "bool"])
def test_a_page_that_is_not_a_count_is_a_value_error(store: ElasticMemoryDocumentStore, page: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="non-negative integer"):
        store.get_metadata_field_unique_values("meta.n", **page)


def test_ids_that_are_not_strings_are_ignored(store: ElasticMemoryDocumentStore) -> None:
    """As the reference store ignores unknown ids: a list inside the list deletes nothing and raises nothing."""
    store.delete_documents([[], None, "missing"])  # type: ignore[list-item]
    assert store.count_documents() == 1
