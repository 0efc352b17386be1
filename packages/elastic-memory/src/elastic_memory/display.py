r"""Notebook and console display: recall hits, explanations, context plans, fact histories, traversals.

Pure functions from the public values to HTML (what ``_repr_html_`` returns: one self-contained
fragment, inline styles only, no script, no external asset, readable on light and dark themes)
and to plain text (what ``_repr_pretty_`` prints in IPython). Stored text is hostile input:
every piece of it is escaped, stripped of control and invisible characters, and cut to a
readable length (the HTML keeps up to 1,000 characters of it in a tooltip).

>>> from elastic_memory.types import Hit, MemoryType, Scope, Source
>>> hit = Hit("m1", "<script>alert(1)</script>", 0.9, MemoryType.SEMANTIC, {}, (), "a",
...           Scope.PRIVATE, None, None, 0.5, 1.0, False, Source.AGENT, 0.0, relevance=0.9)
>>> "<script>" in hits_html([hit]), "&lt;script&gt;" in hits_html([hit])
(False, True)
>>> print(hits_text([hit]))
1 hit
#  relevance  score  kind  content                    id
1  0.900      0.900  note  <script>alert(1)</script>  m1
"""

from __future__ import annotations

import html
import unicodedata
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .context import ContextPlan
    from .facade.graph import Reached
    from .types import Explanation, Fact, Hit

__all__ = [
    "explanation_html",
    "explanation_text",
    "facts_html",
    "facts_text",
    "hits_html",
    "hits_text",
    "plan_html",
    "plan_text",
    "traversal_html",
    "traversal_text",
]

#: Characters of stored text shown in an HTML cell, in a text column, and in an HTML tooltip.
HTML_CHARS = 200
TEXT_CHARS = 60
TITLE_CHARS = 1000

_FONT = "font-size:12px;line-height:1.4"
_TABLE = f"border-collapse:collapse;margin:2px 0 6px 0;{_FONT}"
_TH = "padding:2px 8px;border-bottom:1px solid rgba(127,127,127,.55);font-weight:600"
_TD = "text-align:left;padding:2px 8px;border-bottom:1px solid rgba(127,127,127,.2);vertical-align:top"
_NUM = "text-align:right;padding:2px 8px;border-bottom:1px solid rgba(127,127,127,.2);vertical-align:top"
_CAPTION = f"{_FONT};margin:2px 0;opacity:.8"
_MUTED = "opacity:.6"
_BAR = "display:inline-block;width:48px;height:7px;margin-right:6px;background:rgba(127,127,127,.25)"
_FILL = "display:block;height:7px;background:rgba(66,133,244,.8)"


# ---- text helpers -----------------------------------------------------------------------------


def _visible(text: str) -> str:
    """``text`` on one line: newlines as ``↵``, tabs as spaces, control and invisible characters dropped."""
    out = []
    for ch in text.replace("\r\n", "\n"):
        if ch in "\n\r\u2028\u2029":
            out.append(" ↵ ")
        elif ch == "\t":
            out.append(" ")
        elif unicodedata.category(ch) == "Cs":
            out.append("\ufffd")
        elif unicodedata.category(ch) not in ("Cc", "Cf"):
            out.append(ch)
    return "".join(out)


