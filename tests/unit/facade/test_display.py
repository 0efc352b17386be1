"""Notebook display: recall hits, explanations, context plans, fact histories and traversals as HTML and text."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from html.parser import HTMLParser

import pytest

from elastic_memory import FactHistory, Hits, Memory, Traversal, display
from elastic_memory.testing import FakeEmbedder

HOSTILE = "<script>alert('x')</script> & \"quoted\""


class _Page(HTMLParser):
    """The tags, attributes and visible text of an HTML fragment."""

    def __init__(self, fragment: str) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.text: list[str] = []
        self.feed(fragment)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += attrs

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    @property
    def visible(self) -> str:
        return "".join(self.text)


class _Pretty:
    """What IPython's printer receives from ``_repr_pretty_``."""

    def __init__(self) -> None:
        self.out = ""

    def text(self, value: str) -> None:
        self.out += value


def _pretty(obj: object) -> str:
    p = _Pretty()
    obj._repr_pretty_(p, False)  # type: ignore[attr-defined]
    return p.out


@pytest.fixture
def mem() -> Iterator[Memory]:
    with Memory.open(":memory:", embedder=FakeEmbedder()) as m:
        yield m


def test_recall_returns_hits_that_are_a_plain_list(mem: Memory) -> None:
    mem.remember("The user's dog is called Biscuit.")
    hits = mem.recall("dog")
    assert isinstance(hits, Hits)
    assert isinstance(hits, list)
    assert hits == list(hits)
    assert json.dumps([h.content for h in hits]) == '["The user\'s dog is called Biscuit."]'


def test_hits_html_shows_rank_relevance_score_kind_content_and_id(mem: Memory) -> None:
    mid = mem.remember("The user's dog is called Biscuit.")
    hit = mem.recall("dog")[0]
    page = _Page(mem.recall("dog")._repr_html_())
    assert page.tags.count("tr") == 2  # header and one row
    assert "The user's dog is called Biscuit." in page.visible
    assert f"{hit.relevance:.3f}" in page.visible
    assert f"{hit.score:.3f}" in page.visible
    assert "note" in page.visible
    assert ("title", str(mid)) in page.attrs


def test_hits_html_escapes_hostile_content(mem: Memory) -> None:
    mem.remember(HOSTILE)
    fragment = mem.recall("alert")._repr_html_()
    assert "<script" not in fragment
    assert "&lt;script&gt;" in fragment
    assert "&amp;" in fragment
    assert "&quot;quoted&quot;" in fragment
    assert HOSTILE in _Page(fragment).visible


def test_hits_html_has_no_script_style_or_external_asset(mem: Memory) -> None:
    mem.remember(HOSTILE)
    page = _Page(mem.recall("alert")._repr_html_())
    assert {"script", "style", "link", "img", "iframe"}.isdisjoint(page.tags)
    assert not [name for name, _ in page.attrs if name.startswith("on") or name in ("src", "href", "class")]


def test_empty_hits_say_so(mem: Memory) -> None:
    hits = mem.recall("anything")
    assert hits == []
    assert _Page(hits._repr_html_()).visible == "0 hits"
    assert _pretty(hits) == "0 hits"


def test_a_hit_without_relevance_shows_a_dash(mem: Memory) -> None:
    mem.remember("Kestrel is the staging server.")
    hits = mem.recall("")  # no query text: no relevance
    assert hits[0].relevance is None
    row = _pretty(hits).splitlines()[2]
    assert row.split()[1] == "—"
    assert "—" in _Page(hits._repr_html_()).visible


def test_long_content_is_cut_with_the_start_kept_in_a_tooltip(mem: Memory) -> None:
    mem.remember("word " * 1000 + "tail")
    hits = mem.recall("word")
    page = _Page(hits._repr_html_())
    assert "tail" not in page.visible
    assert "word word…" in page.visible
    tooltip = next(value for name, value in page.attrs if name == "title" and value and value.startswith("word"))
    assert len(tooltip) == display.TITLE_CHARS
    assert max(len(line) for line in _pretty(hits).splitlines()) < 120


def test_newlines_and_control_characters_stay_on_one_line(mem: Memory) -> None:
    mem.remember("first line\nsecond\x1b[31m line\u202e")
    text = _pretty(mem.recall("second"))
    assert "first line ↵ second[31m line" in text
    assert "\x1b" not in text
    assert "\u202e" not in text


def test_hits_text_has_a_header_and_one_line_per_hit(mem: Memory) -> None:
    mem.remember("Kestrel is the staging server.")
    mem.remember("Falcon is the production server.")
    lines = _pretty(mem.recall("server")).splitlines()
    assert lines[0] == "2 hits"
    assert lines[1].split() == ["#", "relevance", "score", "kind", "content", "id"]
    assert len(lines) == 4


def test_explanation_html_shows_mode_timings_details_and_hits(mem: Memory) -> None:
    mem.remember("Deploys run on Fridays.")
    page = _Page(mem.explain("deploy")._repr_html_())
    assert "mode hybrid" in page.visible
    assert "total_ms" in page.visible
    assert "vector_index" in page.visible
    assert "keyword_candidates" in page.visible
    assert "Deploys run on Fridays." in page.visible


def test_explanation_flattens_nested_details(mem: Memory) -> None:
    mem.remember("Deploys run on Fridays.")
    text = _pretty(mem.explain("deploy"))
    assert "  graph.reached: 0" in text.splitlines()


