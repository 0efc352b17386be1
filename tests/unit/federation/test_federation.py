"""A federation over real SQLite files: routing, promotion, merged reads, every-tier mutations, assembly."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from elastic_memory import Memory, RoutingError, Scope, UsageError
from elastic_memory.connectors import MarkdownFolder
from elastic_memory.federation import PoolConfig, TierBudget
from elastic_memory.testing import FakeEmbedder


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty federation home."""
    return tmp_path / "home"


@pytest.fixture
def ana(home: Path) -> Iterator[Memory]:
    """Agent ana: private tier, pool ``team``, global tier."""
    with Memory.for_agent("ana", home=home, pools=["team"], embedder=FakeEmbedder()) as mem:
        yield mem


def _file(home: Path, *parts: str) -> Memory:
    return Memory.open(home.joinpath(*parts, "memory.db"), embedder=None)


def _ids_in(home: Path, *parts: str) -> set[str]:
    with _file(home, *parts) as mem:
        return {h.id for h in mem.recall("", k=1000)}


# ----------------------------------------------------------------------------- writes
def test_a_private_memory_lands_in_the_private_file_only(ana: Memory, home: Path) -> None:
    """Default scope is private: one file, no copy elsewhere."""
    mid = ana.remember("Ana likes green tea.")
    assert _ids_in(home, "agents", "ana") == {mid}
    assert _ids_in(home, "pools", "team") == set()
    assert _ids_in(home, "global") == set()


def test_an_important_private_memory_is_promoted_with_the_same_id(ana: Memory, home: Path) -> None:
    """From importance 0.9 a private write is also copied to global, scope rewritten, id kept."""
    mid = ana.remember("Production runs on PostgreSQL 16.", importance=0.95)
    with _file(home, "global") as glob:
        copy = glob.get(mid)
    assert copy is not None and copy.scope is Scope.GLOBAL and copy.content == "Production runs on PostgreSQL 16."
    assert _ids_in(home, "agents", "ana") == {mid}


def test_promotion_is_off_without_a_global_tier(home: Path) -> None:
    """With no embedder there is no global tier: an important memory stays private."""
    with Memory.for_agent("ana", home=home, embedder=None) as mem:
        mem.remember("Production runs on PostgreSQL 16.", importance=0.95)
        assert [t.name for t in mem.federation.tiers] == ["private"]  # type: ignore[union-attr]
    assert not (home / "global").exists()


def test_a_duplicate_promoted_twice_keeps_one_id_everywhere(ana: Memory, home: Path) -> None:
    """The promotion copy takes the id the private tier settled on."""
    first = ana.remember("The VPN password rotates monthly.", importance=0.95)
    second = ana.remember("The VPN password rotates monthly.", importance=0.95)
    assert second == first and second.status == "duplicate"
    assert _ids_in(home, "global") == {first}


def test_a_shared_write_goes_to_its_pool(ana: Memory, home: Path) -> None:
    """scope='shared' with a registered pool writes that pool's file."""
    mid = ana.remember("Standup moved to 10:00.", scope="shared", pool="team")
    assert _ids_in(home, "pools", "team") == {mid}
    assert _ids_in(home, "agents", "ana") == set()


def test_a_write_to_an_unknown_pool_is_a_routing_error_and_writes_nothing(ana: Memory, home: Path) -> None:
    """Every entry of a batch is routed before anything is written."""
    with pytest.raises(RoutingError, match="no shared pool named 'ops'"):
        ana.remember_many(["kept?", {"content": "lost", "scope": "shared", "pool": "ops"}])
    assert _ids_in(home, "agents", "ana") == set()


def test_a_global_write_without_a_global_tier_is_a_routing_error(home: Path) -> None:
    """scope='global' needs the global tier, which exists only with an embedder."""
    with Memory.for_agent("ana", home=home, embedder=None) as mem, pytest.raises(RoutingError, match="global"):
        mem.remember("For everyone.", scope="global")


