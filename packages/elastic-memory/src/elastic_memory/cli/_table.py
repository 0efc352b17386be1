"""Tables for the command line that never clip: ids, keys and times whole, text wrapped.

A :class:`Grid` is laid out when it is printed, for the width it gets (the terminal's, or
``$COLUMNS``, else 80 when stdout is a pipe). When every one-line column fits at its full
width beside the text columns at their minimum width, it is a table whose text columns
wrap; otherwise each row is a block of ``label  value`` lines, values wrapped. Nothing is
cut or dropped at any width: a value wider than the whole line is folded onto the next.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, JustifyMethod, RenderResult
from rich.table import Table
from rich.text import Text

__all__ = ["Column", "Grid"]

#: Screen cells a table spends outside its cells: two edges, one separator between columns,
#: one cell of padding on each side of every column (``box.SIMPLE_HEAD``, ``padding=(0, 1)``).
_EDGES = 2
_PADDING = 2
_SEPARATOR = 1


@dataclass(frozen=True)
class Column:
    """One column: an id, key, time or number stays on one line; ``wrap`` text wraps at ``min_width`` or more."""

    header: str
    wrap: bool = False
    justify: JustifyMethod = "left"
    style: str = ""
    min_width: int = 24


def _width(cell: Text) -> int:
    """The screen cells of the widest line of ``cell``."""
    return max((cell_len(line) for line in cell.plain.split("\n")), default=0)


def _share(space: int, lows: list[int], highs: list[int]) -> list[int]:
    """Widths from ``lows`` grown evenly towards ``highs`` with ``space`` cells in all."""
    widths = list(lows)
    left = space - sum(lows)
    while left > 0:
        growing = [i for i, w in enumerate(widths) if w < highs[i]]
        if not growing:
            break
        step = max(1, left // len(growing))
        for i in growing:
            grow = min(step, highs[i] - widths[i], left)
            widths[i] += grow
            left -= grow
    return widths


class Grid:
    """Rows under column headers, printed as a table when it fits, else as one block per row."""

    def __init__(self, columns: Sequence[Column], *, title: str | None = None) -> None:
        self.columns = list(columns)
        self.title = title
        self.rows: list[list[Text]] = []

    def add_row(self, *cells: str | Text) -> None:
        """Add a row; text is shown as it is (no markup)."""
        if len(cells) != len(self.columns):
            msg = f"a row of this grid has {len(self.columns)} cells, got {len(cells)}"
            raise ValueError(msg)
        self.rows.append([c if isinstance(c, Text) else Text(c) for c in cells])

    def widths(self, width: int) -> list[int] | None:
        """Each column's width in a table ``width`` cells wide, or ``None`` when the table cannot fit."""
        natural = [
            max([_width(Text(col.header)), *(_width(row[i]) for row in self.rows)])
            for i, col in enumerate(self.columns)
        ]
        n = len(self.columns)
        space = width - _EDGES - (n - 1) * _SEPARATOR - n * _PADDING
        space -= sum(w for w, col in zip(natural, self.columns, strict=True) if not col.wrap)
        wrapped = [i for i, col in enumerate(self.columns) if col.wrap]
        lows = [min(natural[i], max(self.columns[i].min_width, len(self.columns[i].header))) for i in wrapped]
        if space < sum(lows):
            return None
        for i, w in zip(wrapped, _share(space, lows, [natural[i] for i in wrapped]), strict=True):
            natural[i] = w
        return natural

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        widths = self.widths(options.max_width)
        if widths is None:
            yield from self._blocks(options.max_width)
        else:
            yield self._table(widths)

    def _table(self, widths: list[int]) -> Table:
        table = Table(title=self.title, box=box.SIMPLE_HEAD, title_justify="left", expand=False)
        for col, width in zip(self.columns, widths, strict=True):
            table.add_column(
                col.header,
                justify=col.justify,
                style=col.style,
                width=width,
                no_wrap=not col.wrap,
                overflow="fold",
            )
        for row in self.rows:
            table.add_row(*row)
        return table

    def _blocks(self, width: int) -> RenderResult:
        """One block per row: each non-empty cell on its own ``label  value`` line, values wrapped."""
        label = max(cell_len(col.header) for col in self.columns)
        blocks = Table(box=None, show_header=False, padding=(0, 1), pad_edge=False, expand=False)
        blocks.add_column(style="bold", width=label, no_wrap=True)
        blocks.add_column(width=max(8, width - label - 2), overflow="fold")
        for n, row in enumerate(self.rows):
            if n:
                blocks.add_row("", "")
            for col, cell in zip(self.columns, row, strict=True):
                if cell.plain:
                    blocks.add_row(Text(col.header), Text(style=col.style).append_text(cell))
        if self.title:
            yield Text(self.title, style="table.title")
            yield Text()
        yield blocks