def test_explanation_escapes_the_query(mem: Memory) -> None:
    fragment = mem.explain(HOSTILE)._repr_html_()
    assert "<script" not in fragment
    assert HOSTILE in _Page(fragment).visible


def test_plan_html_shows_tokens_against_the_budget_and_each_section(mem: Memory) -> None:
    mem.facts.set("user.name", "Ada")
    plan = mem.build_context("what is my name?")
    page = _Page(plan._repr_html_())
    assert f"{plan.tokens} / {plan.budget} tokens" in page.visible
    for section in plan.sections:
        assert section.title in page.visible
        assert f"{section.tokens} / {section.budget} tokens" in page.visible
    assert "Ada" in page.visible
    assert "key=user.name" in page.visible


def test_plan_text_lists_sections_and_items(mem: Memory) -> None:
    mem.facts.set("user.name", "Ada")
    lines = _pretty(mem.build_context("what is my name?")).splitlines()
    assert lines[1].startswith("## PROFILE FACTS (")
    assert lines[2].startswith("  - Ada (key=user.name)")


def test_empty_plan_says_there_is_nothing_to_show(mem: Memory) -> None:
    plan = mem.build_context("hello")
    assert plan.sections == ()
    assert "nothing to show the model" in _Page(plan._repr_html_()).visible
    assert _pretty(plan).endswith("no sections: nothing to show the model")


def test_plan_escapes_hostile_items(mem: Memory) -> None:
    mem.remember(HOSTILE, importance=0.9)
    fragment = mem.build_context("alert script quoted")._repr_html_()
    assert "<script" not in fragment
    assert "&lt;script&gt;" in fragment


def test_fact_history_is_a_list_shown_oldest_first_with_status(mem: Memory) -> None:
    mem.facts.set("user.city", "Berlin")
    mem.facts.set("user.city", "Paris")
    history = mem.facts.history("user.city")
    assert isinstance(history, FactHistory)
    assert [f.value for f in history] == ["Berlin", "Paris"]
    rows = [line.split()[:2] for line in _pretty(history).splitlines()[2:]]
    assert rows == [["Berlin", "replaced"], ["Paris", "current"]]
    page = _Page(history._repr_html_())
    assert "user.city" in page.visible
    assert page.tags.count("tr") == 3


def test_forgotten_fact_shows_as_forgotten(mem: Memory) -> None:
    mem.facts.set("user.city", "Berlin")
    mem.facts.forget("user.city")
    assert "forgotten" in _pretty(mem.facts.history("user.city")).splitlines()[-1]


def test_fact_history_escapes_hostile_values(mem: Memory) -> None:
    mem.facts.set("user.motto", HOSTILE)
    fragment = mem.facts.history("user.motto")._repr_html_()
    assert "<script" not in fragment
    assert HOSTILE in _Page(fragment).visible


def test_empty_fact_history(mem: Memory) -> None:
    history = mem.facts.history("user.unknown")
    assert history == []
    assert _pretty(history) == "0 versions"
    assert _Page(history._repr_html_()).visible == "0 versions"


def test_traversal_is_a_list_shown_with_hops_relations_and_paths(mem: Memory) -> None:
    mem.record_turn("I work at Acme Robotics.", "Nice!")
    reached = mem.graph.traverse("user")
    assert isinstance(reached, Traversal)
    assert isinstance(reached, list)
    page = _Page(reached._repr_html_())
    assert "Acme Robotics" in page.visible
    assert "works_at" in page.visible
    assert "user → Acme Robotics" in page.visible
    assert _pretty(reached).splitlines()[0] == "1 entity reached"


def test_empty_traversal(mem: Memory) -> None:
    reached = mem.graph.traverse("nobody")
    assert reached == []
    assert _pretty(reached) == "0 entities reached"
    assert _Page(reached._repr_html_()).visible == "0 entities reached"


@pytest.mark.parametrize("when", [253402300800.0, -1e11, float("inf")])
def test_a_time_no_date_can_hold_shows_the_raw_number(mem: Memory, when: float) -> None:
    """A timestamp past year 9999 (or before year 1) is shown as the number, never raises ValueError."""
    mem.facts.set("user.city", "Berlin")
    fact = dataclasses.replace(mem.facts.history("user.city")[0], valid_from=when)
    history = FactHistory([fact])
    assert str(when) in _Page(history._repr_html_()).visible
    assert str(when) in _pretty(history)


def test_the_hit_id_tooltip_drops_invisible_characters(mem: Memory) -> None:
    mem.remember("Kestrel is the staging server.")
    hit = dataclasses.replace(mem.recall("Kestrel")[0], id="m1\u202eevil\u200b\u2066x")
    page = _Page(Hits([hit])._repr_html_())
    titles = [value for name, value in page.attrs if name == "title"]
    assert "m1evilx" in titles
    assert not any(ch in value for value in titles if value for ch in "\u202e\u200b\u2066")


def test_a_slice_of_hits_is_still_hits() -> None:
    with Memory.open(":memory:", embedder=FakeEmbedder()) as mem:
        mem.remember_many(["tea", "green tea", "black tea"])
        hits = mem.recall("tea", k=3)
        assert isinstance(hits[:2], Hits) and hits[:2] == list(hits)[:2]


def test_a_single_hit_renders_as_a_one_row_table() -> None:
    with Memory.open(":memory:", embedder=FakeEmbedder()) as mem:
        mem.remember("<b>tea</b>")
        hit = mem.recall("tea")[0]
        assert "&lt;b&gt;tea&lt;/b&gt;" in hit._repr_html_() and "1 hit" in hit._repr_html_()
