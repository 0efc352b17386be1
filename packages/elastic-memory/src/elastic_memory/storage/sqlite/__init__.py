"""The SQLite engine: the store, its driver and migrations, FTS5 and BM25.

Also the keyword partitions, the frequent-term tier and the integrity check.
"""
