"""Chapter 4's widget: pick the axis the statistics run along (batch, layer, RMS, instance,
group with a group count) on a block or a small image batch; see the statistics' shape, the
output and the slope check.

Run it live by opening the chapter in JupyterLab (``make lab``). Built without a browser::

    explorer = axes_widget()
    explorer.data.value = "images"
    explorer.axis.value = "group"
    explorer.groups.value = 3          # does not divide 4 channels: the readout says so
    explorer.readout.value
"""

from __future__ import annotations

import html

import ipywidgets as widgets
import numpy as np

from normcore.experiments.axes import THREE_FEATURE_BLOCK, image_batch, image_check
from normcore.widgets._data import data
from normcore.widgets.routes import error_html, table

#: The image batch the widget opens: 2 images, 4 channels, 3 x 3 pixels.
IMAGE_SHAPE = (2, 4, 3, 3)

AXIS_NAMES = {
    "batch": "batch norm",
    "layer": "layer norm",
    "rms": "RMS norm",
    "instance": "instance norm",
    "group": "group norm",
}

_ALONG = {
    (2, "batch"): "down the rows, one figure per feature",
    (2, "layer"): "along the row, one figure per row",
    (2, "rms"): "along the row, one figure per row (no centring)",
    (4, "batch"): "over (N, H, W), one figure per channel",
    (4, "layer"): "over (C, H, W), one figure per image",
    (4, "rms"): "over (C, H, W), one figure per image (no centring)",
    (4, "instance"): "over (H, W), one figure per image and channel",
    (4, "group"): "over (channels in the group, H, W), one figure per image and group",
}


def axes_readout(axis: str, x: np.ndarray, groups: int = 2) -> str:
    """The widget's readout for one axis on a block (rows, features) or images (N, C, H, W)."""
    check = image_check(axis, x, groups)
    along = _ALONG[(x.ndim, axis)]
    if x.ndim == 2:
        shown = table(check.output, "output", key="output")
    else:
        shown = table(check.output[0, 0], "output, image 1, channel 1", key="output")
    sums = (
        f"the passed-down block sums to zero over each statistic's cells: largest sum "
        f"<b>{check.largest_sum:.1e}</b>"
        if check.centred
        else f"no centring, so the passed-down block need not sum to zero: largest sum "
        f"<b>{check.largest_sum:.4f}</b>"
    )
    lines = [
        (f"{html.escape(AXIS_NAMES[axis])}: statistics {along}", data(axis=axis)),
        (f"statistics' shape <b>{check.statistics_shape}</b>, {check.count} values each",
         data(statistics_shape=check.statistics_shape, count=check.count)),
        (f"passed-down block against the oracle: largest gap <b>{check.true_gap:.1e}</b> "
         f"(largest slope {check.largest_true:.4f})",
         data(true_gap=check.true_gap, largest_true=check.largest_true)),
        (sums, data(largest_sum=check.largest_sum, centred=check.centred)),
    ]
    return shown + "<ul>" + "".join(
        f"<li{attributes}>{line}</li>" for line, attributes in lines
    ) + "</ul>"


class AxesExplorer(widgets.VBox):
    """Choose data and axis; the readout shows the statistics, output and slope check, or the
    reason they cannot be computed."""

    def __init__(self) -> None:
        style = {"description_width": "7em"}
        self.data = widgets.Dropdown(
            options=[("a block of 4 rows, 3 features", "block"),
                     ("2 images, 4 channels, 3 x 3", "images")],
            value="block", description="data", style=style,
        )
        self.axis = widgets.Dropdown(
            options=[(name, key) for key, name in AXIS_NAMES.items()],
            value="layer", description="normaliser", style=style,
        )
        self.groups = widgets.BoundedIntText(2, min=1, max=16, description="groups",
                                             style=style)
        self.readout = widgets.HTML()
        note = widgets.HTML(
            "<i>Live in JupyterLab (<code>make lab</code>); on the site this is the first "
            "view. Instance and group norm need the image batch; groups must divide its 4 "
            "channels.</i>"
        )
        super().__init__(children=[note, self.data, self.axis, self.groups, self.readout])
        # hooks for the live browser tests
        self.add_class("normcore-axes")
        self.readout.add_class("normcore-readout")
        for control in (self.data, self.axis, self.groups):
            control.observe(self._changed, names="value")
        self.refresh()

    def _changed(self, _change: object = None) -> None:
        self.refresh()

    def block(self) -> np.ndarray:
        return THREE_FEATURE_BLOCK.copy() if self.data.value == "block" else image_batch(
            IMAGE_SHAPE
        )

    def refresh(self) -> None:
        """Recompute the readout; any error is written into it, never raised."""
        try:
            self.readout.value = axes_readout(self.axis.value, self.block(), self.groups.value)
        except ValueError as error:  # NormcoreError is a ValueError
            self.readout.value = error_html(str(error))


def axes_widget() -> AxesExplorer:
    """Chapter 4's explorer, opening on layer norm over the three-feature block."""
    return AxesExplorer()
