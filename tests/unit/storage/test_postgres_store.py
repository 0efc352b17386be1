"""The PostgreSQL store: what the conformance suite does not cover (URLs, schemas, HNSW, faults, writers)."""

from __future__ import annotations

import asyncio
import sys
import uuid
from pathlib import Path

import pytest

from elastic_memory import AsyncMemory, LoopConfig, SchemaVersionError, StorageError, UsageError
from elastic_memory.storage import PostgresStore
from elastic_memory.testing import FakeEmbedder

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def url(pg_location: str) -> str:
    """A fresh schema on the session's server."""
    return pg_location


async def _open(url: str, **options: object) -> AsyncMemory:
    return await AsyncMemory.open(url, embedder=FakeEmbedder(), **options)  # type: ignore[arg-type]


async def _sql(url: str, statement: str) -> list[tuple[object, ...]]:
    import psycopg

    base = url.split("?", 1)[0]
    async with await psycopg.AsyncConnection.connect(base, autocommit=True) as conn:
        cur = await conn.execute(statement)
        return list(await cur.fetchall()) if cur.description else []


async def _hnsw_valid(url: str) -> bool:
    """Whether the store's HNSW index exists and is valid (a failed concurrent build leaves it invalid)."""
    schema = url.rsplit("=", 1)[1]
    rows = await _sql(
        url,
        "SELECT i.indisvalid FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid "
        "JOIN pg_namespace AS n ON n.oid = c.relnamespace "
        f"WHERE c.relname = 'memory_vectors_hnsw' AND n.nspname = '{schema}'",
    )
    return rows == [(True,)]


async def test_two_schemas_on_one_database_never_see_each_other(url: str) -> None:
    other = url.rsplit("=", 1)[0] + "=other_" + uuid.uuid4().hex[:8]
    async with await _open(url) as a, await _open(other) as b:
        await a.remember("The launch code is in the blue binder.", agent_id="ana")
        assert await b.recall("launch code blue binder", filters={"agent_id": "ana"}) == []
        assert (await b.stats())["total_memories"] == 0


async def test_a_schema_holding_other_tables_is_refused_untouched(url: str) -> None:
    schema = url.rsplit("=", 1)[1]
    await _sql(url, f'CREATE SCHEMA "{schema}"')
    await _sql(url, f'CREATE TABLE "{schema}".invoices (id int)')
    with pytest.raises(UsageError, match="invoices"):
        await _open(url)
    assert await _sql(url, f'SELECT count(*) FROM "{schema}".invoices') == [(0,)]


async def test_a_newer_schema_version_is_refused(url: str) -> None:
    async with await _open(url):
        pass
    schema = url.rsplit("=", 1)[1]
    await _sql(url, f'INSERT INTO "{schema}".schema_version (version) VALUES (99)')
    with pytest.raises(SchemaVersionError, match="upgrade elastic-memory"):
        await _open(url)


async def test_a_schema_name_that_is_not_an_identifier_is_refused(postgres_url: str) -> None:
    with pytest.raises(UsageError, match="letters, digits or underscores"):
        await _open(f"{postgres_url}?schema=a;drop")


async def test_the_ram_tier_is_refused_on_a_server(url: str) -> None:
    with pytest.raises(UsageError, match=r"'auto'.*'ann'"):
        await _open(url, vector_index="ram")


async def test_the_password_never_shows_in_stats(url: str) -> None:
    with_password = url.replace("postgres@", "postgres:hunter2@")
    async with await _open(with_password) as mem:
        shown = (await mem.stats())["path"]
    assert "hunter2" not in shown
    assert shown.startswith("postgresql://postgres@127.0.0.1:")


async def test_the_path_keeps_the_urls_connection_parameters(url: str) -> None:
    """Adapters serialise the path: reopening it must connect the same way (here: sslmode)."""
    base, schema = url.split("?")
    async with await _open(f"{base}?sslmode=disable&{schema}") as mem:
        shown = (await mem.stats())["path"]
    assert shown == f"{base}?sslmode=disable&{schema}"


