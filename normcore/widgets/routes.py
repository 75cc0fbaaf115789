"""Chapter 3's widget: choose an input x and an upstream gradient, see the three input gradients
(collected, oracle, naive) and how far each is from the oracle.

One definition for JupyterLab and the site (anywidget, see `normcore.widgets._page`): the view is
``js/routes.js`` and computes in the page; the state and normcore's figures are
`normcore.widgets.routes_model`. Built without a browser::

    explorer = routes_widget()
    explorer.act(routes_model.choose, "source", "typed")
    explorer.act(routes_model.choose, "typed", "1, 2\\n3, 4")
    explorer.figures_for()               # normcore's figures for the state on show
"""

from __future__ import annotations

from normcore.widgets import routes_model
from normcore.widgets._esm import bundle
from normcore.widgets._page import PageWidget

MAX_ROWS, MAX_COLUMNS = routes_model.MAX_ROWS, routes_model.MAX_COLUMNS
parse_matrix = routes_model.parse_matrix


class RoutesExplorer(PageWidget):
    """Chapter 3's explorer (state: see `normcore.widgets.routes_model`)."""

    _esm = bundle("routes.js")
    compute = staticmethod(routes_model.figures)

    def __init__(self, **kwargs: object) -> None:
        super().__init__(state=routes_model.initial(), **kwargs)

    def __repr__(self) -> str:
        return f"RoutesExplorer({self.state['source']} input, {self.state['grad']} gradient)"


def routes_widget() -> RoutesExplorer:
    """Chapter 3's explorer, opening on the worked four under the counting gradient."""
    return RoutesExplorer()