def test_a_batch_returns_ids_in_input_order_across_tiers(ana: Memory, home: Path) -> None:
    """remember_many splits by tier and gives the ids back in the caller's order."""
    ids = ana.remember_many(
        [
            {"content": "global note", "scope": "global"},
            "private note",
            {"content": "pool note", "scope": "shared", "pool": "team"},
        ]
    )
    assert [r.content for r in ana.get_many(ids)] == ["global note", "private note", "pool note"]
    assert _ids_in(home, "global") == {ids[0]}


def test_a_read_only_pool_refuses_writes(home: Path, tmp_path: Path) -> None:
    """A Markdown folder pool serves reads; a write to it is the caller's error."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text("The wiki lives at wiki.local.")
    folder = MarkdownFolder(vault, scope="shared", pool="notes").as_store()
    with Memory.for_agent("ana", home=home, pools=[PoolConfig("notes", folder)], embedder=FakeEmbedder()) as mem:
        assert [h.tier for h in mem.recall("wiki", mode="keyword")] == ["shared:notes"]
        with pytest.raises(UsageError, match="read-only"):
            mem.remember("x", scope="shared", pool="notes")


# ------------------------------------------------------------------------------ reads
def test_recall_merges_every_tier_and_names_the_tier(ana: Memory) -> None:
    """Without a scope, hits come from private, pools and global, each with its tier."""
    ana.remember("tea in the private tier")
    ana.remember("tea in the pool", scope="shared", pool="team")
    ana.remember("tea for everyone", scope="global")
    tiers = {h.content: h.tier for h in ana.recall("tea", mode="keyword")}
    assert tiers == {
        "tea in the private tier": "private",
        "tea in the pool": "shared:team",
        "tea for everyone": "global",
    }


def test_a_promoted_memory_is_recalled_once_as_private(ana: Memory) -> None:
    """Duplicates by id collapse to the most local copy."""
    mid = ana.remember("Production runs on PostgreSQL 16.", importance=0.95)
    hits = ana.recall("PostgreSQL", mode="keyword")
    assert [(h.id, h.tier) for h in hits] == [(mid, "private")]


@pytest.mark.parametrize(
    ("scope", "pool", "expected"), [("private", None, "p"), ("shared", None, "s"), (None, "team", "s")]
)
def test_scope_and_pool_narrow_the_tiers(ana: Memory, scope: str | None, pool: str | None, expected: str) -> None:
    """scope='private' reads one tier; scope='shared' every pool; pool= one pool."""
    ana.remember("p coffee")
    ana.remember("s coffee", scope="shared", pool="team")
    assert [h.content[0] for h in ana.recall("coffee", mode="keyword", scope=scope, pool=pool)] == [expected]


def test_recall_naming_an_unknown_pool_is_a_routing_error(ana: Memory) -> None:
    """A named pool that does not exist is a caller error, not an empty result."""
    with pytest.raises(RoutingError, match="ops"):
        ana.recall("anything", pool="ops")


def test_a_strong_match_in_one_tier_beats_a_weak_one_in_another(ana: Memory) -> None:
    """Hits of several tiers are fused again over their union, not by each tier's own scale."""
    ana.remember("quarterly budget review meeting notes budget", scope="shared", pool="team")
    ana.remember("an unrelated line that says budget once among many many other words here")
    hits = ana.recall("quarterly budget review", mode="keyword")
    assert [h.tier for h in hits] == ["shared:team", "private"]
    assert hits[0].score > hits[1].score


def test_explain_reports_each_tier(ana: Memory) -> None:
    """explain() says how many hits each tier gave and which degraded."""
    ana.remember("tea")
    details = ana.explain("tea", mode="keyword").details["federation"]
    assert set(details["tiers"]) == {"private", "shared:team", "global"}
    assert details["tiers"]["private"]["hits"] == 1 and details["degraded"] == []


