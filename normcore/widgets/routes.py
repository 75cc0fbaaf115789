"""Chapter 3's widget: choose a block and an arriving slope, see the three passed-down blocks
(collected, oracle, naive) and how far each lands from the oracle.

Run it live by opening the chapter in JupyterLab (``make lab``). Built without a browser::

    explorer = routes_widget()
    explorer.source.value = "typed"
    explorer.typed.value = "1, 2\\n3, 4"
    explorer.readout.value          # the HTML the reader sees
"""

from __future__ import annotations

import html
import math

import ipywidgets as widgets
import numpy as np

from normcore.experiments.routes import WORKED_BLOCK, compare_blocks, counting_slope
from normcore.widgets._data import data, keyed

#: The largest block the widget will take (the oracle runs two forward passes per cell).
MAX_ROWS, MAX_COLUMNS = 12, 6


def parse_block(text: str, name: str = "block") -> np.ndarray:
    """Read a block typed as rows on separate lines (or separated by ';'), numbers separated by
    commas or spaces. Each number goes through float(); nothing is evaluated."""
    rows = []
    for line in text.replace(";", "\n").splitlines():
        cells = line.replace(",", " ").split()
        if not cells:
            continue
        row = []
        for cell in cells:
            try:
                value = float(cell)
            except ValueError:
                raise ValueError(f"{name}: {cell!r} is not a number") from None
            if not math.isfinite(value):
                raise ValueError(f"{name}: {cell!r} is not a finite number")
            row.append(value)
        rows.append(row)
    if not rows:
        raise ValueError(f"{name}: type at least one row of numbers")
    widths = {len(r) for r in rows}
    if len(widths) != 1:
        raise ValueError(
            f"{name}: every row needs the same number of entries, got {sorted(widths)}"
        )
    block = np.array(rows, dtype=np.float64)
    if block.shape[0] > MAX_ROWS or block.shape[1] > MAX_COLUMNS:
        raise ValueError(
            f"{name}: at most {MAX_ROWS} rows and {MAX_COLUMNS} columns, got {block.shape}"
        )
    return block


def table(values: np.ndarray, title: str, decimals: int = 4, key: str | None = None) -> str:
    """A small HTML table of a 2-D array, rounded. With `key`, each cell also carries its full
    value: ``data-key="key:row,column" data-value="..."``."""

    def cell(i: int, j: int, v: float) -> str:
        attributes = keyed(f"{key}:{i},{j}", v) if key is not None else ""
        return f"<td{attributes}>{v:.{decimals}f}</td>"

    head = "".join(f"<th>unit {j + 1}</th>" for j in range(values.shape[1]))
    body = "".join(
        "<tr><th>row {}</th>{}</tr>".format(
            i + 1, "".join(cell(i, j, v) for j, v in enumerate(row))
        )
        for i, row in enumerate(values)
    )
    return (
        f"<div style='display:inline-block;margin-right:1.2em;vertical-align:top'>"
        f"<b>{html.escape(title)}</b><table><tr><th></th>{head}</tr>{body}</table></div>"
    )


def error_html(message: str) -> str:
    return (f"<p style='color:#b00020'{data(error=message)}><b>Cannot compute:</b> "
            f"{html.escape(message)}</p>")


def _sums(values: np.ndarray) -> str:
    return ", ".join(f"{v:.4f}" for v in np.where(np.abs(values) < 5e-5, 0.0, values))


