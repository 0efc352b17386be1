"""Tier schemas on a PostgreSQL server: no two tiers share one, and stores named by earlier versions are found again.

The end-to-end tests give each test its own prefix (``?schema=t_<hex>``) on the session's
server, so their tiers never meet. "The previous version" is simulated by opening the tiers
at their legacy names, as it did: no comment recorded, the schema created on first open.
"""

from __future__ import annotations

import logging
import operator
import re
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from elastic_memory import AsyncMemory, UsageError
from elastic_memory.federation import assembly
from elastic_memory.federation.config import check_name
from elastic_memory.federation.pg_names import legacy_schema_name, schema_name, server_prefix
from elastic_memory.testing import FakeEmbedder

pytestmark = pytest.mark.timeout(120)

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
#: The default prefix, one with a capital, and the longest that leaves room for a hash.
_PREFIXES = ("em", "Staging", "p" * 28)
_ALPHABET = "aAbB089_-."


def _long(stem: str, tail: str, size: int) -> str:
    """A name of ``size`` characters: ``stem`` repeated, then ``tail`` (long names that differ only at the end)."""
    return ((stem or "a") * 128)[: size - len(tail)] + tail


_short = st.text(_ALPHABET, max_size=8)
_names = st.builds(
    operator.add,
    st.sampled_from("aAb08"),
    _short | _short | st.builds(_long, _short, _short, st.integers(100, 127)),
)


def _valid(name: str) -> bool:
    try:
        check_name(name, "a pool name")
    except UsageError:
        return False
    return True


def _variants(name: str, prefix: str) -> set[str]:
    """``name`` and its look-alikes: '-', '.', '_' swapped, case flipped, cut, and the suffixes of its schemas."""
    pool = len(prefix) + len("_pool_")
    names = {
        name,
        name.replace("-", "_"),
        name.replace(".", "_"),
        name.replace("_", "-"),
        name.swapcase(),
        name.lower(),
        name[:-1],
        name + "_",
        name + "__",
        schema_name(prefix, f"pool:{name}")[pool:],  # a clean name spelling this one's hashed schema
        legacy_schema_name(prefix, f"pool:{name}")[pool:],  # how pool 'a_b_8dfa' took pool 'a-b''s schema
    }
    return {n for n in names if _valid(n)}


def test_no_two_of_30000_tier_names_share_a_schema() -> None:
    seen: dict[str, dict[str, str]] = {p: {"x": "global"} for p in _PREFIXES}

    @settings(max_examples=100, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(_names, min_size=50, max_size=50, unique=True))
    def check(names: list[str]) -> None:
        for prefix in _PREFIXES:
            tiers = {"global"} | {f"pool:{v}" for n in names for v in _variants(n, prefix)}
            for tier in tiers:
                schema = schema_name(prefix, tier)
                assert _IDENTIFIER.fullmatch(schema), schema
                assert len(schema.encode()) <= 63
                assert schema.startswith(f"{prefix}_")
                other = seen[prefix].setdefault(schema, tier)
                assert other == tier, f"{tier!r} and {other!r} share schema {schema!r}"

    # One run draws ~35,000 distinct names; hypothesis 6.168 (the last for Python 3.10) draws ~14,000.
    for _ in range(5):
        check()
        if min(len(s) for s in seen.values()) > 30_000:
            break
    assert min(len(s) for s in seen.values()) > 30_000


def test_a_prefix_that_leaves_no_room_for_a_hash_is_refused() -> None:
    with pytest.raises(UsageError, match="at most 28 characters"):
        schema_name("p" * 29, "pool:a-b")


# --------------------------------------------------------------------------- on a server


@pytest.fixture
def server(postgres_url: str) -> str:
    """The session's server under a prefix of this test only."""
    return f"{postgres_url}?schema=t_{uuid.uuid4().hex[:12]}"


@pytest.fixture
async def homes(tmp_path: Path) -> AsyncIterator[list[AsyncMemory]]:
    """The federations a test opened, closed at its end."""
    opened: list[AsyncMemory] = []
    yield opened
    for mem in opened:
        await mem.close()


async def _agent(homes: list[AsyncMemory], tmp_path: Path, server: str, agent: str, pool: str) -> AsyncMemory:
    mem = await AsyncMemory.for_agent(
        agent, home=tmp_path / agent, pools=[pool], embedder=FakeEmbedder(), server=server
    )
    homes.append(mem)
    return mem


async def _shared(mem: AsyncMemory, query: str) -> list[str]:
    return [h.content for h in await mem.recall(query, mode="keyword", scope="shared")]


async def _ok(mem: AsyncMemory, pool: str) -> bool:
    return bool((await mem.health())["federation"]["tiers"][f"shared:{pool}"]["ok"])


async def _sql(server: str, statement: str) -> list[tuple[object, ...]]:
    import psycopg

    async with await psycopg.AsyncConnection.connect(server.split("?", 1)[0], autocommit=True) as conn:
        cur = await conn.execute(statement)
        return list(await cur.fetchall()) if cur.description else []


