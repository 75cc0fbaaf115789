"""Chapter 2's playground: a small block, a normalising layer, and every number it answers.

    pg = playground()              # opens on the four rows (1, 7), (1, 9), (7, 1), (23, 7)
    pg.box                         # the ipywidgets box to display
    pg.set_cell(0, 1, "8")         # what typing 8 into row 1, feature 2 does
    pg.kind_toggle.value = "layer" # Batch / Layer / RMS
    pg.undo_button.click()         # scale = deviation, shift = mean (batch layer)
    pg.step_button.click()         # one real step with a zero slope arriving
    pg.answer()                    # normcore's answer for the state on show

The readout is produced by normcore's own layers (`BatchNorm`, `LayerNorm`, `RMSNorm`) on every
change. Each number in it also carries its full value in a ``data-value`` attribute, so tests can
read the readout back without parsing rounded text.

Typed text is parsed with ``float()`` and nothing else. A cell whose text is not a finite number
within ±``LIMIT`` (or is longer than ``LONGEST`` characters) is named in the widget's message and
its last valid number is kept, so a bad edit never changes the block. No rows switched on gives a
message, not an answer.
"""

from __future__ import annotations

import functools
import html
import math
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as widgets
import numpy as np

from normcore._checks import PREDICTING, TRAINING
from normcore.batch import BatchNorm
from normcore.errors import NormcoreError
from normcore.experiments.shift import fold_in
from normcore.layer import LayerNorm, RMSNorm
from normcore.standardise import standardise

WORKED_BLOCK = ((1.0, 7.0), (1.0, 9.0), (7.0, 1.0), (23.0, 7.0))
MAX_ROWS = 8
MAX_FEATURES = 4
LIMIT = 1e9  # the largest magnitude a cell accepts
LONGEST = 40  # the longest text a cell accepts
EPSILON = 1e-5
KINDS = (("Batch", "batch"), ("Layer", "layer"), ("RMS", "rms"))
PURPOSES = (TRAINING, PREDICTING)
LIVE_NOTE = "Open this chapter in JupyterLab (<code>make lab</code>) to edit the block live."
SLIDER_SPAN = 10.0
SLIDER_STEP = 0.001


def parse_cell(text: Any) -> tuple[float | None, str | None]:
    """(number, None) when `text` is a finite number the playground accepts, else (None, why)."""
    if not isinstance(text, str):
        return None, "is not text"
    if len(text) > LONGEST:
        return None, f"is longer than {LONGEST} characters"
    if not text.strip():
        return None, "is empty"
    try:
        value = float(text)
    except ValueError:
        return None, "is not a number"
    if not math.isfinite(value):
        return None, "is not a finite number"
    if abs(value) > LIMIT:
        return None, f"is beyond ±{LIMIT:.0e}"
    return value, None


def _fmt(value: float) -> str:
    """A number as the readout shows it: seven significant figures, no '-0'."""
    text = f"{value:.7g}"
    return "0" if text in ("-0", "0") else text


def _cell_text(value: float) -> str:
    return repr(float(value)) if value != int(value) else str(int(value))


def _td(value: float, **data: str) -> str:
    attributes = "".join(f' data-{key}="{html.escape(str(v))}"' for key, v in data.items())
    return f'<td{attributes} data-value="{float(value)!r}">{_fmt(value)}</td>'


