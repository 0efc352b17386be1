"""Haystack filters over the store's documents: validated and evaluated exactly as Haystack's reference does.

Haystack's filter DSL (``{"field": ..., "operator": ..., "value": ...}`` and
``{"operator": "AND" | "OR" | "NOT", "conditions": [...]}``) has semantics the core's filter
language cannot express exactly in every case (ISO-date strings compared as datetimes, naive
and aware datetimes reconciled, ``==``/``!=`` against ``None`` matching missing fields, the
``FilterError`` raised only when a malformed condition is actually evaluated against a document).
So the store narrows candidates with the core (its collection: one agent id, its tag) and then
evaluates the filter on each candidate with :func:`haystack.utils.filters.document_matches_filter`,
the very function ``InMemoryDocumentStore`` uses: same results, same errors, same places.

>>> from haystack import Document
>>> docs = [Document(id="a", content="x", meta={"n": 1}), Document(id="b", content="y", meta={"n": 5})]
>>> [d.id for d in select(docs, {"field": "meta.n", "operator": ">", "value": 2})]
['b']
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from haystack import Document
from haystack.errors import FilterError
from haystack.utils.filters import document_matches_filter

__all__ = ["select", "validate_filters"]


def validate_filters(filters: dict[str, Any] | None) -> None:
    """Refuse the legacy filter syntax (no ``operator``/``conditions`` at the top), as the reference does.

    Raises:
        ValueError: ``filters`` is a non-empty dict in the legacy syntax.
        haystack.errors.FilterError: ``filters`` is not a dict.
    """
    if filters is not None and not isinstance(filters, Mapping):
        example = "{'field': 'meta.lang', 'operator': '==', 'value': 'en'}"
        msg = f"filters must be a dict such as {example}, got {type(filters).__name__}"
        raise FilterError(msg)
    if filters and "operator" not in filters and "conditions" not in filters:
        msg = "Invalid filter syntax. See https://docs.haystack.deepset.ai/docs/metadata-filtering for details."
        raise ValueError(msg)


def select(
    documents: Iterable[Document], filters: dict[str, Any] | None, *, strict_datetime_comparison: bool = False
) -> list[Document]:
    """The documents among ``documents`` that match ``filters`` (all of them when ``filters`` is empty).

    Raises:
        ValueError: legacy filter syntax.
        haystack.errors.FilterError: a malformed condition, met while evaluating a document.
    """
    if not filters:
        return list(documents)
    validate_filters(filters)
    return [
        d
        for d in documents
        if document_matches_filter(filters=filters, document=d, strict_datetime_comparison=strict_datetime_comparison)
    ]
