"""Write the sync facades (Memory, Facts, Lessons, Graph) from the async ones: each signature is written once.

Usage: ``python packages/elastic-memory/tools/gen_sync.py`` (then ``ruff format`` runs on the
files it changed), or ``--check`` to only report stale files (what
``tests/unit/facade/test_sync_facade.py`` does). ``nox -s sync`` runs it with ruff installed.

The sync class is written by hand down to its docstring (its examples are sync); between two
marker comments in its body the generator writes every member of the async class, turned:

* ``async def m`` -> ``def m``; ``await _runner.arun(x)`` -> ``_runner.run(x, "m")`` (the name
  the loop guard reports, prefixed by the view: ``"facts.set"``); any other ``await x`` -> ``x``;
  ``async with`` / ``async for`` -> ``with`` / ``for``;
* the names in :data:`RENAMES` (``AsyncMemory`` -> ``Memory``, ``__aenter__`` -> ``__enter__``,
  ``aforeground`` -> ``foreground``, ...), in code, comments and docstrings alike.

Members named in :attr:`Target.skip` (the bridge ``as_sync``) are left out. Comments are kept.
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SRC = ROOT / "packages" / "elastic-memory" / "src" / "elastic_memory"

#: Async name -> sync name, replaced as whole words everywhere in the generated code.
RENAMES = {
    "AsyncMemory": "Memory",
    "AsyncFacts": "Facts",
    "AsyncLessons": "Lessons",
    "AsyncGraph": "Graph",
    "AsyncIterator": "Iterator",
    "asynccontextmanager": "contextmanager",
    "__aenter__": "__enter__",
    "__aexit__": "__exit__",
    "aforeground": "foreground",
}
_WORDS = re.compile(r"\b(" + "|".join(map(re.escape, RENAMES)) + r")\b")
BEGIN = "# ---- generated from {} by packages/elastic-memory/tools/gen_sync.py: do not edit, run it ----"
END = "# ---- end of generated code ----"


@dataclass(frozen=True)
class Target:
    """One sync class generated from one async class (of the same module unless ``source`` names another)."""

    module: str  # path under src/elastic_memory
    async_class: str
    sync_class: str
    prefix: str = ""  # how the loop guard names the call: "facts." + "set"
    skip: frozenset[str] = frozenset()
    source: str = ""  # the async class's module, when not ``module``

    @property
    def path(self) -> Path:
        """The sync class's file."""
        return SRC / self.module

    @property
    def source_path(self) -> Path:
        """The async class's file."""
        return SRC / (self.source or self.module)


TARGETS = (
    Target("facade/memory.py", "AsyncMemory", "Memory", skip=frozenset({"as_sync"}), source="facade/async_memory.py"),
    Target("facade/facts.py", "AsyncFacts", "Facts", "facts."),
    Target("facade/facts.py", "AsyncLessons", "Lessons", "lessons."),
    Target("facade/graph.py", "AsyncGraph", "Graph", "graph."),
)


def rename(text: str) -> str:
    """``text`` with every async name of :data:`RENAMES` replaced by its sync twin."""
    return _WORDS.sub(lambda m: RENAMES[m.group(1)], text)


def _lines(text: str) -> list[str]:
    """``text``'s lines with their ends, split where ast counts lines (not at form feeds)."""
    return io.StringIO(text, newline="").readlines()


def _class(tree: ast.Module, name: str) -> ast.ClassDef:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    msg = f"no class {name} at the top level"
    raise LookupError(msg)


def _members(source: str, target: Target) -> str:
    """The async class's body after its docstring, skipped members left out: whole lines, comments kept."""
    lines = _lines(source)
    cls = _class(ast.parse(source), target.async_class)
    body = cls.body
    if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        previous_end, body = body[0].end_lineno or 0, body[1:]
    else:
        previous_end = cls.lineno  # the line after "class ...:"
    kept: list[str] = []
    for node in body:
        end = node.end_lineno or node.lineno
        skipped = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in target.skip
        if not skipped:
            kept.extend(lines[previous_end:end])
        previous_end = end
    return "".join(kept)


def _offsets(text: str) -> list[int]:
    starts, total = [0], 0
    for line in _lines(text):
        total += len(line)
        starts.append(total)
    return starts


def _at(text: str, starts: list[int], line: int, col: int) -> int:
    """The character offset of ``(line, col)``; ``col`` counts UTF-8 bytes, as ast's do."""
    start = starts[line - 1]
    return start + len(text[start : starts[line]].encode()[:col].decode())


def _is_arun(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "arun"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "_runner"
    )


