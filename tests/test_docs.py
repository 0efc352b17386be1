"""The guide's code examples run: every ```python block of docs/*.md and of README.md.

Each Markdown file is one test. Its blocks run in order in one namespace and in a fresh
temporary working directory, as if a reader pasted them one after another into a session.

- A block whose fence is preceded by the line ``<!-- skip -->`` is not run. Use it only for
  code that needs what the tests do not have (another package, a network service).
- A block with ``# > text`` comment lines (``#>`` before ``ruff format``) must print exactly those
  lines, in that order.
  Blocks without them may print anything.
- Files whose examples open a store with the default embedder (``Memory.open(...)`` without
  ``embedder=``) are marked ``model``: they load the built-in model (offline, about 1 s).

If a test fails, the traceback points at the Markdown file and line of the failing block.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import io
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import elastic_memory
from elastic_memory.testing import fresh_schema

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SKIP_MARK = "<!-- skip -->"
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<ticks>`{3,})(?P<info>[^`]*)$")
_OPEN = re.compile(r"\bMemory\.(?:open|for_agent)\(")


@dataclass(frozen=True)
class Block:
    """One fenced ```python block: where it starts and its dedented source."""

    path: Path
    line: int  # 1-based line of the first code line
    source: str
    skip: bool

    @property
    def expected_output(self) -> list[str]:
        """The ``# >`` lines (``ruff format`` writes ``#>`` so), or [] when the output is not checked."""
        marked = (ln.strip() for ln in self.source.splitlines())
        return [
            ln.removeprefix("#").lstrip().removeprefix(">").removeprefix(" ")
            for ln in marked
            if ln.replace(" ", "").startswith("#>")
        ]


def python_blocks(path: Path) -> list[Block]:
    """Every ```python block of ``path``, in order (other languages are ignored)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, ticks, info = m["indent"], m["ticks"], m["info"].strip()
        start = i + 1
        end = start
        while end < len(lines) and not (lines[end].startswith(indent) and lines[end][len(indent) :].rstrip() == ticks):
            end += 1
        if info == "python":
            previous = next((ln.strip() for ln in reversed(lines[:i]) if ln.strip()), "")
            body = [ln[len(indent) :] if ln.startswith(indent) else ln.lstrip() for ln in lines[start:end]]
            blocks.append(Block(path, start + 1, "\n".join(body) + "\n", skip=previous == SKIP_MARK))
        i = end + 1
    return blocks


def _uses_default_embedder(source: str) -> bool:
    """True when some ``Memory.open(...)``/``Memory.for_agent(...)`` call (or the async twin) has no ``embedder=``."""
    for m in _OPEN.finditer(source):
        depth, j = 1, m.end()
        while j < len(source) and depth:
            depth += {"(": 1, ")": -1}.get(source[j], 0)
            j += 1
        if "embedder=" not in source[m.end() : j]:
            return True
    return False


def _doc_files() -> list[Path]:
    files = sorted(DOCS.glob("*.md"))
    readme = ROOT / "README.md"
    return [readme, *files] if readme.is_file() else files


#: The adapter package a guide's examples need; the guide is tested where that package is installed.
_NEEDS = {
    "langchain.md": "langchain_elastic_memory",
    "llamaindex.md": "llama_index.memory.elastic_memory",
    "haystack.md": "haystack_integrations.memory_stores.elastic_memory",
}


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package (llama_index) is missing
        return False


def _params() -> list[object]:
    params = []
    for path in _doc_files():
        if path.name in _NEEDS and not _installed(_NEEDS[path.name]):
            continue  # run by that adapter's test session (nox -s tests)
        runnable = [b for b in python_blocks(path) if not b.skip]
        marks = [pytest.mark.model] if any(_uses_default_embedder(b.source) for b in runnable) else []
        if path.name in _NEEDS:
            marks.append(pytest.mark.adapter)
        params.append(pytest.param(path, id=str(path.relative_to(ROOT)), marks=marks))
    return params


def _close_stores(namespace: dict[str, object]) -> None:
    """Close any store an example left open, so no connection outlives its test."""
    for value in list(namespace.values()):
        if isinstance(value, elastic_memory.Memory):
            value.close()
        elif isinstance(value, elastic_memory.AsyncMemory):
            asyncio.run(value.close())


