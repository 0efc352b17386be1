"""Schema versioning on PRAGMA user_version."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from elastic_memory import Memory, SchemaVersionError, StorageError, UsageError
from elastic_memory.storage.sqlite import migrations
from elastic_memory.storage.sqlite.driver import driver


def _user_version(path: Path) -> int:
    conn = driver().module.connect(str(path))
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    finally:
        conn.close()


def test_open_migrates_a_new_file_to_the_latest_version(db_path: Path) -> None:
    Memory.open(db_path, embedder=None).close()
    assert _user_version(db_path) == migrations.LATEST


def test_reopening_keeps_data_and_version(db_path: Path) -> None:
    with Memory.open(db_path, embedder=None) as mem:
        mid = mem.remember("persisted")
    with Memory.open(db_path, embedder=None) as mem:
        assert mem.get(mid).content == "persisted"  # type: ignore[union-attr]
    assert _user_version(db_path) == migrations.LATEST


def test_a_newer_schema_is_refused_and_left_alone(db_path: Path) -> None:
    Memory.open(db_path, embedder=None).close()
    conn = driver().module.connect(str(db_path))
    conn.execute(f"PRAGMA user_version = {migrations.LATEST + 5}")
    conn.commit()
    conn.close()
    with pytest.raises(SchemaVersionError, match="upgrade elastic-memory"):
        Memory.open(db_path, embedder=None)
    assert _user_version(db_path) == migrations.LATEST + 5


def test_a_database_of_another_application_is_refused(db_path: Path) -> None:
    conn = driver().module.connect(str(db_path))
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)")
    conn.commit()
    conn.close()
    with pytest.raises(UsageError, match="something else"):
        Memory.open(db_path, embedder=None)
    assert _user_version(db_path) == 0


def test_a_failing_migration_rolls_back_whole(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A migration whose last statement fails leaves neither its tables nor its version."""
    broken = migrations.Migration(1, (*migrations.MIGRATIONS[0].statements, "CREATE TABLE broken (syntax error"))
    monkeypatch.setattr(migrations, "MIGRATIONS", (broken,))
    with pytest.raises(StorageError, match="it stays at 0"):
        Memory.open(db_path, embedder=None)
    conn = driver().module.connect(str(db_path))
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    conn.close()
    assert tables == []
    assert _user_version(db_path) == 0


def test_versions_are_contiguous_from_one() -> None:
    assert [m.version for m in migrations.MIGRATIONS] == list(range(1, migrations.LATEST + 1))


def test_a_version_1_file_upgrades_keeping_its_memories(db_path: Path) -> None:
    """A database written by 0.1 (schema v1) gains the loop tables; its memories read as notes."""
    conn = driver().module.connect(str(db_path))
    for statement in migrations.MIGRATIONS[0].statements:
        conn.execute(statement)
    conn.execute(
        "INSERT INTO memories (id, agent_id, scope, type, content, content_hash, importance, confidence, source, "
        "created_at, updated_at, accessed_at) VALUES ('m1', 'default', 'private', 'semantic', "
        "'The dog is called Biscuit.', 'h', 0.5, 1.0, 'agent', 1, 1, 1)"
    )
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    with Memory.open(db_path, embedder=None) as mem:
        record = mem.get("m1")
        assert record is not None and record.kind == "note"
        assert [h.id for h in mem.recall("Biscuit")] == ["m1"]
    assert _user_version(db_path) == migrations.LATEST


def _version_4_file(path: Path) -> None:
    """A schema-v4 file with three memories written through its FTS5 trigger; the last one deleted."""
    conn = driver().module.connect(str(path))
    for migration in migrations.MIGRATIONS[:4]:
        for statement in migration.statements:
            conn.execute(statement)
    for mid, text in (("m1", "The dog is called Biscuit."), ("m2", "Rent is due on Fridays."), ("m3", "gone")):
        conn.execute(
            "INSERT INTO memories (id, agent_id, scope, type, content, content_hash, importance, confidence, "
            "source, tags, created_at, updated_at, accessed_at) VALUES (?, 'default', 'private', 'semantic', ?, "
            "'h-' || ?, 0.5, 1.0, 'agent', ?, 1, 1, 1)",
            (mid, text, mid, '["pets"]' if mid == "m1" else "[]"),
        )
    conn.execute("DELETE FROM memories WHERE id = 'm3'")
    conn.execute("PRAGMA user_version = 4")
    conn.commit()
    conn.close()