async def test_stream_search_yields_the_search_order(home: Path) -> None:
    """stream_search is search, one hit at a time."""
    from elastic_memory import AsyncMemory

    async with await AsyncMemory.for_agent("ana", home=home, pools=["team"], embedder=FakeEmbedder()) as mem:
        await mem.remember_many(
            ["tea, green tea", {"content": "tea once among several other words", "scope": "shared", "pool": "team"}]
        )
        federation = mem.federation
        assert federation is not None
        expected = [h.id for h in await mem.recall("tea", mode="keyword")]
        streamed = [h.id async for h in federation.stream_search("tea", mode="keyword")]
        assert streamed == expected


def test_get_prefers_the_most_local_copy(ana: Memory) -> None:
    """get() of a promoted memory returns the private record."""
    mid = ana.remember("Production runs on PostgreSQL 16.", importance=0.95)
    record = ana.get(mid)
    assert record is not None and record.scope is Scope.PRIVATE


def test_build_context_shows_a_pool_memory_written_by_another_agent(home: Path) -> None:
    """The plan's relevant memories come from every tier, other agents' pool writes included."""
    with Memory.for_agent("bob", home=home, pools=["team"], embedder=FakeEmbedder()) as bob:
        bob.remember("The team offsite is in Lisbon in May.", scope="shared", pool="team")
    with Memory.for_agent("ana", home=home, pools=["team"], embedder=FakeEmbedder()) as ana:
        assert "Lisbon" in ana.build_context("Where is the team offsite?").render()


# -------------------------------------------------------------------------- mutations
def test_forget_reaches_the_promoted_copy(ana: Memory, home: Path) -> None:
    """Forgetting a promoted memory hides it in global too."""
    mid = ana.remember("Production runs on PostgreSQL 16.", importance=0.95)
    assert ana.forget(mid) == 1
    assert ana.recall("PostgreSQL", mode="keyword") == []
    with _file(home, "global") as glob:
        assert glob.get(mid).deleted_at is not None  # type: ignore[union-attr]


def test_restore_brings_every_copy_back(ana: Memory) -> None:
    """restore() undoes the soft delete in every tier holding the id."""
    mid = ana.remember("Production runs on PostgreSQL 16.", importance=0.95)
    ana.forget(mid)
    assert ana.restore(mid) == 1
    assert [h.id for h in ana.recall("PostgreSQL", mode="keyword", scope="global")] == [mid]


def test_update_changes_every_copy(ana: Memory) -> None:
    """update() rewrites the private memory and its global copy."""
    mid = ana.remember("Production runs on PostgreSQL 16.", importance=0.95)
    ana.update(mid, content="Production runs on PostgreSQL 17.")
    assert [h.content for h in ana.recall("PostgreSQL", mode="keyword", scope="global")] == [
        "Production runs on PostgreSQL 17."
    ]


def test_update_to_a_high_importance_promotes(ana: Memory) -> None:
    """A private memory raised to importance 0.9 gets its global copy."""
    mid = ana.remember("Backups run at 02:00.")
    ana.update(mid, importance=0.9)
    assert [h.id for h in ana.recall("backups", mode="keyword", scope="global")] == [mid]


def test_update_cannot_move_a_memory_between_tiers(ana: Memory) -> None:
    """Changing scope or pool through update() is refused with what to do instead."""
    mid = ana.remember("Backups run at 02:00.")
    with pytest.raises(UsageError, match="remember it in the new scope"):
        ana.update(mid, scope="shared", pool="team")


def test_an_agents_prune_touches_its_private_tier_only(ana: Memory) -> None:
    """Pools and the global tier hold other agents' memories: Memory.prune leaves them alone."""
    ana.remember("low private", importance=0.1)
    ana.remember("low pooled", importance=0.1, scope="shared", pool="team")
    report = ana.prune(min_importance=0.5, action="purge")
    assert report.count == 1
    assert [h.content for h in ana.recall("", k=10)] == ["low pooled"]


