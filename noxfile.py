"""Sessions: tests (per package), matrix, lint, docs, examples, notebooks, browser, sync, benchmarks, demo.

`nox` alone runs the default set (what CI runs): tests, matrix, lint, examples, notebooks, browser (the docs build).
uv makes the virtualenvs when it is installed (`pip install "nox[uv]"`), else venv.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nox
from packaging.specifiers import SpecifierSet
from packaging.version import Version

nox.options.default_venv_backend = "uv|venv"
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_external_run = True

CORE = "packages/elastic-memory"
TEST_DEPS = ["pytest>=8", "pytest-asyncio>=0.24", "pytest-timeout>=2.3", "hypothesis>=6", "pytest-xdist>=3.6"]
#: pytest-xdist workers: one per core, at most 4 (each loads the model and may start a PostgreSQL
#: server); none on one core. `-- -n 0` runs a session's tests in one process. A worker that runs
#: out of tests takes some of another's (worksteal): a few long tests do not hold the run up at its end.
WORKERS = ("-n", str(min(os.cpu_count() or 1, 4)), "--dist", "worksteal") if (os.cpu_count() or 1) > 1 else ("-n", "0")
# Material theme, notebooks rendered from their committed outputs (mkdocs-jupyter, execute: false).
DOCS_DEPS = ["mkdocs>=1.6", "mkdocstrings[python]>=0.26", "mkdocs-material>=9.6", "mkdocs-jupyter>=0.25"]
NOTEBOOK_DEPS = ["nbclient>=0.10", "nbformat>=5.10", "ipykernel>=6.29"]
# The browser tests drive the system Chromium (.ci/run installs it); never `playwright install`.
BROWSER_DEPS = ["playwright>=1.50"]
# Linters pinned: a new release with new rules must not turn main red on its own.
RUFF = "ruff==0.17.6"
GEN_SYNC = f"{CORE}/tools/gen_sync.py"
LLAMA_MODULES = ("vector_stores", "storage.chat_store", "memory", "retrievers", "embeddings")
HAYSTACK_MODULES = ("document_stores", "components.retrievers", "components.embedders", "memory_stores")
# package name -> (folder, modules whose doctests run, extra test dependencies)
PACKAGES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "elastic-memory": (CORE, ("elastic_memory",), ()),
    # langchain-tests is pinned exactly: its new releases add tests (LangChain's own advice).
    "langchain-elastic-memory": (
        "packages/langchain-elastic-memory",
        ("langchain_elastic_memory",),
        # langgraph-checkpoint-sqlite: the reference SqliteStore of the parity tests
        ("pytest>=9.0.3,<10", "pytest-asyncio>=1.3,<2", "langchain-tests==1.1.9", "langgraph-checkpoint-sqlite==3.1.2"),
    ),
    "llama-index-elastic-memory": (
        "packages/llama-index-elastic-memory",
        tuple(f"llama_index.{m}.elastic_memory" for m in LLAMA_MODULES),
        (),
    ),
    # haystack-experimental only for the tests: the memory stores duck-type its protocols. Its Agent
    # (memory_store=/chat_message_store=) imports only on haystack-ai 2.23-2.25.2, not the 3.4 this
    # package needs: tests/test_experimental_agent.py skips here and runs in a 2.25.2 env of its own.
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
        # faiss for the ANN tier; a throwaway PostgreSQL server for the postgres backend; the MCP SDK
        session.install("-e", f"{CORE}[ann,postgres-server,mcp,ui]", *TEST_DEPS, *DOCS_DEPS)
        session.run("pytest", "tests", *WORKERS, *session.posargs)
    else:
        session.install("-e", f"{CORE}[postgres-server]", "-e", folder, *TEST_DEPS, *extra)
        session.run("pytest", f"{folder}/tests", *WORKERS, *session.posargs)
        # the shared conformance suite through this adapter's drivers, and its guide's examples
        conformance = ("tests/conformance", "tests/test_docs.py", "-m", "adapter", "-p", "no:cacheprovider")
        session.run("pytest", *conformance, *WORKERS)
    session.run("pytest", "--doctest-modules", "--pyargs", *modules, "-p", "no:cacheprovider")


@nox.session
def tests_haystack_experimental_agent(session: nox.Session) -> None:
    """haystack-experimental's Agent with the Haystack memory stores, on the haystack-ai its Agent imports on."""
    folder = PACKAGES["elastic-memory-haystack"][0]
    session.install(
        "-e", CORE, *TEST_DEPS, "haystack-ai==2.25.2", "haystack-experimental==0.19.0.post1"
    )  # fmt: skip
    session.install("--no-deps", "-e", folder)  # the package asks for haystack-ai 3: keep 2.25.2
    session.run("pytest", f"{folder}/tests/test_experimental_agent.py", "-p", "no:cacheprovider", *session.posargs)


