"""The PostgreSQL engine: the store, its queries, schema and migrations, text search, adapters."""
