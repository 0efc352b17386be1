"""MemoryRouter: write routing, read routing and the merge of per-tier hits (pure, no I/O)."""

from __future__ import annotations

from typing import Any

import pytest

from elastic_memory.errors import RoutingError, UsageError
from elastic_memory.federation import DecayProfile, Entry, MemoryRouter, MemoryWeights, TierRef, tier_name
from elastic_memory.forgetting import DAY
from elastic_memory.retrieval import scores
from elastic_memory.types import Hit, MemoryType, Scope, Source

NOW = 1_800_000_000.0


def make_hit(
    id: str,
    *,
    score: float = 1.0,
    type: str = "semantic",
    importance: float = 0.5,
    pinned: bool = False,
    created_at: float = NOW,
    accessed_at: float | None = None,
    keyword: float | None = None,
    vector: float | None = None,
    content: str | None = None,
    relevance: float | None = None,
) -> Hit:
    return Hit(
        id=id,
        content=content or f"memory {id}",
        score=score,
        type=MemoryType(type),
        metadata={},
        tags=(),
        agent_id="ana",
        scope=Scope.PRIVATE,
        pool=None,
        session_id=None,
        importance=importance,
        confidence=1.0,
        pinned=pinned,
        source=Source.AGENT,
        created_at=created_at,
        keyword_score=keyword,
        vector_score=vector,
        accessed_at=accessed_at,
        relevance=relevance,
    )


def make_router(*, with_global: bool = True, now: float = NOW, **kwargs: Any) -> MemoryRouter[str]:
    return MemoryRouter(
        private="P",
        global_="G" if with_global else None,
        pools={"team": "T", "ops": "O"},
        clock=lambda: now,
        **kwargs,
    )


def entry(content: str = "Prod runs PostgreSQL 16.", **fields: Any) -> Entry:
    return Entry.create(content, now=NOW, default_agent="ana", **fields)


def ids(hits: list[Hit]) -> list[str]:
    return [h.id for h in hits]


def on(router: MemoryRouter[str], tier: str, *hits: Hit) -> list[tuple[TierRef[Any], Hit]]:
    ref = router.tier(tier)
    return [(ref, h) for h in hits]


# ------------------------------------------------------------------ registry


def test_tier_names() -> None:
    """Tier names are private, shared:<pool> and global."""
    assert tier_name("private") == "private"
    assert tier_name(Scope.SHARED, "team") == "shared:team"
    assert tier_name("global") == "global"


def test_tiers_are_in_read_order() -> None:
    """Private first, then the pools in registration order, then global, numbered by order."""
    router = make_router()
    assert [(t.name, t.order, t.store) for t in router.tiers] == [
        ("private", 0, "P"),
        ("shared:team", 1, "T"),
        ("shared:ops", 2, "O"),
        ("global", 3, "G"),
    ]


def test_a_private_tier_is_required() -> None:
    """A router without a private store is a usage error."""
    with pytest.raises(UsageError, match="private tier"):
        MemoryRouter(private=None)


def test_unknown_tier_name_is_a_routing_error() -> None:
    """Looking up a tier that is not registered raises RoutingError."""
    with pytest.raises(RoutingError, match="shared:nope"):
        make_router().tier("shared:nope")


@pytest.mark.parametrize("value", [-0.1, 1.5, float("nan"), True, "0.5"])
def test_weights_outside_unit_range_are_refused(value: Any) -> None:
    """Each per-type weight must be a number in [0, 1]."""
    with pytest.raises(UsageError, match=r"MemoryWeights\.episodic"):
        MemoryWeights(episodic=value)


@pytest.mark.parametrize("value", [0, -1.0, float("inf")])
def test_decay_half_life_must_be_positive_and_finite(value: float) -> None:
    """A half-life must be a positive finite number of seconds."""
    with pytest.raises(UsageError, match=r"DecayProfile\.semantic"):
        DecayProfile(semantic=value)


