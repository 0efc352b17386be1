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

__all__ = ["Pin", "resolve"]


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
    if pin is None:
        return next((e for e in candidates if healthy(e)), None)
    fits = [e for e in candidates if e.dimension == pin.dimension]
    exact = [e for e in fits if e.model_id == pin.model_id]
    same_family = [e for e in fits if e.model_id != pin.model_id and e.family == pin.family]
    return next((e for e in [*exact, *same_family] if healthy(e)), None)
