"""Griffe extension used by the API reference (mkdocs.yml): Markdown-safe docstrings.

The library's docstrings carry doctests and Sphinx roles in plain text. mkdocstrings reads
docstrings as Markdown, where ``>>>`` starts a nested quote and ``['x']`` in an output
line is taken as a cross-reference. This extension wraps each top-level doctest run in a
``pycon`` fence, turns roles such as :class:`~elastic_memory.Hit` into inline code, and
turns a reST ``::`` ending into ``:``. The sources are not changed; doctests keep running.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|meth|func|data|attr|mod|exc|obj|const):`(~?)([^`]+)`")


def _role(match: re.Match[str]) -> str:
    target = match.group(2)
    return f"`{target.rsplit('.', 1)[-1] if match.group(1) else target}`"


def markdown_safe(text: str) -> str:
    """Fence top-level doctests and simplify reST roles; leave everything else alone."""
    out: list[str] = []
    in_fence = in_doctest = False
    for raw in text.splitlines():
        line = raw
        if in_doctest and not line.strip():
            out.append("```")
            in_doctest = False
        elif not in_fence and not in_doctest and line.startswith(">>>"):
            out.append("```pycon")
            in_doctest = True
        elif not in_doctest and line.lstrip().startswith("```"):
            in_fence = not in_fence
        if not in_fence and not in_doctest:
            line = _ROLE.sub(_role, line)
            if line.endswith("::") and not line.endswith(" ::"):
                line = line[:-1]
        out.append(line)
    if in_doctest:
        out.append("```")
    return "\n".join(out)


def _walk(obj: griffe.Object) -> None:
    if obj.docstring is not None:
        obj.docstring.value = markdown_safe(obj.docstring.value)
    for member in obj.members.values():
        if not member.is_alias:
            _walk(member)  # type: ignore[arg-type]


class MarkdownSafeDocstrings(griffe.Extension):
    """Rewrite every docstring of a loaded package once, before mkdocstrings renders it."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        """Walk the whole package."""
        _walk(pkg)
