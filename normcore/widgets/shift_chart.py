"""Chapter 1's switch: the chart of the block the output layer reads, plain or under a batch layer.

    chart = shift_chart()          # trains both crowd networks (well under a second)
    chart.box                      # the ipywidgets box to display
    chart.select("batch")          # what the toggle does
    chart.readout.value            # the figures under the chart, as HTML

Both charts are drawn once, as PNG, when the widget is made; the toggle only swaps which one the
HTML widget shows, so the saved notebook (and the static site) carries the default view.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field

import ipywidgets as widgets

from normcore.experiments.shift import CrowdShift, crowd_shift
from normcore.plots.ch01 import crowd_shift_figure, png_bytes

LABELS = {"plain": "none", "batch layer": "batch"}
LIVE_NOTE = "Open this chapter in JupyterLab (<code>make lab</code>) to switch the chart."


def _img(png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="{alt}" style="max-width:100%">'


def describe(shift: CrowdShift) -> str:
    """The figures under the chart for one arrangement, as an HTML paragraph."""
    epoch, unit = shift.largest_move_at
    parts = [
        f"largest mean shift, first epoch to last: <b>{shift.largest_shift:.4f}</b> "
        f"(unit {shift.shift_unit + 1})",
        f"largest single-epoch move: <b>{shift.largest_move:.4f}</b> "
        f"(unit {unit + 1}, epoch {epoch})",
    ]
    if shift.shift_gap is not None:
        parts.append(f"largest gap between the block's mean and the layer's shift: "
                     f"<b>{shift.shift_gap:.1e}</b>")
    return "<br>".join(parts)


@dataclass(eq=False)
class ShiftChart:
    """The toggle, the chart and the figures under it."""

    shifts: dict[str, CrowdShift]
    toggle: widgets.ToggleButtons = field(init=False)
    chart: widgets.HTML = field(init=False)
    readout: widgets.HTML = field(init=False)
    box: widgets.VBox = field(init=False)

    def __post_init__(self) -> None:
        self._images = {
            name: _img(png_bytes(crowd_shift_figure(shift)), f"unit means and deviations, {name}")
            for name, shift in self.shifts.items()
        }
        self.toggle = widgets.ToggleButtons(
            options=[(label, key) for label, key in LABELS.items() if key in self.shifts],
            description="network",
        )
        self.chart = widgets.HTML()
        self.readout = widgets.HTML()
        note = widgets.HTML(f"<small>{LIVE_NOTE}</small>")
        self.box = widgets.VBox([self.toggle, self.chart, self.readout, note])
        self.box.add_class("normcore-shift-chart")
        self.toggle.observe(self._changed, names="value")
        self.select(self.toggle.value)

    def _changed(self, change) -> None:
        self.select(change["new"])

    def select(self, arrangement: str) -> None:
        """Show `arrangement` ('none' or 'batch')."""
        if arrangement not in self.shifts:
            self.readout.value = f"<b>no chart for {arrangement!r}</b>"
            return
        if self.toggle.value != arrangement:
            self.toggle.value = arrangement  # observing calls select again
            return
        self.chart.value = self._images[arrangement]
        self.readout.value = describe(self.shifts[arrangement])

    @property
    def selected(self) -> str:
        return self.toggle.value

    def _repr_mimebundle_(self, **kwargs):
        return self.box._repr_mimebundle_(**kwargs)


def shift_chart(
    plain: CrowdShift | None = None, batch: CrowdShift | None = None, seed: int = 0
) -> ShiftChart:
    """The chapter-1 switch between the plain crowd network and the one with a batch layer."""
    plain = crowd_shift("none", seed) if plain is None else plain
    batch = crowd_shift("batch", seed) if batch is None else batch
    return ShiftChart(shifts={"none": plain, "batch": batch})