#: Every Python the packages claim (requires-python = ">=3.10"): the classifiers list exactly these.
MATRIX = ("3.10", "3.11", "3.12", "3.13")
#: Besides the conformance suite: the unit tests closest to the interpreter (the async bridge and
#: the facades, the loop's worker, opening and closing, the SQLite driver and migrations, PostgreSQL).
MATRIX_UNITS = (
    "facade/test_facades.py",
    "loop/test_loop_worker.py",
    "storage/test_open.py",
    "facade/test_lifecycle.py",
    "storage/test_driver.py",
    "storage/test_migrations.py",
    "storage/test_fts.py",
    "storage/test_postgres_store.py",
    "test_optional_extras.py",
)

#: The conformance cells (driver-backend test ids) the matrix runs: see the session.
MATRIX_CELLS = "core-async or sqlite-file"


def _pyenv_root() -> Path:
    """pyenv's root: $PYENV_ROOT, else `pyenv root` when pyenv is on PATH, else ~/.pyenv."""
    if os.environ.get("PYENV_ROOT"):
        return Path(os.environ["PYENV_ROOT"])
    pyenv = shutil.which("pyenv")
    if pyenv:
        try:
            done = subprocess.run([pyenv, "root"], capture_output=True, text=True, timeout=30, check=True)
            return Path(done.stdout.strip())
        except (OSError, subprocess.SubprocessError):
            pass
    return Path.home() / ".pyenv"


