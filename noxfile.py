"""Sessions: tests (per package), lint, docs, notebooks, sync, benchmarks, demo.

`nox` alone runs the default set (what CI runs): tests, lint, docs, notebooks.
uv makes the virtualenvs when it is installed (`pip install "nox[uv]"`), else venv.
"""

from __future__ import annotations

import nox

nox.options.default_venv_backend = "uv|venv"
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_external_run = True
nox.options.sessions = ["tests", "lint", "docs", "notebooks"]

CORE = "packages/elastic-memory"
TEST_DEPS = ["pytest>=8", "pytest-asyncio>=0.24", "pytest-timeout>=2.3", "hypothesis>=6"]
DOCS_DEPS = ["mkdocs>=1.6", "mkdocstrings[python]>=0.26"]
NOTEBOOK_DEPS = ["nbclient>=0.10", "nbformat>=5.10", "ipykernel>=6.29"]
# Linters pinned: a new release with new rules must not turn main red on its own.
RUFF = "ruff==0.17.6"
GEN_SYNC = f"{CORE}/tools/gen_sync.py"
LLAMA_MODULES = ("vector_stores", "storage.chat_store", "memory", "retrievers")
HAYSTACK_MODULES = ("document_stores", "components.retrievers", "memory_stores")
# package name -> (folder, modules whose doctests run, extra test dependencies)
PACKAGES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "elastic-memory": (CORE, ("elastic_memory",), ()),
    # langchain-tests is pinned exactly: its new releases add tests (LangChain's own advice).
    "langchain-elastic-memory": (
        "packages/langchain-elastic-memory",
        ("langchain_elastic_memory",),
        ("pytest>=9.0.3,<10", "pytest-asyncio>=1.3,<2", "langchain-tests==1.1.9"),
    ),
    "llama-index-elastic-memory": (
        "packages/llama-index-elastic-memory",
        tuple(f"llama_index.{m}.elastic_memory" for m in LLAMA_MODULES),
        (),
    ),
    # haystack-experimental only for the tests: the memory stores duck-type its protocols.
    "elastic-memory-haystack": (
        "packages/elastic-memory-haystack",
        tuple(f"haystack_integrations.{m}.elastic_memory" for m in HAYSTACK_MODULES),
        ("haystack-experimental==0.19.0.post1",),
    ),
}
ADAPTERS = [folder for name, (folder, _, _) in PACKAGES.items() if name != "elastic-memory"]


@nox.session
@nox.parametrize("package", list(PACKAGES))
def tests(session: nox.Session, package: str) -> None:
    """One package's tests and doctests; an adapter also runs the shared conformance suite through its drivers."""
    folder, modules, extra = PACKAGES[package]
    if folder == CORE:
        # faiss for the ANN tier; a throwaway PostgreSQL server for the postgres backend
        session.install("-e", f"{CORE}[ann,postgres-server]", *TEST_DEPS, *DOCS_DEPS)
        session.run("pytest", "tests", *session.posargs)
    else:
        session.install("-e", f"{CORE}[postgres-server]", "-e", folder, *TEST_DEPS, *extra)
        session.run("pytest", f"{folder}/tests", *session.posargs)
        # the shared conformance suite through this adapter's drivers, and its guide's examples
        session.run("pytest", "tests/conformance", "tests/test_docs.py", "-m", "adapter", "-p", "no:cacheprovider")
    session.run("pytest", "--doctest-modules", "--pyargs", *modules, "-p", "no:cacheprovider")


@nox.session
def lint(session: nox.Session) -> None:
    """ruff (lint + format check) and mypy --strict on the sources."""
    session.install("-e", f"{CORE}[postgres]", *(a for folder in ADAPTERS for a in ("-e", folder)), RUFF, "mypy==2.4.1")
    session.run("ruff", "check", "--no-cache", ".")
    session.run("ruff", "format", "--no-cache", "--check", ".")
    session.run("mypy", f"{CORE}/src", *(f"{folder}/src" for folder in ADAPTERS))
    session.run("mypy", GEN_SYNC)


@nox.session
def docs(session: nox.Session) -> None:
    """Build the user guide strictly (broken links or API references fail)."""
    session.install("-e", CORE, *(a for folder in ADAPTERS for a in ("-e", folder)), *DOCS_DEPS)
    session.run("mkdocs", "build", "--strict", "--site-dir", "build/site")


@nox.session
def sync(session: nox.Session) -> None:
    """Regenerate the sync facades (Memory, Facts, Lessons, Graph) from the async ones, then ruff-format them."""
    session.install(RUFF)
    session.run("python", GEN_SYNC, *session.posargs)


@nox.session
def notebooks(session: nox.Session) -> None:
    """Execute every notebook top to bottom."""
    session.install("-e", CORE, *(a for folder in ADAPTERS for a in ("-e", folder)), *NOTEBOOK_DEPS)
    session.run("python", "notebooks/run.py")


@nox.session
def benchmarks(session: nox.Session) -> None:
    """Ingest/recall latency against the raw engines, and LoCoMo recall@10 (prints figures)."""
    session.install("-e", f"{CORE}[ann,postgres-server]")
    session.run("python", "benchmarks/ingest_recall.py", *session.posargs)
    session.run("python", "benchmarks/vector_tiers.py")
    session.run("python", "benchmarks/postgres.py")
    session.run("python", "benchmarks/locomo_recall.py")


@nox.session
def peers(session: nox.Session) -> None:
    """The peer benchmark: elastic-memory beside Chroma, LanceDB, LangGraph, mem0, ... in one process (~30 min)."""
    session.install("-r", "benchmarks/peers/requirements.txt", "-e", f"{CORE}[ann]")
    args = session.posargs or ["--sizes", "10000", "100000"]
    session.run("python", "benchmarks/peers/run.py", *args)


@nox.session
def demo(session: nox.Session) -> None:
    """The scripted demo on the embedded default store."""
    session.install(CORE)
    session.run("elastic-memory", "demo")
