"""The knowledge graph, in one package; this ``__init__`` holds only the pure helpers.

``names`` (entity names, n-grams), ``nudge`` (the recall nudge) and ``clusters`` are pure;
``writes`` (what an extraction adds), ``recall`` (graph-aware recall) and ``api`` (the
``mem.graph`` views) use the graph's tables in ``storage/graph_tables.py``, which imports
``names``. Import those three by their full path (``elastic_memory.facade.graph``): importing
them here would make ``storage`` and ``graph`` import each other.
"""

from .names import canonical, ngrams
from .nudge import GraphMatch, nudge_scores

__all__ = ["GraphMatch", "canonical", "ngrams", "nudge_scores"]
