"""build_federation: one agent's tiers under a home folder, assembled and opened; open_federated: the facade's ops.

Layout::

    <home>/config.json, <home>/resilience.json      optional (see federation.config)
    <home>/agents/<agent_id>/memory.db             private tier (unless private_on_server)
    <home>/agents/<agent_id>/quarantine/           corrupt private files moved aside
    <home>/pools/<pool>/memory.db                  one file per shared pool
    <home>/global/memory.db                        global tier (only with an embedder)
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .._validate import check_path
from ..config import RecallConfig
from ..core import MemoryCore
from ..embedders.checks import EmbedderSpec, embedder_candidates
from ..errors import CorruptDatabaseError, StorageError, UsageError
from ..loop import LoopConfig
from ..loop.attach import check_options, open_core
from ..storage.postgres.connect import is_url, redact
from ..types import Hit, MemoryId, MemoryRecord
from . import pg_names
from .config import MemorySettings, check_name, load_budgets, load_settings, moderator_grants
from .core_store import CoreStore
from .federation import MemoryFederation
from .ops import FederatedOps
from .pg_names import ServerTier, settle
from .protocol import Entry, MemoryStore, TierHealth
from .resilience import DegradedEvent
from .router import DecayProfile, MemoryRouter, MemoryWeights

__all__ = ["PoolConfig", "build_federation", "check_name", "open_federated"]

log = logging.getLogger("elastic_memory.federation")


@dataclass(frozen=True)
class PoolConfig:
    """A shared pool: its name, optionally a store you opened, and its moderators.

    ``store`` is a store you opened (a Markdown folder, another database); ``None`` means the
    pool's own file under ``<home>/pools/`` (or its schema on the ``server``), as a plain name
    would. ``moderators`` are the agents who may update, forget, archive or restore other
    agents' memories in the pool; everyone else changes only what it wrote.

    >>> PoolConfig("ops", moderators=("ana",)).moderators
    ('ana',)
    """

    name: str
    store: MemoryStore | None = None
    moderators: Sequence[str] = ()


class _Unavailable:
    """A tier whose store could not be opened: every call raises the open error (the breaker takes it)."""

    def __init__(self, name: str, error: StorageError) -> None:
        self.name = name
        self.error = error

    async def search(self, query: str = "", **_: Any) -> list[Hit]:
        raise self.error

    async def write(self, entries: Sequence[Entry]) -> list[MemoryId]:
        raise self.error

    async def get(self, ids: Sequence[str]) -> list[MemoryRecord]:
        raise self.error

    async def delete(self, ids: Sequence[str], *, hard: bool = False) -> int:
        raise self.error

    async def health_check(self) -> TierHealth:
        return TierHealth(self.name, False, f"could not be opened: {self.error}")

    async def aclose(self) -> None:
        return None


def _quarantine(path: Path, clock: Callable[[], float]) -> Path:
    """Move a corrupt database (and its -wal/-shm) aside; nothing is deleted. Returns the new path."""
    folder = path.parent / "quarantine"
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(clock()))
    target = folder / f"{path.name}.{stamp}.corrupt"
    n = 1
    while target.exists():
        target = folder / f"{path.name}.{stamp}-{n}.corrupt"
        n += 1
    for suffix in ("", "-wal", "-shm"):
        part = Path(f"{path}{suffix}")
        if part.exists():
            os.replace(part, Path(f"{target}{suffix}"))
    return target


async def _open_private(
    path: Path, options: dict[str, Any], clock: Callable[[], float]
) -> tuple[MemoryCore, Path | None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        return await open_core(path, **options), None
    except CorruptDatabaseError as e:
        moved = _quarantine(path, clock)
        log.warning("the private memory %s is corrupt (%s); moved to %s and started fresh", path, e, moved)
        return await open_core(path, **options), moved


async def _open_private_on_server(server: str, agent: str, options: dict[str, Any]) -> MemoryCore:
    """The agent's private tier in its schema on ``server`` (tier ``agent:<id>``); a failure raises: it is its own."""
    if options.get("vector_index") != "ann":  # no RAM or vec0 tier on a server
        options = {**options, "vector_index": "auto"}
    url = await settle(server, f"agent:{agent}", timeout=options.get("timeout", 5.0))
    return await open_core(url, **options)


