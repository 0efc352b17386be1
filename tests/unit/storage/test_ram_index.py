"""The exact in-RAM vector index agrees with brute force through any sequence of changes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elastic_memory.storage.vectors.ram import RamIndex

DIM = 8
ops = st.lists(
    st.tuples(st.sampled_from(["upsert", "remove"]), st.integers(0, 40), st.integers(0, 2**31), st.sampled_from("ab")),
    max_size=120,
)


def _unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


@settings(max_examples=150, deadline=None)
@given(ops, st.integers(0, 2**31), st.integers(1, 50), st.sampled_from([None, "a", "b"]))
def test_search_matches_brute_force(seq_ops: list, qseed: int, k: int, agent: str | None) -> None:
    index = RamIndex(DIM, capacity=4)
    truth: dict[int, tuple[np.ndarray, str]] = {}
    for op, seq, seed, who in seq_ops:
        if op == "upsert":
            vec = _unit(seed)
            index.upsert(seq, vec, {"agent_id": who})
            truth[seq] = (vec, who)
        else:
            index.remove(seq)
            truth.pop(seq, None)
    q = _unit(qseed)
    where = {"agent_id": (agent,)} if agent else None
    got = index.search(q, k, where)
    expected = sorted(
        ((s, float(v @ q)) for s, (v, who) in truth.items() if agent is None or who == agent), key=lambda t: -t[1]
    )[:k]
    assert len(index) == len(truth)
    assert [s for _, s in got] == pytest.approx([s for _, s in expected], abs=1e-5)
    assert {s for s, _ in got} <= set(truth)


def test_unknown_filter_value_matches_nothing() -> None:
    index = RamIndex(DIM)
    index.upsert(1, _unit(1), {"agent_id": "a"})
    assert index.search(_unit(2), 5, {"agent_id": ("zzz",)}) == []


def test_bulk_load_replaces_everything() -> None:
    index = RamIndex(DIM)
    index.upsert(99, _unit(9), {})
    matrix = np.stack([_unit(1), _unit(2)])
    index.bulk_load([1, 2], matrix, {"agent_id": ["a", "b"]})
    assert len(index) == 2 and 99 not in index
    assert index.search(_unit(1), 1)[0][0] == 1


def test_allowed_limits_results_to_the_given_seqs() -> None:
    index = RamIndex(DIM)
    for seq in range(10):
        index.upsert(seq, _unit(seq), {"agent_id": "a"})
    got = index.search(_unit(3), 10, allowed=np.array([2, 3, 7], dtype=np.int64))
    assert sorted(s for s, _ in got) == [2, 3, 7]
    assert got[0][0] == 3


def _state(index: RamIndex) -> dict[int, tuple[list[float], str]]:
    """Every entry as ``seq -> (vector, agent)``, whatever its position."""
    out = {}
    for seq in index._pos:
        vector = index.vector(seq)
        assert vector is not None
        only = np.array([seq], dtype=np.int64)
        agents = [a for a in "abc" if index.search(vector, 1, {"agent_id": (a,)}, only)]
        assert len(agents) == 1
        out[seq] = (vector.tolist(), agents[0])
    return out


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 30), st.integers(0, 2**31), st.sampled_from("abc")), max_size=40),
    st.lists(st.tuples(st.integers(0, 60), st.integers(0, 2**31), st.sampled_from("abc")), max_size=60),
)
def test_upsert_many_is_upsert_in_turn(before: list, batch: list) -> None:
    """A batch (seqs new and stored, a seq twice) leaves the index as one upsert after another would."""
    one_by_one, batched = RamIndex(DIM, capacity=4), RamIndex(DIM, capacity=4)
    for seq, seed, who in before:
        for index in (one_by_one, batched):
            index.upsert(seq, _unit(seed), {"agent_id": who})
    for seq, seed, who in batch:
        one_by_one.upsert(seq, _unit(seed), {"agent_id": who})
    if batch:
        batched.upsert_many(
            [seq for seq, _, _ in batch],
            np.stack([_unit(seed) for _, seed, _ in batch]),
            [{"agent_id": who} for _, _, who in batch],
        )
    assert len(batched) == len(one_by_one)
    assert _state(batched) == _state(one_by_one)


def test_upsert_many_refuses_mismatched_lengths() -> None:
    index = RamIndex(DIM)
    with pytest.raises(ValueError, match="one vector and one attrs per seq"):
        index.upsert_many([1, 2], np.stack([_unit(1)]), [{}, {}])
    assert len(index) == 0


def test_scores_give_the_cosine_of_held_seqs_and_leave_out_the_others() -> None:
    index = RamIndex(DIM)
    for seq in (1, 2, 3):
        index.upsert(seq, _unit(seq), {})
    q = _unit(9)
    got = index.scores(q, [3, 42, 1])
    assert list(got) == [3, 1]
    assert got == pytest.approx({3: float(_unit(3) @ q), 1: float(_unit(1) @ q)}, abs=1e-6)