def test_version_5_keeps_memories_tags_and_their_keyword_index(db_path: Path) -> None:
    """The table rebuild copies every row; FTS5 rows and tags written under v4 still find them."""
    _version_4_file(db_path)
    with Memory.open(db_path, embedder=None) as mem:
        assert [h.id for h in mem.recall("Biscuit", mode="keyword")] == ["m1"]
        assert mem.tags() == {"pets": 1}
        assert mem.get("m2").content == "Rent is due on Fridays."  # type: ignore[union-attr]
    assert _user_version(db_path) == migrations.LATEST


def test_version_5_keeps_the_seq_counter_past_deleted_rows(db_path: Path) -> None:
    """A seq (and the vector rowid it names) is never reused, even after the rebuild dropped the old table."""
    _version_4_file(db_path)
    with Memory.open(db_path, embedder=None) as mem:
        mem.remember("written after the upgrade", id="m4")
    conn = driver().module.connect(str(db_path))
    seqs = dict(conn.execute("SELECT id, seq FROM memories").fetchall())
    conn.close()
    assert seqs["m4"] == 4  # m3 had seq 3 and was deleted before the upgrade


def test_version_5_writes_keep_the_keyword_index_in_step(db_path: Path) -> None:
    """Inserts fill FTS5 from the writer, updates and deletes through triggers: FTS5's own check passes."""
    with Memory.open(db_path, embedder=None) as mem:
        mem.remember_many([{"content": f"note {i} about walruses", "id": f"n{i}"} for i in range(50)])
        mem.remember("note 7 is about otters now", id="n7")
        mem.forget("n8", hard=True)
        assert {h.id for h in mem.recall("otters", mode="keyword")} == {"n7"}
        assert "n7" not in {h.id for h in mem.recall("walruses", k=100, mode="keyword")}
    conn = driver().module.connect(str(db_path))
    conn.execute("INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 1)")
    fts_rows = conn.execute("SELECT count(*) FROM memories_fts").fetchone()[0]
    conn.close()
    assert fts_rows == 49


@pytest.mark.parametrize(
    "bad",
    [
        {"scope": "public"}, {"type": "fact"}, {"source": "me"}, {"importance": 1.5}, {"confidence": -0.1},
        {"pinned": 2}, {"archived": 2}, {"has_vector": 2},
    ],
)  # fmt: skip
def test_version_5_checks_still_refuse_bad_values(db_path: Path, bad: dict[str, Any]) -> None:
    """The cheaper CHECKs (``=`` chains instead of ``IN`` lists) refuse what the old ones did."""
    Memory.open(db_path, embedder=None).close()
    module = driver().module
    conn = module.connect(str(db_path))
    row = {
        "seq": 1000, "id": "x", "agent_id": "a", "scope": "private", "type": "semantic", "content": "c",
        "content_hash": "h", "importance": 0.5, "confidence": 1.0, "source": "agent", "pinned": 0, "archived": 0,
        "has_vector": 0, "created_at": 1, "updated_at": 1, "accessed_at": 1,
    }  # fmt: skip
    conn.execute("INSERT INTO memories_fts (rowid, content, tags) VALUES (1000, 'c', '[]')")  # as the writer does
    sql = f"INSERT INTO memories ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})"
    conn.execute(sql, list(row.values()))  # the good row passes
    conn.execute("DELETE FROM memories WHERE seq = 1000")
    conn.execute("INSERT INTO memories_fts (rowid, content, tags) VALUES (1000, 'c', '[]')")
    with pytest.raises(module.IntegrityError, match="CHECK"):
        conn.execute(sql, list({**row, **bad}.values()))
    conn.close()


def test_version_5_refuses_an_insert_without_its_keyword_row(db_path: Path) -> None:
    """A process of an older version (its FTS5 rows came from the dropped trigger) fails loudly, writing nothing.

    Troubleshooting: "schema version 5: upgrade elastic-memory" in a running process means
    another process upgraded the file; restart this one on the new version.
    """
    with Memory.open(db_path, embedder=None) as mem:
        mem.remember("already here", id="m1")
    module = driver().module
    conn = module.connect(str(db_path))
    with pytest.raises(module.IntegrityError, match="schema version 5: upgrade elastic-memory"):
        conn.execute(
            "INSERT INTO memories (id, agent_id, scope, type, content, content_hash, importance, confidence, "
            "source, created_at, updated_at, accessed_at) VALUES ('m2', 'default', 'private', 'semantic', "
            "'an old writer', 'h', 0.5, 1.0, 'agent', 1, 1, 1)"
        )
    conn.commit()
    assert conn.execute("SELECT id FROM memories").fetchall() == [("m1",)]
    conn.execute("INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 1)")
    conn.close()