def _runs_as(candidate: str, version: str) -> str | None:
    """The real executable behind ``candidate`` if it runs and is Python ``version`` (a pyenv shim may not)."""
    check = f"import sys; print(sys.version_info[:2] == {tuple(map(int, version.split('.')))}); print(sys.executable)"
    try:
        done = subprocess.run([candidate, "-c", check], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = done.stdout.splitlines()
    return lines[1] if done.returncode == 0 and lines[:1] == ["True"] and len(lines) == 2 else None


def find_python(version: str) -> str | None:
    """Python ``version``'s interpreter: ``pythonX.Y`` on PATH, else pyenv's newest ``X.Y.*`` build."""
    candidates = [shutil.which(f"python{version}")]
    builds = glob.glob(str(_pyenv_root() / "versions" / f"{version}.*" / "bin" / f"python{version}"))
    candidates += sorted(builds, key=lambda p: _patch(Path(p).parents[1].name), reverse=True)
    for candidate in filter(None, candidates):
        found = _runs_as(candidate, version)
        if found:
            return found
    return None


def _patch(name: str) -> Version:
    try:
        return Version(name)
    except ValueError:
        return Version("0")


def _supports(folder: str, version: str) -> str | None:
    """Why the package in ``folder`` cannot run on Python ``version`` (its requires-python), or None."""
    spec = nox.project.load_toml(f"{folder}/pyproject.toml")["project"]["requires-python"]
    return None if SpecifierSet(spec).contains(f"{version}.0") else f"its requires-python is {spec}, as its framework's"


# Each version's interpreter, found when the noxfile loads: nox makes the venv with that very
# path (uv is never asked to download one); a missing one runs no venv and reports SKIPPED.
_FOUND = {version: find_python(version) for version in MATRIX}
os.environ.setdefault("UV_PYTHON_DOWNLOADS", "never")  # and should uv look for one anyway, it must not fetch it


#: What `nox` alone runs. The matrix leaves out the version nox runs on: `tests` runs the whole
#: suite there already (`nox -s matrix` runs all four).
RUNNING = f"{sys.version_info.major}.{sys.version_info.minor}"
nox.options.sessions = [
    "tests",
    "tests_haystack_experimental_agent",
    *(f"matrix({v})" for v in MATRIX if v != RUNNING),
    "lint",
    "examples",
    "notebooks",
    "browser",  # builds the docs as strictly as `nox -s docs` does, then opens them
]


def matrix_shard(version: str, folder: str = CORE) -> str:
    """The part (``I/K``, the root conftest's ``--shard``) of the tests of the package in ``folder`` ``version`` runs.

    The versions `nox` alone runs in the matrix (those found, but the one nox runs on) that the
    package supports split its tests between them: each version runs every cell and adapter,
    on its own third (say) of the tests, and each test runs on one of them; a version outside
    that run runs them all.
    """
    split = [v for v in MATRIX if v != RUNNING and _FOUND[v] and _supports(folder, v) is None]
    return f"{split.index(version)}/{len(split)}" if version in split else "0/1"


@nox.session(download_python="never")
@nox.parametrize(("python", "version"), [(_FOUND[v] or False, v) for v in MATRIX], ids=list(MATRIX))
def matrix(session: nox.Session, version: str) -> None:
    """Per Python version: the conformance suite, the interpreter-sensitive unit tests, each adapter's tests."""
    if not session.python:
        session.skip(f"Python {version} not found: looked in PATH and {_pyenv_root() / 'versions'}")
    session.run("python", "-c", "import sys; print(sys.executable, sys.version)")
    adapters, extra = [], []
    for name, (folder, _, deps) in PACKAGES.items():
        if folder == CORE:
            continue
        why = _supports(folder, version)
        if why:
            session.warn(f"SKIPPED {name} on Python {version}: {why}")
            continue
        adapters.append(folder)
        extra += deps
    session.install("-e", f"{CORE}[postgres-server]", *(a for f in adapters for a in ("-e", f)), *TEST_DEPS, *extra)
    # faiss (the ANN tier) only as a wheel; without one the sqlite-ann backend's tests skip, saying why.
    session.install("--only-binary", "faiss-cpu", "faiss-cpu>=1.8", success_codes=[0, 1, 2])
    has_faiss = "import importlib.util as u; print(u.find_spec('faiss') is not None)"
    if session.run("python", "-c", has_faiss, silent=True) != "True\n":
        session.warn(f"no faiss-cpu wheel for Python {version}: the sqlite-ann backend's tests skip")
    common = ("-p", "no:cacheprovider", *WORKERS)
    # `-- -k ""` lifts the selections below; `-- --shard 0/1` the split between versions (the units run whole)
    split = ("--shard", matrix_shard(version), *session.posargs)
    # The conformance suite on every default backend through the async facade (what differs between
    # Pythons: the interpreter, aiosqlite and the wheels of pysqlite3, sqlite-vec, faiss, psycopg),
    # and through the sync facade (the loop bridge) and the federation on a file; `tests` runs the
    # whole grid, and the adapters' drivers.
    session.run("pytest", "tests/conformance", "-m", "not adapter", "-k", MATRIX_CELLS, *common, *split)
    session.run("pytest", *(f"tests/unit/{name}" for name in MATRIX_UNITS), *common, *session.posargs)
    # the adapters' own tests on SQLite, one run per part: the PostgreSQL store's driver (psycopg)
    # is the core's, run above on this version; the adapters' code is the same on both backends
    # (`tests` runs both). An adapter splits its tests between the versions it supports.
    parts: dict[str, list[str]] = {}
    for folder in adapters:
        parts.setdefault(matrix_shard(version, folder), []).append(f"{folder}/tests")
    for part, folders in parts.items():
        session.run("pytest", *folders, "-k", "not postgres", *common, "--shard", part, *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff (lint + format check) and mypy --strict on the sources."""
    adapters = (a for folder in ADAPTERS for a in ("-e", folder))
    session.install("-e", f"{CORE}[postgres,mcp,ui]", *adapters, RUFF, "mypy==2.4.1")  # mcp, ui: mypy reads them
    session.run("ruff", "check", "--no-cache", ".")
    session.run("ruff", "format", "--no-cache", "--check", ".")
    session.run("mypy", f"{CORE}/src", *(f"{folder}/src" for folder in ADAPTERS))
    session.run("mypy", GEN_SYNC)


@nox.session
def docs(session: nox.Session) -> None:
    """Build the user guide strictly (broken links or API references fail); no page needs the network.

    The diagrams (docs/assets/diagrams) and charts (docs/assets/charts, `nox -s charts`) are committed SVG.
    """
    session.install("-e", CORE, *(a for folder in ADAPTERS for a in ("-e", folder)), *DOCS_DEPS)
    session.run("mkdocs", "build", "--strict", "--site-dir", "build/site")


@nox.session
def browser(session: nox.Session) -> None:
    """The inspector and the docs site in a real headless Chromium (Debian's, installed with apt when missing)."""
    if shutil.which("chromium") is None and shutil.which("apt-get") is not None:  # `.ci/run` does it too
        sudo = [] if getattr(os, "geteuid", lambda: 0)() == 0 else ["sudo"]
        env = {"DEBIAN_FRONTEND": "noninteractive"}
        session.run_install(*sudo, "apt-get", "update", "-qq", external=True, env=env)
        apt = ("apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium")
        session.run_install(*sudo, *apt, external=True, env=env)
    session.install("-e", f"{CORE}[ui]", *(a for folder in ADAPTERS for a in ("-e", folder)), *TEST_DEPS)
    session.install(*DOCS_DEPS, *BROWSER_DEPS)
    session.run("mkdocs", "build", "--strict", "--site-dir", "build/site")
    session.run("pytest", "tests/browser", "-p", "no:cacheprovider", *session.posargs)


@nox.session
def sync(session: nox.Session) -> None:
    """Regenerate the sync facades (Memory, Facts, Lessons, Graph) from the async ones, then ruff-format them."""
    session.install(RUFF)
    session.run("python", GEN_SYNC, *session.posargs)


@nox.session
def notebooks(session: nox.Session) -> None:
    """Execute every notebook top to bottom; fail on an error or a warning in any output.

    `nox -s notebooks -- --write` also saves them with their new outputs (commit those).
    """
    session.install("-e", CORE, *(a for folder in ADAPTERS for a in ("-e", folder)), *NOTEBOOK_DEPS)
    session.run("python", "notebooks/run.py", *session.posargs)


@nox.session
def examples(session: nox.Session) -> None:
    """Run every `examples/<framework>/*.py` app (fake models, the offline embedder); each asserts what it prints."""
    adapters = (a for folder in ADAPTERS for a in ("-e", folder))
    session.install("-e", f"{CORE}[mcp]", *adapters, "langgraph-checkpoint-sqlite==3.1.2")
    scripts = sorted(glob.glob("examples/*/*.py"))
    if not scripts:
        session.error("no examples found under examples/<framework>/")
    for script in scripts:
        session.run("python", script)


#: The benchmarks' charts only: matplotlib is no dependency of the packages.
CHART_DEPS = ["matplotlib>=3.9"]


@nox.session
def benchmarks(session: nox.Session) -> None:
    """Ingest/recall latency against the raw engines, the tiers, PostgreSQL, LoCoMo recall@10; then the charts.

    Each script prints its tables and writes its figures to benchmarks/results/<name>.json, which
    `benchmarks/charts.py` turns into docs/assets/charts/*.svg (commit both).
    """
    session.install("-e", f"{CORE}[ann,postgres-server,mcp,ui]", *CHART_DEPS)
    results = "benchmarks/results"
    session.run("python", "benchmarks/ingest_recall.py", "--json", f"{results}/ingest_recall.json", *session.posargs)
    session.run("python", "benchmarks/vector_tiers.py", "--json", f"{results}/vector_tiers.json")
    session.run("python", "benchmarks/postgres.py", "--json", f"{results}/postgres.json")
    session.run("python", "benchmarks/locomo_recall.py", "--json", f"{results}/locomo_recall.json")
    session.run("python", "benchmarks/locomo_cv.py", "--json", f"{results}/locomo_cv.json")
    session.run("python", "benchmarks/mcp_roundtrip.py")
    session.run("python", "benchmarks/ui_pages.py")
    session.run("python", "benchmarks/charts.py")


@nox.session
def charts(session: nox.Session) -> None:
    """Redraw docs/assets/charts/*.svg from the committed figures in benchmarks/results/*.json (no benchmark runs)."""
    session.install(*CHART_DEPS)
    session.run("python", "benchmarks/charts.py", *session.posargs)


@nox.session
def peers(session: nox.Session) -> None:
    """The peer benchmark: elastic-memory beside Chroma, LanceDB, LangGraph, mem0, ... in one process (~30 min)."""
    session.install("-r", "benchmarks/peers/requirements.txt", "-e", f"{CORE}[ann]")
    args = session.posargs or ["--sizes", "10000", "100000"]
    session.run("python", "benchmarks/peers/run.py", *args)


@nox.session
def agent_turn(session: nox.Session) -> None:
    """Per-turn cost of memory through the core, the three adapters, LangGraph's stores and mem0 (prints figures)."""
    # The adapters bring the frameworks; the peers are pinned as in benchmarks/peers/requirements.txt.
    peers = (
        "langgraph-checkpoint-sqlite==3.1.2",
        "mem0ai==2.2.1",
        "qdrant-client==1.20.0",
        "langchain-community==0.4.2",
    )
    session.install("-e", CORE, *(a for folder in ADAPTERS for a in ("-e", folder)), *peers)
    session.run("python", "benchmarks/agent_turn.py", *session.posargs)


@nox.session
def demo(session: nox.Session) -> None:
    """The scripted demo on the embedded default store."""
    session.install(CORE)
    session.run("elastic-memory", "demo")
