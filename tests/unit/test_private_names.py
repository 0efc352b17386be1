"""No module touches another module's private names: layers meet at declared interfaces.

A private name (one leading underscore) belongs to the module that defines it (and, for a
member, to the subclasses that inherit it: ``self._name`` is allowed). Reading
``other._name`` or importing ``_name`` from another module couples the two behind the
interface: the storage backends' private members are the case the storage protocol
(``elastic_memory.storage.backend``) removed. This scan reads every source file of the core
and the three adapters.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted(p for p in (ROOT / "packages").glob("*/src") if p.is_dir())
#: Private by convention only: namedtuple's public API starts with an underscore.
PUBLIC_BY_CONVENTION = frozenset({"_replace", "_asdict", "_fields", "_make", "_field_defaults"})


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _defined_in(tree: ast.Module) -> set[str]:
    """Private names a module defines: functions, classes, assigned names and attributes."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {n for n in names if _private(n)}


def _is_module(source: Path, module: str | None, level: int, name: str, path: Path) -> bool:
    """Whether ``from <module> import <name>`` (relative by ``level``) imports a module."""
    base = path.parent
    for _ in range(max(level - 1, 0)):
        base = base.parent
    if level == 0:
        base = source
    folder = base.joinpath(*(module.split(".") if module else ()))
    return (folder / f"{name}.py").exists() or (folder / name / "__init__.py").exists()


def _violations(source: Path, path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    own = _defined_in(tree)
    where = path.relative_to(source.parent.parent)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in PUBLIC_BY_CONVENTION:
            inherited = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
            if node.attr not in own and not inherited:
                found.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if _private(alias.name) and not _is_module(source, node.module, node.level, alias.name, path):
                    found.append(
                        f"{where}:{node.lineno}: from {'.' * node.level}{node.module or ''} import {alias.name}"
                    )
    return found


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.parent.name)
def test_no_module_uses_another_modules_private_names(source: Path) -> None:
    """Troubleshooting: give the name a public spelling in its module (a method of the
    storage ``Backend`` or ``Transaction`` protocol, a public helper of the private module),
    or move the code that needs it into the module that owns it."""
    found = [v for path in sorted(source.rglob("*.py")) for v in _violations(source, path)]
    assert not found, f"{len(found)} uses of another module's private names:\n" + "\n".join(found)


def test_the_scan_finds_a_private_member_read_from_another_module(tmp_path: Path) -> None:
    """The scan itself: ``store._conn`` in a module that does not define ``_conn`` is reported."""
    (tmp_path / "pkg").mkdir()
    module = tmp_path / "pkg" / "user.py"
    module.write_text("def f(store):\n    return store._conn\n", encoding="utf-8")
    assert [v.split(": ", 1)[1] for v in _violations(tmp_path, module)] == ["store._conn"]


def test_the_scan_allows_a_private_module_and_a_name_the_module_defines(tmp_path: Path) -> None:
    """Importing a private *module* and reading one's own private members are not violations."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "_helpers.py").write_text("X = 1\n", encoding="utf-8")
    module = tmp_path / "pkg" / "user.py"
    module.write_text(
        "from . import _helpers\n\nclass A:\n    def __init__(self):\n        self._x = 1\n\n"
        "    def same(self, other):\n        return other._x + _helpers.X\n",
        encoding="utf-8",
    )
    assert _violations(tmp_path, module) == []
