"""Chapter 10's widget: choose the normaliser after the convolutions, the images a device holds
and group norm's group count; see how many values each statistic pools, how far one device's
statistics stray from the whole sample's, and the accuracy the chapter's runs reached.

One definition for JupyterLab and the site (anywidget, see `normcore.widgets._page`): the view is
``js/convnet.js`` and computes in the page; the state and normcore's figures are
`normcore.widgets.convnet_model`, and the case (the chapter's trained network's per-image
statistics and its runs' accuracies) is written into the widget when the page is built::

    w = convnet_widget(case)                 # case = convnet_model.case_data(...)
    w.act(convnet_model.choose, "per_device", "8")
    w.figures_for()                               # normcore's figures for batch norm at 8 images
"""

from __future__ import annotations

from typing import Any

import traitlets

from normcore.errors import NormcoreError
from normcore.widgets import convnet_model
from normcore.widgets._esm import bundle
from normcore.widgets._input import friendly
from normcore.widgets._page import PageWidget


class ConvnetStatistics(PageWidget):
    """Chapter 10's widget; `case` holds the chapter's numbers (see convnet_model.case_data)."""

    _esm = bundle("convnet.js")
    case = traitlets.Dict().tag(sync=True)

    def compute(self, state: dict[str, Any]) -> dict[str, Any]:  # type: ignore[override]
        return convnet_model.figures(state, self.case)

    def figures_for(self, state: dict[str, Any] | None = None) -> dict[str, Any]:
        """normcore's figures for `state` (default: the state on show), or ``{"error":
        sentence}``. As `PageWidget.figures_for`, but read with this widget's own case (the
        chapter's run), which the base's class-level `compute` cannot see."""
        try:
            return self.compute(self.state if state is None else state)
        except NormcoreError as error:
            return {"error": friendly(error)}

    def __init__(self, case: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(state=convnet_model.initial(), case=case, **kwargs)

    def __repr__(self) -> str:
        s = self.state
        return f"ConvnetStatistics({s['normaliser']}, {s['per_device']} images a device)"


def convnet_widget(case: dict[str, Any]) -> ConvnetStatistics:
    """Chapter 10's widget on the chapter's case, opening on batch norm at two images a
    device."""
    return ConvnetStatistics(case)