def test_default_half_lives_grow_from_episodic_to_procedural() -> None:
    """Episodic fades fast, semantic slowly, procedural very slowly."""
    decay = DecayProfile()
    assert decay.half_life("episodic") < decay.half_life("semantic") < decay.half_life("procedural")
    assert decay.half_life(MemoryType.EPISODIC) == 7 * DAY


def test_weights_must_be_a_memory_weights() -> None:
    """Passing a plain dict as weights is a usage error."""
    with pytest.raises(UsageError, match="MemoryWeights"):
        MemoryRouter(private="P", weights={"episodic": 1.0})  # type: ignore[arg-type]


# ------------------------------------------------------------------ writes


def test_private_write_goes_to_private_only() -> None:
    """An ordinary private write lands in the private tier."""
    e = entry(importance=0.5)
    assert [(t.name, w) for t, w in make_router().route_write(e)] == [("private", e)]


def test_important_private_write_is_also_copied_to_global() -> None:
    """From importance 0.9 a private write also goes to global, rescoped, with the same id."""
    e = entry(importance=0.95)
    routes = make_router().route_write(e)
    assert [t.name for t, _ in routes] == ["private", "global"]
    assert routes[0][1] == e
    copy = routes[1][1]
    assert copy.scope is Scope.GLOBAL
    assert copy.id == e.id
    assert copy.content == e.content


def test_promotion_threshold_is_inclusive() -> None:
    """Importance exactly 0.9 promotes; just below does not."""
    router = make_router()
    assert len(router.route_write(entry(importance=0.9))) == 2
    assert len(router.route_write(entry(importance=0.89))) == 1


def test_promote_at_is_configurable() -> None:
    """promote_at moves the promotion threshold."""
    router = make_router(promote_at=0.5)
    assert [t.name for t, _ in router.route_write(entry(importance=0.5))] == ["private", "global"]


def test_important_private_write_without_global_tier_stays_private() -> None:
    """No global tier: no promotion copy, and no error."""
    routes = make_router(with_global=False).route_write(entry(importance=1.0))
    assert [t.name for t, _ in routes] == ["private"]


def test_shared_write_goes_to_its_pool() -> None:
    """A shared entry goes to the pool it names, and only there."""
    e = entry(scope="shared", pool="ops", importance=1.0)
    assert [(t.name, w) for t, w in make_router().route_write(e)] == [("shared:ops", e)]


def test_shared_write_to_unknown_pool_is_a_routing_error() -> None:
    """A shared entry naming an unregistered pool raises RoutingError naming it."""
    with pytest.raises(RoutingError, match="'research'"):
        make_router().route_write(entry(scope="shared", pool="research"))


def test_shared_entry_without_pool_never_reaches_a_pool_named_none() -> None:
    """A shared entry with no pool is a routing error even if a pool is literally called 'None'."""
    router = MemoryRouter(private="P", pools={"None": "N"})
    broken = Entry(id="x", content="c", scope=Scope.SHARED, pool=None)
    with pytest.raises(RoutingError):
        router.route_write(broken)


def test_global_write_goes_to_global() -> None:
    """A global entry goes to the global tier only."""
    e = entry(scope="global")
    assert [(t.name, w) for t, w in make_router().route_write(e)] == [("global", e)]


def test_global_write_without_global_tier_is_a_routing_error() -> None:
    """Writing a global entry with no global tier raises RoutingError."""
    with pytest.raises(RoutingError, match="no global tier"):
        make_router(with_global=False).route_write(entry(scope="global"))


def test_removed_pool_no_longer_takes_writes() -> None:
    """After remove_pool a write to that pool is a routing error."""
    router = make_router()
    assert router.remove_pool("team") == "T"
    with pytest.raises(RoutingError):
        router.route_write(entry(scope="shared", pool="team"))


# ------------------------------------------------------------------ reads


def test_read_without_scope_asks_every_tier_in_order() -> None:
    """No scope: private, then the pools, then global."""
    assert [t.name for t in make_router().route_read()] == ["private", "shared:team", "shared:ops", "global"]