def _cut(text: str, limit: int) -> str:
    """``text`` made visible and cut to ``limit`` characters, ending in ``…`` when cut."""
    text = _visible(text)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _when(ts: float | None) -> str:
    """A Unix time as UTC ``YYYY-MM-DD HH:MM:SS``; ``—`` for ``None``; the raw number when no date holds it."""
    if ts is None:
        return "—"
    try:
        return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    except (ValueError, OverflowError, OSError):  # past year 9999, before year 1, or not a number
        return str(ts)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _text_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Left-aligned columns, two spaces apart, trailing spaces removed."""
    widths = [max(len(cell) for cell in column) for column in zip(headers, *rows, strict=True)]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in (headers, *rows)]


# ---- HTML helpers -----------------------------------------------------------------------------


def _esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def _text_cell(text: str, limit: int = HTML_CHARS) -> str:
    """Escaped, cut stored text; the longer original (up to ``TITLE_CHARS``) in the tooltip when cut."""
    shown = _cut(text, limit)
    if shown == _visible(text):
        return _esc(shown)
    return f'<span title="{_esc(_cut(text, TITLE_CHARS))}">{_esc(shown)}</span>'


def _bar(share: float | None, label: str | None = None) -> str:
    """A small bar for a share in [0, 1] (clipped), then ``label`` (the share by default); ``—`` for ``None``."""
    if share is None:
        return f'<span style="{_MUTED}">—</span>'
    width = round(100 * min(max(share, 0.0), 1.0))
    shown = f"{share:.3f}" if label is None else label
    return f'<span style="{_BAR}"><span style="{_FILL};width:{width}%"></span></span>{shown}'


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[int] = ()) -> str:
    """An HTML table of cells that are already HTML (escaped); columns in ``numeric`` align right."""
    head = "".join(
        f'<th style="{_TH};text-align:{"right" if n in numeric else "left"}">{_esc(h)}</th>'
        for n, h in enumerate(headers)
    )
    body = "".join(
        "<tr>" + "".join(f'<td style="{_NUM if n in numeric else _TD}">{c}</td>' for n, c in enumerate(row)) + "</tr>"
        for row in rows
    )
    return f'<table style="{_TABLE}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _caption(text: str) -> str:
    """A caption line; ``text`` is already HTML."""
    return f'<div style="{_CAPTION}">{text}</div>'


def _block(*parts: str) -> str:
    return "<div>" + "".join(parts) + "</div>"


# ---- recall hits ------------------------------------------------------------------------------


def _hit_columns(hits: Sequence[Hit]) -> tuple[bool, bool]:
    """Whether the tier and tags columns have anything to show."""
    return any(h.tier for h in hits), any(h.tags for h in hits)


def hits_html(hits: Sequence[Hit]) -> str:
    """The hits as an HTML table: rank, relevance (bar), score, raw leg scores, kind, content, id."""
    if not hits:
        return _block(_caption("0 hits"))
    tiers, tags = _hit_columns(hits)
    headers = ["#", "relevance", "score", "keyword", "vector", "kind", *(["tier"] * tiers), "content"]
    headers += [*(["tags"] * tags), "id"]
    rows = []
    for n, h in enumerate(hits, 1):
        row = [
            str(n),
            _bar(h.relevance),
            _num(h.score),
            _num(h.keyword_score),
            _num(h.vector_score),
            _text_cell(h.kind, 20),
        ]
        row += [_text_cell(h.tier or "—", 40)] * tiers
        row.append(_text_cell(h.content))
        row += [_text_cell(", ".join(h.tags), 60)] * tags
        row.append(f'<span title="{_esc(_cut(h.id, TITLE_CHARS))}">{_esc(_cut(h.id, 9))}</span>')
        rows.append(row)
    return _block(_caption(_plural(len(hits), "hit")), _table(headers, rows, numeric=(0, 2, 3, 4)))


def hits_text(hits: Sequence[Hit]) -> str:
    """The hits as aligned text columns: rank, relevance, score, kind, content (cut), id."""
    if not hits:
        return "0 hits"
    tiers, _ = _hit_columns(hits)
    headers = ["#", "relevance", "score", "kind", *(["tier"] * tiers), "content", "id"]
    rows = [
        [str(n), _num(h.relevance), _num(h.score), _cut(h.kind, 12)]
        + [_cut(h.tier or "—", 20)] * tiers
        + [_cut(h.content, TEXT_CHARS), _cut(h.id, 9)]
        for n, h in enumerate(hits, 1)
    ]
    return "\n".join([_plural(len(hits), "hit"), *_text_table(headers, rows)])


# ---- explanations -----------------------------------------------------------------------------


def _flat(details: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """``details`` as ``(dotted key, value)`` pairs, nested mappings flattened."""
    out: list[tuple[str, Any]] = []
    for key, value in details.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out += _flat(value, f"{name}.")
        else:
            out.append((name, value))
    return out


def _value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, list | tuple | set | frozenset):
        return ", ".join(map(str, value)) if value else "—"
    return "—" if value is None else str(value)


def _split(details: Mapping[str, Any]) -> tuple[list[tuple[str, float]], list[tuple[str, Any]]]:
    """Timings (keys ending in ``ms``, in ms) apart from everything else."""
    pairs = _flat(details)
    timed = [(k, float(v)) for k, v in pairs if k.endswith("ms") and isinstance(v, int | float)]
    names = {k for k, _ in timed}
    return timed, [(k, v) for k, v in pairs if k not in names]


def _mode(explanation: Explanation) -> str:
    asked, served = explanation.mode.value, explanation.effective_mode.value
    return asked if asked == served else f"{asked} → {served}"


def explanation_html(explanation: Explanation) -> str:
    """The query and modes, timings (bars against the total), the other details, then the hits."""
    timed, other = _split(explanation.details)
    total = next((v for k, v in timed if k == "total_ms"), max((v for _, v in timed), default=0.0))
    head = f"explain <b>{_text_cell(explanation.query, 120) or '(no query text)'}</b> · mode {_esc(_mode(explanation))}"
    parts = [_caption(head)]
    if timed:
        rows = [[_esc(k), _bar(v / total if total else 0.0, f"{v:.2f}")] for k, v in timed]
        parts.append(_table(["timing", "ms"], rows))
    if other:
        parts.append(_table(["detail", "value"], [[_esc(k), _text_cell(_value(v), 120)] for k, v in other]))
    parts.append(hits_html(explanation.hits))
    return _block(*parts)


def explanation_text(explanation: Explanation) -> str:
    """The query and modes, every detail as ``key: value`` (timings in ms), then the hits."""
    timed, other = _split(explanation.details)
    lines = [f"explain {_cut(explanation.query, TEXT_CHARS)!r} · mode {_mode(explanation)}"]
    lines += [f"  {k}: {_cut(_value(v), TEXT_CHARS)}" for k, v in other]
    lines += [f"  {k}: {v:.2f}" for k, v in timed]
    return "\n".join([*lines, hits_text(explanation.hits)])


# ---- context plans ----------------------------------------------------------------------------


def _meta(meta: Mapping[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in meta.items())


def _plan_head(plan: ContextPlan) -> str:
    extra = [f"withheld {plan.withheld}"] if plan.withheld else []
    return " · ".join(
        [
            f"{plan.tokens} / {plan.budget} tokens",
            _plural(len(plan.items()), "item"),
            f"tier {plan.tier}",
            f"keep last {plan.keep_last_n_turns} turns",
            *extra,
        ]
    )


def plan_html(plan: ContextPlan) -> str:
    """The budget used (bar), one table per section (tokens against its budget), each item's text and labels."""
    share = plan.tokens / plan.budget if plan.budget else 0.0
    parts = [
        _caption(f"context plan for <b>{_text_cell(plan.query, 120)}</b>"),
        _caption(_bar(share, _esc(_plan_head(plan)))),
    ]
    if not plan.sections:
        parts.append(_caption("no sections: nothing to show the model"))
    for section in plan.sections:
        dropped = f" · {section.dropped} dropped" if section.dropped else ""
        parts.append(_caption(f"<b>{_esc(section.title)}</b> · {section.tokens} / {section.budget} tokens{dropped}"))
        rows = [
            [_text_cell(i.text), _text_cell(i.kind, 20), _num(i.score), str(i.tokens), _text_cell(_meta(i.meta), 80)]
            for i in section.items
        ]
        parts.append(_table(["text", "kind", "score", "tokens", "labels"], rows, numeric=(2, 3)))
    return _block(*parts)


