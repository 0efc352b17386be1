"""Retrieval: fusion of the keyword and vector legs, and the steps after it (the graph nudge)."""
