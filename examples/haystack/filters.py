"""Haystack filters on an ElasticMemoryDocumentStore: compiled to SQL, checked against InMemoryDocumentStore.

Run from the repository root: ``python examples/haystack/filters.py``

The same documents go into both stores; each filter must select the same documents in both.
Numbers, strings, ``None``, ``in``/``not in`` and ``AND``/``OR``/``NOT`` run in SQL; ISO-date
comparisons are narrowed in SQL and checked in Python. The script exits non-zero on a mismatch.
"""

from __future__ import annotations

import sys
from typing import Any

from haystack import Document
from haystack.document_stores.in_memory import InMemoryDocumentStore

from haystack_integrations.document_stores.elastic_memory import ElasticMemoryDocumentStore
from haystack_integrations.document_stores.elastic_memory.filters import compile_filters

DOCUMENTS = [
    Document(id="a", content="Quarterly report", meta={"team": "finance", "pages": 12, "due": "2025-03-31"}),
    Document(id="b", content="Standup notes", meta={"team": "core", "pages": 1, "due": "2025-01-10T09:00:00"}),
    Document(id="c", content="Design review", meta={"team": "core", "pages": 7}),
    Document(id="d", content="Release checklist", meta={"team": "web", "pages": 3, "due": "2024-12-20"}),
]
FILTERS: list[dict[str, Any]] = [
    {"field": "meta.team", "operator": "==", "value": "core"},
    {"field": "meta.pages", "operator": ">", "value": 2},
    {"field": "meta.team", "operator": "not in", "value": ["core", "web"]},
    {"field": "meta.due", "operator": "==", "value": None},
    {
        "operator": "OR",
        "conditions": [
            {"field": "meta.pages", "operator": "<=", "value": 1},
            {"operator": "NOT", "conditions": [{"field": "meta.team", "operator": "!=", "value": "web"}]},
        ],
    },
    {"field": "meta.due", "operator": ">=", "value": "2025-01-01"},
]


def main() -> int:
    """Run every filter on both stores; 0 when they agree."""
    ours = ElasticMemoryDocumentStore(path=":memory:")
    reference = InMemoryDocumentStore()
    ours.write_documents(DOCUMENTS)
    reference.write_documents(DOCUMENTS)
    ok = True
    for f in FILTERS:
        got = [d.id for d in ours.filter_documents(f)]
        expected = [d.id for d in reference.filter_documents(f)]
        where = "SQL" if compile_filters(f).exact else "SQL + Python check"
        print(f"{got!s:<20} {where:<19} {f}")
        ok = ok and got == expected
    ours.close()
    if not ok:
        print("a filter selected other documents than InMemoryDocumentStore", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
