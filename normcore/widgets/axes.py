"""Chapter 4's widget: pick the axis the statistics run along (batch, layer, RMS, instance,
group with a group count) on a (rows, features) input or a small image batch; see the statistics'
shape, the output and the gradient check.

One definition for JupyterLab and the site (anywidget, see `normcore.widgets._page`): the view is
``js/axes.js`` and computes in the page; the state and normcore's figures are
`normcore.widgets.axes_model`. Built without a browser::

    explorer = axes_widget()
    explorer.act(axes_model.choose, "data", "images")
    explorer.act(axes_model.choose, "axis", "group")
    explorer.act(axes_model.choose, "groups", "3")   # does not divide 4 channels
    explorer.figures_for()                                # {"error": "Groups: expected ..."}
"""

from __future__ import annotations

from typing import Any

import traitlets

from normcore.widgets import axes_model
from normcore.widgets._esm import bundle
from normcore.widgets._page import PageWidget

IMAGE_SHAPE = axes_model.IMAGE_SHAPE


class AxesExplorer(PageWidget):
    """Chapter 4's explorer; `data` holds the (rows, features) input and the image batch it
    reads."""

    _esm = bundle("axes.js")
    data = traitlets.Dict().tag(sync=True)

    @staticmethod
    def compute(state: dict[str, Any]) -> dict[str, Any]:  # type: ignore[override]
        return axes_model.figures(state, axes_model.data_values())

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(state=axes_model.initial(), data=axes_model.data_values(), **kwargs)

    def __repr__(self) -> str:
        return f"AxesExplorer({self.state['axis']} on the {self.state['data']})"


def axes_widget() -> AxesExplorer:
    """Chapter 4's explorer, opening on layer norm over the three-feature input."""
    return AxesExplorer()
