"""The federation's config files under its home folder. A missing file means safe defaults.

``<home>/config.json`` holds a ``"memory"`` block::

    {"memory": {"enabled": true, "private": "sqlite", "global": "sqlite", "pools": ["team-research"],
                "extraction": {"agent_confidence_cap": 0.7, "min_confidence": 0.3}}}

``"moderators": {"global": ["root"], "shared": {"team-research": ["ana"]}}`` names the agents
who may change other agents' memories in a tier; everyone else changes only what it wrote.
``"server": "postgresql://host/db"`` puts the pools and the global tier on that PostgreSQL
database (one schema each); the private tier stays a SQLite file. Put the password in
``PGPASSWORD`` or a ``.pgpass`` file, not in the URL.

``<home>/resilience.json`` holds per-tier budgets (any :class:`TierBudget` field)::

    {"private": {"read_timeout_ms": 250, "semantic_timeout_ms": 1500, "write_timeout_ms": 500},
     "global": {"read_timeout_ms": 400},
     "shared": {"team-research": {"read_timeout_ms": 400}},
     "default_shared": {"read_timeout_ms": 400, "write_timeout_ms": 600}}

Invalid config raises :class:`~elastic_memory.UsageError` naming the file and the field.

>>> MemorySettings.parse({"pools": ["team"]}, where="config.json: memory").pools
('team',)
>>> MemorySettings.parse({"pols": []}, where="config.json: memory")
Traceback (most recent call last):
...
elastic_memory.UsageError: config.json: memory.pols is not a setting; the settings are [...]
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..extraction import ExtractionPolicy
from ..storage.postgres.connect import is_url
from .resilience import TierBudget

__all__ = [
    "CONFIG_FILE",
    "RESILIENCE_FILE",
    "MemorySettings",
    "check_name",
    "load_budgets",
    "load_settings",
    "moderator_grants",
]

CONFIG_FILE = "config.json"
RESILIENCE_FILE = "resilience.json"
_BACKENDS = {"private": ("sqlite",), "global": ("sqlite", "none")}
_MISSING: Any = object()  # what _read_json gives for a file that does not exist


_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def check_name(value: Any, what: str) -> str:
    """``value`` if it can name a folder (letters, digits, ``.``, ``_``, ``-``; no leading dot)."""
    if not isinstance(value, str) or not _NAME.fullmatch(value) or value in (".", ".."):
        msg = (
            f"{what} must be 1-128 letters, digits, '.', '_' or '-' (not starting with a dot or dash) "
            f"to name its folder, got {value!r}"
        )
        raise UsageError(msg)
    return value


def _pool_name_ok(name: Any) -> bool:
    try:
        check_name(name, "a pool name")
    except UsageError:
        return False
    return True


@dataclass(frozen=True)
class MemorySettings:
    """The ``memory`` block: whether memory is on, the backends, the pools, extraction trust."""

    enabled: bool = True
    private: str = "sqlite"
    global_: str = "sqlite"
    pools: tuple[str, ...] = ()
    extraction: ExtractionPolicy = field(default_factory=ExtractionPolicy)
    #: A PostgreSQL URL for the shared tiers (pools and global), or ``None``: SQLite files.
    server: str | None = None
    #: Who may change other agents' memories, by tier name (``"global"``, ``"shared:<pool>"``).
    moderators: Mapping[str, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def parse(cls, block: Any, *, where: str) -> MemorySettings:
        """Settings from the decoded ``memory`` block; ``where`` prefixes error messages."""
        if not isinstance(block, Mapping):
            msg = f'{where} must be an object such as {{"enabled": true}}, got {type(block).__name__}'
            raise UsageError(msg)
        known = ("enabled", "extraction", "global", "moderators", "pools", "private", "server")
        for key in block:
            if key not in known:
                msg = f"{where}.{key} is not a setting; the settings are {list(known)}"
                raise UsageError(msg)
        enabled = block.get("enabled", True)
        if not isinstance(enabled, bool):
            msg = f"{where}.enabled must be true or false, got {enabled!r}"
            raise UsageError(msg)
        backends = {}
        for key, allowed in _BACKENDS.items():
            value = block.get(key, allowed[0])
            if value not in allowed:
                msg = f"{where}.{key} must be one of {list(allowed)}, got {value!r}"
                raise UsageError(msg)
            backends[key] = value
        pools = block.get("pools", [])
        if not isinstance(pools, list) or not all(_pool_name_ok(p) for p in pools):
            msg = (
                f"{where}.pools must be a list of pool names (1-128 letters, digits, '.', '_' or '-', naming "
                f'their folders) such as ["team-research"], got {pools!r}'
            )
            raise UsageError(msg)
        raw = block.get("extraction", {})
        if not isinstance(raw, Mapping):
            msg = f"{where}.extraction must be an object, got {type(raw).__name__}"
            raise UsageError(msg)
        names = {f.name for f in fields(ExtractionPolicy)}
        for key in raw:
            if key not in names:
                msg = f"{where}.extraction.{key} is not a setting; the settings are {sorted(names)}"
                raise UsageError(msg)
        values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()}
        try:
            policy = ExtractionPolicy(**values)
        except UsageError as e:
            msg = f"{where}.extraction: {e}"
            raise UsageError(msg) from e
        server = block.get("server")
        if server is not None and not (isinstance(server, str) and is_url(server)):
            # The value is not echoed: a libpq keyword string ("host=... password=...") would show its secret.
            msg = f"{where}.server must be a postgresql:// URL (password in PGPASSWORD or ~/.pgpass)"
            raise UsageError(msg)
        moderators = moderator_grants(block.get("moderators"), where=f"{where}.moderators")
        pool_names = tuple(dict.fromkeys(pools))
        return cls(enabled, backends["private"], backends["global"], pool_names, policy, server, moderators)


def moderator_grants(raw: Any, *, where: str) -> dict[str, frozenset[str]]:
    """``{"global": [ids], "shared": {pool: [ids]}}`` as tier name -> agent ids, every name checked.

    >>> moderator_grants({"global": ["root"], "shared": {"ops": ["ana"]}}, where="moderators") == {
    ...     "global": frozenset({"root"}), "shared:ops": frozenset({"ana"})}
    True
    """
    out: dict[str, frozenset[str]] = {}
    if raw is None:
        return out
    shape = '{"global": ["ana"], "shared": {"ops": ["bo"]}}'
    if not isinstance(raw, Mapping) or set(raw) - {"global", "shared"}:
        msg = f"{where} must look like {shape}, got {raw!r}"
        raise UsageError(msg)
    shared = raw.get("shared", {})
    if not isinstance(shared, Mapping):
        msg = f"{where}.shared must map pool names to agent ids, as in {shape}, got {shared!r}"
        raise UsageError(msg)
    grants = [("global", raw["global"])] if "global" in raw else []
    grants += [(f"shared:{check_name(pool, f'a pool name in {where}')}", agents) for pool, agents in shared.items()]
    for tier, agents in grants:
        if isinstance(agents, str) or not isinstance(agents, list | tuple | set | frozenset):
            msg = f'{where}: the moderators of {tier} must be a list of agent ids such as ["ana"], got {agents!r}'
            raise UsageError(msg)
        out[tier] = frozenset(check_name(a, f"{where}: a moderator of {tier}") for a in agents)
    return out


def _read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return _MISSING
    except OSError as e:
        msg = f"cannot read {path}: {e}; fix its permissions or remove it to use the defaults"
        raise UsageError(msg) from e
    try:
        return json.loads(text)
    except ValueError as e:
        msg = f"{path} is not valid JSON ({e}); fix it or remove it to use the defaults"
        raise UsageError(msg) from e


def load_settings(home: Path) -> MemorySettings:
    """The ``memory`` block of ``<home>/config.json``; defaults when the file or block is missing."""
    data = _read_json(home / CONFIG_FILE)
    if data is _MISSING:
        return MemorySettings()
    if not isinstance(data, Mapping):
        msg = f'{home / CONFIG_FILE} must hold a JSON object with a "memory" block'
        raise UsageError(msg)
    if "memory" not in data:
        return MemorySettings()
    return MemorySettings.parse(data["memory"], where=f"{home / CONFIG_FILE}: memory")


def _budget(raw: Any, where: str) -> TierBudget:
    if not isinstance(raw, Mapping):
        msg = f"{where} must be an object of budget fields, got {type(raw).__name__}"
        raise UsageError(msg)
    names = [f.name for f in fields(TierBudget)]
    for key in raw:
        if key not in names:
            msg = f"{where}.{key} is not a budget field; the fields are {names}"
            raise UsageError(msg)
    try:
        return TierBudget(**raw)
    except UsageError as e:
        msg = f"{where}: {e}"
        raise UsageError(msg) from e


def load_budgets(home: Path) -> dict[str, TierBudget]:
    """Per-tier budgets from ``<home>/resilience.json`` keyed by tier name (``"shared:*"`` = pool default)."""
    path = home / RESILIENCE_FILE
    data = _read_json(path)
    if data is _MISSING:
        return {}
    if not isinstance(data, Mapping):
        msg = f"{path} must hold a JSON object keyed by tier"
        raise UsageError(msg)
    out: dict[str, TierBudget] = {}
    for key, raw in data.items():
        where = f"{path}: {key}"
        if key in ("private", "global"):
            out[key] = _budget(raw, where)
        elif key == "default_shared":
            out["shared:*"] = _budget(raw, where)
        elif key == "shared":
            if not isinstance(raw, Mapping):
                msg = f"{where} must map pool names to budgets"
                raise UsageError(msg)
            for pool, budget in raw.items():
                out[f"shared:{pool}"] = _budget(budget, f"{where}.{pool}")
        else:
            msg = f"{where} is not a tier; use private, global, shared or default_shared"
            raise UsageError(msg)
    return out
