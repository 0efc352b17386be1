"""Hostile input and faults at the edges: exports, caller vectors and the command line.

Only library errors escape (:class:`UsageError` for the caller's mistake, :class:`StorageError`
for a failure), and a failure leaves nothing behind. A full disk is simulated by a file whose
writes raise ``OSError(ENOSPC)``; every test uses a fresh store.
"""

from __future__ import annotations

import errno
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from typer.testing import CliRunner, Result

from elastic_memory import Memory, StorageError, UsageError, cli
from elastic_memory.cli import _common as cli_common
from elastic_memory.storage.sqlite.snapshot import SQLiteSnapshot
from elastic_memory.testing import FakeEmbedder

TIERS = ["ram", "vec0", "ann"]
#: Finite float64 magnitudes whose squares overflow float64.
HUGE = [1e160, 1e300, 1e308]


# ------------------------------------------------------------------ helpers
class _FullDisk:
    """A text file that takes ``room`` characters, then fails as a full disk does."""

    def __init__(self, inner: Any, room: int) -> None:
        self._inner = inner
        self._room = room

    def write(self, text: str) -> int:
        if len(text) > self._room:
            self._inner.write(text[: self._room])
            self._inner.flush()
            raise OSError(errno.ENOSPC, "No space left on device")
        self._room -= len(text)
        written: int = self._inner.write(text)
        return written

    def __enter__(self) -> _FullDisk:
        return self

    def __exit__(self, *exc: object) -> None:
        self._inner.close()


def _fill_disk_after(monkeypatch: pytest.MonkeyPatch, room: int) -> None:
    """Files named ``*.partial`` fail with ENOSPC after ``room`` characters (others are untouched)."""
    real_open = Path.open

    def opener(self: Path, *args: Any, **kwargs: Any) -> Any:
        handle = real_open(self, *args, **kwargs)
        return _FullDisk(handle, room) if self.name.endswith(".partial") else handle

    monkeypatch.setattr(Path, "open", opener)


def _stored(tmp_path: Path, count: int = 40) -> Path:
    path = tmp_path / "memory.db"
    with Memory.open(path, embedder=None) as mem:
        mem.remember_many([f"memory number {n} about the harbour" for n in range(count)])
    return path


def _out(tmp_path: Path) -> Path:
    """An empty folder for exports, apart from the database and its WAL files."""
    folder = tmp_path / "out"
    folder.mkdir()
    return folder