def plan_text(plan: ContextPlan) -> str:
    """The budget line, then each section's header and one line per item (text cut)."""
    lines = [f"context plan for {_cut(plan.query, TEXT_CHARS)!r}: {_plan_head(plan)}"]
    if not plan.sections:
        lines.append("no sections: nothing to show the model")
    for section in plan.sections:
        dropped = f", {section.dropped} dropped" if section.dropped else ""
        lines.append(f"## {section.title} ({section.tokens} / {section.budget} tokens{dropped})")
        for i in section.items:
            labels = f" ({_cut(_meta(i.meta), 40)})" if i.meta else ""
            lines.append(f"  - {_cut(i.text, TEXT_CHARS)}{labels}  [{i.kind}, {i.tokens} tokens]")
    return "\n".join(lines)


# ---- fact histories ---------------------------------------------------------------------------


def _status(fact: Fact) -> str:
    if fact.forgotten:
        return "forgotten"
    return "current" if fact.invalidated_at is None else "replaced"


def _keys(facts: Sequence[Fact]) -> str:
    keys = list(dict.fromkeys(f.key for f in facts))
    return ", ".join(keys[:3]) + (", …" if len(keys) > 3 else "")


def facts_html(facts: Sequence[Fact]) -> str:
    """One row per version, oldest first: value, status, when it held, when recorded, origin, confidence."""
    if not facts:
        return _block(_caption("0 versions"))
    rows = [
        [
            _text_cell(f.value),
            _esc(_status(f)),
            _esc(f"{_when(f.valid_from)} → {_when(f.valid_to)}"),
            _esc(_when(f.recorded_at)),
            _text_cell(f"{f.origin} ({f.source.value})", 40),
            _num(f.confidence),
            _text_cell(f.category, 40),
        ]
        for f in facts
    ]
    headers = ["value", "status", "valid (UTC)", "recorded (UTC)", "origin", "confidence", "category"]
    head = f"<b>{_text_cell(_keys(facts), 120)}</b> · {_plural(len(facts), 'version')}"
    return _block(_caption(head), _table(headers, rows, numeric=(5,)))