async def test_a_pool_named_like_another_pools_old_schema_does_not_see_its_secret(
    server: str, tmp_path: Path, homes: list[AsyncMemory]
) -> None:
    ana = await _agent(homes, tmp_path, server, "ana", "a-b")
    await ana.remember("The vault code is 0451.", scope="shared", pool="a-b")
    prefix = server_prefix(server)[1]
    suffix = legacy_schema_name(prefix, "pool:a-b")[len(prefix) + len("_pool_") :]
    mallory = await _agent(homes, tmp_path, server, "mallory", suffix)
    assert await _shared(mallory, "vault code") == []


async def test_a_pool_store_of_the_previous_version_is_found_again(
    server: str, tmp_path: Path, homes: list[AsyncMemory]
) -> None:
    await _write_as_previous_version(server, tmp_path, "a-b", "Deploys happen on Fridays.")
    ana = await _agent(homes, tmp_path, server, "ana", "a-b")
    assert await _shared(ana, "Deploys Fridays") == ["Deploys happen on Fridays."]


async def test_moving_a_legacy_schema_is_logged_with_both_names(
    server: str, tmp_path: Path, homes: list[AsyncMemory], caplog: pytest.LogCaptureFixture
) -> None:
    prefix = server_prefix(server)[1]
    legacy, new = legacy_schema_name(prefix, "pool:a-b"), schema_name(prefix, "pool:a-b")
    await _write_as_previous_version(server, tmp_path, "a-b", "Deploys happen on Fridays.")
    with caplog.at_level(logging.WARNING, logger="elastic_memory.federation"):
        await _agent(homes, tmp_path, server, "ana", "a-b")
    assert f"renamed schema {legacy} to {new}" in caplog.text


async def test_a_legacy_name_with_capitals_is_found_again(
    server: str, tmp_path: Path, homes: list[AsyncMemory]
) -> None:
    await _write_as_previous_version(server, tmp_path, "Team", "Standup moved to 10:00.")
    ana = await _agent(homes, tmp_path, server, "ana", "Team")
    assert await _shared(ana, "standup") == ["Standup moved to 10:00."]


async def test_a_legacy_schema_recorded_as_another_tiers_is_not_taken(
    server: str, tmp_path: Path, homes: list[AsyncMemory]
) -> None:
    prefix = server_prefix(server)[1]
    squatter = legacy_schema_name(prefix, "pool:a-b")[len(prefix) + len("_pool_") :]
    mallory = await _agent(homes, tmp_path, server, "mallory", squatter)
    await mallory.remember("Mallory's shopping list.", scope="shared", pool=squatter)
    ana = await _agent(homes, tmp_path, server, "ana", "a-b")
    assert await _shared(ana, "shopping list") == []
    assert await _shared(mallory, "shopping list") == ["Mallory's shopping list."]


async def test_an_unrecorded_schema_of_another_pool_is_not_opened_under_a_clean_name_spelling_it(
    server: str, tmp_path: Path, homes: list[AsyncMemory]
) -> None:
    """Mallory opens first after the upgrade: the schema her name spells holds pool a-b's memories."""
    prefix = server_prefix(server)[1]
    squatter = legacy_schema_name(prefix, "pool:a-b")[len(prefix) + len("_pool_") :]
    await _write_as_previous_version(server, tmp_path, "a-b", "The vault code is 0451.")
    mallory = await _agent(homes, tmp_path, server, "mallory", squatter)
    assert await _shared(mallory, "vault code") == []
    assert not await _ok(mallory, squatter)


async def test_a_legacy_schema_two_pools_share_is_taken_by_neither(
    server: str, tmp_path: Path, homes: list[AsyncMemory]
) -> None:
    prefix = server_prefix(server)[1]
    squatter = legacy_schema_name(prefix, "pool:a-b")[len(prefix) + len("_pool_") :]
    await _write_as_previous_version(server, tmp_path, "a-b", "The vault code is 0451.")
    await _write_as_previous_version(server, tmp_path, squatter, "Mallory's shopping list.")
    ana = await _agent(homes, tmp_path, server, "ana", "a-b")
    mallory = await _agent(homes, tmp_path, server, "mallory", squatter)
    assert (await _ok(ana, "a-b"), await _ok(mallory, squatter)) == (False, False)
    legacy = legacy_schema_name(prefix, "pool:a-b")
    assert await _sql(server, f'SELECT count(*) FROM "{legacy}".memories') == [(2,)]


async def _write_as_previous_version(server: str, tmp_path: Path, pool: str, content: str) -> None:
    """One memory in ``pool``, written by an agent of the previous version: at the pool's legacy schema."""

    async def legacy(server: str, tier: str, *, timeout: float = 5.0) -> str:
        base, prefix = server_prefix(server)
        return f"{base}?schema={legacy_schema_name(prefix, tier)}"

    agent = f"old-{uuid.uuid4().hex[:8]}"
    with pytest.MonkeyPatch.context() as m:
        m.setattr(assembly, "settle", legacy)
        mem = await AsyncMemory.for_agent(
            agent, home=tmp_path / agent, pools=[pool], embedder=FakeEmbedder(), server=server
        )
    try:
        await mem.remember(content, scope="shared", pool=pool)
    finally:
        await mem.close()