def test_read_of_shared_scope_asks_every_pool() -> None:
    """scope='shared' without a pool asks all the pools."""
    assert [t.name for t in make_router().route_read("shared")] == ["shared:team", "shared:ops"]


def test_read_of_a_named_pool_asks_that_pool_only() -> None:
    """A pool without a scope reads that pool alone."""
    assert [t.name for t in make_router().route_read(pool="ops")] == ["shared:ops"]


def test_read_of_several_scopes_keeps_read_order() -> None:
    """A list of scopes is answered in private -> shared -> global order."""
    assert [t.name for t in make_router().route_read(["global", "private"])] == ["private", "global"]


def test_read_of_unknown_pool_is_a_caller_error() -> None:
    """Naming a pool that does not exist raises RoutingError (a UsageError)."""
    with pytest.raises(RoutingError, match="'nope'") as info:
        make_router().route_read("shared", pool="nope")
    assert isinstance(info.value, UsageError)


def test_read_of_unknown_scope_is_a_usage_error() -> None:
    """A scope that is not private, shared or global is refused with the library's UsageError."""
    with pytest.raises(UsageError, match="scope must be one of"):
        make_router().route_read("team")


def test_rank_with_unknown_mode_is_a_usage_error() -> None:
    """An unknown recall mode is refused with a UsageError, not a bare ValueError."""
    router = make_router()
    with pytest.raises(UsageError, match="mode must be one of"):
        router.rank(on(router, "private", make_hit("a")), query="q", k=5, mode="fuzzy")


def test_read_of_global_without_global_tier_degrades_to_nothing() -> None:
    """A scope with no registered tier is skipped, not an error."""
    assert make_router(with_global=False).route_read("global") == []


# ------------------------------------------------------------------ decay


def test_episodic_retention_halves_after_its_half_life() -> None:
    """Importance 1, one episodic half-life old: retention 0.5."""
    router = make_router()
    h = make_hit("a", type="episodic", importance=1.0, created_at=NOW - 7 * DAY)
    assert router.retention_of(h) == pytest.approx(0.5)


def test_the_same_age_decays_episodic_fastest() -> None:
    """At equal age and importance: episodic < semantic < procedural retention."""
    router = make_router()
    old = NOW - 30 * DAY
    r = {t: router.retention_of(make_hit(t, type=t, created_at=old)) for t in ("episodic", "semantic", "procedural")}
    assert r["episodic"] < r["semantic"] < r["procedural"] < 1.0


def test_importance_slows_decay() -> None:
    """A more important memory keeps more retention at the same age."""
    router = make_router()
    old = NOW - 10 * DAY
    assert router.retention_of(make_hit("a", importance=0.9, created_at=old)) > router.retention_of(
        make_hit("b", importance=0.2, created_at=old)
    )


def test_pinned_retention_is_one() -> None:
    """A pinned memory does not decay."""
    assert make_router().retention_of(make_hit("a", pinned=True, type="episodic", created_at=0.0)) == 1.0


def test_router_score_is_importance_times_retention_times_weight() -> None:
    """score = importance x retention x the type's weight."""
    router = make_router(weights=MemoryWeights(episodic=0.8))
    h = make_hit("a", type="episodic", importance=1.0, created_at=NOW - 7 * DAY)
    assert router.score(h) == pytest.approx(1.0 * 0.5 * 0.8)


def test_custom_decay_profile_sets_half_life() -> None:
    """A DecayProfile's half-life drives the retention."""
    router = make_router(decay=DecayProfile(semantic=DAY))
    assert router.retention_of(make_hit("a", importance=1.0, created_at=NOW - DAY)) == pytest.approx(0.5)


# ------------------------------------------------------------------ rank: merge


def test_duplicate_id_keeps_the_most_local_copy() -> None:
    """The same id from global and private: the private copy wins, whatever the input order."""
    router = make_router()
    cands = [
        *on(router, "global", make_hit("x", content="global copy")),
        *on(router, "shared:team", make_hit("x", content="team copy")),
        *on(router, "private", make_hit("x", content="private copy")),
    ]
    [only] = router.rank(cands, query="", k=10)
    assert (only.content, only.tier) == ("private copy", "private")