def facts_text(facts: Sequence[Fact]) -> str:
    """One line per version, oldest first: value, status, valid from and to (UTC), origin."""
    if not facts:
        return "0 versions"
    rows = [
        [_cut(f.value, TEXT_CHARS), _status(f), _when(f.valid_from), _when(f.valid_to), _cut(f.origin, 20)]
        for f in facts
    ]
    table = _text_table(["value", "status", "valid from (UTC)", "valid to (UTC)", "origin"], rows)
    return "\n".join([f"{_cut(_keys(facts), TEXT_CHARS)}: {_plural(len(facts), 'version')}", *table])


# ---- graph traversals -------------------------------------------------------------------------


def _reached(reached: Sequence[Reached]) -> str:
    return "1 entity reached" if len(reached) == 1 else f"{len(reached)} entities reached"


def _path(reached: Reached) -> str:
    return " → ".join(_cut(name, 40) for name in reached.path)


def traversal_html(reached: Sequence[Reached]) -> str:
    """One row per entity reached, nearest first: hops, name, type, last relation, path."""
    if not reached:
        return _block(_caption("0 entities reached"))
    rows = [
        [str(r.hops), _text_cell(r.name, 80), _text_cell(r.type, 40), _text_cell(r.relation, 40), _esc(_path(r))]
        for r in reached
    ]
    return _block(
        _caption(_reached(reached)), _table(["hops", "entity", "type", "relation", "path"], rows, numeric=(0,))
    )


def traversal_text(reached: Sequence[Reached]) -> str:
    """One line per entity reached, nearest first: hops, name, type, last relation, path."""
    if not reached:
        return "0 entities reached"
    rows = [[str(r.hops), _cut(r.name, 40), _cut(r.type, 20), _cut(r.relation, 30), _path(r)] for r in reached]
    return "\n".join([_reached(reached), *_text_table(["hops", "entity", "type", "relation", "path"], rows)])
