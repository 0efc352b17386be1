"""``core.py`` knows nothing above it: the memory loop attaches to a core, export reads one.

Every import of the module is read (at the top, inside functions, under ``TYPE_CHECKING``):
a core that imported the loop or ``maintenance/`` would point an arrow up the layers of
CONTRIBUTING.md. ``retrieval/`` (which holds the graph nudge the loop attaches) stays below
the core too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "packages" / "elastic-memory" / "src"
PACKAGE = SRC / "elastic_memory"
#: What each module (or every module of a folder) may not import: packages above it.
ABOVE: dict[str, tuple[str, ...]] = {
    "core.py": ("elastic_memory.loop", "elastic_memory.maintenance"),
    "retrieval": (
        "elastic_memory.core",
        "elastic_memory.user_core",
        "elastic_memory.loop",
        "elastic_memory.federation",
        "elastic_memory.maintenance",
        "elastic_memory.facade",
    ),
}


def imported_modules(source: str, module: str) -> set[str]:
    """Every module ``source`` (the text of ``module``, dotted) imports, wherever the import stands.

    ``from a import b`` counts both ``a`` and ``a.b`` (``b`` may be a module). A package's
    ``__init__`` is named ``package.__init__``, so its relative imports resolve from the package.
    """
    package = module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _forbidden(found: set[str], above: tuple[str, ...]) -> list[str]:
    return sorted(m for m in found if any(m == a or m.startswith(a + ".") for a in above))


@pytest.mark.parametrize("where", sorted(ABOVE))
def test_no_import_points_up(where: str) -> None:
    """Troubleshooting: the core reaches what is attached to it through ``MemoryCore.attach``
    (a ``CorePart``: recall steps, health, close); the loop is opened by ``loop.attach.open_core``
    and found with ``loop_of(core)``. Move the code that needs the upper layer up, or give the
    core a generic hook."""
    target = PACKAGE / where
    files = [target] if target.is_file() else sorted(target.rglob("*.py"))
    bad = []
    for path in files:
        module = ".".join(path.relative_to(SRC).with_suffix("").parts)
        found = imported_modules(path.read_text(encoding="utf-8"), module)
        bad += [f"{path.relative_to(SRC)}: {m}" for m in _forbidden(found, ABOVE[where])]
    assert not bad, "imports that point up:\n" + "\n".join(bad)


def test_the_check_sees_the_old_core() -> None:
    """The core's imports before the loop moved out (module level and a function's) are caught."""
    old = (
        "from .loop import LoopConfig, MemoryLoop, check_loop_args\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from .maintenance import export\n"
        "def f():\n"
        "    from . import loop\n"
    )
    found = _forbidden(imported_modules(old, "elastic_memory.core"), ABOVE["core.py"])
    assert "elastic_memory.loop" in found and "elastic_memory.maintenance" in found
    assert "elastic_memory.maintenance.export" in found
