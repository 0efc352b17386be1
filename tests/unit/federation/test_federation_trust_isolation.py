"""Trust boundaries of a federation: an agent reads its private tier, its pools and global, nothing else.

Three agents share one home: alice is in pool X, bob in pool Y, carol in both, where X and
Y are names a sloppy comparison would conflate (``ali``/``alice``; ``a.b``, ``a-b`` and
``a_b``, which a server schema name turns into one spelling; case variants). Every agent
writes private rows, X and Y get rows, global gets one; every row carries a marker word
naming its partition. Then every read path of each agent is searched for rows of a
partition it must not see: another agent's private tier, or a pool it is not in.

(The hypothesis test in test_federation_isolation.py covers random write plans of two
agents with one pool; this module covers adversarial pool names and every read path.)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from elastic_memory import LoopConfig, Memory, RoutingError
from elastic_memory.testing import FakeEmbedder, fresh_schema

AGENTS = ("alice", "bob", "carol")
MODES = ("keyword", "semantic", "hybrid")
QUERY = "harbour lantern"
#: Pool name pairs (X, Y): X is alice's and carol's, Y bob's and carol's.
POOL_PAIRS = [
    pytest.param("ali", "alice", id="prefix"),
    pytest.param("a.b", "a-b", id="dot-dash"),
    pytest.param("a.b", "a_b", id="dot-underscore"),
    pytest.param("a-b", "a_b", id="dash-underscore"),
    pytest.param("a.b", "a.bc", id="dotted-prefix"),
    pytest.param("Team", "team", id="case"),
]


def _case_sensitive_files(folder: Path) -> bool:
    probe = folder / "CaseProbe"
    probe.mkdir(parents=True, exist_ok=True)
    try:
        return not (folder / "caseprobe").exists()
    finally:
        probe.rmdir()


@dataclass
class World:
    """Three open agents, the pools, and every written row: partition -> {id: marker}."""

    members: dict[str, list[str]]
    mems: dict[str, Memory]
    x: str
    y: str
    rows: dict[str, dict[str, str]] = field(default_factory=dict)

    def visible(self, reader: str) -> set[str]:
        """The partitions ``reader`` may read."""
        return {f"private:{reader}", "global", *(f"pool:{p}" for p in self.members[reader])}

    def allowed(self, reader: str) -> set[str]:
        return {i for part in self.visible(reader) for i in self.rows.get(part, {})}

    def forbidden(self, reader: str) -> dict[str, str]:
        """id -> marker of every row ``reader`` must never see."""
        return {i: m for part, rows in self.rows.items() if part not in self.visible(reader) for i, m in rows.items()}

    def leaks(self, reader: str, text: str) -> list[str]:
        """The forbidden ids and markers found in ``text``."""
        return [s for i, m in self.forbidden(reader).items() for s in (i, m) if re.search(rf"\b{re.escape(s)}\b", text)]


def _write(world: World) -> None:
    """Private rows for each agent, rows in X (by alice and carol), in Y (by bob and carol), one global row.

    Every content matches :data:`QUERY` and ends in a marker word unique to its row.
    """
    n = 0

    def put(part: str, mem: Memory, count: int = 3, **fields: Any) -> None:
        nonlocal n
        for _ in range(count):
            marker = f"marker{n}x"
            n += 1
            mid = mem.remember(f"{QUERY} note {marker}", tags=["common", f"tag-{marker}"], importance=0.5, **fields)
            world.rows.setdefault(part, {})[mid] = marker

    for agent in AGENTS:
        put(f"private:{agent}", world.mems[agent])
    put(f"pool:{world.x}", world.mems["alice"], scope="shared", pool=world.x)
    put(f"pool:{world.x}", world.mems["carol"], count=1, scope="shared", pool=world.x)
    put(f"pool:{world.y}", world.mems["bob"], scope="shared", pool=world.y)
    put(f"pool:{world.y}", world.mems["carol"], count=1, scope="shared", pool=world.y)
    put("global", world.mems["carol"], count=1, scope="global")


def _open(home: Path, x: str, y: str, *, embedder: Any = None, **options: Any) -> Iterator[World]:
    members = {"alice": [x], "bob": [y], "carol": [x, y]}
    mems: dict[str, Memory] = {}
    try:
        for agent in AGENTS:
            mems[agent] = Memory.for_agent(
                agent,
                home=home,
                pools=list(members[agent]),
                embedder=embedder if embedder is not None else FakeEmbedder(),
                loop=LoopConfig(tier="standard"),
                **options,
            )
        world = World(members, mems, x, y)
        _write(world)
        yield world
    finally:
        for mem in mems.values():
            mem.close()


@pytest.fixture(params=[pytest.param(tuple(p.values), id=p.id) for p in POOL_PAIRS])
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    """A fresh home with three agents and rows in every partition (SQLite files)."""
    x, y = request.param
    if x.lower() == y.lower() and not _case_sensitive_files(tmp_path):
        pytest.skip("pool names differing in case share one folder on a case-insensitive file system")
    yield from _open(tmp_path / "home", x, y)


def _scopes(world: World, reader: str) -> list[dict[str, Any]]:
    """Every scope/pool narrowing the reader may ask for (as arguments and as filters)."""
    out: list[dict[str, Any]] = [{}, {"scope": "private"}, {"scope": "shared"}, {"scope": "global"}]
    for pool in world.members[reader]:
        out += [{"pool": pool}, {"scope": "shared", "pool": pool}, {"filters": {"pool": pool}}]
    out += [{"filters": {"scope": "shared"}}, {"filters": {"tags": ["common"]}}]
    return out


def _check_recall(world: World, reader: str, mode: str) -> None:
    mem = world.mems[reader]
    forbidden = set(world.forbidden(reader))
    for kwargs in _scopes(world, reader):
        hits = mem.recall(QUERY, k=100, mode=mode, **kwargs)
        assert not {h.id for h in hits} & forbidden, (reader, kwargs)
        assert not world.leaks(reader, " ".join(h.content for h in hits)), (reader, kwargs)
    assert {h.id for h in mem.recall(QUERY, k=100, mode=mode)} == world.allowed(reader)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("reader", AGENTS)
def test_recall_returns_no_row_of_another_agent_or_of_a_pool_not_joined(world: World, reader: str, mode: str) -> None:
    """recall in every mode, every scope/pool narrowing: only the reader's partitions, and all of them unfiltered.

    A leak points at MemoryRouter.route_read (which tiers a read goes to) or at a pool tier
    opened on the wrong file/schema (assembly.build_federation: pools/<name>/memory.db,
    tier_url for a server): two pool names sharing one file would show here.
    """
    _check_recall(world, reader, mode)


@pytest.mark.parametrize("reader", AGENTS)
def test_a_pool_not_joined_is_refused_not_read(world: World, reader: str) -> None:
    """Naming a pool the reader is not in (argument or filter) raises RoutingError instead of reading it.

    If it returns rows, MemoryRouter.check_pool_name / route_read resolve pool names loosely.
    """
    others = [p for p in (world.x, world.y) if p not in world.members[reader]]
    for pool in others:
        for kwargs in (
            {"pool": pool},
            {"filters": {"pool": pool}},
            {"filters": {"pool": [*world.members[reader], pool]}},
        ):
            with pytest.raises(RoutingError):
                world.mems[reader].recall(QUERY, k=100, **kwargs)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("reader", AGENTS)
def test_explain_names_no_row_of_another_agent_or_of_a_pool_not_joined(world: World, reader: str, mode: str) -> None:
    """explain's hits and details name no forbidden row.

    If only details leak, check what MemoryFederation.explain merges from every tier.
    """
    mem = world.mems[reader]
    for kwargs in _scopes(world, reader):
        explanation = mem.explain(QUERY, k=100, mode=mode, **kwargs)
        assert not {h.id for h in explanation.hits} & set(world.forbidden(reader)), kwargs
        assert not world.leaks(reader, repr(explanation.details)), kwargs


@pytest.mark.parametrize("reader", AGENTS)
def test_get_and_get_many_return_no_row_of_another_agent_or_of_a_pool_not_joined(world: World, reader: str) -> None:
    """get(id) of a forbidden row is None and get_many leaves it out; allowed rows come back.

    A leak points at MemoryFederation.get reading tiers outside the reader's.
    """
    mem = world.mems[reader]
    forbidden = sorted(world.forbidden(reader))
    assert forbidden
    assert [mem.get(i) for i in forbidden] == [None] * len(forbidden)
    everything = sorted(i for rows in world.rows.values() for i in rows)
    assert {r.id for r in mem.get_many(everything)} == world.allowed(reader)


@pytest.mark.parametrize("reader", AGENTS)
def test_tags_count_no_row_of_another_agent_or_of_a_pool_not_joined(world: World, reader: str) -> None:
    """tags() (summed over the reader's SQLite tiers) has no tag of a forbidden row; its own are all there.

    A forbidden tag means FederatedOps.tags sums a tier the reader is not in.
    """
    mem = world.mems[reader]
    tags = mem.tags()
    assert not [t for t in tags if t.removeprefix("tag-") in world.forbidden(reader).values()]
    allowed_markers = {m for part in world.visible(reader) for m in world.rows.get(part, {}).values()}
    assert {t.removeprefix("tag-") for t in tags if t.startswith("tag-")} == allowed_markers
    assert tags["common"] == len(world.allowed(reader))
    assert mem.tags(prefix="tag-") == {t: c for t, c in tags.items() if t.startswith("tag-")}


@pytest.mark.parametrize("reader", AGENTS)
def test_stats_cover_only_the_readers_tiers(world: World, reader: str) -> None:
    """stats()["tiers"] lists the reader's tiers only, and each counts exactly its partition's rows.

    A tier of another pool, or a count including other rows, means the stats walk tiers
    outside the reader's federation or a pool tier shares another's file.
    """
    stats = world.mems[reader].stats()
    expected = {"private", "global", *(f"shared:{p}" for p in world.members[reader])}
    assert set(stats["tiers"]) == expected
    assert stats["tiers"]["private"]["active_memories"] == len(world.rows[f"private:{reader}"])
    for pool in world.members[reader]:
        assert stats["tiers"][f"shared:{pool}"]["active_memories"] == len(world.rows[f"pool:{pool}"])
    assert not world.leaks(reader, repr(stats))


@pytest.mark.parametrize("reader", AGENTS)
def test_export_holds_only_the_readers_private_rows(world: World, reader: str, tmp_path: Path) -> None:
    """export_jsonl writes the private tier: exactly the reader's own private rows.

    Another agent's row here means the private tier's file is shared (agents/<id>/memory.db).
    """
    path = tmp_path / f"{reader}.jsonl"
    count = world.mems[reader].export_jsonl(path)
    text = path.read_text(encoding="utf-8")
    assert count == len(world.rows[f"private:{reader}"])
    assert not world.leaks(reader, text)
    assert all(m in text for m in world.rows[f"private:{reader}"].values())


@pytest.mark.parametrize("reader", AGENTS)
def test_build_context_quotes_no_row_of_another_agent_or_of_a_pool_not_joined(world: World, reader: str) -> None:
    """The reader's plan (facts, past moments from every tier it reads) quotes no forbidden row.

    A leak points at the loop's recall over the federation (MemoryLoop.build_context) reading
    tiers outside the reader's.
    """
    mem = world.mems[reader]
    markers = list(world.forbidden(reader).values())
    for question in (QUERY, f"{QUERY} {' '.join(markers[:4])}"):
        plan = mem.build_context(question, session_id="now")
        assert not world.leaks(reader, plan.render()), question


@pytest.mark.parametrize("reader", AGENTS)
def test_facts_of_another_agent_are_not_read(world: World, reader: str) -> None:
    """facts.get/list/history of the reader show none of the other agents' facts.

    A leak means the facts table of one private file holds another agent's rows, or the
    facts queries ignore agent_id.
    """
    for agent in AGENTS:
        world.mems[agent].facts.set("user.secret", f"secret-of-{agent}")
    mem = world.mems[reader]
    fact = mem.facts.get("user.secret")
    assert fact is not None and fact.value == f"secret-of-{reader}"
    assert [f.value for f in mem.facts.history("user.secret")] == [f"secret-of-{reader}"]
    shown = repr(mem.facts.list())
    assert not [a for a in AGENTS if a != reader and f"secret-of-{a}" in shown]


@pytest.mark.parametrize("reader", AGENTS)
def test_graph_of_another_agent_is_not_read(world: World, reader: str) -> None:
    """Entities and relations from other agents' turns are not in the reader's graph.

    A leak means graph rows are written to, or read from, a tier other than the agent's private file.
    """
    names = {"alice": "Zephyrina", "bob": "Quorvexia", "carol": "Maribelle"}
    for agent in AGENTS:
        mem = world.mems[agent]
        receipt = mem.record_turn(f"My sister {names[agent]} works in Lisbon with Pedro.", "Noted.", session_id="s1")
        assert receipt.ok, receipt.error
        mem.drain()
    mem = world.mems[reader]
    entities = {e.name for e in mem.graph.entities()}
    assert names[reader] in entities
    shown = repr(entities) + repr(mem.graph.relations())
    assert not [a for a in AGENTS if a != reader and names[a] in shown]


def test_the_built_in_embedder_keeps_the_same_boundaries(tmp_path: Path, minilm: Any) -> None:
    """The realistic path: the built-in offline model (the embedder 'auto' loads), every mode, every reader.

    FakeEmbedder hashes words; the real model gives every row a non-zero similarity, so a
    tier read by mistake would surface here even for rows sharing no word with the query.
    """
    for world in _open(tmp_path / "home", "a.b", "a-b", embedder=minilm):
        for reader in AGENTS:
            for mode in MODES:
                _check_recall(world, reader, mode)


def test_the_auto_embedder_option_keeps_the_same_boundaries(tmp_path: Path) -> None:
    """``embedder="auto"`` as a host passes it (the built-in model, offline): hybrid recall of each reader."""
    for world in _open(tmp_path / "home", "ali", "alice", embedder="auto"):
        for reader in AGENTS:
            _check_recall(world, reader, "hybrid")


@pytest.mark.parametrize(("x", "y"), POOL_PAIRS)
@pytest.mark.parametrize("mode", MODES)
def test_pools_and_global_on_postgres_keep_the_same_boundaries(
    tmp_path: Path, postgres_url: str, x: str, y: str, mode: str
) -> None:
    """Pools and global on a PostgreSQL server (one schema each, tier_url): the same boundaries for every reader.

    Two pool names mapped to one schema (``a.b``/``a-b``/``a_b`` all spell ``a_b`` in a schema
    name; ``Team``/``team`` differ only in case) would show here: check tier_url's hash suffix
    and that the schema is quoted (storage/postgres._prepare).
    """
    server = fresh_schema(postgres_url)
    for world in _open(tmp_path / "home", x, y, server=server):
        stores = {p: world.mems["carol"].stats()["tiers"][f"shared:{p}"] for p in (x, y)}
        assert stores[x] != stores[y]
        for reader in AGENTS:
            _check_recall(world, reader, mode)
