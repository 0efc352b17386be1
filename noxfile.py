"""Sessions: tests (per package), lint, docs, notebooks, benchmarks, demo.

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
# package name -> folder, for `nox -s tests -- <package>` and the per-package tests sessions
PACKAGES = {"elastic-memory": CORE}


@nox.session
@nox.parametrize("package", list(PACKAGES))
def tests(session: nox.Session, package: str) -> None:
    """The conformance suite, unit tests and doctests of one package."""
    session.install("-e", PACKAGES[package], *TEST_DEPS, *DOCS_DEPS)
    session.run("pytest", "tests", *session.posargs)
    session.run("pytest", "--doctest-modules", "--pyargs", "elastic_memory", "-p", "no:cacheprovider")


@nox.session
def lint(session: nox.Session) -> None:
    """ruff (lint + format check) and mypy --strict on the sources."""
    # Linters pinned: a new release with new rules must not turn main red on its own.
    session.install("-e", CORE, "ruff==0.17.6", "mypy==2.4.1", "numpy")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy", f"{CORE}/src")


@nox.session
def docs(session: nox.Session) -> None:
    """Build the user guide strictly (broken links or API references fail)."""
    session.install("-e", CORE, *DOCS_DEPS)
    session.run("mkdocs", "build", "--strict", "--site-dir", "build/site")


@nox.session
def notebooks(session: nox.Session) -> None:
    """Execute every notebook top to bottom."""
    session.install("-e", CORE, *NOTEBOOK_DEPS)
    session.run("python", "notebooks/run.py")


@nox.session
def benchmarks(session: nox.Session) -> None:
    """Ingest/recall latency against the raw engines, and LoCoMo recall@10 (prints figures)."""
    session.install("-e", CORE)
    session.run("python", "benchmarks/ingest_recall.py", *session.posargs)
    session.run("python", "benchmarks/locomo_recall.py")


@nox.session
def demo(session: nox.Session) -> None:
    """The scripted demo on the embedded default store."""
    session.install(CORE)
    session.run("elastic-memory", "demo")