async def test_the_federation_prunes_every_tier(home: Path) -> None:
    """MemoryFederation.prune (the operator's call) runs on every tier that can prune."""
    from elastic_memory import AsyncMemory, PrunePolicy

    async with await AsyncMemory.for_agent("ana", home=home, pools=["team"], embedder=FakeEmbedder()) as mem:
        await mem.remember("low private", importance=0.1)
        await mem.remember("low pooled", importance=0.1, scope="shared", pool="team")
        await mem.remember("kept", importance=0.8)
        assert mem.federation is not None
        report = await mem.federation.prune(PrunePolicy(min_importance=0.5))
        assert report.count == 2
        assert [h.content for h in await mem.recall("", k=10)] == ["kept"]


def test_update_of_a_note_in_a_read_only_tier_says_so(home: Path, tmp_path: Path) -> None:
    """A memory only a Markdown folder holds cannot be updated through the federation."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text("The wiki lives at wiki.local.")
    folder = MarkdownFolder(vault, scope="shared", pool="notes").as_store()
    with Memory.for_agent("ana", home=home, pools=[PoolConfig("notes", folder)], embedder=FakeEmbedder()) as mem:
        note = mem.recall("wiki", mode="keyword")[0]
        with pytest.raises(UsageError, match="read-only"):
            mem.update(note.id, content="changed")


def test_a_filter_that_is_not_a_dict_is_a_usage_error(ana: Memory) -> None:
    """Bad filters are refused with the library's error, as on one file."""
    with pytest.raises(UsageError, match="filters must be a dict"):
        ana.recall("x", filters="abc")  # type: ignore[arg-type]


def test_a_pool_store_without_the_protocol_is_refused_before_anything_opens(home: Path) -> None:
    """A bad PoolConfig fails fast: no file is created for the agent."""
    with pytest.raises(UsageError, match="store protocol"):
        Memory.for_agent("ana", home=home, pools=["team", PoolConfig("x", object())], embedder=None)  # type: ignore[arg-type]
    assert not (home / "agents").exists()


# ---------------------------------------------------------------------- health, stats
def test_health_reports_each_tier(ana: Memory) -> None:
    """health()['federation'] has one entry per tier with its breaker."""
    health = ana.health()["federation"]
    assert health["ok"] and health["promotion"] == "on"
    assert {name: t["breaker"] for name, t in health["tiers"].items()} == dict.fromkeys(
        ["private", "shared:team", "global"], "closed"
    )


def test_stats_counts_each_tier(ana: Memory) -> None:
    """stats() is the private tier's, with every tier's counts under 'tiers'."""
    ana.remember("private one")
    ana.remember("pooled one", scope="shared", pool="team")
    stats = ana.stats()
    assert stats["active_memories"] == 1
    assert {name: t["active_memories"] for name, t in stats["tiers"].items()} == {
        "private": 1,
        "shared:team": 1,
        "global": 0,
    }


def test_close_is_idempotent_and_later_calls_are_refused(home: Path) -> None:
    """close() closes every tier once; a closed federation says so."""
    mem = Memory.for_agent("ana", home=home, pools=["team"], embedder=FakeEmbedder())
    mem.close()
    mem.close()
    with pytest.raises(UsageError, match="closed"):
        mem.recall("anything")


# ------------------------------------------------------------------------- assembly
def test_the_private_file_is_per_agent(home: Path) -> None:
    """Each agent's private tier is <home>/agents/<id>/memory.db."""
    with Memory.for_agent("ana", home=home, embedder=None) as mem:
        assert mem.path == str(home / "agents" / "ana" / "memory.db")


@pytest.mark.parametrize("agent", ["../bob", "a/b", ".hidden", "", "x" * 200])
def test_an_agent_id_that_cannot_name_a_folder_is_refused(home: Path, agent: str) -> None:
    """Agent ids name folders: no separators, no leading dot, at most 128 characters."""
    with pytest.raises(UsageError, match="agent_id"):
        Memory.for_agent(agent, home=home, embedder=None)