def routes_readout(block: np.ndarray, arriving: np.ndarray) -> str:
    """The widget's readout for one block and arriving slope (batch layer, statistics down the
    columns)."""
    c = compare_blocks(block, arriving, "batch")
    wrong = int(np.count_nonzero(c.wrong_sign))
    lines = [
        (f"collected block's largest gap to the oracle: <b>{c.true_gap:.2e}</b>",
         data(true_gap=c.true_gap)),
        (f"naive block's largest error: <b>{c.naive_error:.4f}</b> "
         f"(largest true slope {c.largest_true:.4f})",
         data(naive_error=c.naive_error, largest_true=c.largest_true)),
        (f"naive cells with the wrong sign: <b>{wrong}</b> of {c.true.size}",
         data(wrong_sign=wrong, cells=c.true.size)),
        (f"column sums, collected: {_sums(c.true_sums)}; naive: {_sums(c.naive_sums)}",
         data(true_sums=c.true_sums, naive_sums=c.naive_sums)),
    ]
    return (
        table(c.true, "collected (three routes)", key="collected")
        + table(c.oracle, "oracle (finite difference)", key="oracle")
        + table(c.naive, "naive d / s", key="naive")
        + "<ul>" + "".join(f"<li{attributes}>{line}</li>" for line, attributes in lines)
        + "</ul>"
    )


class RoutesExplorer(widgets.VBox):
    """The controls and the readout, in one box. Bad input is shown in the readout."""

    def __init__(self) -> None:
        style = {"description_width": "7em"}
        self.source = widgets.Dropdown(
            options=[("the worked four", "worked"), ("a random block", "random"),
                     ("my own block", "typed")],
            value="worked", description="block", style=style,
        )
        self.rows = widgets.BoundedIntText(4, min=1, max=MAX_ROWS, description="rows",
                                           style=style)
        self.columns = widgets.BoundedIntText(2, min=1, max=MAX_COLUMNS, description="columns",
                                              style=style)
        self.seed = widgets.BoundedIntText(0, min=0, max=10**6, description="seed", style=style)
        self.typed = widgets.Textarea(
            value="1, 7\n1, 9\n7, 1\n23, 7", description="my block", rows=4, style=style
        )
        self.slope = widgets.Dropdown(
            options=[("1, 2, 3, ... across the block", "counting"), ("all ones", "ones"),
                     ("random (seeded)", "random"), ("my own slope", "typed")],
            value="counting", description="arriving", style=style,
        )
        self.typed_slope = widgets.Textarea(
            value="1, 2\n3, 4\n5, 6\n7, 8", description="my slope", rows=4, style=style
        )
        self.readout = widgets.HTML()
        note = widgets.HTML(
            "<i>Live in JupyterLab (<code>make lab</code>); on the site this is the first "
            "view.</i>"
        )
        controls = [self.source, self.rows, self.columns, self.seed, self.typed, self.slope,
                    self.typed_slope]
        super().__init__(children=[note, *controls, self.readout])
        # hooks for the live browser tests
        self.add_class("normcore-routes")
        self.readout.add_class("normcore-readout")
        for control in controls:
            control.observe(self._changed, names="value")
        self.refresh()

    def _changed(self, _change: object = None) -> None:
        self.refresh()

    def block(self) -> np.ndarray:
        if self.source.value == "worked":
            return WORKED_BLOCK.copy()
        if self.source.value == "random":
            rng = np.random.default_rng(self.seed.value)
            return np.round(rng.normal(5.0, 3.0, size=(self.rows.value, self.columns.value)), 2)
        return parse_block(self.typed.value)

    def arriving(self, shape: tuple[int, ...]) -> np.ndarray:
        kind = self.slope.value
        if kind == "counting":
            return counting_slope(shape)
        if kind == "ones":
            return np.ones(shape)
        if kind == "random":
            return np.round(np.random.default_rng(self.seed.value + 1).normal(size=shape), 2)
        slope = parse_block(self.typed_slope.value, "slope")
        if slope.shape != shape:
            raise ValueError(f"slope: expected the block's shape {shape}, got {slope.shape}")
        return slope

    def refresh(self) -> None:
        """Recompute the readout; any error is written into it, never raised."""
        try:
            block = self.block()
            self.readout.value = routes_readout(block, self.arriving(block.shape))
        except ValueError as error:  # NormcoreError is a ValueError
            self.readout.value = error_html(str(error))


def routes_widget() -> RoutesExplorer:
    """Chapter 3's explorer, opening on the worked four under the counting slope."""
    return RoutesExplorer()