def transform(members: str, prefix: str = "") -> str:
    """The sync twin of ``members`` (class-body source at one indent level), as source text."""
    text = "class _Members:\n" + members
    starts = _offsets(text)
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement)

    def pos(line: int, col: int) -> int:
        return _at(text, starts, line, col)

    for method in _class(ast.parse(text), "_Members").body:
        name = getattr(method, "name", "")
        for node in ast.walk(method):
            if isinstance(node, ast.AsyncFunctionDef | ast.AsyncWith | ast.AsyncFor):
                start = pos(node.lineno, node.col_offset)
                if not text.startswith("async ", start):
                    msg = f"line {node.lineno - 1} of the members: expected 'async ' here"
                    raise ValueError(msg)
                edits.append((start, start + len("async "), ""))
            elif isinstance(node, ast.Await):
                start = pos(node.lineno, node.col_offset)
                call = node.value
                if _is_arun(call):
                    assert isinstance(call, ast.Call)
                    if len(call.args) != 1 or call.keywords:
                        msg = f"line {node.lineno - 1}: _runner.arun takes one coroutine"
                        raise ValueError(msg)
                    func_end = pos(call.func.end_lineno or 0, call.func.end_col_offset or 0)
                    edits.append((start, func_end, "_runner.run"))
                    arg_end = pos(call.args[0].end_lineno or 0, call.args[0].end_col_offset or 0)
                    edits.append((arg_end, arg_end, f', "{prefix}{name}"'))
                else:
                    edits.append((start, pos(call.lineno, call.col_offset), ""))
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    out = rename(text)
    for node in ast.walk(ast.parse(out)):
        left = isinstance(node, ast.Await | ast.AsyncWith | ast.AsyncFor | ast.AsyncFunctionDef)
        if left or (isinstance(node, ast.comprehension) and node.is_async):
            msg = f"{ast.unparse(node)[:60]!r} in the sync members is still async: the generator cannot turn it"
            raise ValueError(msg)
    return out.split("\n", 1)[1]


def _region(source: str, target: Target) -> tuple[int, int]:
    """Where the generated lines go in the sync class: (first line, end line), 0-based."""
    tree = ast.parse(source)
    sync = _class(tree, target.sync_class)
    lines = _lines(source)
    begin = BEGIN.format(target.async_class)
    after = [node.lineno - 1 for node in tree.body if node.lineno > sync.lineno]  # comments end no node
    inside = range(sync.lineno - 1, min(after, default=len(lines)))
    first = [i for i in inside if lines[i].strip() == begin]
    if len(first) != 1:
        msg = f"{target.module}: class {target.sync_class} needs one line {begin!r}"
        raise LookupError(msg)
    last = [i for i in range(first[0] + 1, len(lines)) if lines[i].strip() == END]
    if not last:
        msg = f"{target.module}: no {END!r} after {begin!r}"
        raise LookupError(msg)
    return first[0] + 1, last[0]


def generate(source: str, target: Target, async_source: str | None = None) -> str:
    """``source`` with ``target``'s generated region written afresh (the async class read from ``async_source``)."""
    first, end = _region(source, target)
    members = transform(_members(source if async_source is None else async_source, target), target.prefix).strip("\n")
    lines = _lines(source)
    return "".join(lines[:first]) + "\n" + members + "\n\n" + "".join(lines[end:])


def _dump(source: str, target: Target) -> str:
    """The generated region of ``source`` as an AST dump: formatting and comments do not count."""
    first, end = _region(source, target)
    lines = _lines(source)
    return ast.dump(ast.parse("class _Members:\n" + "".join(lines[first:end])))


def stale() -> list[str]:
    """The targets whose generated code no longer matches their async class."""
    out = []
    for target in TARGETS:
        source = target.path.read_text(encoding="utf-8")
        async_source = target.source_path.read_text(encoding="utf-8")
        if _dump(source, target) != _dump(generate(source, target, async_source), target):
            out.append(f"{target.module}: {target.sync_class}")
    return out


def _ruff_format(paths: list[Path]) -> None:
    ruff = shutil.which("ruff")
    command = [ruff] if ruff else [sys.executable, "-m", "ruff"]
    subprocess.run([*command, "format", "--no-cache", "--quiet", *map(str, paths)], check=True)


def main(argv: list[str] | None = None) -> int:
    """Regenerate (default) or ``--check``; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="report stale files, change nothing")
    args = parser.parse_args(argv)
    if args.check:
        found = stale()
        for line in found:
            print(f"stale: {line} (run python packages/elastic-memory/tools/gen_sync.py)")
        return 1 if found else 0
    paths = sorted({target.path for target in TARGETS})
    before = {path: path.read_text(encoding="utf-8") for path in paths}
    after = dict(before)
    for target in TARGETS:  # every file is generated before any is written
        async_source = after.get(target.source_path) or target.source_path.read_text(encoding="utf-8")
        after[target.path] = generate(after[target.path], target, async_source)
    for path in paths:
        path.write_text(after[path], encoding="utf-8")
    _ruff_format(paths)  # the generated lines are the async ones, edited: ruff lays them out
    for path in paths:
        if path.read_text(encoding="utf-8") != before[path]:
            print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