def test_every_ranked_hit_names_its_tier() -> None:
    """Ranked hits carry the name of the tier that served them."""
    router = make_router()
    cands = [*on(router, "private", make_hit("a")), *on(router, "shared:ops", make_hit("b"))]
    assert {h.id: h.tier for h in router.rank(cands, query="", k=10)} == {"a": "private", "b": "shared:ops"}


def test_rank_truncates_to_k() -> None:
    """At most k hits come back, the best ones."""
    router = make_router()
    hits = [make_hit(str(i), importance=i / 10) for i in range(1, 8)]
    assert ids(router.rank(on(router, "private", *hits), query="", k=3)) == ["7", "6", "5"]


def test_rank_of_nothing_is_empty() -> None:
    """No candidates, no hits."""
    assert make_router().rank([], query="anything", k=5) == []


# ------------------------------------------------------------------ rank: decay


def test_old_episodic_drops_out_while_equally_old_procedural_stays() -> None:
    """Decayed below the threshold: the episodic memory is gone, the procedural one is kept."""
    router = make_router()
    old = NOW - 60 * DAY
    hits = [make_hit("ep", type="episodic", created_at=old), make_hit("proc", type="procedural", created_at=old)]
    assert ids(router.rank(on(router, "private", *hits), query="", k=10)) == ["proc"]


def test_decayed_memory_drops_out_of_text_queries_too() -> None:
    """The decay filter applies with query text as well."""
    router = make_router()
    hits = [make_hit("ep", score=0.9, type="episodic", created_at=NOW - 60 * DAY), make_hit("fresh", score=0.1)]
    assert ids(router.rank(on(router, "private", *hits), query="postgres", k=10)) == ["fresh"]


def test_pinned_never_drops_out() -> None:
    """A pinned episodic memory from years ago is still returned."""
    router = make_router()
    h = make_hit("p", type="episodic", pinned=True, importance=0.0, created_at=NOW - 3000 * DAY)
    assert ids(router.rank(on(router, "private", h), query="", k=10)) == ["p"]


def test_recent_access_dates_the_decay() -> None:
    """accessed_at, not created_at, is when decay starts: a recently used old memory stays."""
    router = make_router()
    old = NOW - 60 * DAY
    used = make_hit("used", type="episodic", created_at=old, accessed_at=NOW - DAY)
    unused = make_hit("unused", type="episodic", created_at=old)
    assert ids(router.rank(on(router, "private", used, unused), query="", k=10)) == ["used"]


def test_old_access_decays_a_recently_created_hit() -> None:
    """When accessed_at is set it is used even if created_at is more recent."""
    router = make_router()
    h = make_hit("a", type="episodic", created_at=NOW, accessed_at=NOW - 60 * DAY)
    assert router.retention_of(h) < router.decay.consolidate_below


def test_injected_clock_dates_the_decay() -> None:
    """The same memory is kept at creation time and gone once the router's clock is months later."""
    h = make_hit("ep", type="episodic", created_at=NOW)
    early, late = make_router(now=NOW), make_router(now=NOW + 60 * DAY)
    assert ids(early.rank(on(early, "private", h), query="", k=10)) == ["ep"]
    assert late.rank(on(late, "private", h), query="", k=10) == []


def test_consolidation_threshold_is_configurable() -> None:
    """A zero threshold keeps everything; a threshold of one drops every unpinned memory."""
    old = make_hit("old", type="episodic", created_at=NOW - 365 * DAY)
    pinned = make_hit("pin", pinned=True)
    keep_all = make_router(decay=DecayProfile(consolidate_below=0.0))
    drop_all = make_router(decay=DecayProfile(consolidate_below=1.0))
    assert ids(keep_all.rank(on(keep_all, "private", old), query="", k=10)) == ["old"]
    assert ids(drop_all.rank(on(drop_all, "private", old, pinned), query="", k=10)) == ["pin"]


# ------------------------------------------------------------------ rank: listing (no text)