@pytest.mark.parametrize("path", _params())
def test_examples_run(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run the file's python blocks in order; check the output of blocks with ``#>`` lines.

    If this fails, run the example by hand from the reported line, and fix the docs (or,
    if the docs are right, the library).
    """
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": f"docs_{path.stem}"}
    try:
        for block in python_blocks(path):
            if block.skip:
                continue
            # Pad so tracebacks show the Markdown line numbers.
            code = compile("\n" * (block.line - 1) + block.source, str(block.path), "exec")
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(code, namespace)
            expected = block.expected_output
            if expected:
                actual = out.getvalue().splitlines()
                assert actual == expected, f"{path.name}:{block.line}: printed {actual}, the docs say {expected}"
    finally:
        _close_stores(namespace)


#: Guides whose examples must run on a PostgreSQL store too (the memory loop and the graph).
ON_POSTGRES = ("memory-loop.md", "graph.md")
_IN_MEMORY = re.compile(r'\b(Async)?Memory\.open\(":memory:"')


@pytest.mark.parametrize("name", ON_POSTGRES)
def test_examples_run_on_postgres(
    name: str, postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The guide's examples, each ``Memory.open(":memory:"`` pointed at a fresh PostgreSQL schema instead.

    If this fails and ``test_examples_run`` passes for the same guide, the PostgreSQL backend
    differs from SQLite: compare the failing block on both (``Memory.open(fresh_schema(url))``).
    """
    path = DOCS / name
    blocks = [b for b in python_blocks(path) if not b.skip]
    assert any(_IN_MEMORY.search(b.source) for b in blocks), f"{name} opens no ':memory:' store to point elsewhere"
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": f"docs_{path.stem}_postgres"}
    try:
        for block in blocks:
            source = _IN_MEMORY.sub(
                lambda m: f"{m.group(1) or ''}Memory.open({fresh_schema(postgres_url)!r}", block.source
            )
            code = compile("\n" * (block.line - 1) + source, str(block.path), "exec")
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(code, namespace)
            expected = block.expected_output
            if expected:
                actual = out.getvalue().splitlines()
                assert actual == expected, (
                    f"{name}:{block.line} on PostgreSQL: printed {actual}, the docs say {expected}"
                )
    finally:
        _close_stores(namespace)


def test_guide_has_examples() -> None:
    """The quick start has runnable examples and shows the default embedder at least once."""
    blocks = [b for b in python_blocks(DOCS / "index.md") if not b.skip]
    assert blocks, "docs/index.md has no ```python blocks"
    assert any(_uses_default_embedder(b.source) for b in blocks), "the quick start must use the default embedder"


def test_every_public_name_is_in_the_api_reference() -> None:
    """Each class and constant of ``elastic_memory.__all__`` has a ``:::`` entry in docs/api.md.

    Errors are covered by the ``::: elastic_memory.errors`` entry.
    """
    api = (DOCS / "api.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^::: elastic_memory\.(\w+)", api, flags=re.MULTILINE))
    errors = set(sys.modules["elastic_memory.errors"].__all__)
    wanted = set(elastic_memory.__all__) - {"__version__"} - (errors if "errors" in documented else set())
    assert sorted(wanted - documented) == []


def test_block_parser(tmp_path: Path) -> None:
    """The extractor finds python blocks (also indented ones), honours the skip mark, ignores others."""
    text = (
        "Intro\n\n```python\nx = 1\n```\n\n<!-- skip -->\n```python\nraise SystemExit\n```\n\n"
        "```bash\necho no\n```\n\n- item\n\n    ```python\n    y = x + 1\n    print(y)\n    #> 2\n    ```\n"
    )
    path = tmp_path / "sample.md"
    path.write_text(text, encoding="utf-8")
    blocks = python_blocks(path)
    assert [(b.line, b.skip) for b in blocks] == [(4, False), (9, True), (19, False)]
    assert blocks[2].source == "y = x + 1\nprint(y)\n#> 2\n"
    assert blocks[2].expected_output == ["2"]
    assert _uses_default_embedder('Memory.open("a.db")')
    assert not _uses_default_embedder('Memory.open("a.db", recall=RecallConfig(), embedder=None)')


