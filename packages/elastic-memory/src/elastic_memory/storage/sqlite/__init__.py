"""The SQLite engine: the store, its driver and migrations, FTS5 and BM25.

Also the store's parts: opening and the write path, keyword search, snapshots and stats,
the keyword partitions, the frequent-term tier and the integrity check.
"""