def test_listing_puts_pinned_first() -> None:
    """Without text a pinned low-importance memory precedes an important one."""
    router = make_router()
    hits = [make_hit("big", importance=1.0), make_hit("pin", importance=0.1, pinned=True)]
    assert ids(router.rank(on(router, "private", *hits), query="", k=10)) == ["pin", "big"]


def test_listing_orders_by_router_score() -> None:
    """Without text: higher decayed importance first (a fresher memory beats an older equal one)."""
    router = make_router()
    hits = [
        make_hit("low", importance=0.3),
        make_hit("stale", importance=0.8, created_at=NOW - 30 * DAY),
        make_hit("high", importance=0.8),
    ]
    assert ids(router.rank(on(router, "private", *hits), query="", k=10)) == ["high", "stale", "low"]


def test_listing_breaks_score_ties_by_newest() -> None:
    """Equal router scores: the newest memory first."""
    router = make_router()
    hits = [make_hit("older", created_at=NOW - 100), make_hit("newer", created_at=NOW - 50)]
    # accessed just now, so both retain exactly the same
    hits = [make_hit(h.id, created_at=h.created_at, accessed_at=NOW) for h in hits]
    assert ids(router.rank(on(router, "private", *hits), query="", k=10)) == ["newer", "older"]


def test_listing_applies_type_weights() -> None:
    """A non-neutral weight reorders types when listing."""
    router = make_router(weights=MemoryWeights(semantic=0.1, procedural=1.0))
    hits = [make_hit("fact", type="semantic", importance=0.9), make_hit("howto", type="procedural", importance=0.5)]
    assert ids(router.rank(on(router, "private", *hits), query="", k=10)) == ["howto", "fact"]


def test_whitespace_query_lists() -> None:
    """A whitespace-only query orders like a listing (pinned first)."""
    router = make_router()
    hits = [make_hit("big", importance=1.0, score=1.0), make_hit("pin", importance=0.1, score=0.0, pinned=True)]
    assert ids(router.rank(on(router, "private", *hits), query="   ", k=10)) == ["pin", "big"]


# ------------------------------------------------------------------ rank: with text


def test_single_tier_keeps_its_own_scores_and_order() -> None:
    """One tier served all hits and weights are neutral: its order and scores stand."""
    router = make_router()
    hits = [
        make_hit("a", score=0.9, importance=0.1),
        make_hit("b", score=0.5, importance=1.0),
        make_hit("c", score=0.2, importance=0.6),
    ]
    ranked = router.rank(on(router, "shared:team", *hits), query="postgres", k=10)
    assert [(h.id, h.score) for h in ranked] == [("a", 0.9), ("b", 0.5), ("c", 0.2)]


def test_type_weight_reorders_a_text_query() -> None:
    """A non-neutral weight scales relevance by weight / 0.5 and can reorder types."""
    hits = [make_hit("ep", type="episodic", score=0.8), make_hit("proc", type="procedural", score=0.6)]
    neutral = make_router()
    biased = make_router(weights=MemoryWeights(episodic=0.2, procedural=0.9))
    assert ids(neutral.rank(on(neutral, "private", *hits), query="deploy", k=10)) == ["ep", "proc"]
    assert ids(biased.rank(on(biased, "private", *hits), query="deploy", k=10)) == ["proc", "ep"]


def test_text_query_breaks_relevance_ties_by_router_score_then_newest() -> None:
    """Equal relevance: higher router score first, then the newest."""
    router = make_router()
    hits = [
        make_hit("old", score=0.5, importance=0.5, created_at=NOW - 100, accessed_at=NOW),
        make_hit("new", score=0.5, importance=0.5, created_at=NOW - 10, accessed_at=NOW),
        make_hit("important", score=0.5, importance=0.9),
    ]
    assert ids(router.rank(on(router, "private", *hits), query="x", k=10)) == ["important", "new", "old"]


