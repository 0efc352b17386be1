"""What the retrievers share: the store check, filter policy and (de)serialisation."""

from __future__ import annotations

from typing import Any

from haystack import default_from_dict
from haystack.document_stores.types import FilterPolicy, apply_filter_policy

from haystack_integrations.document_stores.elastic_memory import ElasticMemoryDocumentStore

__all__ = ["check_store", "check_top_k", "filters_for", "policy_of", "rebuild", "run_top_k"]


def check_store(document_store: Any) -> ElasticMemoryDocumentStore:
    if not isinstance(document_store, ElasticMemoryDocumentStore):
        msg = f"document_store must be an ElasticMemoryDocumentStore, got {type(document_store).__name__}"
        raise ValueError(msg)
    return document_store


def check_top_k(top_k: Any) -> int:
    """A constructor's ``top_k``: a positive integer, as the InMemory retrievers require."""
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        msg = f"top_k must be a positive integer, got {top_k!r}"
        raise ValueError(msg)
    return top_k


def run_top_k(top_k: Any, default: int) -> int:
    """A run's ``top_k``: the constructor's when ``None``; 0 gives no documents, as in the InMemory retrievers."""
    if top_k is None:
        return default
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 0:
        msg = f"top_k must be a non-negative integer, got {top_k!r}"
        raise ValueError(msg)
    return top_k


def policy_of(filter_policy: str | FilterPolicy) -> FilterPolicy:
    return filter_policy if isinstance(filter_policy, FilterPolicy) else FilterPolicy.from_str(filter_policy)


def filters_for(
    policy: FilterPolicy, init_filters: dict[str, Any] | None, runtime: dict[str, Any] | None
) -> dict[str, Any] | None:
    """The filters one run applies: the init ones, replaced by (REPLACE) or merged with (MERGE) the run's."""
    return apply_filter_policy(policy, init_filters, runtime)


def rebuild(cls: type[Any], data: dict[str, Any]) -> Any:
    """A retriever from its ``to_dict``: the store rebuilt from its own dict, the policy from its value."""
    data = {**data, "init_parameters": dict(data.get("init_parameters", {}))}  # the caller's dict stays as it is
    params = data["init_parameters"]
    params["document_store"] = ElasticMemoryDocumentStore.from_dict(params["document_store"])
    if params.get("filter_policy") is not None:
        params["filter_policy"] = FilterPolicy.from_str(params["filter_policy"])
    return default_from_dict(cls, data)
