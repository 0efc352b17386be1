r"""Users within an agent: the owner key every row is stored under (pure).

One agent app serves many users. Each user's turns, sessions, memories, facts, profile,
quarantine and graph are a partition of their own inside the agent's store, exactly as
two agents sharing one file are: every read of the memory loop is pinned to one owner,
keyword statistics are kept per owner, and the vector index's partition key is the owner.

The owner key is the agent id alone for the agent's own rows (``user_id=None``: every store
written before users existed), and ``agent + "\x1f" + user`` for a user's. Neither id may
hold a control character (:func:`~elastic_memory._validate.check_id`), so the separator
never occurs inside one and a key splits back into exactly the pair it was made of.

>>> key = owner_key("support-bot", "alice")
>>> split_owner(key)
('support-bot', 'alice')
>>> owner_key("support-bot", None), split_owner("support-bot")
('support-bot', ('support-bot', None))
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from .errors import AccessDeniedError, UsageError
from .filters import Filters

__all__ = ["SEPARATOR", "check_user", "owner_key", "scoped_filters", "split_owner"]

#: Between the agent id and the user id in an owner key (the ASCII unit separator).
SEPARATOR = "\x1f"
#: A user id: what a memory id may be (no control characters, no lone surrogates).
_USER = re.compile(r"[^\x00-\x1f\ud800-\udfff]{1,256}")


def owner_key(agent_id: str, user_id: str | None) -> str:
    """The key ``agent_id``'s rows for ``user_id`` are stored under (the agent id when ``None``)."""
    return agent_id if user_id is None else f"{agent_id}{SEPARATOR}{user_id}"


def split_owner(key: str) -> tuple[str, str | None]:
    """``(agent_id, user_id)`` of an owner key; ``user_id`` is ``None`` for the agent's own rows."""
    agent, sep, user = key.partition(SEPARATOR)
    return (agent, user) if sep else (agent, None)


def check_user(user_id: Any) -> str | None:
    """``user_id`` if it is ``None`` or a valid id (non-empty, at most 256 characters, no control characters).

    >>> check_user("alice@example.com")
    'alice@example.com'
    >>> check_user("")
    Traceback (most recent call last):
    ...
    elastic_memory.UsageError: user_id must be None or a non-empty string of at most 256 characters ...
    """
    if user_id is None or (isinstance(user_id, str) and _USER.fullmatch(user_id)):
        return user_id
    msg = (
        "user_id must be None or a non-empty string of at most 256 characters without control characters, "
        f"got {user_id!r}; pass the id your app gives the user (an account id, an email)"
    )
    raise UsageError(msg)


def _names(value: Any) -> list[Any]:
    """A filter value of ids (one or a list) as a list; other shapes are left to the checks below."""
    return list(value) if isinstance(value, list | tuple) else [value]


def _is_owner(value: Any, owner: str) -> bool:
    """Whether a filter's ``agent_id`` value names exactly ``owner`` (as itself or a one-item list)."""
    names = _names(value)
    return len(names) == 1 and type(names[0]) is str and names[0] == owner


def scoped_filters(filters: Any, owner: str, *, pinned: bool) -> Any:
    r"""``filters`` with a ``user_id`` key folded into ``agent_id`` owner keys.

    ``{"user_id": "alice"}`` means the handle's agent's rows of user alice (``None`` in the list:
    the agent's own rows); with ``agent_id`` too, those agents' rows of those users. ``pinned``
    (a user's handle) keeps every read to ``owner``: no filter means ``owner``'s rows, and a
    filter naming anyone else is refused. A mapping is copied into a plain ``dict`` first, so
    what is checked here is what the filter parser reads.

    >>> scoped_filters({"user_id": "alice", "tags": ["x"]}, "bot", pinned=False)
    {'tags': ['x'], 'agent_id': ['bot\x1falice']}
    >>> scoped_filters(None, "bot\x1falice", pinned=True)
    {'agent_id': 'bot\x1falice'}
    """
    if filters is None:
        return {"agent_id": owner} if pinned else None
    if isinstance(filters, Filters):
        if not pinned:
            return filters
        if filters.agent_ids and filters.agent_ids != (owner,):
            raise _denied(owner)
        return dataclasses.replace(filters, agent_ids=(owner,))
    if not isinstance(filters, Mapping):
        if pinned:
            msg = f"filters must be a dict, got {type(filters).__name__}; e.g. filters={{'type': 'semantic'}}"
            raise UsageError(msg)
        return filters  # the filter parser says what is wrong with it
    given = dict(filters.items())
    if "user_id" not in given and not pinned:
        return given
    if "user_id" not in given and ("agent_id" not in given or _is_owner(given["agent_id"], owner)):
        return {**given, "agent_id": owner}  # pinned already (the memory loop's own reads), or no owner named
    out = {k: value for k, value in given.items() if k not in ("user_id", "agent_id")}
    agent, user = split_owner(owner)
    agents = _names(given["agent_id"]) if given.get("agent_id") is not None else [agent]
    users = _names(given["user_id"]) if "user_id" in given else [user]
    if not all(type(name) is str and SEPARATOR not in name for name in agents):
        if not pinned:
            return given  # the parser refuses what is not a string; the root handle reads every owner anyway
        msg = f"agent_id must be an agent id (a string without control characters), got {given['agent_id']!r}"
        raise UsageError(msg)
    keys = [owner_key(a, check_user(u)) for a in agents for u in users]
    if pinned and any(key != owner for key in keys):
        raise _denied(owner)
    out["agent_id"] = owner if pinned else keys
    return out


def _denied(owner: str) -> AccessDeniedError:
    agent, user = split_owner(owner)
    msg = (
        f"this handle serves user {user!r} of agent {agent!r} and reads only that user's memories; "
        "filter on user_id or agent_id from the agent's own handle (Memory.open without user_id)"
    )
    return AccessDeniedError(msg)
