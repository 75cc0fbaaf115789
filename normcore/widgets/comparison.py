"""Chapter 6's widget: pick arrangements, seeds and stride, and re-run the comparison.

Run live with ``make lab``; on the site the widget shows the table it was built with. Seeds are
typed as whole numbers separated by commas and read with int(); errors appear inside the widget.
"""

from __future__ import annotations

import html

from ..errors import NormcoreError, SettingError
from ..experiments import comparison, network
from ._data import data, keyed
from ._input import NotANumberError, friendly, parse_number


def results_table(arrangements, seeds, stride: float, epochs: int = comparison.EPOCHS) -> str:
    """The comparison for these choices, as an HTML table (or an error message)."""
    try:
        if not arrangements:
            raise SettingError("pick at least one arrangement")
        if not seeds:
            raise SettingError("type at least one seed")
        if not (stride > 0 and stride < 100):
            raise SettingError(f"stride: expected a number between 0 and 100, got {stride}")
        scores = comparison.compare(list(arrangements), list(seeds), epochs, stride)
    except NormcoreError as exc:
        return f"<p{data(error=exc)}><b>Cannot run that.</b> {html.escape(friendly(exc))}</p>"

    def row(name: str, s: comparison.Scores) -> str:
        figures = {
            "train_accuracy": s.train_accuracy.mean(), "held_accuracy": s.held_accuracy.mean(),
            "held_min": s.held_accuracy.min(), "held_max": s.held_accuracy.max(),
            "train_loss": s.train_loss.mean(), "held_loss": s.held_loss.mean(),
        }
        a = {k: keyed(f"{name}:{k}", v) for k, v in figures.items()}
        return (
            f"<tr><td>{name}</td><td{a['train_accuracy']}>{figures['train_accuracy']:.3f}</td>"
            f"<td{a['held_accuracy']}>{figures['held_accuracy']:.3f}</td>"
            f"<td><span{a['held_min']}>{figures['held_min']:.2f}</span> to "
            f"<span{a['held_max']}>{figures['held_max']:.2f}</span></td>"
            f"<td{a['train_loss']}>{figures['train_loss']:.4f}</td>"
            f"<td{a['held_loss']}>{figures['held_loss']:.4f}</td></tr>"
        )

    rows = "".join(row(name, s) for name, s in scores.items())
    return (
        "<style>.nc-padded td, .nc-padded th { padding: 2px 10px; }"
        " .nc-padded td { text-align: right; font-variant-numeric: tabular-nums; }</style>"
        f"<table class='nc-padded'>"
        f"<tr{data(arrangements=list(scores), seeds=list(seeds), stride=stride)}>"
        "<th>arrangement</th><th>training accuracy</th><th>held-out accuracy</th>"
        "<th>seed range</th><th>training loss</th><th>held-out loss</th></tr>"
        f"{rows}</table>"
    )


def parse_seeds(text: str) -> list[int]:
    """Whole-number seeds separated by commas; a typed error for anything else."""
    seeds = []
    for part in text.replace(" ", "").split(","):
        if part:
            value = parse_number(part, "seeds")
            if value != int(value) or value < 0:
                raise NotANumberError(f"seeds: {part!r} is not a whole number from 0 up")
            seeds.append(int(value))
    return seeds


def comparison_widget(
    arrangements=network.ARRANGEMENTS, seeds=comparison.SEEDS, stride: float = comparison.RATE
):
    """A VBox: arrangement picker, seed and stride boxes, a run button and the results table."""
    import ipywidgets as w

    style = {"description_width": "7em"}
    picker = w.SelectMultiple(
        options=list(network.ARRANGEMENTS), value=list(arrangements), description="arrangements",
        style=style,
    )
    seed_box = w.Text(value=",".join(str(s) for s in seeds), description="seeds", style=style)
    stride_box = w.Text(value=f"{stride:g}", description="stride", style=style)
    button = w.Button(description="run")
    out = w.HTML(value=results_table(arrangements, seeds, stride))

    def run(_button=None) -> None:
        try:
            chosen_seeds = parse_seeds(seed_box.value)
            rate = parse_number(stride_box.value, "stride")
        except NormcoreError as exc:
            out.value = (f"<p{data(error=exc)}><b>Cannot run that.</b> "
                         f"{html.escape(friendly(exc))}</p>")
            return
        out.value = results_table(list(picker.value), chosen_seeds, rate)

    button.on_click(run)
    where = w.HTML("<i>Runs on the kernel: open the chapter in JupyterLab to re-run it; the site "
                   "shows the table made when it was built.</i>")
    widget = w.VBox([where, picker, seed_box, stride_box, button, out])
    widget.add_class("normcore-comparison")  # hooks for the live browser tests
    out.add_class("normcore-readout")
    widget.run = run
    widget.table = out
    widget.picker, widget.seed_box, widget.stride_box = picker, seed_box, stride_box
    return widget
