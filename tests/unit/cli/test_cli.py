"""The ``elastic-memory`` command line, driven through typer's CliRunner.

Every test gets a fresh database under ``tmp_path``. Most run keyword-only (``--embedder
none``) or with the hashing FakeEmbedder patched in; one runs ``demo`` on the real model.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from typer.testing import CliRunner, Result

from elastic_memory import Memory, MemoryType, __version__, cli
from elastic_memory.cli import _common as cli_common
from elastic_memory.cli import demo as cli_demo
from elastic_memory.cli._demo_loop import LOOP_TURNS
from elastic_memory.testing import FakeEmbedder

runner = CliRunner()


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads the caller's $ELASTIC_MEMORY_DB or writes ./memory.db outside tmp_path."""
    monkeypatch.delenv(cli_common.DB_ENV, raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "memory.db"


@pytest.fixture
def fake_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--embedder auto`` means the 16-d hashing FakeEmbedder: vectors without loading a model."""

    def spec(choice: cli_common.EmbedderChoice) -> Any:
        return FakeEmbedder() if choice is cli_common.EmbedderChoice.AUTO else None

    monkeypatch.setattr(cli_common, "_embedder_spec", spec)


def invoke(*args: str | Path, env: dict[str, str] | None = None) -> Result:
    return runner.invoke(cli.app, [str(a) for a in args], env=env)


def add(db: Path, text: str, *extra: str) -> str:
    result = invoke("add", text, "--db", db, "--embedder", "none", *extra)
    assert result.exit_code == 0, result.output
    return result.stdout.split()[1]


# ----------------------------------------------------------------------------- add
def test_add_prints_status_then_id(db: Path) -> None:
    """If this fails, check that `add` prints '<status> <id>' on stdout."""
    result = invoke("add", "The user's dog is called Biscuit.", "--db", db, "--embedder", "none")
    assert result.exit_code == 0, result.output
    status, mid = result.stdout.split()[:2]
    assert status == "created"
    with Memory.open(db, embedder=None) as mem:
        record = mem.get(mid)
    assert record is not None
    assert record.content == "The user's dog is called Biscuit."


def test_add_stores_every_option(db: Path) -> None:
    mid = add(
        db,
        "Send the report to Kwame.",
        "--type",
        "procedural",
        "--importance",
        "0.8",
        "--tag",
        "work",
        "-t",
        "reports",
        "--session",
        "s3",
        "--metadata",
        '{"speaker": "user", "n": 2}',
    )
    with Memory.open(db, embedder=None) as mem:
        record = mem.get(mid)
    assert record is not None
    assert record.type is MemoryType.PROCEDURAL
    assert record.importance == 0.8
    assert record.tags == ("reports", "work")
    assert record.session_id == "s3"
    assert record.metadata == {"speaker": "user", "n": 2}


def test_add_same_content_twice_reports_duplicate(db: Path) -> None:
    first = add(db, "I live in Lisbon.")
    result = invoke("add", "I live in Lisbon.", "--db", db, "--embedder", "none")
    assert result.exit_code == 0, result.output
    assert result.stdout.split()[:2] == ["duplicate", first]


def test_add_metadata_that_is_not_json_exits_2(db: Path) -> None:
    result = invoke("add", "x", "--db", db, "--embedder", "none", "--metadata", "{oops")
    assert result.exit_code == 2
    assert "--metadata is not valid JSON" in result.stderr
    assert "Traceback" not in result.output


def test_add_metadata_that_is_not_an_object_exits_2(db: Path) -> None:
    result = invoke("add", "x", "--db", db, "--embedder", "none", "--metadata", "[1, 2]")
    assert result.exit_code == 2
    assert "must be a JSON object" in result.stderr


def nested(depth: int) -> str:
    """A JSON object ``depth`` levels deep."""
    return '{"a": ' * depth + "1" + "}" * depth


def test_add_metadata_nested_too_deep_exits_2_like_the_api(db: Path) -> None:
    result = invoke("add", "x", "--db", db, "--embedder", "none", "--metadata", nested(2000))
    assert result.exit_code == 2
    assert result.stderr.strip() == "error: --metadata nests deeper than 64 levels (MAX_METADATA_DEPTH); flatten it"
    assert not db.exists()


def test_add_metadata_at_the_depth_limit_is_stored(db: Path) -> None:
    mid = add(db, "x", "--metadata", nested(64))
    with Memory.open(db, embedder=None) as mem:
        record = mem.get(mid)
    assert record is not None
    assert json.dumps(record.metadata).count("{") == 64


def test_recall_filter_metadata_nested_too_deep_exits_2(db: Path) -> None:
    add(db, "x")
    result = invoke("recall", "x", "--db", db, "--embedder", "none", "-f", f"metadata.a={nested(2000)}")
    assert result.exit_code == 2
    assert "--filter metadata.a= nests deeper than 64 levels" in result.stderr


def test_add_empty_text_exits_2_with_the_library_message(db: Path) -> None:
    result = invoke("add", "   ", "--db", db, "--embedder", "none")
    assert result.exit_code == 2
    assert result.stderr.strip() == "error: content is empty: there is nothing to remember"


def test_add_importance_out_of_range_exits_2(db: Path) -> None:
    result = invoke("add", "x", "--db", db, "--embedder", "none", "--importance", "3")
    assert result.exit_code == 2
    assert "--importance" in result.output


def test_db_defaults_to_the_environment_variable(tmp_path: Path) -> None:
    target = tmp_path / "from-env.db"
    result = invoke("add", "hello", "--embedder", "none", env={cli_common.DB_ENV: str(target)})
    assert result.exit_code == 0, result.output
    assert target.is_file()
    assert not (tmp_path / "memory.db").exists()


def test_db_defaults_to_memory_db_in_the_current_folder(tmp_path: Path) -> None:
    result = invoke("add", "hello", "--embedder", "none")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "memory.db").is_file()


# -------------------------------------------------------------------------- recall
def test_recall_prints_a_table_of_hits(db: Path) -> None:
    mid = add(db, "My dog is called Biscuit.", "--tag", "dog")
    add(db, "I live in Lisbon.")
    wide = {"COLUMNS": "200"}  # each cell on one line
    result = invoke("recall", "Biscuit", "--db", db, "--embedder", "none", "--mode", "keyword", env=wide)
    assert result.exit_code == 0, result.output
    assert "My dog is called Biscuit." in result.stdout
    assert mid in result.stdout
    assert "Lisbon" not in result.stdout
    header = next(line for line in result.stdout.splitlines() if "content" in line)
    assert header.split() == ["#", "id", "relevance", "score", "type", "content", "tags"]


def test_recall_json_prints_one_parseable_object_per_hit(db: Path) -> None:
    ids = [add(db, f"Biscuit fact number {n}.") for n in range(3)]
    result = invoke("recall", "Biscuit", "--db", db, "--embedder", "none", "--json", "-k", "2")
    assert result.exit_code == 0, result.output
    hits = [json.loads(line) for line in result.stdout.splitlines()]
    assert [h["rank"] for h in hits] == [1, 2]
    assert {h["id"] for h in hits} <= set(ids)
    assert hits[0]["type"] == "semantic"
    assert hits[0]["score"] >= hits[1]["score"]


def test_recall_filter_narrows_by_tag(db: Path) -> None:
    add(db, "Biscuit needs a walk.", "--tag", "dog")
    add(db, "Biscuit tin is empty.", "--tag", "kitchen")
    result = invoke("recall", "Biscuit", "--db", db, "--embedder", "none", "--json", "--filter", "tags=kitchen")
    assert result.exit_code == 0, result.output
    assert [json.loads(line)["content"] for line in result.stdout.splitlines()] == ["Biscuit tin is empty."]


def test_recall_filter_on_a_metadata_key(db: Path) -> None:
    add(db, "Biscuit said hello.", "--metadata", '{"speaker": "user", "turn": 1}')
    add(db, "Biscuit said goodbye.", "--metadata", '{"speaker": "assistant", "turn": 2}')
    result = invoke("recall", "Biscuit", "--db", db, "--embedder", "none", "--json", "-f", 'metadata.turn={"$gte": 2}')
    assert result.exit_code == 0, result.output
    assert [json.loads(line)["content"] for line in result.stdout.splitlines()] == ["Biscuit said goodbye."]


def test_recall_empty_query_lists_by_importance(db: Path) -> None:
    add(db, "minor detail", "--importance", "0.1")
    add(db, "major fact", "--importance", "0.9")
    result = invoke("recall", "", "--db", db, "--embedder", "none", "--json")
    assert result.exit_code == 0, result.output
    assert [json.loads(line)["content"] for line in result.stdout.splitlines()] == ["major fact", "minor detail"]


def test_recall_with_no_match_says_so(db: Path) -> None:
    add(db, "I live in Lisbon.")
    result = invoke("recall", "volcano", "--db", db, "--embedder", "none", "--mode", "keyword")
    assert result.exit_code == 0, result.output
    assert "No memory matches 'volcano'" in result.stdout


class TopicEmbedder(FakeEmbedder):
    """One axis per topic (a dog, Lisbon, the sky, anything else): cosine 1 within a topic, 0 across."""

    TOPICS = ("dog", "lisbon", "sky")

    def _one(self, text: str) -> npt.NDArray[np.float32]:
        vec = np.zeros(self.dimension, dtype=np.float32)
        axis = next((n for n, word in enumerate(self.TOPICS) if word in text.casefold()), len(self.TOPICS))
        vec[axis] = 1.0
        return vec


@pytest.fixture
def pets(db: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store of one memory about a dog and two unrelated ones; ``--embedder auto`` is the TopicEmbedder."""
    monkeypatch.setattr(cli_common, "_embedder_spec", lambda choice: TopicEmbedder())
    for text in ("My dog is called Biscuit.", "I live in Lisbon.", "The sky is blue."):
        assert invoke("add", text, "--db", db).exit_code == 0
    return db


def recalled(db: Path, mode: str, *extra: str) -> list[str]:
    result = invoke("recall", "my dog", "--db", db, "--mode", mode, "--json", *extra)
    assert result.exit_code == 0, result.output
    return [json.loads(line)["content"] for line in result.stdout.splitlines()]


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
def test_recall_hides_hits_of_no_relevance(pets: Path, mode: str) -> None:
    assert recalled(pets, mode) == ["My dog is called Biscuit."]


def test_recall_min_relevance_0_shows_every_hit(pets: Path) -> None:
    assert len(recalled(pets, "semantic", "--min-relevance", "0")) == 3


def test_recall_min_score_is_the_same_floor(pets: Path) -> None:
    assert len(recalled(pets, "semantic", "--min-score", "0")) == 3


def test_recall_table_footer_says_what_the_floor_hid_and_how_to_show_it(pets: Path) -> None:
    result = invoke("recall", "my dog", "--db", pets, "--mode", "semantic", env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "2 weaker hits below relevance 0.01 hidden; --min-relevance 0 shows them." in result.stdout


def test_recall_of_nothing_relevant_says_how_many_hits_the_floor_hid(pets: Path) -> None:
    result = invoke("recall", "weather", "--db", pets, "--mode", "semantic")
    assert result.exit_code == 0, result.output
    assert "No memory matches 'weather'" in result.stdout
    assert "3 weaker hits below relevance 0.01 hidden" in result.stdout


def test_recall_empty_query_ignores_the_floor(pets: Path) -> None:
    result = invoke("recall", "", "--db", pets, "--json")
    assert len(result.stdout.splitlines()) == 3


def test_recall_semantic_without_embedder_notes_the_keyword_fallback(db: Path) -> None:
    add(db, "I live in Lisbon.")
    result = invoke("recall", "Lisbon", "--db", db, "--embedder", "none", "--mode", "semantic")
    assert result.exit_code == 0, result.output
    assert "Lisbon" in result.stdout
    assert "ran as keyword search" in result.stderr
    assert "--embedder none" in result.stderr


@pytest.mark.usefixtures("fake_model")
def test_recall_semantic_uses_vectors_when_an_embedder_is_set(db: Path) -> None:
    result = invoke("add", "red apple pie", "--db", db)
    assert result.exit_code == 0, result.output
    result = invoke("recall", "red apple", "--db", db, "--mode", "semantic", "--json")
    assert result.exit_code == 0, result.output
    (hit,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert hit["vector_score"] is not None
    assert hit["keyword_score"] is None
    assert result.stderr == ""


def test_recall_on_a_missing_database_exits_2_and_creates_nothing(db: Path) -> None:
    result = invoke("recall", "anything", "--db", db, "--embedder", "none")
    assert result.exit_code == 2
    assert "there is no store at" in result.stderr
    assert not db.exists()


def test_recall_unknown_filter_key_exits_2_listing_the_keys(db: Path) -> None:
    add(db, "x")
    result = invoke("recall", "x", "--db", db, "--embedder", "none", "--filter", "colour=red")
    assert result.exit_code == 2
    assert "unknown filter key(s) ['colour']" in result.stderr
    assert "Traceback" not in result.output


def test_recall_filter_without_equals_exits_2(db: Path) -> None:
    add(db, "x")
    result = invoke("recall", "x", "--db", db, "--embedder", "none", "--filter", "tags")
    assert result.exit_code == 2
    assert "--filter takes KEY=VALUE" in result.stderr


def test_recall_unknown_mode_exits_2(db: Path) -> None:
    add(db, "x")
    result = invoke("recall", "x", "--db", db, "--embedder", "none", "--mode", "fuzzy")
    assert result.exit_code == 2
    assert "fuzzy" in result.output


def test_error_message_is_one_line_even_when_long(db: Path) -> None:
    add(db, "x")
    result = invoke("recall", "x", "--db", db, "--embedder", "none", "--filter", "min_importance=lots")
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1


# --------------------------------------------------------------------- parse_filters
def test_parse_filters_collects_a_repeated_key_into_a_list() -> None:
    assert cli_common.parse_filters(["tags=a", "tags=b", "type=semantic"]) == {"tags": ["a", "b"], "type": "semantic"}


def test_parse_filters_converts_numbers_booleans_and_dates() -> None:
    parsed = cli_common.parse_filters(["min_importance=0.5", "pinned=yes", "since=2025-03-01", "until=1700000000"])
    assert parsed is not None
    assert parsed["min_importance"] == 0.5
    assert parsed["pinned"] is True
    assert parsed["since"].year == 2025
    assert parsed["until"] == 1_700_000_000.0


def test_parse_filters_reads_metadata_values_as_json_else_text() -> None:
    parsed = cli_common.parse_filters(["metadata.project=halvorsen", "metadata.n=3", 'metadata={"done": false}'])
    assert parsed == {"metadata": {"project": "halvorsen", "n": 3, "done": False}}


def test_parse_filters_of_nothing_is_none() -> None:
    assert cli_common.parse_filters([]) is None


# --------------------------------------------------------------------------- stats
def test_stats_json_parses_and_counts(db: Path) -> None:
    add(db, "one")
    add(db, "two", "--type", "episodic")
    result = invoke("stats", "--db", db, "--embedder", "none", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["active_memories"] == 2
    assert data["by_type"] == {"episodic": 1, "semantic": 1}
    assert data["vectors"] == 0
    assert data["embedding_model"] is None


def test_stats_table_shows_counts_and_size(db: Path) -> None:
    add(db, "one")
    result = invoke("stats", "--db", db, "--embedder", "none")
    assert result.exit_code == 0, result.output
    rows = {line.strip().split("  ")[0]: line for line in result.stdout.splitlines() if line.strip()}
    assert "1 active" in rows["memories"]
    assert "keyword-only" in rows["embedding model"]
    assert re.search(r"\d+(\.\d)? (B|KiB|MiB)", rows["db size"])


def test_stats_of_a_file_that_is_not_a_database_exits_1(tmp_path: Path) -> None:
    junk = tmp_path / "notes.db"
    junk.write_text("not SQLite at all\n" * 200)
    result = invoke("stats", "--db", junk, "--embedder", "none")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: ")
    assert "not a database" in result.stderr
    assert "Traceback" not in result.output
    assert junk.read_text() == "not SQLite at all\n" * 200


# ------------------------------------------------------------------ export / import
@pytest.mark.usefixtures("fake_model")
def test_export_then_import_gives_identical_records(tmp_path: Path) -> None:
    source, target, dump = tmp_path / "a.db", tmp_path / "b.db", tmp_path / "dump.jsonl"
    with Memory.open(source, embedder=FakeEmbedder()) as mem:
        ids = mem.remember_many(
            [
                {"content": "My dog is called Biscuit.", "tags": ["dog"], "session_id": "s1", "importance": 0.8},
                {"content": "I'm allergic to peanuts.", "pinned": True, "metadata": {"speaker": "user"}},
                {"content": "Shared note.", "scope": "shared", "pool": "team", "type": "episodic", "ttl": 3600},
                {"content": "Old news.", "source": "extracted", "confidence": 0.4},
            ]
        )
        mem.recall("Biscuit")  # access counters and times must survive too
        mem.archive(ids[3])
        mem.forget(ids[2])

    exported = invoke("export", dump, "--db", source, "--vectors")
    assert exported.exit_code == 0, exported.output
    assert exported.stdout.strip() == f"Exported 4 memories with their vectors to {dump}."
    imported = invoke("import", dump, "--db", target)
    assert imported.exit_code == 0, imported.output
    assert "4 created, 0 updated, 0 duplicates" in imported.stdout

    with Memory.open(source, embedder=None) as a, Memory.open(target, embedder=None) as b:
        assert [b.get(i) for i in ids] == [a.get(i) for i in ids]
        assert b.stats()["vectors"] == 4


def test_import_twice_updates_instead_of_duplicating(tmp_path: Path) -> None:
    source, target, dump = tmp_path / "a.db", tmp_path / "b.db", tmp_path / "dump.jsonl"
    add(source, "once")
    assert invoke("export", dump, "--db", source, "--embedder", "none").exit_code == 0
    assert invoke("import", dump, "--db", target, "--embedder", "none").exit_code == 0
    again = invoke("import", dump, "--db", target, "--embedder", "none")
    assert again.exit_code == 0, again.output
    assert "0 created, 1 updated, 0 duplicates" in again.stdout


def test_import_of_a_missing_file_exits_2(db: Path, tmp_path: Path) -> None:
    result = invoke("import", tmp_path / "nope.jsonl", "--db", db, "--embedder", "none")
    assert result.exit_code == 2
    assert "is not a file" in result.stderr
    assert not db.exists()


def test_import_of_a_bad_record_exits_2_naming_the_line(db: Path, tmp_path: Path) -> None:
    dump = tmp_path / "bad.jsonl"
    dump.write_text('\n{"content": 42}\n')
    result = invoke("import", dump, "--db", db, "--embedder", "none")
    assert result.exit_code == 2
    assert f"{dump}:2: not a memory record" in result.stderr


def test_export_into_a_missing_folder_exits_2(db: Path, tmp_path: Path) -> None:
    add(db, "x")
    result = invoke("export", tmp_path / "no" / "such" / "dir" / "out.jsonl", "--db", db, "--embedder", "none")
    assert result.exit_code == 2
    assert "does not exist" in result.stderr
    assert "Traceback" not in result.output


# ---------------------------------------------------------------------------- demo
def test_demo_keyword_only_runs_in_a_temporary_store_it_removes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(scratch))
    result = invoke("demo", "--embedder", "none")
    assert result.exit_code == 0, result.output
    for question in cli_demo.DEMO_QUESTIONS:
        assert question.text in result.stdout
    assert "semantic → keyword" in result.stdout
    assert "ran as keyword search" in result.stderr
    assert "elastic-memory demo --db demo.db" in result.stdout
    assert list(scratch.iterdir()) == []


def test_demo_keeps_the_store_with_db(db: Path) -> None:
    result = invoke("demo", "--db", db, "--embedder", "none")
    assert result.exit_code == 0, result.output
    assert f"elastic-memory recall 'What pet do I have?' --db {db}" in result.stdout
    with Memory.open(db, embedder=None) as mem:
        notes = mem.recall("", k=1000, filters={"kind": "note"})
        chunks = mem.recall("", k=1000, filters={"kind": "chunk"})
    assert len(notes) == len(cli_demo.DEMO_MEMORIES)
    assert len(chunks) == len(LOOP_TURNS), "the memory-loop part records its scripted turns"


def test_demo_rerun_on_the_same_store_adds_nothing(db: Path) -> None:
    assert invoke("demo", "--db", db, "--embedder", "none").exit_code == 0
    result = invoke("demo", "--db", db, "--embedder", "none")
    assert result.exit_code == 0, result.output
    assert f"(0 new, {len(cli_demo.DEMO_MEMORIES)} already there)" in result.stdout


@pytest.mark.model
def test_demo_with_the_built_in_model_finds_the_paraphrase(db: Path) -> None:
    """The real MiniLM model: 'What pet do I have?' shares no word with 'My dog is called Biscuit'.

    If this fails, check that the built-in embedder loads offline (`elastic-memory demo` by hand).
    """
    result = invoke("demo", "--db", db)
    assert result.exit_code == 0, result.output
    verdicts = re.findall(r"keyword (\S+) · semantic (\S+) · hybrid (\S+)", result.stdout)
    assert len(verdicts) == len(cli_demo.DEMO_QUESTIONS)
    by_question = dict(zip((q.text for q in cli_demo.DEMO_QUESTIONS), verdicts, strict=True))
    assert by_question["What pet do I have?"] == ("missed", "#1", "#1")
    assert by_question["What can't I eat?"] == ("missed", "#1", "#1")
    rare_keyword, rare_semantic, rare_hybrid = by_question["When does Estrela open?"]
    assert (rare_keyword, rare_hybrid) == ("#1", "#1")
    assert rare_semantic != "#1"
    assert "sentence-transformers/all-MiniLM-L6-v2" in result.stdout
    assert "→ keyword" not in result.stdout


# ----------------------------------------------------------------------- entry point
def test_version_option_prints_the_version() -> None:
    result = invoke("--version")
    assert result.exit_code == 0
    assert result.stdout.strip() == f"elastic-memory {__version__}"


def test_main_runs_the_app(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(warnings, "showwarning", warnings.showwarning)  # main() replaces it
    monkeypatch.setattr("sys.argv", ["elastic-memory", "--version"])
    with pytest.raises(SystemExit) as exit_info:
        cli.main()
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"elastic-memory {__version__}"


def test_a_path_that_is_not_utf8_prints_escaped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file name with undecodable bytes (a lone surrogate) is printed as ``\\udcff``, never a crash."""
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(cli.app, ["add", "hello", "--db", "m\udcff.db", "--embedder", "none"]).exit_code == 0
    result = CliRunner().invoke(cli.app, ["stats", "--db", "m\udcff.db", "--json"])
    assert result.exit_code == 0, result.output
    assert "m\\udcff.db" in result.output