def test_refusion_lets_a_strong_match_beat_a_tiers_weak_top_hit() -> None:
    """A weak match normalised to 1.0 by its own tier loses to a strong match from another tier."""
    router = make_router()
    cands = [
        *on(router, "private", make_hit("weak", score=1.0, keyword=0.4, vector=0.2)),
        *on(
            router,
            "global",
            make_hit("strong", score=0.7, keyword=6.0, vector=0.85),
            make_hit("middling", score=0.3, keyword=1.0, vector=0.3),
        ),
    ]
    ranked = router.rank(cands, query="postgres version", k=10)
    assert ids(ranked) == ["strong", "middling", "weak"]


def test_refusion_replaces_scores_with_absolute_relevance() -> None:
    """After a re-fusion every score is the hit's absolute relevance in [0, 1] (``scores.hybrid``), not min-max."""
    router = make_router()
    cands = [
        *on(router, "private", make_hit("a", score=7.0, keyword=1.0, vector=0.1)),
        *on(router, "global", make_hit("b", score=0.3, keyword=3.0, vector=0.9)),
    ]
    ranked = router.rank(cands, query="q", k=10)
    expected = [("b", scores.hybrid(3.0, 0.9, vector_weight=0.5)), ("a", scores.hybrid(1.0, 0.1, vector_weight=0.5))]
    got = [(h.id, h.score, h.relevance) for h in ranked]
    assert got == [(i, pytest.approx(x), pytest.approx(x)) for i, x in expected]
    assert 0 < ranked[1].score < ranked[0].score < 1


def test_refusion_ranks_by_each_tiers_own_relevance_when_it_has_one() -> None:
    """A tier's relevance (its BM25 scaled by its own statistics) wins over the router's estimate from raw scores."""
    router = make_router()
    cands = [
        *on(router, "private", make_hit("a", keyword=9.0, vector=0.9, relevance=0.2)),
        *on(router, "global", make_hit("b", keyword=0.5, vector=0.4, relevance=0.8)),
    ]
    assert [(h.id, h.relevance) for h in router.rank(cands, query="q", k=10)] == [("b", 0.8), ("a", 0.2)]


def test_keyword_mode_refuses_on_bm25_only() -> None:
    """In keyword mode the re-fusion ignores cosine scores."""
    router = make_router()
    cands = [
        *on(router, "private", make_hit("bm25", keyword=5.0, vector=0.1)),
        *on(router, "global", make_hit("cosine", keyword=1.0, vector=0.9)),
    ]
    assert ids(router.rank(cands, query="q", k=10, mode="keyword")) == ["bm25", "cosine"]


def test_semantic_mode_refuses_on_cosine_only() -> None:
    """In semantic mode the re-fusion ignores BM25 scores."""
    router = make_router()
    cands = [
        *on(router, "private", make_hit("bm25", keyword=5.0, vector=0.1)),
        *on(router, "global", make_hit("cosine", keyword=1.0, vector=0.9)),
    ]
    assert ids(router.rank(cands, query="q", k=10, mode="semantic")) == ["cosine", "bm25"]


def test_vector_weight_steers_hybrid_refusion() -> None:
    """vector_weight 0 is keyword order, 1 is cosine order."""
    router = make_router()
    cands = [
        *on(router, "private", make_hit("bm25", keyword=5.0, vector=0.1)),
        *on(router, "global", make_hit("cosine", keyword=1.0, vector=0.9)),
    ]
    assert ids(router.rank(cands, query="q", k=10, vector_weight=0.0)) == ["bm25", "cosine"]
    assert ids(router.rank(cands, query="q", k=10, vector_weight=1.0)) == ["cosine", "bm25"]


def test_no_refusion_when_the_other_tiers_hits_decayed_away() -> None:
    """If only one tier's hits survive the decay filter, its own scores are kept."""
    router = make_router()
    cands = [
        *on(router, "private", make_hit("a", score=0.42, keyword=1.0, vector=0.1)),
        *on(router, "global", make_hit("gone", type="episodic", created_at=NOW - 365 * DAY, keyword=9.0)),
    ]
    assert [(h.id, h.score) for h in router.rank(cands, query="q", k=10)] == [("a", 0.42)]