async def test_an_unreachable_server_is_a_storage_error_without_the_password() -> None:
    with pytest.raises(StorageError) as caught:
        await _open("postgresql://ana:hunter2@127.0.0.1:9/mem", timeout=1.0)
    assert "hunter2" not in str(caught.value)
    assert "127.0.0.1:9" in str(caught.value)


async def test_a_turn_recorded_on_postgres_comes_back_in_the_next_plan(url: str) -> None:
    async with await _open(url) as mem:
        receipt = await mem.record_turn("My dog is called Biscuit.", "What a lovely name!", session_id="monday")
        await mem.drain()
        plan = await mem.build_context("What is my dog called?", session_id="tuesday")
    assert receipt.ok, receipt.error
    assert "Biscuit" in plan.render()


async def test_facts_on_postgres_keep_their_history(url: str) -> None:
    async with await _open(url) as mem:
        await mem.facts.set("user.city", "Leeds")
        await mem.facts.set("user.city", "York")
        history = await mem.facts.history("user.city")
    assert [f.value for f in history] == ["Leeds", "York"]
    assert history[0].invalidated_by == history[1].id


async def test_hnsw_builds_its_index_when_the_store_is_pinned(url: str) -> None:
    async with await _open(url, vector_index="ann") as mem:
        await mem.remember("the first vector pins the store")
    assert await _hnsw_valid(url)


async def test_hnsw_is_built_on_opening_a_store_loaded_without_it(url: str) -> None:
    async with await _open(url) as mem:
        await mem.remember_many([f"note number {i}" for i in range(30)])
    async with await _open(url, vector_index="ann") as mem:
        explanation = await mem.explain("note number 3", mode="semantic", k=5)
    assert await _hnsw_valid(url)
    assert explanation.details["vector_index"] == "hnsw"
    assert len(explanation.hits) == 5


async def test_auto_stays_exact_below_the_threshold(url: str) -> None:
    async with await _open(url, ann_threshold=50) as mem:
        await mem.remember_many([f"note number {i}" for i in range(20)])
        assert await mem.load_index() == "exact"
    assert not await _hnsw_valid(url)


async def test_auto_builds_hnsw_from_the_threshold_on(url: str) -> None:
    async with await _open(url, ann_threshold=25) as mem:
        await mem.remember_many([f"note number {i}" for i in range(30)])
        assert await mem.load_index() == "hnsw"
        explanation = await mem.explain("note number 3", mode="semantic", k=5)
    assert await _hnsw_valid(url)
    assert explanation.details["vector_index"] == "hnsw"
    assert len(explanation.hits) == 5


async def test_auto_builds_hnsw_in_the_background_when_a_search_finds_it_due(url: str) -> None:
    """A search under "auto" starts the build; it answers exactly meanwhile, then through the index."""
    async with await _open(url, ann_threshold=25) as mem:
        await mem.remember_many([f"note number {i}" for i in range(30)])
        first = await mem.explain("note number 3", mode="semantic", k=5)
        for _ in range(200):
            if (await mem.stats())["vector_index"] == "hnsw":
                break
            await asyncio.sleep(0.05)
        later = await mem.explain("note number 3", mode="semantic", k=5)
    assert first.details["vector_index"] == "exact"
    assert later.details["vector_index"] == "hnsw"
    assert [h.id for h in later.hits] == [h.id for h in first.hits]


async def test_auto_uses_an_index_another_process_built(url: str) -> None:
    async with await _open(url, vector_index="ann") as builder:
        await builder.remember_many([f"note number {i}" for i in range(10)])
    async with await _open(url) as mem:  # below the default threshold, but the index is there
        assert await mem.load_index() == "hnsw"


