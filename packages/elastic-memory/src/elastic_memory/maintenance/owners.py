"""Which agents hold data in a store: what a command says when ``--agent`` (and ``--user``) finds nothing.

Facts, lessons, the graph, the quarantine and turns belong to one agent (and user): a store
written by the demo (agent ``elastic-memory-demo``) or by ``--agent claude`` looks empty to
the default agent. When a command finds nothing for the agent it was given while other
agents hold that kind of data, :func:`hint_others` names them on stderr.
"""

from __future__ import annotations

from pathlib import Path

from ..storage.sqlite.driver import driver
from ..users import owner_key, split_owner

__all__ = ["QUERIES", "hint_others", "holders", "owner_label"]

#: What a command reads -> the owners (agent, or agent and user) that hold any of it.
QUERIES = {
    "facts": "SELECT DISTINCT agent_id FROM facts",
    "lessons": "SELECT DISTINCT agent_id FROM memories WHERE kind = 'lesson'",
    "entities": "SELECT DISTINCT agent_id FROM entities",
    "quarantined items": "SELECT DISTINCT agent_id FROM quarantine",
    "memories": "SELECT DISTINCT agent_id FROM memories",
    "data": " UNION ".join(
        f"SELECT agent_id FROM {table}" for table in ("memories", "facts", "turns", "quarantine", "entities")
    ),
}
#: How many other owners a hint names.
SHOWN = 10


def holders(db: Path, what: str) -> list[str]:
    """The owner keys holding ``what`` (a key of :data:`QUERIES`) in the store file ``db``, sorted.

    Read on a read-only connection of its own; a file that cannot be read holds nobody here.
    """
    if str(db) == ":memory:" or not db.is_file():
        return []
    drv = driver()
    try:
        conn = drv.connect(db.absolute().as_uri() + "?mode=ro", timeout=5.0, uri=True)
    except drv.module.Error:
        return []
    try:
        return sorted(str(row[0]) for row in conn.execute(QUERIES[what]).fetchall())
    except drv.module.Error:  # a store from before that table existed
        return []
    finally:
        conn.close()


def _label(owner: str) -> str:
    agent, user = split_owner(owner)
    return agent if user is None else f"{agent} (user {user})"


def hint_others(db: Path, what: str, agent: str, user: str | None) -> str | None:
    """Which other agents hold ``what`` when ``agent``/``user`` holds none, as a hint; else ``None``.

    >>> hint_others(Path(":memory:"), "facts", "default", None) is None
    True
    """
    owners = holders(db, what)
    if owner_key(agent, user) in owners or not owners:
        return None
    names = ", ".join(_label(o) for o in owners[:SHOWN])
    if len(owners) > SHOWN:
        names += f" and {len(owners) - SHOWN} more"
    flags = "--agent NAME" + (" (and --user ID)" if any(split_owner(o)[1] for o in owners) else "")
    return f"this store holds {what} of: {names}; pass {flags}"


def owner_label(agent: str, user: str | None) -> str:
    """``agent 'NAME'``, with the user when there is one."""
    return f"agent {agent!r}" + ("" if user is None else f" (user {user!r})")
