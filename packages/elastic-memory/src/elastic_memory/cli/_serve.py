"""The store a long-running command serves (``mcp``, ``ui``): one database file, or an agent's federation."""

from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from ..facade.memory import Memory
from ..loop import LoopConfig

__all__ = ["open_served"]


def _require_federation(home: Path, agent: str, pools: list[str]) -> None:
    """Refuse an agent or a pool that has no file under ``home``: like ``--db``, a typo must not create a store.

    A ``config.json`` in ``home`` may put tiers on a server; then the federation itself decides.
    """
    if (home / "config.json").exists():
        return
    private = home / "agents" / agent / "memory.db"
    if not private.is_file():
        msg = f"there is no agent {agent!r} under {home} (no {private}); check --home and --agent"
        raise UsageError(msg)
    for name in pools:
        if not (home / "pools" / name / "memory.db").is_file():
            msg = f"there is no pool {name!r} under {home} (no {home / 'pools' / name / 'memory.db'}); check --pool"
            raise UsageError(msg)


def open_served(
    db: Path,
    *,
    embedder: str | None,
    agent: str,
    home: Path | None,
    pools: list[str],
    create: bool,
    loop: LoopConfig | None = None,
    user: str | None = None,
) -> Memory:
    """``--db`` opened for ``agent`` (and its ``user``), or ``agent``'s federation under ``home`` with its ``pools``.

    ``create``: a missing file (or federation member) is made; else it is a usage error, so a typo
    never creates a store. ``loop``: the stores' loop configuration (the library's default if None).

    Raises:
        UsageError: ``pools`` without ``home``, ``db`` a folder, or (not ``create``) nothing there.
    """
    if pools and home is None:
        msg = "--pool needs --home DIR: pools are files of a federation under that folder"
        raise UsageError(msg)
    if home is not None:
        if not create:
            _require_federation(home, agent, pools)
        return Memory.for_agent(agent, user_id=user, home=home, pools=list(pools), embedder=embedder, loop=loop)
    if db.is_dir():
        msg = f"--db {db} is a folder; pass the path of a database file, such as {db / 'memory.db'}"
        raise UsageError(msg)
    if not create and str(db) != ":memory:" and not db.exists():
        msg = f"there is no store at {db}; pass --db PATH, or make one with `elastic-memory demo --db {db}`"
        raise UsageError(msg)
    return Memory.open(db, embedder=embedder, agent_id=agent, user_id=user, loop=loop)
