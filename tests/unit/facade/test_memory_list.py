"""AsyncMemory.list / Memory.list: keyset pages over every backend, by state and filters."""

from __future__ import annotations

import pytest

from elastic_memory import Memory, UsageError


@pytest.fixture
def listed_mem(location: str) -> Memory:
    return Memory.open(location, embedder=None)


def contents(mem: Memory, **kwargs: object) -> list[str]:
    return [r.content for r in mem.list(**kwargs).records]  # type: ignore[arg-type]


def test_pages_follow_the_write_order_to_the_end(listed_mem: Memory) -> None:
    with listed_mem as mem:
        mem.remember_many([f"note {i}" for i in range(5)])
        seen, after = [], None
        while True:
            page = mem.list(limit=2, after=after)
            seen += [r.content for r in page.records]
            if page.next is None:
                break
            after = page.next
    assert seen == [f"note {i}" for i in range(5)]


def test_states_split_live_archived_and_deleted(listed_mem: Memory) -> None:
    with listed_mem as mem:
        _, archived, deleted = mem.remember_many(["live", "archived", "deleted"])
        mem.archive(archived)
        mem.forget(deleted)
        got = {s: contents(mem, state=s) for s in ("live", "archived", "deleted", "all")}
    assert got == {
        "live": ["live"],
        "archived": ["archived"],
        "deleted": ["deleted"],
        "all": ["live", "archived", "deleted"],
    }


def test_filters_apply_within_a_state(listed_mem: Memory) -> None:
    with listed_mem as mem:
        mem.remember("a pet", tags=["pets"])
        mem.remember("work", tags=["work"])
        assert contents(mem, filters={"tags": "pets"}, state="all") == ["a pet"]


def test_a_page_does_not_shift_when_earlier_rows_go(listed_mem: Memory) -> None:
    with listed_mem as mem:
        ids = mem.remember_many([f"note {i}" for i in range(4)])
        first = mem.list(limit=2)
        mem.forget(ids[0])
        assert contents(mem, limit=2, after=first.next) == ["note 2", "note 3"]


def test_bad_state_cursor_and_limit_are_usage_errors(tmp_path: object) -> None:
    with Memory.open(":memory:", embedder=None) as mem:
        for kwargs in ({"state": "gone"}, {"after": "42"}, {"limit": 0}):
            with pytest.raises(UsageError):
                mem.list(**kwargs)  # type: ignore[arg-type]