async def _open_shared(name: str, location: Path | ServerTier, options: dict[str, Any]) -> MemoryStore:
    if isinstance(location, Path):
        location.parent.mkdir(parents=True, exist_ok=True)
    # Shared tiers hold remember()ed memories, never turns: no graph, so no graph nudge to pay for.
    recall = replace(options.get("recall") or RecallConfig(), graph_boost=0.0)
    if isinstance(location, ServerTier) and options.get("vector_index") != "ann":  # no RAM or vec0 tier on a server
        options = {**options, "vector_index": "auto"}
    try:
        where = location if isinstance(location, Path) else await settle(*location, timeout=options.get("timeout", 5.0))
        return CoreStore(await open_core(where, **{**options, "recall": recall}), name=name)
    except StorageError as e:  # shared by other agents: never moved aside from here
        shown = location if isinstance(location, Path) else redact(tier_url(*location))
        log.warning("the %s tier %s cannot be opened (%s); it is left out until reopened", name, shown, e)
        return _Unavailable(name, e)


def tier_url(server: str, tier: str) -> str:
    """The URL of one shared tier on ``server``: its own schema, under the URL's ``schema`` as a prefix.

    No two tiers share a schema (see :mod:`.pg_names`): a name of lowercase letters, digits
    and single ``_`` is kept, any other gets a readable cut, ``__`` and a 128-bit hash.

    >>> tier_url("postgresql://db/mem", "pool:team-research")
    'postgresql://db/mem?schema=em_pool_team_research__60e33c91465fb8d5983874c01795bc37'
    >>> tier_url("postgresql://db/mem?schema=staging", "global")
    'postgresql://db/mem?schema=staging_global'
    """
    return pg_names.tier_url(server, tier)


