"""Agent isolation in a federation: one agent never sees another's private memories, whatever was written.

Agents A and B share a home (pool ``team`` and the global tier). Random writes by both,
private and shared, then every read API of B is searched for A's private memories. A private
memory of importance >= 0.9 is promoted to the global tier by design: those must be visible
to B, the others never.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from elastic_memory import Memory
from elastic_memory.federation.router import PROMOTE_AT
from elastic_memory.testing import FakeEmbedder

VOCAB = ["zebra", "standup", "deploy", "coffee", "lisbon", "invoice", "garden", "rocket"]
IMPORTANCE = [0.0, 0.3, 0.5, 0.89, 0.9, 0.95, 1.0]


@dataclass(frozen=True)
class Write:
    """One write: by ``agent`` ("A" or "B"), ``scope`` "private" or "shared"; ``again`` repeats an earlier one."""

    agent: str
    scope: str
    importance: float
    words: tuple[str, ...]
    again: int | None = None  # index of an earlier private write of the same agent, re-written


writes = st.lists(
    st.builds(
        Write,
        agent=st.sampled_from(["A", "B"]),
        scope=st.sampled_from(["private", "private", "shared"]),
        importance=st.sampled_from(IMPORTANCE),
        words=st.lists(st.sampled_from(VOCAB), min_size=1, max_size=4).map(tuple),
        again=st.none() | st.integers(0, 11),
    ),
    min_size=1,
    max_size=12,
)


@dataclass
class Written:
    """What A wrote privately: id -> marker, and which ids were promoted (written at importance >= 0.9)."""

    private: dict[str, str]
    promoted: set[str]

    @property
    def secret(self) -> dict[str, str]:
        """A's private memories that were never promoted: id -> marker."""
        return {i: m for i, m in self.private.items() if i not in self.promoted}

    def leaks(self, text: str) -> list[str]:
        """The secret ids and markers that appear in ``text``."""
        return [s for i, m in self.secret.items() for s in (i, m) if re.search(rf"\b{s}\b", text)]


def _play(a: Memory, b: Memory, plan: list[Write]) -> Written:
    """Apply ``plan``; every new content ends in a marker word ("mark<n>") unique to its write."""
    contents: list[str] = []
    out = Written({}, set())
    for n, w in enumerate(plan):
        content, scope = f"{' '.join(w.words)} mark{n}", w.scope
        if w.again is not None and w.again < n and plan[w.again].agent == w.agent and plan[w.again].scope == "private":
            content, scope = contents[w.again], "private"  # the same private memory again (a duplicate)
        contents.append(content)
        mem = a if w.agent == "A" else b
        pool = "team" if scope == "shared" else None
        mid = mem.remember(content, scope=scope, pool=pool, importance=w.importance)
        if w.agent == "A" and scope == "private":
            out.private[str(mid)] = content.rsplit(" ", 1)[-1]
            if w.importance >= PROMOTE_AT:
                out.promoted.add(str(mid))
    return out


def _check_b_sees_no_secret(b: Memory, written: Written) -> None:
    secret = set(written.secret)
    markers = list(written.secret.values())[:2]
    for query in ["", "zebra standup deploy coffee", *markers]:
        for mode in ("keyword", "semantic", "hybrid"):
            for scope in (None, "private", "shared", "global"):
                where = (query, mode, scope)
                hits = b.recall(query, k=100, mode=mode, scope=scope)
                assert not {h.id for h in hits} & secret, where
                assert not written.leaks(" ".join(h.content for h in hits)), where
                explanation = b.explain(query, k=100, mode=mode, scope=scope)
                assert not {h.id for h in explanation.hits} & secret, where
                assert not written.leaks(repr(explanation.details)), where
    assert [b.get(mid) for mid in secret] == [None] * len(secret)
    assert not {r.id for r in b.get_many(list(written.private))} & secret
    for marker in markers:
        assert not written.leaks(b.build_context(f"What about {marker} and the zebra?").render())
    assert not written.leaks(repr(b.stats()))


def _check_b_sees_the_promoted(b: Memory, written: Written) -> None:
    """By design, a promoted private memory of A is in the global tier, where B reads it."""
    assert written.promoted <= {h.id for h in b.recall("", k=100, scope="global")}
    assert {r.id for r in b.get_many(sorted(written.promoted))} == written.promoted


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=writes)
def test_b_never_sees_a_private_memory_of_a_that_was_not_promoted(plan: list[Write]) -> None:
    """No read API of B returns, names or renders A's unpromoted private memories; promoted ones are visible.

    A leak through recall/explain points at MemoryRouter.route_read or a tier file holding the
    wrong rows (federation.assembly's paths); through get/get_many at MemoryFederation.get; a
    promoted memory B cannot see at MemoryFederation.promote.
    """
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        with (
            Memory.for_agent("A", home=home, pools=["team"], embedder=FakeEmbedder()) as a,
            Memory.for_agent("B", home=home, pools=["team"], embedder=FakeEmbedder()) as b,
        ):
            written = _play(a, b, plan)
            _check_b_sees_no_secret(b, written)
            _check_b_sees_the_promoted(b, written)
