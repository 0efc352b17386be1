"""v7: quarantine review: each quarantined candidate keeps its source turn and what releasing it writes.

``turn_seq`` is the turn (``turns.seq``) the candidate was extracted from, ``NULL`` when it
came from no single turn. ``payload`` is the candidate as JSON (a fact's key, value,
category, origin and confidence; a memory's content, type, kind, importance and
confidence): releasing the item writes exactly what the guard stopped. Items quarantined
before v7 have neither and can only be discarded.

Shipped migrations are never edited: add a new ``vNNN_*.py`` module instead.
"""

VERSION = 7
STATEMENTS = (
    "ALTER TABLE quarantine ADD COLUMN turn_seq INTEGER",
    "ALTER TABLE quarantine ADD COLUMN payload TEXT",
)
