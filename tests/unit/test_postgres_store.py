"""The PostgreSQL store: what the conformance suite does not cover (URLs, schemas, HNSW, faults, writers)."""

from __future__ import annotations

import asyncio
import multiprocessing
import uuid
from pathlib import Path

import pytest

from elastic_memory import AsyncMemory, SchemaVersionError, StorageError, UsageError
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
    assert "hunter2" not in shown and "***" in shown


async def test_an_unreachable_server_is_a_storage_error_without_the_password() -> None:
    with pytest.raises(StorageError) as caught:
        await _open("postgresql://ana:hunter2@127.0.0.1:9/mem", timeout=1.0)
    assert "hunter2" not in str(caught.value)
    assert "127.0.0.1:9" in str(caught.value)


async def test_record_turn_says_the_memory_loop_is_not_on_postgres_yet(url: str) -> None:
    async with await _open(url) as mem:
        with pytest.raises(UsageError, match=r"not\s+available on PostgreSQL"):
            await mem.record_turn("I live in Lisbon.", "Noted.")


async def test_build_context_points_to_the_scaling_out_page(url: str) -> None:
    async with await _open(url) as mem:
        with pytest.raises(UsageError, match="scaling-out"):
            await mem.build_context("where do I live?")


async def test_hnsw_serves_semantic_recall_when_asked(url: str) -> None:
    async with await _open(url, vector_index="ann") as mem:
        await mem.remember_many([f"note number {i} about topic {i % 7}" for i in range(60)])
        explanation = await mem.explain("note about topic 3", mode="semantic", k=5)
        assert explanation.details["vector_index"] == "hnsw"
        assert len(explanation.hits) == 5
        assert (await mem.stats())["vector_index"] == "hnsw"


async def test_hnsw_with_a_selective_filter_falls_back_to_the_exact_scan(url: str) -> None:
    async with await _open(url, vector_index="ann") as mem:
        await mem.remember_many([f"note number {i}" for i in range(60)])
        await mem.remember_many([{"content": f"rare {n}", "tags": ["rare"]} for n in ("one", "two", "three")])
        explanation = await mem.explain("note", mode="semantic", k=10, filters={"tags": ["rare"]})
        assert sorted(h.content for h in explanation.hits) == ["rare one", "rare three", "rare two"]


async def test_concurrent_writers_of_the_same_text_store_it_once(url: str) -> None:
    async with await _open(url) as a, await _open(url) as b:
        ids = await asyncio.gather(*(m.remember("Standup moved to 10:00.") for m in (a, b, a, b)))
        assert len(set(ids)) == 1
        assert (await a.stats())["total_memories"] == 1


async def test_a_write_whose_connection_is_killed_raises_and_leaves_nothing(url: str) -> None:
    """The write waits on its transaction's advisory lock (held elsewhere); its backend is terminated there."""
    import psycopg

    async with await _open(url) as mem:
        await mem.remember("before")
        schema = url.rsplit("=", 1)[1]
        base = url.split("?", 1)[0]
        async with await psycopg.AsyncConnection.connect(base) as holder:
            await holder.execute(f'SET search_path TO "{schema}"')
            await holder.execute("SELECT pg_advisory_xact_lock(%s, hashtext(current_schema()))", [0x454D])
            write = asyncio.create_task(mem.remember_many(["during one", "during two"]))
            for _ in range(100):
                waiting = await _sql(
                    url, "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory'"
                )
                if waiting:
                    break
                await asyncio.sleep(0.05)
            assert waiting, "the write never waited on the lock"
            await _sql(url, f"SELECT pg_terminate_backend({waiting[0][0]})")
            with pytest.raises(StorageError, match="nothing was written"):
                await write
        assert (await mem.stats())["total_memories"] == 1
        await mem.remember("recovered")  # the pool replaced the dead connection
        assert [h.content for h in await mem.recall("recovered", mode="keyword")] == ["recovered"]


def _writer(url: str, worker: int, count: int, out: Path) -> None:
    """One agent process: ``count`` writes in batches of 5; the acknowledged ids go to ``out``."""

    async def main() -> list[str]:
        acked: list[str] = []
        async with await _open(url) as mem:
            for start in range(0, count, 5):
                batch = [f"worker {worker} memory {i}" for i in range(start, start + 5)]
                acked += await mem.remember_many(batch)
        return acked

    out.write_text("\n".join(asyncio.run(main())))


async def test_eight_processes_writing_at_once_lose_no_acknowledged_write(url: str, tmp_path: Path) -> None:
    async with await _open(url):
        pass  # created and migrated once, before the writers race
    context = multiprocessing.get_context("spawn")
    outs = [tmp_path / f"w{i}.txt" for i in range(8)]
    procs = [context.Process(target=_writer, args=(url, i, 25, outs[i])) for i in range(8)]
    for p in procs:
        p.start()
    for p in procs:
        await asyncio.to_thread(p.join, 90)
        assert p.exitcode == 0
    acked = [line for o in outs for line in o.read_text().splitlines()]
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
        assert "team" not in str([h.pool for h in await mem.recall("Lisbon")])
    finally:
        await mem.close()