def _output_text(output: dict[str, Any]) -> str:
    """What an output shows: a stream's text, a result's ``text/plain``, an error's name and value."""
    if output.get("output_type") == "error":
        return f"{output.get('ename')}: {output.get('evalue')}"
    stream = output.get("output_type") == "stream"
    text = output.get("text", "") if stream else output.get("data", {}).get("text/plain", "")
    return "".join(text) if isinstance(text, list) else str(text)


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.name)
def test_notebook_is_committed_with_outputs(path: Path) -> None:
    """Notebooks are stored as one run left them: every code cell run once, in order, cleanly.

    Each code cell has an execution count (1, 2, ... in cell order), and no output is an
    error or carries a warning as Python prints one (``TqdmWarning: ...``, ``DeprecationWarning: ...``).
    ``nox -s notebooks`` executes them again and fails on an error or a warning.
    If this fails, run ``nox -s notebooks -- --write`` (or ``python notebooks/run.py --write``
    where the packages are installed) and commit the notebooks it writes.
    """
    nb = json.loads(path.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code, f"{path.name} has no code cells"
    counts = [c.get("execution_count") for c in code]
    assert counts == list(range(1, len(code) + 1)), f"{path.name}: execution counts {counts}, not run in order"
    assert any(c.get("outputs") for c in code), f"{path.name}: committed without outputs"
    bad = [
        f"cell {n}: {line.strip()}"
        for n, cell in enumerate(nb["cells"])
        for output in cell.get("outputs", [])
        for line in (_output_text(output).splitlines() or [""])
        if output.get("output_type") == "error" or re.search(r"\b[A-Z]\w*Warning\b:", line)
    ]
    assert bad == [], f"{path.name}: outputs with an error or a warning: {bad}"


def _nav_pages() -> list[str]:
    """The pages of mkdocs.yml's nav (``- Title: page.md`` lines), in order."""
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    return re.findall(r"^\s*-\s*[^:\n]+:\s*([\w./-]+\.md)\s*$", text, flags=re.MULTILINE)


def test_index_links_every_guide() -> None:
    """docs/index.md links every other page of the guide: the nav's pages and any page in docs/."""
    pages = set(_nav_pages()) | {p.name for p in DOCS.glob("*.md")}
    assert len(pages) > 5, f"found only {sorted(pages)} in mkdocs.yml's nav"
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\(([\w./-]+\.md)(?:#[\w-]*)?\)", index))
    assert sorted(pages - linked - {"index.md"}) == []


#: The packages of this repository (``packages/<name>/pyproject.toml``), as pip names them.
_OURS = sorted(p.parent.name for p in (ROOT / "packages").glob("*/pyproject.toml"))
_PIP_INSTALL = re.compile(r"\bpip install\b([^`\n]*)")


def _install_targets(command: str) -> list[str]:
    """The requirements a ``pip install`` names (options, quotes and what follows ``&&`` ... dropped)."""
    words = re.split(r"\s*(?:&&|\|\||;|\||#)", command, maxsplit=1)[0].split()
    return [w.strip("'\"") for w in words if not w.startswith("-")]


def test_install_lines_name_repository_paths() -> None:
    """Every ``pip install`` of our packages in README.md and docs/ installs from ``./packages/...``.

    The packages are not on PyPI yet, so ``pip install elastic-memory`` fails (or would find
    someone else's package). An adapter is installed in one command with the core's path, so
    that pip takes its ``elastic-memory`` dependency from the clone as well.
    """
    assert "elastic-memory" in _OURS, _OURS
    bad, seen = [], 0
    for path in _doc_files():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for m in _PIP_INSTALL.finditer(line):
                targets = _install_targets(m[1])
                names = {re.sub(r"\[.*\]$", "", t).rstrip("/").rsplit("/", 1)[-1]: t for t in targets}
                ours = {name: t for name, t in names.items() if name in _OURS}
                seen += bool(ours)
                where = f"{path.name}:{n}: pip install{m[1]}"
                if any(not t.startswith("./packages/") for t in ours.values()):
                    bad.append(f"{where} (name ./packages/<name>)")
                elif set(ours) - {"elastic-memory"} and "elastic-memory" not in ours:
                    bad.append(f"{where} (an adapter needs ./packages/elastic-memory in the same command)")
    assert seen, "no pip install of our packages found in the docs"
    assert bad == []
