"""Tables for the chapters: results shown as rendered HTML tables, not `print` loops.

`Table` is a small value a notebook displays as an HTML table (with a plain-text twin for
terminals and for nbval). The HTML sits in its own box that scrolls sideways if the table is
wider than the page, and its cells wrap, so no cell is cut off at the page's edge. Header cells
carry ``scope`` so a screen reader can announce which row and column a cell belongs to.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

BOX_STYLE = "overflow-x:auto;max-width:100%;margin:0.5em 0 1em 0"
TABLE_STYLE = "border-collapse:collapse;font-size:0.9em"
CELL_STYLE = (
    "padding:0.25em 0.6em;border-bottom:1px solid #d0d7de;text-align:left;"
    "vertical-align:top;white-space:normal"
)


def _text(value: Any, digits: int | None) -> str:
    if digits is not None and isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


@dataclass(frozen=True)
class Table:
    """A table of `rows` under `header`; the first column names each row.

    Args:
        header: the column titles, one per column.
        rows: the rows, each as long as `header`; floats are shown with `digits` decimals.
        caption: a sentence saying what the table shows (read out by screen readers).
        digits: decimals for float cells (None: as `str` gives them).
    """

    header: Sequence[str]
    rows: Sequence[Sequence[Any]]
    caption: str = ""
    digits: int | None = 4

    def __post_init__(self) -> None:
        for row in self.rows:
            if len(row) != len(self.header):
                raise ValueError(f"expected rows of {len(self.header)} cells, got {len(row)}")

    def cells(self) -> list[list[str]]:
        """Every row as text, as shown."""
        return [[_text(v, self.digits) for v in row] for row in self.rows]

    def _repr_html_(self) -> str:
        def cell(tag: str, text: str, scope: str | None = None) -> str:
            at = f' scope="{scope}"' if scope else ""
            return f'<{tag}{at} style="{CELL_STYLE}">{html.escape(text)}</{tag}>'

        head = "".join(cell("th", h, "col") for h in self.header)
        body = "".join(
            "<tr>" + cell("th", row[0], "row") + "".join(cell("td", c) for c in row[1:]) + "</tr>"
            for row in self.cells()
        )
        caption = f"<caption>{html.escape(self.caption)}</caption>" if self.caption else ""
        # a box that may scroll sideways: focusable, so a keyboard can scroll it, and named
        name = html.escape(self.caption or "table", quote=True)
        return (
            f'<div class="normcore-table" role="region" aria-label="{name}" tabindex="0" '
            f'style="{BOX_STYLE}"><table style="{TABLE_STYLE}">'
            f"{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
        )

    def __repr__(self) -> str:
        rows = [list(self.header), *self.cells()]
        widths = [max(len(r[i]) for r in rows) for i in range(len(self.header))]
        lines = [
            "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
        ]
        return "\n".join(([self.caption] if self.caption else []) + lines)
