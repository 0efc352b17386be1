"""Conformance: recall in every mode."""

from __future__ import annotations

import pytest

from .drivers import Capability, MemoryDriver

FACTS = [
    "The user's dog is called Biscuit.",
    "The user is allergic to peanuts.",
    "The user lives in Lisbon.",
    "The user prefers metric units.",
    "The project deadline is March 3rd.",
]


@pytest.mark.requires(Capability.KEYWORD)
async def test_keyword_finds_a_memory_by_its_words(driver: MemoryDriver) -> None:
    """BM25 ranks the memory that shares the query's rare word first.

    If this fails, check the FTS5 triggers and the MATCH expression builder.
    """
    await driver.remember_many(FACTS)
    hits = await driver.recall("peanuts allergy", mode="keyword")
    assert hits[0].content == "The user is allergic to peanuts."


@pytest.mark.requires(Capability.KEYWORD)
async def test_keyword_uses_stemming(driver: MemoryDriver) -> None:
    """The porter tokenizer matches 'preferring' to 'prefers'.

    If this fails, check tokenize='porter unicode61' on the FTS table.
    """
    await driver.remember_many(FACTS)
    hits = await driver.recall("preferring", mode="keyword")
    assert [h.content for h in hits] == ["The user prefers metric units."]


@pytest.mark.requires(Capability.SEMANTIC)
async def test_semantic_returns_the_nearest_vector_first(driver: MemoryDriver) -> None:
    """Semantic recall of a memory's own text ranks it first with cosine ~1.

    If this fails, check that vectors are written with their rows and L2-normalised.
    """
    await driver.remember_many(FACTS)
    hits = await driver.recall("The user lives in Lisbon.", mode="semantic", k=3)
    assert hits[0].content == "The user lives in Lisbon."
    assert hits[0].vector_score == pytest.approx(1.0, abs=1e-5)


@pytest.mark.requires(Capability.HYBRID)
async def test_hybrid_ranks_the_best_match_first(driver: MemoryDriver) -> None:
    """Hybrid fusion puts the memory both legs agree on first.

    If this fails, check the fusion and that both legs ran (see explain()).
    """
    await driver.remember_many(FACTS)
    hits = await driver.recall("project deadline", mode="hybrid", k=3)
    assert hits[0].content == "The project deadline is March 3rd."


@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
async def test_recall_respects_k(driver: MemoryDriver, mode: str) -> None:
    """Never more than k hits.

    If this fails, check the truncation after fusion.
    """
    await driver.remember_many([f"user fact number {i}" for i in range(12)])
    assert len(await driver.recall("user fact", k=4, mode=mode)) == 4


@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
async def test_scores_are_ordered_best_first(driver: MemoryDriver, mode: str) -> None:
    """Hits come sorted by descending score.

    If this fails, check the final sort of the ranking.
    """
    await driver.remember_many(FACTS)
    scores = [h.score for h in await driver.recall("user dog units", k=5, mode=mode)]
    assert scores == sorted(scores, reverse=True)


async def test_recall_on_an_empty_store_returns_nothing(driver: MemoryDriver) -> None:
    """An empty store recalls an empty list in every mode, no error.

    If this fails, check the vector leg before any vector is pinned.
    """
    for mode in ("keyword", "semantic", "hybrid"):
        assert await driver.recall("anything at all", mode=mode) == []


async def test_empty_query_lists_pinned_then_important(driver: MemoryDriver) -> None:
    """No-text recall orders pinned first, then by importance, then newest.

    If this fails, check the browse query's ORDER BY.
    """
    await driver.remember("low", importance=0.1)
    await driver.remember("high", importance=0.9)
    await driver.remember("pinned", importance=0.0, pinned=True)
    assert [h.content for h in await driver.recall("")] == ["pinned", "high", "low"]


async def test_hits_carry_provenance(driver: MemoryDriver) -> None:
    """A hit exposes id, type, tags, metadata and its session.

    If this fails, check hit_from_record.
    """
    mid = await driver.remember(
        "Biscuit is a beagle.", type="episodic", tags=["pet"], session_id="s1", metadata={"k": 1}
    )
    hit = (await driver.recall("beagle", mode="keyword"))[0]
    assert (hit.id, hit.type.value, hit.tags, hit.session_id, hit.metadata) == (
        mid,
        "episodic",
        ("pet",),
        "s1",
        {"k": 1},
    )


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
async def test_memories_written_after_a_recall_are_found(driver: MemoryDriver, mode: str) -> None:
    """A write after the vector index was loaded is searchable at once.

    If this fails, check that the in-RAM index is updated after every committed write.
    """
    await driver.remember("an early memory about gardens")
    await driver.recall("gardens", mode=mode)
    mid = await driver.remember("a later memory about volcanoes")
    hits = await driver.recall("a later memory about volcanoes", k=1, mode="semantic")
    assert [h.id for h in hits] == [mid]
