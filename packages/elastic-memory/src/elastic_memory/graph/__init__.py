"""The knowledge graph, in one package; this ``__init__`` holds only the pure helpers.

``names`` (entity names, n-grams), ``nudge`` (the recall nudge) and ``clusters`` are pure;
``tables`` (the graph's tables, over any storage backend) and ``queries`` (the walk's SQL per
engine) sit on the storage protocol; ``writes`` (what an extraction adds), ``recall``
(graph-aware recall) and ``links`` use the tables. Import those by their full path: this
``__init__`` stays importable from anywhere below the storage layer.
"""

from .names import canonical, ngrams
from .nudge import GraphMatch, nudge_scores

__all__ = ["GraphMatch", "canonical", "ngrams", "nudge_scores"]
