"""The public import paths: every module a user imports from, and the names each exports, stay where they are.

The table is what each path exported before the re-layout of the package (issue 44): moving a
module inside the package may never take a name away from these paths. A name added to a
path's ``__all__`` is fine; a name removed is a breaking change (say so in the release notes,
then update the table). The console script and ``python -m elastic_memory.cli`` are checked too.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: Path -> the names it exports (its ``__all__``), as before the re-layout.
PUBLIC: dict[str, tuple[str, ...]] = {
    "elastic_memory": (
        "AccessDeniedError",
        "AsyncFacts",
        "AsyncGraph",
        "AsyncLessons",
        "AsyncMemory",
        "BackupReport",
        "CheckReport",
        "Cluster",
        "ContextPlan",
        "CorruptDatabaseError",
        "Edge",
        "ElasticMemoryError",
        "Embedder",
        "EmbedderError",
        "EmbeddingMismatchError",
        "Entity",
        "Explanation",
        "ExtractionPolicy",
        "Fact",
        "FactHistory",
        "Facts",
        "FastEmbedEmbedder",
        "Filters",
        "Fusion",
        "Graph",
        "Hit",
        "Hits",
        "ImportReport",
        "Lessons",
        "LoopConfig",
        "METADATA_OPERATORS",
        "Memory",
        "MemoryId",
        "MemoryProfile",
        "MemoryRecord",
        "MemoryType",
        "MemoryWriteError",
        "MiniLMEmbedder",
        "Page",
        "PlanItem",
        "PruneAction",
        "PrunePolicy",
        "PruneReport",
        "QuarantinedItem",
        "Reached",
        "RecallConfig",
        "RecallMode",
        "RecallWarning",
        "Relation",
        "RepairReport",
        "RoutingError",
        "SchemaVersionError",
        "Scope",
        "Section",
        "Source",
        "StorageError",
        "TableReport",
        "Tier",
        "TierWriteError",
        "Traversal",
        "TurnReceipt",
        "UsageError",
        "__version__",
        "abackup",
        "arepair",
        "arestore_backup",
        "backup",
        "repair",
        "resolve_location",
        "restore_backup",
    ),
    "elastic_memory.testing": (
        "CONTROL_TOKENS",
        "FakeEmbedder",
        "LOOKALIKE_NAMES",
        "OWN_CODE",
        "TemporaryPostgres",
        "built_or_raw",
        "check_hostile_call",
        "control_tokens_in",
        "fresh_schema",
        "postgres_available",
        "postgres_server",
        "postgres_session",
        "reached_own_code",
        "reference_bm25",
        "short_repr",
    ),
    "elastic_memory.adapters": (
        "Opened",
        "agent_handle",
        "aopen_memory",
        "items_arg",
        "open_memory",
        "provenance",
        "run_sync",
        "text_arg",
    ),
    "elastic_memory.ingest": (
        "IngestReport",
        "ingest_folder",
    ),
    "elastic_memory.embedders": (
        "Embedder",
        "FastEmbedEmbedder",
        "MiniLMEmbedder",
        "check_embedder",
        "resolve",
        "shared_builtin",
        "unit_vectors",
    ),
    "elastic_memory.connectors": (
        "EdgeIndexReport",
        "EdgeSink",
        "FolderStore",
        "Link",
        "MarkdownFolder",
        "NAMESPACE",
        "Note",
        "ReadOnlyError",
        "ScanReport",
        "WikilinkEdgeExtractor",
        "note_id",
        "parse_links",
    ),
    "elastic_memory.federation": (
        "BreakerState",
        "CircuitBreaker",
        "CoreStore",
        "DecayProfile",
        "DegradedEvent",
        "Entry",
        "MemoryFederation",
        "MemoryRouter",
        "MemorySettings",
        "MemoryStore",
        "MemoryWeights",
        "PoolConfig",
        "PrunableStore",
        "ResilientTier",
        "SQLiteMemoryStore",
        "TierBudget",
        "TierHealth",
        "TierRef",
        "build_federation",
        "load_budgets",
        "load_settings",
        "tier_name",
    ),
    "elastic_memory.context": (
        "ContextPlan",
        "PREAMBLE",
        "PlanItem",
        "SECTION_ORDER",
        "SECTION_TITLES",
        "Section",
        "TokenCounter",
        "assemble",
        "check_counter",
        "estimate_tokens",
    ),
    "elastic_memory.filters": (
        "Filters",
        "MAX_FILTER_CONDITIONS",
        "MAX_FILTER_VALUES",
        "MAX_PATTERN_LENGTH",
        "METADATA_LOGIC",
        "METADATA_OPERATORS",
        "check_text",
        "with_scope",
    ),
    "elastic_memory.errors": (
        "AccessDeniedError",
        "CorruptDatabaseError",
        "ElasticMemoryError",
        "EmbedderError",
        "EmbeddingMismatchError",
        "MemoryWriteError",
        "RoutingError",
        "SchemaVersionError",
        "StorageError",
        "TierWriteError",
        "UsageError",
    ),
    "elastic_memory.storage": (
        "Backend",
        "Capabilities",
        "EmbeddingPin",
        "KEEP",
        "PostgresStore",
        "SQLiteStore",
        "Store",
        "Transaction",
        "is_url",
    ),
    "elastic_memory.config": ("RecallConfig",),
    "elastic_memory.governor": (
        "Admission",
        "Governor",
        "MemoryProfile",
        "RamProbe",
        "Tier",
        "available_ram_bytes",
        "choose_tier",
        "profile_for",
    ),
    "elastic_memory.extraction": (
        "ENGLISH",
        "ENGLISH_RULES",
        "EntityCandidate",
        "Extraction",
        "ExtractionPolicy",
        "Extractor",
        "FAMILIES",
        "FactCandidate",
        "FactRule",
        "Flag",
        "GuardReason",
        "HeuristicExtractor",
        "KEYS",
        "LLMExtractor",
        "LanguageCues",
        "MalformedOutput",
        "MemoryCandidate",
        "Rejection",
        "RelationCandidate",
        "Turn",
        "apply_policy",
        "capture_facts",
        "check_entity",
        "check_fact",
        "check_memory",
        "check_relation",
        "check_text",
        "cues_for",
        "detect",
        "looks_like_instruction",
        "register_cues",
        "register_poisoning_cues",
        "register_rules",
    ),
    "elastic_memory.graph": (
        "GraphMatch",
        "canonical",
        "ngrams",
        "nudge_scores",
    ),
    "elastic_memory.loop": (
        "LoopConfig",
        "MemoryLoop",
        "check_loop_args",
    ),
    "elastic_memory.cli": (
        "app",
        "main",
    ),
    "elastic_memory.ui": (
        "Address",
        "DEFAULT_HOST",
        "TOKEN_ENV",
        "build_app",
        "check_token",
        "serve",
    ),
    "elastic_memory.mcp_server": (
        "Address",
        "BearerAuth",
        "PROFILE_URI",
        "READ_TOOLS",
        "SESSIONS_URI",
        "TOKEN_ENV",
        "WRITE_TOOLS",
        "build_server",
        "check_token",
        "serve_http",
    ),
}
#: Extras a path needs; without them its import is skipped here (their own sessions import them).
EXTRAS = {"elastic_memory.mcp_server": "mcp", "elastic_memory.ui": "jinja2"}


@pytest.mark.parametrize("path", sorted(PUBLIC))
def test_a_public_path_still_exports_its_names(path: str) -> None:
    if path in EXTRAS:
        pytest.importorskip(EXTRAS[path])
    module = importlib.import_module(path)
    missing = [name for name in PUBLIC[path] if name not in getattr(module, "__all__", ()) or not hasattr(module, name)]
    assert not missing, f"{path} no longer exports {missing}"


def test_the_former_store_name_is_the_same_class() -> None:
    from elastic_memory.federation import CoreStore, SQLiteMemoryStore

    assert SQLiteMemoryStore is CoreStore


def test_the_console_script_names_a_function_that_exists() -> None:
    pyproject = (ROOT / "packages/elastic-memory/pyproject.toml").read_text(encoding="utf-8")
    found = re.search(r'^elastic-memory = "([\w.]+):(\w+)"$', pyproject, re.MULTILINE)  # tomllib is 3.11+
    assert found, "no elastic-memory script in [project.scripts]"
    module, name = found.groups()
    assert callable(getattr(importlib.import_module(module), name))


def test_python_dash_m_runs_the_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "elastic_memory.cli", "--version"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0 and done.stdout.startswith("elastic-memory "), done.stderr