def test_version_5_upgrades_a_file_with_a_view_on_memories(db_path: Path) -> None:
    """A user's view naming ``memories`` survives the table rebuild (and does not block it)."""
    _version_4_file(db_path)
    conn = driver().module.connect(str(db_path))
    conn.execute("CREATE VIEW my_notes AS SELECT id, content FROM memories WHERE deleted_at IS NULL")
    conn.commit()
    conn.close()
    with Memory.open(db_path, embedder=None) as mem:
        mem.remember("after the upgrade", id="m4")
    conn = driver().module.connect(str(db_path))
    ids = [r[0] for r in conn.execute("SELECT id FROM my_notes ORDER BY id")]
    conn.close()
    assert ids == ["m1", "m2", "m4"]
    assert _user_version(db_path) == migrations.LATEST


def test_version_4_memories_can_be_updated_and_deleted_after_the_upgrade(db_path: Path) -> None:
    """Rows indexed by the old trigger go through v5's update and delete triggers cleanly."""
    _version_4_file(db_path)
    with Memory.open(db_path, embedder=None) as mem:
        mem.update("m1", content="The cat is called Pepper.")
        mem.forget("m2", hard=True)
        assert [h.id for h in mem.recall("Pepper", mode="keyword")] == ["m1"]
        assert mem.recall("Biscuit", mode="keyword") == []
    conn = driver().module.connect(str(db_path))
    conn.execute("INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 1)")
    conn.close()


def test_duplicates_are_found_through_the_hash_prefix_index(db_path: Path) -> None:
    """The duplicate lookup is an index search, not a scan of every memory."""
    from elastic_memory.storage import queries

    Memory.open(db_path, embedder=None).close()
    conn = driver().module.connect(str(db_path))
    sql, params = queries.live_by_hash(["ab" * 32, "cd" * 32], now=1.0)
    plan = " ".join(str(row[-1]) for row in conn.execute("EXPLAIN QUERY PLAN " + sql, params))
    conn.close()
    assert "USING INDEX memories_hash" in plan


def test_the_duplicate_lookup_compares_whole_hashes(db_path: Path) -> None:
    """A stored hash sharing only the indexed 16 digits is not returned as a duplicate."""
    from elastic_memory._validate import content_hash
    from elastic_memory.storage import queries

    with Memory.open(db_path, embedder=None) as mem:
        mem.remember("a placeholder", id="other")
        mem.remember("the real text", id="real")
    full = content_hash("the real text")
    conn = driver().module.connect(str(db_path))
    conn.execute("UPDATE memories SET content_hash = ? WHERE id = 'other'", (full[:16] + "0" * 48,))
    conn.commit()
    found = conn.execute(*queries.live_by_hash([full], now=1.0)).fetchall()
    conn.close()
    assert [row[-1] for row in found] == ["real"]


def test_a_shared_hash_prefix_is_not_a_duplicate(db_path: Path) -> None:
    """Two texts whose hashes share the indexed 16 digits but differ after them are two memories."""
    from elastic_memory._validate import content_hash

    with Memory.open(db_path, embedder=None) as mem:
        mem.remember("a placeholder", id="other")
    full = content_hash("the real text")
    conn = driver().module.connect(str(db_path))
    conn.execute("UPDATE memories SET content_hash = ? WHERE id = 'other'", (full[:16] + "0" * 48,))
    conn.commit()
    conn.close()
    with Memory.open(db_path, embedder=None) as mem:
        assert mem.remember_many(["the real text"])[0].status == "created"


@pytest.mark.parametrize(
    ("text", "normalised", "digest"),
    [
        ("  a\xa0\xa0b\t\nc\x1c\x1dd\u2003e\u3000 ", "a b c d e",
         "52cf9f06f83e0a0a90dc25dcf548c18421244f9520c577672cd27b6618f12134"),
        ("\uff46\uff55\uff4c\uff4c\u3000\uff57\uff49\uff44\uff54\uff48 \u2460", "full width 1",
         "1d4192d2824f68a3e1f8744008369101f56b7c09e8bc957e766e427c4959f08f"),
        ("\u200bzero\u200bwidth\u2028line\u2029para\x85", "\u200bzero\u200bwidth line para",
         "ebe434d89308c4c0e6c19bdb62deac7de76c76e7b2e22eeddb1f566548cbde80"),
    ],
)  # fmt: skip
def test_content_hashes_of_stored_memories_never_change(text: str, normalised: str, digest: str) -> None:
    """Stored hashes find duplicates across versions: these were taken by 0.1's regex normalisation.

    A change to :func:`normalise` (which whitespace collapses, the Unicode form) must keep them,
    or every memory written before it stops deduplicating.
    """
    from elastic_memory._validate import content_hash, normalise

    assert normalise(text) == normalised
    assert content_hash(text) == digest
