"""Chapter 3's widget: choose a block and an arriving slope, see the three passed-down blocks
(collected, oracle, naive) and how far each is from the oracle.

One definition for JupyterLab and the site (anywidget, see `normcore.widgets._page`): the view is
``js/routes.js`` and computes in the page; the state and normcore's figures are
`normcore.widgets.routes_model`. Built without a browser::

    explorer = routes_widget()
    explorer.act(routes_model.choose, "source", "typed")
    explorer.act(routes_model.choose, "typed", "1, 2\\n3, 4")
    explorer.answer()               # normcore's figures for the state on show

`table` and `error_html` are the HTML helpers chapter 4's widget still uses.
"""

from __future__ import annotations

import html

import numpy as np

from normcore.widgets import routes_model
from normcore.widgets._data import data, keyed
from normcore.widgets._esm import bundle, source
from normcore.widgets._page import PageWidget

MAX_ROWS, MAX_COLUMNS = routes_model.MAX_ROWS, routes_model.MAX_COLUMNS
parse_block = routes_model.parse_block

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


class RoutesExplorer(PageWidget):
    """Chapter 3's explorer (state: see `normcore.widgets.routes_model`)."""

    _esm = bundle("routes.js")
    _css = source("widgets.css")
    compute = staticmethod(routes_model.figures)

    def __init__(self, **kwargs: object) -> None:
        super().__init__(state=routes_model.initial(), **kwargs)

    def __repr__(self) -> str:
        return f"RoutesExplorer({self.state['source']} block, {self.state['slope']} slope)"


def routes_widget() -> RoutesExplorer:
    """Chapter 3's explorer, opening on the worked four under the counting slope."""
    return RoutesExplorer()
