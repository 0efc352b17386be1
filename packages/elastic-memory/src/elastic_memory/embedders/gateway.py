"""Which embedder a database may use (seed 000 "Embedding gateway"): pure resolution.

- a new database (no pin): the first healthy embedder in priority order;
- a pinned database: the embedder of its exact model if healthy, else a healthy one of
  the same family (interchangeable vectors), else none;
- none means keyword-only recall. A model of another family is never substituted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from .base import Embedder

__all__ = ["Pin", "order", "resolve"]


class Pin(Protocol):
    """What the gateway reads of a database's pin."""

    @property
    def model_id(self) -> str:
        """The pinned model."""

    @property
    def dimension(self) -> int:
        """Its vector width."""

    @property
    def family(self) -> str:
        """Its family."""


def order(pin: Pin | None, candidates: Sequence[Embedder]) -> list[Embedder]:
    """The embedders the gateway may use for a database pinned to ``pin``, in the order it tries them.

    >>> from elastic_memory.testing import FakeEmbedder
    >>> a, b = FakeEmbedder(model_id="a", family="f"), FakeEmbedder(model_id="b", family="f")
    >>> [e.model_id for e in order(None, [a, b])], [e.model_id for e in order(b, [a, b])]
    (['a', 'b'], ['b', 'a'])
    >>> order(FakeEmbedder(model_id="c", family="other"), [a, b])
    []
    """
    if pin is None:
        return list(candidates)
    fits = [e for e in candidates if e.dimension == pin.dimension]
    exact = [e for e in fits if e.model_id == pin.model_id]
    same_family = [e for e in fits if e.model_id != pin.model_id and e.family == pin.family]
    return [*exact, *same_family]


def resolve(pin: Pin | None, candidates: Sequence[Embedder], healthy: Callable[[Embedder], bool]) -> Embedder | None:
    """The embedder to use for a database pinned to ``pin`` (or unpinned), or ``None``.

    >>> from elastic_memory.testing import FakeEmbedder
    >>> a, b = FakeEmbedder(model_id="a", family="f"), FakeEmbedder(model_id="b", family="f")
    >>> resolve(None, [a, b], lambda e: True) is a
    True
    >>> resolve(b, [a, b], lambda e: True) is b
    True
    >>> resolve(b, [a], lambda e: True) is a
    True
    >>> resolve(FakeEmbedder(model_id="c", family="other"), [a, b], lambda e: True) is None
    True
    """
    return next((e for e in order(pin, candidates) if healthy(e)), None)
