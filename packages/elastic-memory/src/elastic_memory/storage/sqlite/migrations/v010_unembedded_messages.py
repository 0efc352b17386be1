"""v10: chat messages (kind ``message``) leave the embedding backlog.

An adapter's chat history stores each message as a memory of kind ``message``, never
embedded (recall leaves them out unless asked). The backlog's partial index (v9) would
hold every one of them forever and the worker would embed them after all: it is made
again without them.

Shipped migrations are never edited: add a new ``vNNN_*.py`` module instead.
"""

VERSION = 10
STATEMENTS = (
    "DROP INDEX IF EXISTS memories_unembedded",
    "CREATE INDEX memories_unembedded ON memories (seq, expires_at) "
    "WHERE has_vector = 0 AND deleted_at IS NULL AND archived = 0 AND kind <> 'message'",
)
