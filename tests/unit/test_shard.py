"""The root conftest's ``--shard I/K``: the parts of a suite are disjoint and together the whole suite."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT_CONFTEST = Path(__file__).resolve().parents[2] / "conftest.py"

SUITE = """
import pytest

@pytest.mark.parametrize("n", range(12))
def test_numbers(n):
    pass

def test_alone():
    pass

class TestGroup:
    def test_one(self):
        pass

    def test_two(self):
        pass
"""


def ran(pytester: pytest.Pytester, *args: str) -> set[str]:
    """The node ids that passed in a run with ``args``."""
    result = pytester.runpytest("-p", "no:cacheprovider", "-rA", *args)
    return set(re.findall(r"^PASSED (\S+)", result.stdout.str(), flags=re.M))


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    """A small suite beside a copy of the root conftest."""
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makeconftest(ROOT_CONFTEST.read_text(encoding="utf-8"))
    pytester.makepyfile(test_suite=SUITE)
    return pytester


def test_three_parts_are_disjoint_and_cover_the_suite(suite: pytest.Pytester) -> None:
    whole = ran(suite)
    parts = [ran(suite, "--shard", f"{i}/3") for i in range(3)]
    assert len(whole) == 15
    assert sum(len(p) for p in parts) == len(whole)
    assert set().union(*parts) == whole


def test_a_part_is_the_same_on_every_run(suite: pytest.Pytester) -> None:
    assert ran(suite, "--shard", "1/3") == ran(suite, "--shard", "1/3")


def test_a_bad_shard_is_a_usage_error_that_says_what_to_pass(suite: pytest.Pytester) -> None:
    result = suite.runpytest("-p", "no:cacheprovider", "--shard", "3/3")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--shard takes I/K with 0 <= I < K*"])
