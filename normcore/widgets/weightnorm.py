"""Chapter 5's widget: choose three direction lengths and a stride; see one step of the
weight-normalised layer and of the dense layer side by side.

Run live with ``make lab``; on the site the widget shows its first view. Typed text is read with
float() only; anything that cannot be used is reported inside the widget, never raised.
"""

from __future__ import annotations

import html

from ..experiments import weightnorm
from ._data import data, keyed


def step_table(lengths: tuple[float, float, float], stride: float) -> str:
    """The HTML table the widget shows (or an error message, as HTML)."""
    try:
        case = weightnorm.make_case(lengths)
        step = weightnorm.one_step(case, stride)
    except Exception as exc:  # noqa: BLE001 - shown in the widget, never raised
        return f"<p{data(error=exc)}><b>Cannot take that step:</b> {html.escape(str(exc))}</p>"
    rows = "".join(
        f"<tr><td>{i + 1}</td><td{keyed(f'before:{i}', b)}>{b:.4f}</td>"
        f"<td{keyed(f'weightnorm:{i}', w)}>{w:.4f}</td><td{keyed(f'dense:{i}', d)}>{d:.4f}</td>"
        "</tr>"
        for i, (b, w, d) in enumerate(
            zip(step.length_before, step.length_weightnorm, step.length_dense, strict=True)
        )
    )
    return (
        "<table><tr><th>neuron</th><th>length before</th><th>after (weight norm)</th>"
        f"<th>after (dense)</th></tr>{rows}</table>"
        f"<p{data(lengths=lengths, stride=stride, distance=step.distance)}>distance between "
        f"the two layers' effective weights after the step: {step.distance:.4f}</p>"
    )


def parse_lengths(texts: list[str]) -> tuple[float, float, float]:
    return tuple(float(t) for t in texts)  # type: ignore[return-value]


def weightnorm_step_widget(lengths=weightnorm.LENGTHS, stride: float = weightnorm.STRIDE):
    """A VBox: three length boxes, a stride box and the table of lengths after one step."""
    import ipywidgets as w

    boxes = [w.Text(value=f"{v:g}", description=f"length {i + 1}") for i, v in enumerate(lengths)]
    stride_box = w.Text(value=f"{stride:g}", description="stride")
    out = w.HTML(value=step_table(tuple(lengths), stride))

    def update(_change=None) -> None:
        try:
            values = parse_lengths([b.value for b in boxes])
            rate = float(stride_box.value)
        except ValueError:
            out.value = (f"<p{data(error='not a number')}><b>Please type plain numbers</b> "
                         "(for example 2.5).</p>")
            return
        out.value = step_table(values, rate)

    for box in (*boxes, stride_box):
        box.observe(update, names="value")
    widget = w.VBox([w.HBox(boxes), stride_box, out])
    widget.add_class("normcore-weightnorm")  # hooks for the live browser tests
    out.add_class("normcore-readout")
    widget.update = update  # for tests: recompute without a browser
    widget.table = out
    return widget
