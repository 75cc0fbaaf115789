"""Chapter 1's switch: the chart of the activations the output layer reads, plain or under a batch
layer.

    chart = shift_chart()          # trains both crowd networks (well under a second)
    chart                          # display it
    chart.select("batch")          # what the toggle does
    chart.figures_for()            # the figures under the chart on show, as the page shows them

Both networks are trained and both charts drawn (PNG) when the widget is made; the page chooses
between them (``js/shift-chart.js``), so on the static site the switch works with no kernel. The
figures are stored as the page shows them (4 decimals), so a saved notebook holds no
full-precision number. The gap between the activations' mean and the batch layer's shift is at the
level of rounding, whose first digit differs from one processor's arithmetic to another's (4.6e-16
on one, 5.1e-16 on another): it is shown as the chapter shows such gaps, the power of ten at or
above it with a floor of `GAP_FLOOR` (`normcore.book.bound`), which the page prefixes with
"at most".
"""

from __future__ import annotations

import base64
from typing import Any

import traitlets

from normcore.book import bound
from normcore.errors import SettingError
from normcore.experiments.shift import CrowdShift, crowd_shift
from normcore.plots.ch01 import crowd_shift_figure, png_bytes
from normcore.widgets._esm import bundle
from normcore.widgets._input import StateError, check_state, choice_arg, seed_arg
from normcore.widgets._page import PageWidget

LABELS = {"none": "plain", "batch": "batch layer"}

GAP_FLOOR = 1e-14
"""The least the shift gap is shown as: above rounding level (the chapter's prose uses the same)."""


def describe(shift: CrowdShift) -> dict[str, str | None]:
    """The figures under the chart for one variant, as the page shows them."""
    epoch, unit = shift.largest_move_at
    return {
        "largest_shift": f"{shift.largest_shift:.4f}",
        "shift_unit": str(shift.shift_unit + 1),
        "largest_move": f"{shift.largest_move:.4f}",
        "move_unit": str(unit + 1),
        "move_epoch": str(epoch),
        "shift_gap": None
        if shift.shift_gap is None
        else f"{bound(shift.shift_gap, GAP_FLOOR):.0e}",
    }


def _image(shift: CrowdShift, name: str) -> dict[str, str]:
    data = base64.b64encode(png_bytes(crowd_shift_figure(shift))).decode("ascii")
    return {
        "src": f"data:image/png;base64,{data}",
        "alt": f"each hidden unit's mean and standard deviation per epoch, {name} network",
    }


class ShiftChart(PageWidget):
    """The switch; `results` holds both charts and their figures, computed when it was made."""

    _esm = bundle("shift-chart.js")
    results = traitlets.Dict().tag(sync=True)

    def __init__(self, shifts: dict[str, CrowdShift], **kwargs: Any) -> None:
        self.shifts = shifts
        results = {
            key: {"label": LABELS[key], "figures": describe(shift), **_image(shift, LABELS[key])}
            for key, shift in shifts.items()
        }
        super().__init__(state={"variant": "none"}, results=results, **kwargs)

    def compute(self, state: dict[str, Any]) -> dict[str, Any]:  # type: ignore[override]
        check_state(state, {"variant": str})
        if state["variant"] not in self.shifts:
            raise SettingError(f"variant: expected one of {sorted(self.shifts)}")
        return describe(self.shifts[state["variant"]])

    def select(self, variant: str) -> None:
        """Show `variant` ('none' or 'batch')."""
        self.state = {"variant": choice_arg(variant, "variant", self.shifts)}

    @property
    def selected(self) -> str:
        return self.state["variant"]

    def __repr__(self) -> str:
        return f"ShiftChart({LABELS[self.selected]} network on show)"


def shift_chart(
    plain: CrowdShift | None = None, batch: CrowdShift | None = None, seed: int = 0
) -> ShiftChart:
    """The chapter-1 switch between the plain crowd network and the one with a batch layer."""
    seed = seed_arg(seed)
    for name, given in (("plain", plain), ("batch", batch)):
        if not (given is None or isinstance(given, CrowdShift)):
            raise StateError(f"{name}: expected a CrowdShift or None, got {type(given).__name__}")
    plain = crowd_shift("none", seed) if plain is None else plain
    batch = crowd_shift("batch", seed) if batch is None else batch
    return ShiftChart({"none": plain, "batch": batch})