def test_config_pools_are_opened_for_every_agent(home: Path) -> None:
    """Pools listed in config.json join the ones passed to for_agent."""
    home.mkdir()
    (home / "config.json").write_text(json.dumps({"memory": {"pools": ["ops"]}}))
    with Memory.for_agent("ana", home=home, pools=["team"], embedder=None) as mem:
        assert [t.name for t in mem.federation.tiers] == ["private", "shared:ops", "shared:team"]  # type: ignore[union-attr]


def test_config_can_turn_the_global_tier_off(home: Path) -> None:
    """ "global": "none" leaves the global tier out even with an embedder."""
    home.mkdir()
    (home / "config.json").write_text(json.dumps({"memory": {"global": "none"}}))
    with Memory.for_agent("ana", home=home, embedder=FakeEmbedder()) as mem:
        assert [t.name for t in mem.federation.tiers] == ["private"]  # type: ignore[union-attr]


def test_disabled_memory_is_refused(home: Path) -> None:
    """ "enabled": false makes for_agent refuse with what to do."""
    home.mkdir()
    (home / "config.json").write_text(json.dumps({"memory": {"enabled": False}}))
    with pytest.raises(UsageError, match="disabled"):
        Memory.for_agent("ana", home=home, embedder=None)


def test_invalid_config_names_the_field(home: Path) -> None:
    """A wrong value is refused with the file and the field in the message."""
    home.mkdir()
    (home / "config.json").write_text(json.dumps({"memory": {"pools": "team"}}))
    with pytest.raises(UsageError, match=r"memory\.pools must be a list"):
        Memory.for_agent("ana", home=home, embedder=None)


def test_resilience_budgets_reach_the_tiers(home: Path) -> None:
    """resilience.json sets each tier's budget; default_shared covers unnamed pools."""
    home.mkdir()
    (home / "resilience.json").write_text(
        json.dumps({"private": {"read_timeout_ms": 250}, "default_shared": {"write_timeout_ms": 600}})
    )
    with Memory.for_agent("ana", home=home, pools=["team"], embedder=None) as mem:
        stores = {t.name: t.store for t in mem.federation.tiers}  # type: ignore[union-attr]
    assert stores["private"].budget.read_timeout_ms == 250
    assert stores["shared:team"].budget == TierBudget(write_timeout_ms=600)


def test_explain_records_no_access_but_recall_does(ana: Memory) -> None:
    """As on one file: recall() touches what it returns, explain() does not."""
    mid = ana.remember("Ana drinks oolong tea.")
    ana.explain("oolong", mode="keyword")
    assert ana.get(mid).access_count == 0  # type: ignore[union-attr]
    ana.recall("oolong", mode="keyword")
    assert ana.get(mid).access_count == 1  # type: ignore[union-attr]


def test_recall_records_access_only_on_what_it_returns(ana: Memory) -> None:
    """Tiers are asked for more than k; only the merged hits count as accessed."""
    ids = ana.remember_many([f"tea note number {i}" for i in range(6)])
    returned = {h.id for h in ana.recall("tea note", mode="keyword", k=2)}
    accessed = {r.id for r in ana.get_many(ids) if r.access_count}
    assert accessed == returned and len(returned) == 2


def test_a_federated_read_embeds_the_query_once(home: Path) -> None:
    """The tiers share one query memo: a hybrid read over three tiers embeds the query once."""
    embedder = CountingEmbedder()
    with Memory.for_agent("ana", home=home, pools=["team"], embedder=embedder) as mem:
        mem.remember("tea in private")
        embedder.texts.clear()
        mem.recall("a question about tea", mode="hybrid")
    assert embedder.texts.count("a question about tea") == 1


class CountingEmbedder(FakeEmbedder):
    """Counts every text it embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> Any:
        self.texts.extend(texts)
        return super().embed(texts)