def _table(caption: str, header: Sequence[str], rows: Sequence[tuple[str, str]]) -> str:
    """An HTML table: `rows` are (label, cells html) pairs."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(f"<tr><th>{html.escape(label)}</th>{cells}</tr>" for label, cells in rows)
    return (
        f'<table class="normcore-playground" style="border-collapse:collapse;margin:4px 0">'
        f'<caption style="text-align:left;font-weight:bold">{html.escape(caption)}</caption>'
        f"<tr><th></th>{head}</tr>{body}</table>"
    )


class RangeFirstSlider(widgets.FloatSlider):
    """A FloatSlider whose updates list a new range before the value.

    A browser applies an update's fields in the order they come. Sent the value first, it clamps
    the value to the old range and snaps it there, and sends that back; sent the range first, it
    snaps the old value against the new range and sends that back. Both arrive after Python has
    moved on and look like a reader's move. With the range and the value in one update, range
    first, the browser snaps only the new value against the new range.
    """

    def get_state(self, key: Any = None, drop_defaults: bool = False) -> dict:
        state = super().get_state(key, drop_defaults)
        if "value" in state:
            state["value"] = state.pop("value")
        return state


def _slack(slider: widgets.FloatSlider) -> float:
    """How far the browser's float arithmetic on the slider's grid may miss a grid point."""
    return 1e-12 * max(1.0, abs(slider.min), abs(slider.max))


def _on_grid(value: float, slider: widgets.FloatSlider) -> bool:
    """Whether `value` is a point of the slider's step grid (up to the browser's float noise)."""
    return abs(value - round(value / SLIDER_STEP) * SLIDER_STEP) <= _slack(slider)


class Playground:
    """The playground's widgets and state. Build it with :func:`playground`."""

    def __init__(
        self, block: Any = None, *, kind: str = "batch", purpose: str = TRAINING
    ) -> None:
        values = np.array(WORKED_BLOCK if block is None else block, dtype=np.float64)
        if values.ndim != 2 or not (1 <= values.shape[0] <= MAX_ROWS) or not (
            1 <= values.shape[1] <= MAX_FEATURES
        ):
            raise ValueError(
                f"block: expected 1 to {MAX_ROWS} rows of 1 to {MAX_FEATURES} numbers, "
                f"got shape {values.shape}"
            )
        if not np.all(np.isfinite(values)) or np.max(np.abs(values)) > LIMIT:
            raise ValueError(f"block: expected finite numbers within ±{LIMIT:.0e}")
        if kind not in dict(KINDS).values():
            raise ValueError(f"kind: expected one of 'batch', 'layer', 'rms', got {kind!r}")
        if purpose not in PURPOSES:
            raise ValueError(f"purpose: expected 'training' or 'predicting', got {purpose!r}")

        rows, features = values.shape
        self._values = values.copy()  # each cell's last valid number
        self._texts = [[_cell_text(v) for v in row] for row in values]
        self._active = [True] * rows
        self._scale = np.ones(features)
        self._shift = np.zeros(features)
        self._running_mean = np.zeros(features)
        self._running_variance = np.ones(features)
        self._steps = 0
        self._note: str | None = None
        self._syncing = False
        self.last_exception: BaseException | None = None

        self.kind_toggle = widgets.ToggleButtons(options=KINDS, value=kind, description="layer")
        self.purpose_toggle = widgets.ToggleButtons(
            options=PURPOSES, value=purpose, description="purpose"
        )
        self.add_row_button = widgets.Button(description="+ row", tooltip="add a row of zeros")
        self.remove_row_button = widgets.Button(description="− row", tooltip="drop the last row")
        self.add_feature_button = widgets.Button(
            description="+ feature", tooltip="add a feature of zeros"
        )
        self.remove_feature_button = widgets.Button(
            description="− feature", tooltip="drop the last feature"
        )
        self.undo_button = widgets.Button(
            description="Undo exactly",
            tooltip="scale = the deviation, shift = the mean the layer standardises by",
            button_style="info",
        )
        self.step_button = widgets.Button(
            description="Step",
            tooltip="one real step with a zero slope: folds the batch into the running figures",
        )
        self.reset_button = widgets.Button(
            description="Fresh layer", tooltip="scale 1, shift 0, running mean 0, variance 1"
        )
        self.message = widgets.HTML()
        self.readout = widgets.HTML()
        self.grid = widgets.VBox()
        self.sliders = widgets.VBox()
        self.cells: list[list[widgets.Text]] = []
        self.row_checks: list[widgets.Checkbox] = []
        # (which, feature) -> the exact value Python last put on that slider, until a reader
        # moves it; see _put and _on_slider
        self._put_values: dict[tuple[str, int], float] = {}
        self.scale_sliders: list[RangeFirstSlider] = []
        self.shift_sliders: list[RangeFirstSlider] = []

        self.kind_toggle.observe(self._guarded(self._on_kind), names="value")
        self.purpose_toggle.observe(self._guarded(self._on_purpose), names="value")
        self.add_row_button.on_click(self._guarded(lambda _: self._resize(rows=+1)))
        self.remove_row_button.on_click(self._guarded(lambda _: self._resize(rows=-1)))
        self.add_feature_button.on_click(self._guarded(lambda _: self._resize(features=+1)))
        self.remove_feature_button.on_click(self._guarded(lambda _: self._resize(features=-1)))
        self.undo_button.on_click(self._guarded(self._on_undo))
        self.step_button.on_click(self._guarded(self._on_step))
        self.reset_button.on_click(self._guarded(self._on_reset))

        self._build_grid()
        self._build_sliders()
        sizes = widgets.HBox([self.add_row_button, self.remove_row_button,
                              self.add_feature_button, self.remove_feature_button])
        actions = widgets.HBox([self.undo_button, self.step_button, self.reset_button])
        note = widgets.HTML(f"<small>{LIVE_NOTE}</small>")
        self.box = widgets.VBox([
            self.kind_toggle, self.purpose_toggle, self.grid, sizes, self.sliders, actions,
            self.message, self.readout, note,
        ])
        # hooks for browser tests: the box, the readout and the message carry fixed classes
        self.box.add_class("normcore-playground")
        self.readout.add_class("normcore-playground-readout")
        self.message.add_class("normcore-playground-message")
        self.respond()

    # ------------------------------------------------------------------------------ the state
    @property
    def rows(self) -> int:
        return int(self._values.shape[0])

    @property
    def features(self) -> int:
        return int(self._values.shape[1])

    @property
    def kind(self) -> str:
        return self.kind_toggle.value

    @property
    def purpose(self) -> str:
        return self.purpose_toggle.value

    @property
    def steps(self) -> int:
        """How many times Step has folded a batch in since the layer was fresh."""
        return self._steps

    @property
    def error(self) -> str | None:
        """What is wrong with the typed cells (None when every cell holds a number)."""
        problems = []
        for i, row in enumerate(self._texts):
            for j, text in enumerate(row):
                _, why = parse_cell(text)
                if why is not None:
                    shown = text if len(text) <= 12 else text[:12] + "…"
                    problems.append(f"row {i + 1}, feature {j + 1}: {shown!r} {why}")
        if not problems:
            return None
        return "; ".join(problems)

    def full_block(self) -> np.ndarray:
        """Every row, switched on or not (each cell's last valid number)."""
        return self._values.copy()

    def active_rows(self) -> list[bool]:
        return list(self._active)

    def current_block(self) -> np.ndarray:
        """The rows switched on: the block the layer answers (possibly with no rows)."""
        return self._values[np.array(self._active, dtype=bool)].copy()

    def current_purpose(self) -> str:
        return self.purpose

    def current_layer(self) -> BatchNorm | LayerNorm | RMSNorm:
        """The normcore layer for the state on show (its scale, shift and running figures)."""
        if self.kind == "batch":
            return BatchNorm(
                scale=self._scale.copy(),
                shift=self._shift.copy(),
                epsilon=EPSILON,
                running_mean=self._running_mean.copy(),
                running_variance=self._running_variance.copy(),
            )
        cls = LayerNorm if self.kind == "layer" else RMSNorm
        return cls(scale=self._scale.copy(), shift=self._shift.copy(), epsilon=EPSILON)

    def answer(self) -> np.ndarray | None:
        """normcore's answer for the rows switched on (None when none is)."""
        block = self.current_block()
        if block.shape[0] == 0:
            return None
        return self.current_layer().forward(block, self.purpose).output

    def running_figures(self) -> tuple[np.ndarray, np.ndarray]:
        """The batch layer's running mean and running variance."""
        return self._running_mean.copy(), self._running_variance.copy()

    def scale(self) -> np.ndarray:
        return self._scale.copy()

    def shift(self) -> np.ndarray:
        return self._shift.copy()

    # ----------------------------------------------------------------- driving it from code
    def cell(self, row: int, feature: int) -> widgets.Text:
        return self.cells[row][feature]

    def set_cell(self, row: int, feature: int, text: str) -> None:
        """Type `text` into a cell (as the reader would)."""
        self.cells[row][feature].value = text

    # ----------------------------------------------------------------------------- building
    def _guarded(self, handler: Callable[..., None]) -> Callable[..., None]:
        """Run a handler; anything it raises is shown in the widget, never in the notebook."""

        @functools.wraps(handler)
        def run(*args: Any) -> None:
            if self._syncing:
                return
            try:
                handler(*args)
            except Exception as exc:  # noqa: BLE001 - shown to the reader instead of raised
                self.last_exception = exc
                self.message.value = (
                    f'<span style="color:#b00020"><b>Something went wrong:</b> '
                    f"{html.escape(type(exc).__name__)}: {html.escape(str(exc))}</span>"
                )

        return run

    def _build_grid(self) -> None:
        self.cells, self.row_checks = [], []
        lines = []
        header = [widgets.HTML("<b>row</b>", layout=widgets.Layout(width="80px"))]
        header += [widgets.HTML(f"<b>feature {j + 1}</b>", layout=widgets.Layout(width="90px"))
                   for j in range(self.features)]
        lines.append(widgets.HBox(header))
        for i in range(self.rows):
            check = widgets.Checkbox(value=self._active[i], description=f"{i + 1}", indent=False,
                                     layout=widgets.Layout(width="80px"))
            check.observe(self._guarded(functools.partial(self._on_check, i)), names="value")
            texts = []
            for j in range(self.features):
                text = widgets.Text(value=self._texts[i][j], continuous_update=False,
                                    layout=widgets.Layout(width="90px"))
                text.observe(self._guarded(functools.partial(self._on_cell, i, j)),
                             names="value")
                texts.append(text)
            self.row_checks.append(check)
            self.cells.append(texts)
            lines.append(widgets.HBox([check, *texts]))
        self.grid.children = lines

    def _build_sliders(self) -> None:
        self.scale_sliders, self.shift_sliders = [], []
        self._put_values = {}
        lines = []
        for j in range(self.features):
            scale = RangeFirstSlider(description=f"scale {j + 1}", min=-SLIDER_SPAN,
                                     max=SLIDER_SPAN, step=SLIDER_STEP, readout_format=".4f")
            shift = RangeFirstSlider(description=f"shift {j + 1}", min=-SLIDER_SPAN,
                                     max=SLIDER_SPAN, step=SLIDER_STEP, readout_format=".4f")
            self._put(scale, "scale", j, self._scale[j])
            self._put(shift, "shift", j, self._shift[j])
            scale.observe(self._guarded(functools.partial(self._on_slider, "scale", j)),
                          names="value")
            shift.observe(self._guarded(functools.partial(self._on_slider, "shift", j)),
                          names="value")
            self.scale_sliders.append(scale)
            self.shift_sliders.append(shift)
            lines.append(widgets.HBox([scale, shift]))
        self.sliders.children = lines

    def _put(self, slider: widgets.FloatSlider, which: str, j: int, value: float) -> None:
        """Set a slider to `value` exactly, widening its range if it must.

        A browser slider snaps each value it is sent to its grid min + k * step and sends the
        snapped value back. The range only ever widens to whole multiples of SLIDER_SPAN, so the
        grid stays the multiples of the step, and a new range goes in one update with the value
        (see RangeFirstSlider). `_on_slider` knows the snapped value when it comes back.
        """
        was = self._syncing
        self._syncing = True
        try:
            value = float(value)
            with slider.hold_sync():
                if not slider.min <= value <= slider.max:
                    bound = SLIDER_SPAN * math.ceil(2.0 * abs(value) / SLIDER_SPAN)
                    slider.max = max(slider.max, bound)
                    slider.min = min(slider.min, -bound)
                slider.value = value
            if _on_grid(value, slider):
                self._put_values.pop((which, j), None)  # snapping it only adds rounding noise
            else:
                self._put_values[(which, j)] = value
        finally:
            self._syncing = was

    # ----------------------------------------------------------------------------- handlers
    def _on_cell(self, i: int, j: int, change: dict) -> None:
        self._texts[i][j] = change["new"]
        value, _ = parse_cell(change["new"])
        if value is not None:
            self._values[i, j] = value
        self._note = None
        self.respond()

    def _on_check(self, i: int, change: dict) -> None:
        self._active[i] = bool(change["new"])
        self._note = None
        self.respond()

    def _on_kind(self, change: dict) -> None:
        self._note = None
        self.respond()

    def _on_purpose(self, change: dict) -> None:
        self._note = None
        self.respond()

    def _on_slider(self, which: str, j: int, change: dict) -> None:
        target = self._scale if which == "scale" else self._shift
        new = float(change["new"])
        # Each browser view of the slider snaps a value Python put off the grid (Undo exactly
        # puts the exact deviation and mean) to the nearest grid point and sends that back: the
        # slider showing the value at its resolution, not a reader's move, so the exact value
        # stays. A reader can only move the thumb to another grid point, half a step away or more.
        put = self._put_values.get((which, j))
        slider = (self.scale_sliders if which == "scale" else self.shift_sliders)[j]
        if (put is not None and _on_grid(new, slider)
                and abs(new - put) <= 0.5 * SLIDER_STEP + _slack(slider)):
            return
        self._put_values.pop((which, j), None)
        target[j] = new
        self._note = None
        self.respond()

    def _on_undo(self, _button: Any = None) -> None:
        block = self.current_block()
        if block.shape[0] == 0:
            self._note = "Undo needs at least one row switched on."
        elif self.kind != "batch":
            self._note = (
                "Undo exactly is a batch-layer move. Layer and RMS normalisation read their "
                "statistics along each row, so undoing them would need one scale and shift per "
                "<i>row</i>; the parameters here are one per <i>feature</i>, so no setting of "
                "the sliders gives every row back. Nothing was changed."
            )
        else:
            layer = self.current_layer()
            if self.purpose == TRAINING:
                stats = layer.forward(block, TRAINING).statistics
                mean, deviation = stats.mean, stats.deviation
                source = "the batch's own"
            else:
                mean, deviation = layer.running_mean, layer.running_deviation
                source = "the running"
            self._scale = np.array(deviation, dtype=np.float64)
            self._shift = np.array(mean, dtype=np.float64)
            for j in range(self.features):
                self._put(self.scale_sliders[j], "scale", j, self._scale[j])
                self._put(self.shift_sliders[j], "shift", j, self._shift[j])
            self._note = (
                f"Undo exactly: each scale set to {source} deviation √(variance + ε) and each "
                f"shift to {source} mean, so the answer is the block back."
            )
        self.respond()

    def _on_step(self, _button: Any = None) -> None:
        block = self.current_block()
        if block.shape[0] == 0:
            self._note = "Step needs at least one row switched on."
        elif self.kind != "batch":
            layer = self.current_layer()
            response = layer.forward(block, TRAINING)
            layer.step(layer.backward(response, np.zeros_like(block)), 1.0)
            self._note = (
                "Stepped with a zero slope: nothing moved. Layer and RMS normalisation keep no "
                "running figures, so there is nothing to fold in."
            )
        else:
            layer = fold_in(self.current_layer(), block)
            self._running_mean = np.array(layer.running_mean)
            self._running_variance = np.array(layer.running_variance)
            self._steps += 1
            self._note = (
                f"Step {self._steps}: the batch's mean and biased variance folded a tenth of "
                "the way into the running figures (momentum 0.9); scale and shift unchanged."
            )
        self.respond()

    def _on_reset(self, _button: Any = None) -> None:
        f = self.features
        self._scale, self._shift = np.ones(f), np.zeros(f)
        self._running_mean, self._running_variance = np.zeros(f), np.ones(f)
        self._steps = 0
        for j in range(f):
            self._put(self.scale_sliders[j], "scale", j, 1.0)
            self._put(self.shift_sliders[j], "shift", j, 0.0)
        self._note = "A fresh layer: scale 1, shift 0, running mean 0, running variance 1."
        self.respond()

    def _resize(self, rows: int = 0, features: int = 0) -> None:
        new_rows, new_features = self.rows + rows, self.features + features
        if not (1 <= new_rows <= MAX_ROWS and 1 <= new_features <= MAX_FEATURES):
            self._note = (
                f"The block holds 1 to {MAX_ROWS} rows and 1 to {MAX_FEATURES} features."
            )
            self.respond()
            return
        if rows > 0:
            self._values = np.vstack([self._values, np.zeros((1, self.features))])
            self._texts.append(["0"] * self.features)
            self._active.append(True)
        elif rows < 0:
            self._values = self._values[:-1]
            self._texts.pop()
            self._active.pop()
        if features > 0:
            self._values = np.hstack([self._values, np.zeros((self.rows, 1))])
            for row in self._texts:
                row.append("0")
            self._scale = np.append(self._scale, 1.0)
            self._shift = np.append(self._shift, 0.0)
            self._running_mean = np.append(self._running_mean, 0.0)
            self._running_variance = np.append(self._running_variance, 1.0)
        elif features < 0:
            self._values = self._values[:, :-1]
            for row in self._texts:
                row.pop()
            self._scale, self._shift = self._scale[:-1], self._shift[:-1]
            self._running_mean = self._running_mean[:-1]
            self._running_variance = self._running_variance[:-1]
        self._values = np.array(self._values)
        self._note = None
        self._build_grid()
        if features:
            self._build_sliders()
        self.respond()

    # ------------------------------------------------------------------------------ readout
    def respond(self) -> str:
        """Recompute the readout (and the message) from the state; return the readout HTML."""
        parts = []
        error = self.error
        if error is not None:
            parts.append(
                f'<span style="color:#b00020"><b>Not a number, so not used:</b> '
                f"{html.escape(error)}. Each such cell keeps its last number.</span>"
            )
        if self._note is not None:
            parts.append(f"<i>{self._note}</i>")
        try:
            self.readout.value = self._readout()
        except NormcoreError as exc:  # not expected within the playground's limits
            self.readout.value = (
                f'<span style="color:#b00020">normcore refused this block: '
                f"{html.escape(str(exc))}</span>"
            )
        self.message.value = "<br>".join(parts)
        return self.readout.value

    def _readout(self) -> str:
        block = self.current_block()
        names = {"batch": "Batch", "layer": "Layer", "rms": "RMS"}
        on = [i for i, a in enumerate(self._active) if a]
        head = (
            f"<b>{names[self.kind]} normalisation</b>, {self.purpose}, "
            f"{len(on)} of {self.rows} rows switched on, ε = {EPSILON:g}"
        )
        if block.shape[0] == 0:
            return (
                f"{head}<br><b>No rows are switched on.</b> A normalising layer needs at least "
                "one row to answer; tick a row's box to bring it back."
            )
        layer = self.current_layer()
        response = layer.forward(block, self.purpose)
        answer = response.output
        feature_names = [f"feature {j + 1}" for j in range(self.features)]
        sections = [head]
        sections.append(self._statistics(layer, block, feature_names))
        sections.append(
            _table(
                "answer",
                feature_names,
                [
                    (f"row {i + 1}", "".join(_td(v, answer=f"{r},{j}") for j, v in enumerate(row)))
                    for r, (i, row) in enumerate(zip(on, answer, strict=True))
                ],
            )
        )
        gap = float(np.max(np.abs(answer - block)))
        sections.append(
            f'largest gap between the answer and the block: <span data-gap="{gap!r}">'
            f"<b>{gap:.3g}</b></span>"
        )
        if self.kind == "batch" and self.purpose == TRAINING and block.shape[0] == 1:
            sections.append(
                "<i>One row while training: the batch's mean is the row itself and its variance "
                "is zero, so every standardised value is 0. Nothing warns; a training loop fed "
                "one row at a time would learn from zeros.</i>"
            )
        if self.kind != "batch":
            sections.append(
                "<i>Statistics run along each row, so the answer is the same while training and "
                "while predicting, and a row's answer does not depend on the other rows.</i>"
            )
        return "<br>".join(sections)

    def _statistics(self, layer: Any, block: np.ndarray, feature_names: list[str]) -> str:
        if self.kind == "batch":
            stats = layer.forward(block, TRAINING).statistics
            batch_rows = [
                ("mean", stats.mean),
                ("variance (biased)", stats.variance),
                ("√(variance + ε)", stats.deviation),
                ("variance / (variance + ε)", stats.variance / (stats.variance + EPSILON)),
            ]
            running_rows = [
                ("running mean", layer.running_mean),
                ("running variance", layer.running_variance),
                ("√(running variance + ε)", layer.running_deviation),
            ]
            used, unused = (batch_rows, running_rows)
            caption_used = "the batch's statistics (used while training)"
            caption_unused = f"running figures after {self._steps} steps (used while predicting)"
            tables = [
                _table(caption_used, feature_names, self._stat_rows(used, "batch")),
                _table(caption_unused, feature_names, self._stat_rows(unused, "running")),
            ]
            if self.purpose == PREDICTING:
                tables.reverse()
            return "".join(tables)
        st = standardise(block, (-1,), EPSILON, centre=self.kind == "layer")
        on = [i for i, a in enumerate(self._active) if a]
        if self.kind == "layer":
            columns = [("mean", st.mean[:, 0]), ("variance (biased)", st.variance[:, 0]),
                       ("√(variance + ε)", st.deviation[:, 0])]
        else:
            columns = [("mean square", st.variance[:, 0]), ("√(mean square + ε)",
                                                            st.deviation[:, 0])]
        rows = [
            (f"row {i + 1}", "".join(_td(values[r], stat=f"row:{name}:{r}")
                                     for name, values in columns))
            for r, i in enumerate(on)
        ]
        return _table("each row's statistics", [name for name, _ in columns], rows)

    @staticmethod
    def _stat_rows(rows: list[tuple[str, np.ndarray]], group: str) -> list[tuple[str, str]]:
        return [
            (name, "".join(_td(v, stat=f"{group}:{name}:{j}") for j, v in enumerate(values)))
            for name, values in rows
        ]

    def _repr_mimebundle_(self, **kwargs: Any):
        return self.box._repr_mimebundle_(**kwargs)


def playground(block: Any = None, *, kind: str = "batch", purpose: str = TRAINING) -> Playground:
    """The chapter-2 playground, opening on `block` (default: the four worked rows)."""
    return Playground(block, kind=kind, purpose=purpose)