async def build_federation(
    agent_id: str,
    *,
    home: str | os.PathLike[str] = "~/.elastic-memory",
    embedder: EmbedderSpec = "auto",
    pools: Sequence[str | PoolConfig] | None = None,
    weights: MemoryWeights | None = None,
    decay: DecayProfile | None = None,
    on_degraded: Callable[[DegradedEvent], None] | None = None,
    clock: Callable[[], float] = time.time,
    loop: LoopConfig | None = None,
    server: str | None = None,
    private_on_server: bool = False,
    moderators: Mapping[str, Any] | None = None,
    **options: Any,
) -> MemoryFederation:
    """Open one agent's tiers under ``home`` and return their federation.

    The private tier is opened at once (migrations run; a corrupt file is moved to
    ``quarantine/`` beside it and a fresh one created). Pools are the config file's plus
    ``pools`` (names get a SQLite file under ``pools/``; a :class:`PoolConfig` brings its
    own store). The global tier exists only with an embedder and when the config does not
    say ``"global": "none"``. ``server`` (or the config's ``"server"``), a PostgreSQL URL,
    puts the pools and the global tier on that database, one schema each (:func:`tier_url`).
    ``private_on_server=True`` puts the private tier there too (tier ``agent:<id>``), for
    stateless workers: any process opening the agent finds its memory, turns and facts.
    ``options`` go to every store's :meth:`AsyncMemory.open`.

    The federation speaks for ``agent_id`` only: it writes as that agent and, in pools and the
    global tier, changes only that agent's memories. ``moderators`` (``{"global": ["ana"],
    "shared": {"ops": ["bo"]}}``, added to the config file's ``"moderators"`` and each
    :class:`PoolConfig`'s) may change anyone's memories in their tier.

    Raises:
        UsageError: A bad argument or config file (the message names the field), or memory
            is disabled in the config (``"enabled": false``).
    """
    agent = check_name(agent_id, "agent_id")
    root = Path(os.path.expanduser(check_path(home, "home")))
    settings: MemorySettings = load_settings(root)
    if not settings.enabled:
        msg = f'memory is disabled in {root / "config.json"} ("enabled": false); enable it or open no memory'
        raise UsageError(msg)
    budgets = load_budgets(root)
    server = server if server is not None else settings.server
    if server is not None and not (isinstance(server, str) and is_url(server)):
        msg = "server must be a postgresql:// URL (put the password in PGPASSWORD, not in the URL)"
        raise UsageError(msg)
    if not isinstance(private_on_server, bool):
        msg = f"private_on_server must be True or False, got {private_on_server!r}"
        raise UsageError(msg)
    if private_on_server and server is None:
        msg = 'private_on_server=True needs a server: pass server="postgresql://..." or set "server" in config.json'
        raise UsageError(msg)
    if pools is not None and (isinstance(pools, str | bytes | Mapping) or not isinstance(pools, Iterable)):
        msg = f"pools must be a list of pool names or PoolConfig values, got {type(pools).__name__}"
        raise UsageError(msg)
    given = list(pools or [])
    names: list[str] = list(settings.pools)
    own: dict[str, MemoryStore] = {}  # the caller's PoolConfig stores: never closed here
    granted = [settings.moderators, moderator_grants(moderators, where="moderators")]
    for p in given:  # every argument is checked before any file is opened
        if isinstance(p, str):
            names.append(check_name(p, "a pool name"))
        elif isinstance(p, PoolConfig):
            if p.store is None:
                names.append(check_name(p.name, "a pool name"))
            elif not isinstance(p.store, MemoryStore):
                msg = f"PoolConfig({p.name!r}).store does not implement the store protocol (see MemoryStore)"
                raise UsageError(msg)
            else:
                own[MemoryRouter.check_pool_name(p.name)] = p.store
            granted.append(moderator_grants({"shared": {p.name: p.moderators}}, where=f"PoolConfig({p.name!r})"))
        else:
            msg = f"pools takes pool names or PoolConfig(name, store, moderators), got {p!r}"
            raise UsageError(msg)
    moderated: dict[str, frozenset[str]] = {}  # tier name -> agent ids, every grant added up
    for grant in granted:
        for tier, agents in grant.items():
            moderated[tier] = moderated.get(tier, frozenset()) | agents
    MemoryRouter.check_options(weights, decay, clock)
    if on_degraded is not None and not callable(on_degraded):
        msg = f"on_degraded must be a callable taking a DegradedEvent, or None, got {on_degraded!r}"
        raise UsageError(msg)
    candidates = embedder_candidates(embedder)  # one embedder instance shared by every tier
    rerank = options.get("recall")
    if isinstance(rerank, RecallConfig) and rerank.reranker is not None:  # it orders the merged hits, once
        options = {**options, "recall": replace(rerank, reranker=None)}
    shared_options = {**options, "agent_id": agent, "embedder": candidates or None, "clock": clock}
    loop_config = loop or LoopConfig(extraction=settings.extraction)
    private_options = {**shared_options, "loop": loop_config}
    check_options(private_options)  # the last check: no folder exists before it passes
    if private_on_server and server is not None:
        core, moved = await _open_private_on_server(server, agent, private_options), None
    else:
        core, moved = await _open_private(root / "agents" / agent / "memory.db", private_options, clock)
    opened: list[MemoryStore] = []
    try:
        # The model loads in the background from here (open_core starts MemoryCore.preload); FederatedOps waits
        # for it before a write that embeds, outside the tiers' time budgets.
        private = CoreStore(core, name="private")
        private.quarantined_file = moved
        router: MemoryRouter[Any] = MemoryRouter(private=private, weights=weights, decay=decay, clock=clock)
        for name in dict.fromkeys(names):
            where = root / "pools" / name / "memory.db" if server is None else ServerTier(server, f"pool:{name}")
            store = await _open_shared(f"shared:{name}", where, shared_options)
            opened.append(store)
            router.add_pool(name, store)
        for name, store in own.items():
            router.add_pool(name, store)
        if candidates and settings.global_ != "none":
            where = root / "global" / "memory.db" if server is None else ServerTier(server, "global")
            glob = await _open_shared("global", where, shared_options)
            opened.append(glob)
            router.set_global(glob)
        for store in opened:  # one query embedding serves every tier of a read
            if isinstance(store, CoreStore):
                store.core.share_query_memo(core)
        vector_weight = core.recall_config.effective_vector_weight
        return MemoryFederation(
            router,
            budgets=budgets,
            on_degraded=on_degraded,
            vector_weight=vector_weight,
            agent_id=agent,
            moderators=moderated,
            rerank=rerank if isinstance(rerank, RecallConfig) else None,
        )
    except BaseException:
        for store in opened:
            await store.aclose()
        await core.close()
        raise


async def open_federated(agent_id: str, **options: Any) -> FederatedOps:
    """:func:`build_federation` (``options`` are its arguments) as the operations ``Memory.for_agent`` calls."""
    federation = await build_federation(agent_id, **options)
    private = federation.router.tier("private").store.inner
    assert isinstance(private, CoreStore)  # build_federation's private tier is always a MemoryCore
    return FederatedOps(federation, private.core)
