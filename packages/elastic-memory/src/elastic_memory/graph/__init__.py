"""The knowledge graph: entity names, the recall nudge (pure); storage lives in ``storage/graph_tables.py``."""

from .names import canonical, ngrams
from .nudge import GraphMatch, nudge_scores

__all__ = ["GraphMatch", "canonical", "ngrams", "nudge_scores"]
