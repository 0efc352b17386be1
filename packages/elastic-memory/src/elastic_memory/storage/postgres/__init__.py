"""The PostgreSQL engine: the store, its queries, schema and migrations, text search, adapters.

Also the store's parts: its URL and the preparation at open, the write path and snapshots.
"""