async def test_hnsw_with_a_selective_filter_falls_back_to_the_exact_scan(url: str) -> None:
    async with await _open(url, vector_index="ann") as mem:
        await mem.remember_many([f"note number {i}" for i in range(60)])
        await mem.remember_many([{"content": f"rare {n}", "tags": ["rare"]} for n in ("one", "two", "three")])
        explanation = await mem.explain("note", mode="semantic", k=10, filters={"tags": ["rare"]})
        assert sorted(h.content for h in explanation.hits) == ["rare one", "rare three", "rare two"]
        assert explanation.details["vector_index"] == "exact"
        assert "fewer rows" in explanation.details["ann_fallback"]


async def test_concurrent_writers_of_the_same_text_store_it_once(url: str) -> None:
    async with await _open(url) as a, await _open(url) as b:
        ids = await asyncio.gather(*(m.remember("Standup moved to 10:00.") for m in (a, b, a, b)))
        assert len(set(ids)) == 1
        assert (await a.stats())["total_memories"] == 1


async def test_a_write_whose_connection_is_killed_after_its_insert_leaves_nothing(url: str) -> None:
    """The write inserts its rows, then waits on the vector table (locked elsewhere); its backend is killed there."""
    import psycopg

    async with await _open(url) as mem:
        await mem.remember("before")  # pins the store: the vector table exists
        schema = url.rsplit("=", 1)[1]
        async with await psycopg.AsyncConnection.connect(url.split("?", 1)[0]) as holder:
            await holder.execute(f'LOCK TABLE "{schema}".memory_vectors IN EXCLUSIVE MODE')
            write = asyncio.create_task(mem.remember_many(["during one", "during two"]))
            waiting: list[tuple[object, ...]] = []
            for _ in range(100):
                waiting = await _sql(
                    url,
                    "SELECT a.pid FROM pg_stat_activity AS a WHERE a.wait_event_type = 'Lock' "
                    "AND a.wait_event = 'relation' AND a.query LIKE 'INSERT INTO memory_vectors%'",
                )
                if waiting:
                    break
                await asyncio.sleep(0.05)
            assert waiting, "the write never reached its vector insert"
            await _sql(url, f"SELECT pg_terminate_backend({waiting[0][0]})")
            with pytest.raises(StorageError, match="nothing was written unless"):
                await write
        assert (await mem.stats())["total_memories"] == 1
        await mem.remember("recovered")  # the pool replaced the dead connection
        assert [h.content for h in await mem.recall("recovered", mode="keyword")] == ["recovered"]


#: One agent process: ``count`` writes in batches of 5; prints the acknowledged ids.
_WRITER = """
import sys
from elastic_memory import Memory
from elastic_memory.testing import FakeEmbedder
url, worker, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with Memory.open(url, embedder=FakeEmbedder()) as mem:
    for start in range(0, count, 5):
        for mid in mem.remember_many([f"worker {worker} memory {i}" for i in range(start, start + 5)]):
            print(mid, flush=True)
"""


async def test_eight_processes_writing_at_once_lose_no_acknowledged_write(url: str) -> None:
    """They all open the new schema at once too: creating and migrating it is one opener's job."""
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable, "-c", _WRITER, url, str(i), "25", stdout=asyncio.subprocess.PIPE
        )
        for i in range(8)
    ]
    outputs = await asyncio.gather(*(p.communicate() for p in procs))
    assert [p.returncode for p in procs] == [0] * 8
    acked = [line for out, _ in outputs for line in out.decode().split()]
    assert len(acked) == 200
    async with await _open(url) as mem:
        found = await mem.get_many(acked)
        assert len(found) == 200


async def test_a_federation_whose_server_is_down_still_answers_from_the_private_file(tmp_path: Path) -> None:
    mem = await AsyncMemory.for_agent(
        "ana",
        home=tmp_path,
        pools=["team"],
        embedder=FakeEmbedder(),
        server="postgresql://127.0.0.1:9/mem",
        timeout=1.0,
    )
    try:
        await mem.remember("The user lives in Lisbon.")
        assert [h.content for h in await mem.recall("Lisbon")] == ["The user lives in Lisbon."]
        tiers = (await mem.health())["federation"]["tiers"]
        assert not tiers["shared:team"]["ok"]
    finally:
        await mem.close()