def _left_in(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


# ---------------------------------------------------------------- 3. export
def test_export_to_none_is_a_usage_error(db_path: Path) -> None:
    """If this fails, check that export_jsonl checks its path argument before touching the disk."""
    with Memory.open(db_path, embedder=None) as mem, pytest.raises(UsageError, match="file path"):
        mem.export_jsonl(None)  # type: ignore[arg-type]


def test_export_to_a_folder_is_a_usage_error_that_leaves_nothing(tmp_path: Path) -> None:
    """If this fails, check that a folder is refused before the ``.partial`` file is created."""
    path, out = _stored(tmp_path), _out(tmp_path)
    folder = out / "exports"
    folder.mkdir()
    with Memory.open(path, embedder=None) as mem, pytest.raises(UsageError, match="is a folder"):
        mem.export_jsonl(folder)
    assert _left_in(out) == {"exports"}
    assert _left_in(folder) == set()


def test_export_on_a_full_disk_is_a_storage_error_naming_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If this fails, check that export_jsonl turns an OSError into a StorageError with a hint."""
    path = _stored(tmp_path)
    target = tmp_path / "dump.jsonl"
    with Memory.open(path, embedder=None) as mem:
        _fill_disk_after(monkeypatch, room=500)
        with pytest.raises(StorageError, match="disk is full") as caught:
            mem.export_jsonl(target)
    assert str(target) in str(caught.value)
    assert isinstance(caught.value.__cause__, OSError)


def test_export_on_a_full_disk_leaves_no_partial_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """If this fails, check that the ``.partial`` file is removed whatever the failure."""
    path, out = _stored(tmp_path), _out(tmp_path)
    with Memory.open(path, embedder=None) as mem:
        _fill_disk_after(monkeypatch, room=0)
        with pytest.raises(StorageError):
            mem.export_jsonl(out / "dump.jsonl")
    assert _left_in(out) == set()


def test_export_on_a_full_disk_keeps_the_previous_export(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """If this fails, check that export_jsonl only renames a complete file over the old one."""
    path = _stored(tmp_path)
    target = tmp_path / "dump.jsonl"
    with Memory.open(path, embedder=None) as mem:
        assert mem.export_jsonl(target) == 40
        previous = target.read_bytes()
        _fill_disk_after(monkeypatch, room=800)
        with pytest.raises(StorageError):
            mem.export_jsonl(target)
    assert target.read_bytes() == previous
    assert not (tmp_path / "dump.jsonl.partial").exists()


def test_export_failing_in_the_store_leaves_no_partial_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """If this fails, check that export_jsonl removes its ``.partial`` file on a non-OS error too."""
    path = _stored(tmp_path)
    real = SQLiteSnapshot.fetch
    calls = 0

    async def failing(self: SQLiteSnapshot, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        nonlocal calls
        calls += 1
        if calls == 3:  # after the memories, amid the other tables
            msg = "could not read: disk I/O error"
            raise StorageError(msg)
        return await real(self, sql, params)

    out = _out(tmp_path)
    with Memory.open(path, embedder=None) as mem:
        monkeypatch.setattr(SQLiteSnapshot, "fetch", failing)
        with pytest.raises(StorageError, match="disk I/O error"):
            mem.export_jsonl(out / "dump.jsonl")
    assert _left_in(out) == set()


def test_import_from_none_is_a_usage_error(db_path: Path) -> None:
    """If this fails, check that import_jsonl checks its path argument."""
    with Memory.open(db_path, embedder=None) as mem, pytest.raises(UsageError, match="file path"):
        mem.import_jsonl(None)  # type: ignore[arg-type]


@pytest.mark.parametrize("call", ["export_jsonl", "import_jsonl"])
def test_a_file_name_too_long_for_the_os_is_a_usage_error(db_path: Path, tmp_path: Path, call: str) -> None:
    """A name past the file system's limit (ENAMETOOLONG) asks for a shorter path instead of raising OSError.

    If this fails, check _kind in core.py: every stat of a user path goes through it.
    """
    too_long = tmp_path / ("x" * 10_000)
    with Memory.open(db_path, embedder=None) as mem:
        mem.remember("kept")
        with pytest.raises(UsageError, match="shorter path"):
            getattr(mem, call)(too_long)
        assert [h.content for h in mem.recall("", k=5)] == ["kept"]
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(db_path.name)) == []


def test_import_names_a_missing_field(db_path: Path, tmp_path: Path) -> None:
    """If this fails, check that import_jsonl says "missing field 'x'" rather than a bare KeyError repr."""
    record = {"content": "x", "created_at": 1.0, "updated_at": 1.0, "accessed_at": 1.0}
    record |= {"access_count": 0, "archived": False}
    dump = tmp_path / "bad.jsonl"
    dump.write_text(json.dumps(record) + "\n")
    with Memory.open(db_path, embedder=None) as mem, pytest.raises(UsageError) as caught:
        mem.import_jsonl(dump)
    assert f"{dump}:1: not a memory record (missing field 'retention_strength')" in str(caught.value)


def test_import_of_a_json_list_is_a_usage_error(db_path: Path, tmp_path: Path) -> None:
    """If this fails, check that import_jsonl refuses a line that is not a JSON object."""
    dump = tmp_path / "bad.jsonl"
    dump.write_text("[1, 2]\n")
    with Memory.open(db_path, embedder=None) as mem, pytest.raises(UsageError, match="JSON object"):
        mem.import_jsonl(dump)


def test_import_of_a_file_that_is_not_utf8_is_a_usage_error(db_path: Path, tmp_path: Path) -> None:
    """If this fails, check that import_jsonl decodes each line itself and names the line."""
    dump = tmp_path / "latin1.jsonl"
    dump.write_bytes(b'{"content": "caf\xe9"}\n')
    with Memory.open(db_path, embedder=None) as mem, pytest.raises(UsageError, match=r":1: not UTF-8"):
        mem.import_jsonl(dump)


# ---------------------------------------------------------- 4. huge vectors
def _axis(width: int, at: int, size: float) -> list[float]:
    vector = [0.0] * width
    vector[at] = size
    return vector


@pytest.mark.parametrize("size", HUGE)
@pytest.mark.parametrize("tier", TIERS)
def test_huge_supplied_vectors_are_stored_as_unit_vectors(db_path: Path, tier: str, size: float) -> None:
    """If this fails, check that supplied vectors are scaled before their length is squared."""
    with Memory.open(db_path, embedder=None, vector_index=tier) as mem:
        ids = mem.remember_many(["north", "east"], vectors=[_axis(4, 0, size), _axis(4, 1, -size)])
        stored = mem.vectors(list(ids))
    assert stored[ids[0]] == pytest.approx([1.0, 0.0, 0.0, 0.0])
    assert stored[ids[1]] == pytest.approx([0.0, -1.0, 0.0, 0.0])


@pytest.mark.parametrize("size", HUGE)
@pytest.mark.parametrize("tier", TIERS)
def test_a_huge_query_vector_finds_its_match_with_score_one(db_path: Path, tier: str, size: float) -> None:
    """If this fails, check that recall(vector=...) normalises without overflow on every vector tier."""
    with Memory.open(db_path, embedder=None, vector_index=tier) as mem:
        ids = mem.remember_many(["north", "east"], vectors=[_axis(4, 0, 1.0), _axis(4, 1, 1.0)])
        hits = mem.recall(vector=[size, size / 1e3, 0.0, 0.0], mode="semantic", k=2)
    assert hits[0].id == ids[0]
    assert hits[0].vector_score == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize("tier", TIERS)
def test_a_tiny_vector_keeps_its_direction(db_path: Path, tier: str) -> None:
    """1e-300 squared underflows to zero; the vector still has a direction and is kept.

    If this fails, check that supplied vectors are scaled by their largest value first.
    """
    with Memory.open(db_path, embedder=None, vector_index=tier) as mem:
        ids = mem.remember_many(["tiny"], vectors=[[0.0, 1e-300, 0.0]])
        hits = mem.recall(vector=[0.0, 3e-310, 0.0], mode="semantic")
        assert mem.vectors(list(ids))[ids[0]] == pytest.approx([0.0, 1.0, 0.0])
    assert [h.id for h in hits] == [ids[0]]


def test_a_number_past_float_range_is_a_usage_error(db_path: Path) -> None:
    """If this fails, check that an OverflowError converting a vector becomes a UsageError."""
    with Memory.open(db_path, embedder=None) as mem, pytest.raises(UsageError, match="too large"):
        mem.remember_many(["x"], vectors=[[10**400, 0, 0]])


def test_a_query_number_past_float_range_is_a_usage_error(db_path: Path) -> None:
    """If this fails, check that recall(vector=...) turns an OverflowError into a UsageError."""
    with Memory.open(db_path, embedder=None) as mem:
        mem.remember_many(["x"], vectors=[[1.0, 0, 0]])
        with pytest.raises(UsageError, match="too large"):
            mem.recall(vector=[10**400, 0, 0], mode="semantic")


@pytest.mark.parametrize("tier", TIERS)
def test_a_zero_vector_is_still_refused(db_path: Path, tier: str) -> None:
    """If this fails, check that the safe normalisation still refuses a vector with no direction."""
    with Memory.open(db_path, embedder=None, vector_index=tier) as mem:
        with pytest.raises(UsageError, match="all zeros"):
            mem.remember_many(["x"], vectors=[[0.0, 0.0, 0.0]])
        mem.remember_many(["y"], vectors=[[1.0, 0.0, 0.0]])
        with pytest.raises(UsageError, match="all zeros"):
            mem.recall(vector=[0.0, -0.0, 0.0], mode="semantic")


class _ScaledEmbedder(FakeEmbedder):
    """The fake embedder's unit vectors times ``scale``, in ``dtype`` (a badly behaved model)."""

    def __init__(self, scale: float, dtype: type[np.floating[Any]]) -> None:
        super().__init__()
        self.scale = scale
        self.dtype = dtype

    def embed(self, texts: Sequence[str]) -> npt.NDArray[Any]:
        return (super().embed(texts).astype(np.float64) * self.scale).astype(self.dtype)


@pytest.mark.parametrize(("scale", "dtype"), [(1e30, np.float32), (1e300, np.float64)])
def test_an_embedders_huge_output_is_stored_as_unit_vectors(
    db_path: Path, scale: float, dtype: type[np.floating[Any]]
) -> None:
    """If this fails, check that embedder output is normalised in float64 after scaling."""
    with Memory.open(db_path, embedder=_ScaledEmbedder(scale, dtype)) as mem:
        mid = mem.remember("the harbour at dawn")
        hits = mem.recall("the harbour at dawn", mode="semantic")
        stored = np.asarray(mem.vectors([mid])[mid])
    assert float(np.linalg.norm(stored)) == pytest.approx(1.0, abs=1e-5)
    assert hits[0].id == mid
    assert hits[0].vector_score == pytest.approx(1.0, abs=1e-5)


def test_huge_vectors_on_postgres_are_stored_and_found(pg_location: str) -> None:
    """If this fails, check that the PostgreSQL backend gets the same unit vectors as SQLite."""
    with Memory.open(pg_location, embedder=None) as mem:
        ids = mem.remember_many(["north", "east"], vectors=[_axis(4, 0, 1e308), _axis(4, 1, 1e160)])
        stored = mem.vectors(list(ids))
        hits = mem.recall(vector=_axis(4, 0, 1e300), mode="semantic", k=2)
    assert stored[ids[0]] == pytest.approx([1.0, 0.0, 0.0, 0.0])
    assert hits[0].id == ids[0] and hits[0].vector_score == pytest.approx(1.0, abs=1e-5)


def test_vec0_skips_a_stored_zero_vector(db_path: Path) -> None:
    """An embedder's zero vector has no cosine (sqlite-vec gives NULL); recall skips it.

    If this fails, check that the vec0 search drops rows whose distance is NULL.
    """
    with Memory.open(db_path, embedder=_ScaledEmbedder(0.0, np.float32), vector_index="vec0") as mem:
        zero = mem.remember("no direction")
        good = mem.remember_many(["good"], vectors=[_axis(16, 0, 1.0)])[0]
        hits = mem.recall(vector=_axis(16, 0, 1.0), mode="semantic", k=5)
        assert mem.vectors([zero])[zero] == [0.0] * 16
    assert [h.id for h in hits] == [good]


# ------------------------------------------------------------------ 10. CLI
runner = CliRunner()


@pytest.fixture
def _cli_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No CLI test reads the caller's $ELASTIC_MEMORY_DB or writes outside tmp_path."""
    monkeypatch.delenv(cli_common.DB_ENV, raising=False)
    monkeypatch.chdir(tmp_path)


def _run(*args: str | Path) -> Result:
    return runner.invoke(cli.app, [str(a) for a in args])


@pytest.mark.usefixtures("_cli_home")
def test_cli_db_naming_a_folder_says_it_is_a_folder(tmp_path: Path) -> None:
    """If this fails, check that the CLI's _open refuses a folder before SQLite tries it."""
    folder = tmp_path / "stores"
    folder.mkdir()
    result = _run("add", "hello", "--db", folder, "--embedder", "none")
    assert result.exit_code == 2
    assert f"--db {folder} is a folder" in result.stderr
    assert "writable" not in result.stderr


@pytest.mark.usefixtures("_cli_home")
def test_cli_add_of_empty_text_creates_no_database(tmp_path: Path) -> None:
    """If this fails, check that `add` validates its input before opening (creating) the store."""
    db = tmp_path / "new.db"
    result = _run("add", "", "--db", db, "--embedder", "none")
    assert result.exit_code == 2
    assert "content is empty" in result.stderr
    assert not db.exists()


@pytest.mark.usefixtures("_cli_home")
def test_cli_add_of_a_bad_tag_creates_no_database(tmp_path: Path) -> None:
    """If this fails, check that `add` validates every field before opening the store."""
    db = tmp_path / "new.db"
    result = _run("add", "hello", "--tag", "", "--db", db, "--embedder", "none")
    assert result.exit_code == 2
    assert not db.exists()


@pytest.mark.usefixtures("_cli_home")
def test_cli_import_names_the_missing_field(tmp_path: Path) -> None:
    """If this fails, check that import_jsonl names a missing field instead of a KeyError repr."""
    dump = tmp_path / "bad.jsonl"
    dump.write_text(
        '{"content": "x", "updated_at": 1, "accessed_at": 1, "retention_strength": 1,'
        ' "access_count": 0, "archived": false}\n'
    )
    result = _run("import", dump, "--db", tmp_path / "memory.db", "--embedder", "none")
    assert result.exit_code == 2
    assert f"{dump}:1: not a memory record (missing field 'created_at')" in result.stderr


@pytest.mark.usefixtures("_cli_home")
def test_cli_ingest_of_a_missing_folder_names_the_path_plainly(tmp_path: Path) -> None:
    """If this fails, check that the Markdown connector prints the path, not a PosixPath repr."""
    missing = tmp_path / "vault"
    result = _run("ingest", missing, "--db", tmp_path / "memory.db", "--embedder", "none")
    assert result.exit_code == 2
    assert f"{missing} does not exist" in result.stderr
    assert "PosixPath" not in result.stderr


@pytest.mark.usefixtures("_cli_home")
def test_cli_export_on_a_full_disk_exits_1_and_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """If this fails, check that the export's StorageError reaches the CLI as one red line."""
    db, out = _stored(tmp_path), _out(tmp_path)
    _fill_disk_after(monkeypatch, room=100)
    result = _run("export", out / "dump.jsonl", "--db", db, "--embedder", "none")
    assert result.exit_code == 1
    assert "disk is full" in result.stderr
    assert "Traceback" not in result.output
    assert _left_in(out) == set()


@pytest.mark.usefixtures("_cli_home")
def test_cli_demo_refuses_a_store_it_did_not_make(tmp_path: Path) -> None:
    """If this fails, check that `demo --db` checks who wrote the store before writing to it."""
    db = tmp_path / "mine.db"
    with Memory.open(db, embedder=None) as mem:
        mem.remember("my own memory")
    result = _run("demo", "--db", db, "--embedder", "none")
    assert result.exit_code == 2
    assert "the demo did not make" in result.stderr
    with Memory.open(db, embedder=None) as mem:
        assert mem.stats()["total_memories"] == 1


@pytest.mark.usefixtures("_cli_home")
def test_cli_demo_writes_into_an_empty_store(tmp_path: Path) -> None:
    """If this fails, check that an existing but empty store counts as new for `demo --db`."""
    db = tmp_path / "empty.db"
    Memory.open(db, embedder=None).close()
    result = _run("demo", "--db", db, "--embedder", "none")
    assert result.exit_code == 0, result.output
    assert f"elastic-memory recall 'What pet do I have?' --db {db}" in result.stdout
