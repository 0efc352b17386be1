"""v9: an index of the embedding backlog: live memories that have no vector yet.

The write path of the memory loop stores memories without vectors and the worker embeds
them afterwards, in every agent's rows of the file; a memory written with ``embedder=None``
waits for a store opened with a model. A partial index holds exactly those rows, so the
worker's next batch (oldest first) and the count of the backlog that ``stats()`` and
``explain()`` report cost reads of the backlog alone, never a scan of the table: a few
microseconds at 100k memories with nothing pending, against 14 ms for a count of the live rows.
It carries ``expires_at`` so that the count of unexpired rows reads the index only.

Shipped migrations are never edited: add a new ``vNNN_*.py`` module instead.
"""

VERSION = 9
STATEMENTS = (
    "CREATE INDEX memories_unembedded ON memories (seq, expires_at) "
    "WHERE has_vector = 0 AND deleted_at IS NULL AND archived = 0",
)