async def test_a_server_url_password_never_reaches_the_log(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    mem = await AsyncMemory.for_agent(
        "ana", home=tmp_path, pools=["team"], embedder=FakeEmbedder(), server="postgresql://ana:hunter2@127.0.0.1:9/m"
    )
    await mem.close()
    assert "127.0.0.1:9" in caplog.text
    assert "hunter2" not in caplog.text


@pytest.mark.parametrize("vector_index", ["auto", "ann"])
async def test_semantic_recall_past_many_forgotten_neighbours_still_returns_k(url: str, vector_index: str) -> None:
    """Vectors are ranked alone, then checked for liveness: hidden rows make it fetch more, never return fewer."""
    async with await _open(url, vector_index=vector_index) as mem:
        near = await mem.remember_many([f"garden note {i}" for i in range(60)])
        far = await mem.remember_many([f"invoice {i} for the accountant" for i in range(12)])
        await mem.forget(near)
        hits = await mem.recall("garden note", mode="semantic", k=10)
        assert len(hits) == 10
        assert {h.id for h in hits} <= set(far)


async def test_hnsw_hybrid_recall_with_the_most_candidates_works(url: str) -> None:
    """1,000 candidates per leg ask for more than pgvector's ef_search ceiling (1,000)."""
    from elastic_memory import RecallConfig

    async with await _open(url, vector_index="ann", recall=RecallConfig(candidates=1000)) as mem:
        await mem.remember_many([f"note number {i}" for i in range(40)])
        hits = await mem.recall("note number 7", mode="hybrid", k=5)
        assert len(hits) == 5


async def test_stored_vectors_read_back_as_the_vectors_written(url: str) -> None:
    import numpy as np

    fake = FakeEmbedder()
    async with await AsyncMemory.open(url, embedder=fake) as mem:
        mid = await mem.remember("a note about gardens")
        got = (await mem.vectors([mid]))[mid]
    assert np.allclose(np.array(got), fake.embed(["a note about gardens"])[0], atol=1e-6)


async def test_an_export_with_vectors_reimports_into_sqlite(url: str, tmp_path: Path) -> None:
    """The PostgreSQL store's records and vectors stream out (iter_records) like SQLite's."""
    async with await _open(url) as mem:
        await mem.remember_many(["first note", "second note"])
        assert await mem.export_jsonl(tmp_path / "out.jsonl", vectors=True) == 2
    async with await AsyncMemory.open(tmp_path / "copy.db", embedder=FakeEmbedder()) as copy:
        await copy.import_jsonl(tmp_path / "out.jsonl")
        assert sorted(h.content for h in await copy.recall("note", mode="semantic")) == ["first note", "second note"]


async def test_a_claim_is_held_against_another_process_until_released(url: str) -> None:
    first, second = await PostgresStore.open(url), await PostgresStore.open(url)
    try:
        async with first.claim("a:extract") as mine, second.claim("a:extract") as theirs:
            held = (mine, theirs)
        async with second.claim("a:extract") as after:
            freed = after
    finally:
        await first.close()
        await second.close()
    assert held == (True, False)
    assert freed


async def test_a_background_job_another_process_holds_is_skipped_then_done_later(url: str) -> None:
    """Two processes serving one store: the one without the claim leaves the work to the holder.

    Embedding is the store's (every agent's rows), so its claim is ``"embed"``, not ``"<agent>:embed"``.
    """
    other = await PostgresStore.open(url)
    mem = await _open(url, loop=LoopConfig(background=False))
    try:
        async with other.claim("embed"):
            await mem.record_turn("My dog is called Biscuit.", "What a lovely name!")
            await mem.drain()
            skipped = (await mem.stats())["vectors"]
        await mem.record_turn("She is a beagle.", "Lovely!")
        await mem.drain()
        done = (await mem.stats())["vectors"]
    finally:
        await mem.close()
        await other.close()
    assert skipped == 0
    assert done >= 2
