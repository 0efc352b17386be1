"""v6: BM25 statistics per agent: a registry of agents with their own FTS5 table.

FTS5's ``bm25`` takes its document count, average length and term document frequencies
from the whole table, so before v6 one agent's writes moved another agent's keyword scores
and order. A file that has held two or more agents now keeps, beside ``memories_fts`` (every
row, for queries not pinned to one agent), one FTS5 table per agent, ``memories_fts_a<id>``
with ``id`` from ``keyword_partitions``: same columns and tokenizer, the agent's rows only.
A query pinned to one agent searches that table, so its scores are FTS5's own bm25 over that
agent's rows.

A file that has only ever held one agent has an empty registry and no extra table (its
``memories_fts`` is that agent's table): the common case keeps its write and search cost.
The writer (``SQLiteStore`` with ``KeywordPartitions``) fills and empties the agents' tables
in the write's own transaction; they store their own copy of the text, so removing a row
by seq never depends on what ``memories`` holds at that moment.

The statements register the agents of a file that already holds several; the store then
creates and fills their tables in the same transaction (``Migration.fill_partitions``).

Shipped migrations are never edited: add a new ``vNNN_*.py`` module instead.
"""

VERSION = 6
STATEMENTS = (
    "CREATE TABLE keyword_partitions (id INTEGER PRIMARY KEY, agent_id TEXT NOT NULL UNIQUE)",
    """
    INSERT INTO keyword_partitions (agent_id)
    SELECT DISTINCT agent_id FROM memories
    WHERE (SELECT min(agent_id) FROM memories) <> (SELECT max(agent_id) FROM memories)
    ORDER BY agent_id
    """,
)
