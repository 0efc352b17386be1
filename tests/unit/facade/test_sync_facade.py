"""The sync facades are generated from the async ones (packages/elastic-memory/tools/gen_sync.py).

Memory, Facts, Lessons and Graph are not written by hand: their members are the async
classes' turned sync. These tests fail when an async class changed and the generator was not
run, and check what the generator promises: every public async member has a sync twin with
the same parameters and the same docstring.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import elastic_memory

ROOT = Path(__file__).resolve().parents[3]
GENERATOR = ROOT / "packages" / "elastic-memory" / "tools" / "gen_sync.py"
#: The bridges between the facades: each exists on one side only.
BRIDGES = {"as_async", "as_sync"}


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_sync", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_sync"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


gen = _generator()
PAIRS = [(t.async_class, t.sync_class) for t in gen.TARGETS]


def test_the_generated_sync_facades_are_up_to_date() -> None:
    """Troubleshooting: run ``python packages/elastic-memory/tools/gen_sync.py`` (or ``nox -s sync``)."""
    assert gen.stale() == []


def _public(cls: type) -> dict[str, Any]:
    return {
        name: inspect.getattr_static(cls, name)
        for name in dir(cls)
        if not name.startswith("_") and name not in BRIDGES and name not in dir(cls.__mro__[1])
    }


def _function(member: Any) -> Any:
    """The function behind a method, classmethod, property or context manager."""
    if isinstance(member, property):
        return member.fget
    if isinstance(member, classmethod | staticmethod):
        member = member.__func__
    return getattr(member, "__wrapped__", member)


@pytest.mark.parametrize(("asyn", "sync"), PAIRS)
def test_every_async_member_has_a_sync_twin_with_its_parameters_and_docstring(asyn: str, sync: str) -> None:
    async_members, sync_members = _public(getattr(elastic_memory, asyn)), _public(getattr(elastic_memory, sync))
    assert async_members.keys() == sync_members.keys()
    for name, member in async_members.items():
        a, s = _function(member), _function(sync_members[name])
        assert type(member) is type(sync_members[name]), name  # a property stays one, a classmethod too
        assert inspect.signature(s).parameters == inspect.signature(a).parameters, name
        assert inspect.getdoc(s) == gen.rename(inspect.getdoc(a) or ""), name
        returns = str(inspect.signature(a).return_annotation)
        assert str(inspect.signature(s).return_annotation) == gen.rename(returns), name


def test_every_public_method_is_documented() -> None:
    """The API reference is generated from the docstrings: the sync ones are the async ones."""
    for asyn, sync in PAIRS:
        for cls in (getattr(elastic_memory, asyn), getattr(elastic_memory, sync)):
            for name, member in _public(cls).items():
                assert inspect.getdoc(_function(member)), f"{cls.__name__}.{name}"


SAMPLE = '''
    @classmethod
    async def open(cls, path: str) -> AsyncMemory:
        """Open ``path``; see :class:`AsyncMemory`."""
        core = await _runner.arun(Core.open(path))
        return cls(core)

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def recall(self, query: str) -> list[str]:
        # the loop guard names the call
        return await _runner.arun(
            self._ops.recall(
                query,
            )
        )

    @contextlib.asynccontextmanager
    async def foreground(self) -> AsyncIterator[None]:
        async with self._core.loop.aforeground():
            yield
'''

EXPECTED = '''
    @classmethod
    def open(cls, path: str) -> Memory:
        """Open ``path``; see :class:`Memory`."""
        core = _runner.run(Core.open(path), "view.open")
        return cls(core)

    def __exit__(self, *exc: object) -> None:
        self.close()

    def recall(self, query: str) -> list[str]:
        # the loop guard names the call
        return _runner.run(self._ops.recall(query), "view.recall")

    @contextlib.contextmanager
    def foreground(self) -> Iterator[None]:
        with self._core.loop.foreground():
            yield
'''


def test_the_generator_turns_each_async_construct() -> None:
    out = gen.transform(SAMPLE, "view.")
    assert ast.dump(ast.parse("class X:\n" + out)) == ast.dump(ast.parse("class X:\n" + EXPECTED))
    assert "# the loop guard names the call" in out  # comments are kept


def test_the_generator_refuses_what_it_cannot_turn() -> None:
    with pytest.raises(ValueError, match="still async"):
        gen.transform("    async def f(self) -> list[int]:\n        return [x async for x in self.rows()]\n")
    with pytest.raises(ValueError, match="one coroutine"):
        gen.transform("    async def f(self) -> None:\n        await _runner.arun(a(), b)\n")
