"""One option for every suite of the repository: ``--shard I/K`` runs the I-th of K parts of the tests.

The nox matrix splits the tests it runs on the other Pythons between them: every version
runs every conformance cell and every adapter, each on its own part of the tests, and each
test runs on one version (``nox -s "matrix(3.12)" -- --shard 0/1`` runs it whole). A test
goes to a part by a stable hash of its node id (parameters included).
"""

from __future__ import annotations

import re
import zlib

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--shard I/K``."""
    parser.addoption(
        "--shard",
        default="0/1",
        metavar="I/K",
        help="run the I-th (from 0) of K parts of the collected tests (default 0/1: all)",
    )


def shard_of(option: str) -> tuple[int, int]:
    """``"I/K"`` as ``(I, K)``; anything else is a usage error that says what to pass."""
    found = re.fullmatch(r"(\d+)/(\d+)", option.strip())
    if not found or int(found[2]) < 1 or int(found[1]) >= int(found[2]):
        msg = f"--shard takes I/K with 0 <= I < K (say 0/3), got {option!r}"
        raise pytest.UsageError(msg)
    return int(found[1]), int(found[2])


def part_of(nodeid: str, parts: int) -> int:
    """The part a test goes to: its node id, hashed (the same on every run and machine)."""
    return zlib.crc32(nodeid.encode()) % parts


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep the tests of this part; the others are reported as deselected."""
    index, parts = shard_of(config.getoption("--shard"))
    if parts == 1:
        return
    kept = [item for item in items if part_of(item.nodeid, parts) == index]
    dropped = [item for item in items if part_of(item.nodeid, parts) != index]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
