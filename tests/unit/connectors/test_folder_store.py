"""FolderStore: a Markdown folder behind the async store protocol, on real files."""

from __future__ import annotations

import os
import shutil
import time
import warnings
from pathlib import Path
from typing import Any

import pytest

from elastic_memory import RecallWarning, UsageError
from elastic_memory._validate import content_hash
from elastic_memory.connectors import FolderStore, MarkdownFolder, ReadOnlyError, note_id
from elastic_memory.federation.protocol import Entry, MemoryStore, TierHealth
from elastic_memory.types import Hit, MemoryType, Scope, Source

OLD = 1_600_000_000  # mtime of every note unless a test sets another
NOW = 1_700_000_000


def write(path: Path, text: str, *, mtime: int = OLD) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.utime(path, (mtime, mtime))
    return path


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A fresh small vault: three notes about zebras and one that is not."""
    root = tmp_path / "vault"
    write(root / "Zebra.md", "---\ntags: [animals]\nimportance: 0.8\n---\n# Zebra\nA zebra has stripes.\n")
    write(root / "zoo" / "Visit.md", "We saw a zebra at the zoo.\n")
    write(root / "zoo" / "Lions.md", "Lions sleep most of the day. #animals\n")
    write(root / "Plan.md", "---\ntype: procedural\n---\n# Plan\nFeed the zebra, then the zebra foal.\n")
    return root


@pytest.fixture
def shared(vault: Path) -> FolderStore:
    """The vault as a shared folder of pool 'team', agent 'ana'."""
    return MarkdownFolder(vault, agent_id="ana", scope="shared", pool="team").as_store()


async def find(store: FolderStore, query: str = "", **kwargs: Any) -> list[Hit]:
    """A keyword search (the mode that never warns)."""
    return await store.search(query, mode="keyword", **kwargs)


def paths(hits: list[Hit]) -> list[str]:
    return [h.metadata["source_path"] for h in hits]


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()}


# ------------------------------------------------------------------ construction
def test_it_satisfies_the_store_protocol(vault: Path) -> None:
    assert isinstance(FolderStore(MarkdownFolder(vault)), MemoryStore)


def test_the_default_name_is_the_folder_name(vault: Path) -> None:
    assert MarkdownFolder(vault).as_store().name == "folder:vault"


def test_as_store_takes_a_name_and_serves_that_folder(vault: Path) -> None:
    folder = MarkdownFolder(vault)
    store = folder.as_store("notes")
    assert (store.name, store.folder) == ("notes", folder)


def test_a_non_folder_is_a_usage_error(vault: Path) -> None:
    with pytest.raises(UsageError, match="must be a MarkdownFolder"):
        FolderStore(str(vault))  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["", "   ", 7, "x" * 257])
def test_a_bad_name_is_a_usage_error(vault: Path, name: Any) -> None:
    with pytest.raises(UsageError, match="name must be a non-empty string"):
        FolderStore(MarkdownFolder(vault), name=name)


# ------------------------------------------------------------------------ search
async def test_search_ranks_like_the_folder(shared: FolderStore) -> None:
    hits = await find(shared, "zebra")
    assert paths(hits) == paths(shared.folder.search("zebra"))
    assert paths(hits) == ["Zebra.md", "Plan.md", "zoo/Visit.md"]  # title match, two body matches, one


async def test_search_returns_at_most_k_hits(shared: FolderStore) -> None:
    assert len(await find(shared, "zebra", k=2)) == 2


async def test_hits_carry_the_folder_identity(shared: FolderStore) -> None:
    hit = (await find(shared, "stripes"))[0]
    assert (hit.agent_id, hit.scope, hit.pool, hit.source) == ("ana", Scope.SHARED, "team", Source.IMPORTED)


async def test_a_bad_k_is_a_usage_error(shared: FolderStore) -> None:
    with pytest.raises(UsageError, match="k must be"):
        await find(shared, "zebra", k=0)


async def test_a_bad_mode_is_a_usage_error(shared: FolderStore) -> None:
    with pytest.raises(UsageError, match="mode must be"):
        await shared.search("zebra", mode="fuzzy")


async def test_a_non_string_query_is_a_usage_error(shared: FolderStore) -> None:
    with pytest.raises(UsageError, match="query must be a str"):
        await find(shared, b"zebra")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "query",
    [
        "",
        "   ",
        "\x00zebra\x00",
        "\ud800 zebra",
        'NEAR("zebra" OR AND',
        "zebra*) -- ; DROP TABLE memories",
        ".*[(\\",
        "ζέβρα 斑马 🦓",
        "zebra " * 20_000,
    ],
)
async def test_hostile_queries_never_raise(shared: FolderStore, query: str) -> None:
    assert isinstance(await find(shared, query), list)


async def test_a_non_keyword_mode_warns_once_at_the_caller(shared: FolderStore) -> None:
    with pytest.warns(RecallWarning, match="keyword search only") as caught:
        hits = await shared.search("zebra")
    assert [Path(w.filename).name for w in caught] == [Path(__file__).name]
    assert paths(hits) == paths(await find(shared, "zebra"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        await shared.search("zebra", mode="semantic")


async def test_a_note_edited_on_disk_is_seen_by_the_next_search(vault: Path, shared: FolderStore) -> None:
    assert await find(shared, "giraffe") == []
    write(vault / "zoo" / "Lions.md", "Lions and a giraffe share the savanna.\n", mtime=NOW)
    assert paths(await find(shared, "giraffe")) == ["zoo/Lions.md"]


# ----------------------------------------------------------------------- filters
@pytest.mark.parametrize(
    "filters",
    [
        {"scope": "shared"},
        {"scope": ["private", "shared"]},
        {"pool": "team"},
        {"agent_id": ["bob", "ana"]},
        {"scope": "shared", "pool": "team", "agent_id": "ana"},
    ],
)
async def test_filters_that_name_the_folder_keep_its_notes(shared: FolderStore, filters: dict[str, Any]) -> None:
    assert paths(await find(shared, "zebra", filters=filters)) == paths(await find(shared, "zebra"))


@pytest.mark.parametrize(
    "filters",
    [{"scope": "private"}, {"scope": ["private", "global"]}, {"pool": "other"}, {"agent_id": "bob"}],
)
async def test_filters_that_name_another_scope_pool_or_agent_give_no_hits(
    shared: FolderStore, filters: dict[str, Any]
) -> None:
    assert await find(shared, "zebra", filters=filters) == []


async def test_a_pool_filter_excludes_a_folder_without_a_pool(vault: Path) -> None:
    store = MarkdownFolder(vault).as_store()
    assert await find(store, "zebra", filters={"pool": "team"}) == []


@pytest.mark.parametrize(
    "filters", [{"kind": "chunk"}, {"source": "agent"}, {"session_id": "s1"}, {"metadata": {"lang": "en"}}]
)
async def test_filters_no_note_can_satisfy_give_no_hits(shared: FolderStore, filters: dict[str, Any]) -> None:
    assert await find(shared, "zebra", filters=filters) == []


@pytest.mark.parametrize(
    "filters",
    [{"kind": "note"}, {"source": "imported"}, {"exclude_session_id": "s1"}, {"min_confidence": 1.0}, {"scope": None}],
)
async def test_filters_every_note_satisfies_keep_every_hit(shared: FolderStore, filters: dict[str, Any]) -> None:
    assert paths(await find(shared, "zebra", filters=filters)) == paths(await find(shared, "zebra"))


async def test_note_filters_reach_the_folder(shared: FolderStore) -> None:
    assert paths(await find(shared, filters={"tags": "animals", "min_importance": 0.6})) == ["Zebra.md"]
    assert paths(await find(shared, filters={"type": "procedural"})) == ["Plan.md"]


async def test_since_and_until_compare_the_modification_time(vault: Path, shared: FolderStore) -> None:
    write(vault / "zoo" / "Visit.md", "We saw a zebra at the zoo again.\n", mtime=NOW)
    assert paths(await find(shared, "zebra", filters={"since": NOW - 1})) == ["zoo/Visit.md"]
    assert "zoo/Visit.md" not in paths(await find(shared, "zebra", filters={"until": NOW - 1}))


async def test_a_time_window_still_returns_at_most_k_hits(shared: FolderStore) -> None:
    assert len(await find(shared, "zebra", k=1, filters={"since": 0, "until": time.time()})) == 1


@pytest.mark.parametrize(
    "filters",
    ["scope", {"nope": 1}, {"scope": "team"}, {"tags": 5}, {"since": "yesterday"}, {"metadata": {"a b": 1}}],
)
async def test_invalid_filters_are_a_usage_error(shared: FolderStore, filters: Any) -> None:
    with pytest.raises(UsageError):
        await find(shared, "zebra", filters=filters)


# ------------------------------------------------------------------------ writes
async def test_write_is_refused_and_nothing_changes(vault: Path, shared: FolderStore) -> None:
    before = snapshot(vault)
    entry = Entry.create("A new note.", now=NOW, default_agent="ana")
    with pytest.raises(ReadOnlyError, match="read-only"):
        await shared.write([entry])
    assert snapshot(vault) == before


async def test_delete_is_refused_and_nothing_changes(vault: Path, shared: FolderStore) -> None:
    before = snapshot(vault)
    with pytest.raises(ReadOnlyError, match="delete or move the note files"):
        await shared.delete([note_id("Zebra.md")], hard=True)
    assert snapshot(vault) == before


# --------------------------------------------------------------------------- get
async def test_get_returns_the_notes_in_the_order_given(shared: FolderStore) -> None:
    ids = [note_id("zoo/Visit.md"), note_id("Zebra.md"), note_id("Plan.md")]
    assert [r.id for r in await shared.get(ids)] == ids


async def test_get_skips_missing_ids_and_repeats(shared: FolderStore) -> None:
    ids = [note_id("missing.md"), note_id("Plan.md"), "not-a-note", note_id("Plan.md")]
    assert [r.id for r in await shared.get(ids)] == [note_id("Plan.md")]


async def test_get_of_no_ids_is_empty(shared: FolderStore) -> None:
    assert await shared.get([]) == []


async def test_get_fills_the_record_from_the_note_and_the_folder(shared: FolderStore) -> None:
    (record,) = await shared.get([note_id("Zebra.md")])
    assert (record.agent_id, record.scope, record.pool) == ("ana", Scope.SHARED, "team")
    assert (record.source, record.type, record.importance, record.tags) == (
        Source.IMPORTED,
        MemoryType.SEMANTIC,
        0.8,
        ("animals",),
    )
    assert record.content == "# Zebra\nA zebra has stripes.\n"
    assert record.content_hash == content_hash(record.content)
    assert record.created_at == record.updated_at == record.accessed_at == OLD
    assert (record.has_vector, record.archived, record.deleted_at, record.kind) == (False, False, None, "note")
    assert record.metadata["source_path"] == "Zebra.md"


async def test_get_scans_the_folder_once(shared: FolderStore, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = shared.folder.notes

    def counted() -> list[Any]:
        calls.append(1)
        return real()

    monkeypatch.setattr(shared.folder, "notes", counted)
    await shared.get([note_id("Zebra.md"), note_id("Plan.md"), note_id("zoo/Visit.md")])
    assert len(calls) == 1


async def test_a_bad_id_is_a_usage_error(shared: FolderStore) -> None:
    with pytest.raises(UsageError, match="id must be"):
        await shared.get(["ok", ""])


# ------------------------------------------------------------------------ health
async def test_health_of_a_present_folder(vault: Path, shared: FolderStore) -> None:
    await find(shared, "zebra")
    health = await shared.health_check()
    assert isinstance(health, TierHealth)
    assert (health.name, health.ok, health.reason) == ("folder:vault", True, None)
    assert health.detail["root"] == str(vault)
    assert health.detail["last_scan"]["parsed"] == 4


async def test_health_of_a_removed_folder_is_not_ok(vault: Path, shared: FolderStore) -> None:
    shutil.rmtree(vault)
    health = await shared.health_check()
    assert health.ok is False
    assert "cannot be reached" in (health.reason or "")


# ----------------------------------------------------------------------- closing
async def test_aclose_is_idempotent(shared: FolderStore) -> None:
    await shared.aclose()
    await shared.aclose()
    assert shared.closed


async def test_a_closed_store_refuses_reads(shared: FolderStore) -> None:
    await shared.aclose()
    with pytest.raises(UsageError, match="is closed"):
        await find(shared, "zebra")
    with pytest.raises(UsageError, match="is closed"):
        await shared.get([note_id("Zebra.md")])


async def test_a_closed_store_reports_not_ok(shared: FolderStore) -> None:
    await shared.aclose()
    health = await shared.health_check()
    assert (health.ok, health.reason) == (False, "this store is closed; make a new one with folder.as_store()")


async def test_closing_the_store_leaves_the_folder_usable(shared: FolderStore) -> None:
    await shared.aclose()
    assert paths(shared.folder.search("stripes")) == ["Zebra.md"]
