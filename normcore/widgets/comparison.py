"""Chapter 6's widget: pick arrangements, seeds and stride, and re-run the comparison.

Run live with ``make lab``; on the site the widget shows the table it was built with. Seeds are
typed as whole numbers separated by commas and read with int(); errors appear inside the widget.
"""

from __future__ import annotations

import html

from ..experiments import comparison, network


def results_table(arrangements, seeds, stride: float, epochs: int = comparison.EPOCHS) -> str:
    """The comparison for these choices, as an HTML table (or an error message)."""
    try:
        if not arrangements:
            raise ValueError("pick at least one arrangement")
        if not seeds:
            raise ValueError("type at least one seed")
        if not (stride > 0 and stride < 100):
            raise ValueError(f"stride: expected a number between 0 and 100, got {stride}")
        scores = comparison.compare(list(arrangements), list(seeds), epochs, stride)
    except Exception as exc:  # noqa: BLE001 - shown in the widget, never raised
        return f"<p><b>Cannot run that:</b> {html.escape(str(exc))}</p>"
    rows = "".join(
        f"<tr><td>{name}</td><td>{s.train_accuracy.mean():.3f}</td>"
        f"<td>{s.held_accuracy.mean():.3f}</td>"
        f"<td>{s.held_accuracy.min():.2f} to {s.held_accuracy.max():.2f}</td>"
        f"<td>{s.train_loss.mean():.4f}</td><td>{s.held_loss.mean():.4f}</td></tr>"
        for name, s in scores.items()
    )
    return (
        "<table><tr><th>arrangement</th><th>training accuracy</th><th>held-out accuracy</th>"
        "<th>seed range</th><th>training loss</th><th>held-out loss</th></tr>"
        f"{rows}</table>"
    )


def parse_seeds(text: str) -> list[int]:
    return [int(part) for part in text.replace(" ", "").split(",") if part]


def comparison_widget(
    arrangements=network.ARRANGEMENTS, seeds=comparison.SEEDS, stride: float = comparison.RATE
):
    """A VBox: arrangement picker, seed and stride boxes, a run button and the results table."""
    import ipywidgets as w

    picker = w.SelectMultiple(
        options=list(network.ARRANGEMENTS), value=list(arrangements), description="arrangements"
    )
    seed_box = w.Text(value=",".join(str(s) for s in seeds), description="seeds")
    stride_box = w.Text(value=f"{stride:g}", description="stride")
    button = w.Button(description="run")
    out = w.HTML(value=results_table(arrangements, seeds, stride))

    def run(_button=None) -> None:
        try:
            chosen_seeds = parse_seeds(seed_box.value)
            rate = float(stride_box.value)
        except ValueError:
            out.value = "<p><b>Please type whole-number seeds and a plain-number stride.</b></p>"
            return
        out.value = results_table(list(picker.value), chosen_seeds, rate)

    button.on_click(run)
    widget = w.VBox([picker, seed_box, stride_box, button, out])
    widget.run = run
    widget.table = out
    widget.picker, widget.seed_box, widget.stride_box = picker, seed_box, stride_box
    return widget
