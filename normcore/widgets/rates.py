"""Chapter 7's widget: pick a rate and whether to normalise, train, and read what came out.

`rate_explorer()` returns an ipywidgets box whose readout is an HTML widget (no Output area), so
its first view is stored with the notebook and shown on the static site. `readout()` is the text
it shows, testable without any widget. Errors are written into the readout, never raised.
"""

from __future__ import annotations

import html
import math

import ipywidgets as widgets

from normcore.errors import NormcoreError
from normcore.experiments import rates as R
from normcore.widgets._data import data
from normcore.widgets._input import friendly


def readout(rate: float, normalised: bool, seed: int = R.RUN_SEEDS[0]) -> str:
    """HTML: final loss, dead units, test accuracy and (normalised) the three ways to predict."""
    try:
        run = R.train(seed, rate, normalised)
        head = f"rate {rate:g}, {'normalised' if normalised else 'plain'}, seed {seed}"
        bold = f"<b{data(rate=rate, normalised=normalised, seed=seed)}>{head}</b>"
        if run.refused:
            epoch, batch = run.refused_at
            return (f"{bold}<br><span{data(refused_epoch=epoch + 1, refused_batch=batch + 1)}>"
                    f"normcore refused to go on in epoch {epoch + 1}, batch {batch + 1}: "
                    f"{html.escape(run.refused)}</span>")
        test = R._data()
        dead = R.dead_units(run.net)
        accuracy = R.accuracy(R.predict(run.net, test.x_test), test.y_test)
        lines = [bold,
                 f"<span{data(loss=run.loss)}>final training loss {run.loss:.4f}</span>",
                 f"<span{data(dead_units=dead)}>dead units {dead}/16</span>",
                 f"<span{data(accuracy=accuracy)}>test accuracy (running figures) "
                 f"{accuracy:.4f}</span>"]
        if normalised:
            ways = R.three_ways(run.net)
            batch, shuffled = ways.accuracy("batch"), ways.accuracy("shuffled")
            lines += [f"<span{data(batch_accuracy=batch)}>test accuracy (batch statistics, "
                      f"batches of 20) {batch:.4f}</span>",
                      f"<span{data(shuffled_accuracy=shuffled)}>the same, test order shuffled "
                      f"{shuffled:.4f}</span>",
                      f"<span{data(changed_by_order=ways.changed_by_order)}>subscribers whose "
                      f"class the order changes {ways.changed_by_order}</span>"]
        return "<br>".join(lines)
    except NormcoreError as exc:
        return (f"<p{data(error=exc)}><b>Could not train at that rate.</b> "
                f"{html.escape(friendly(exc))}</p>")


def shown_by(slider: widgets.FloatLogSlider, value: float) -> float:
    """The value a browser's log slider shows for `value`: its exponent snapped to the step."""
    exponent = math.log(value, slider.base)
    steps = round((exponent - slider.min) / slider.step)
    return float(slider.base ** (slider.min + steps * slider.step))


def rate_explorer(rate: float = 20.0, normalised: bool = True) -> widgets.VBox:
    """The widget: a rate slider (log scale), a normalisation box, a train button, a readout.

    The box carries `.rate`, `.normalised`, `.button`, `.out` and `.train()` for tests."""
    rate_w = widgets.FloatLogSlider(value=rate, base=10, min=-2, max=2, step=0.05,
                                    description="rate", readout_format=".3g",
                                    layout=widgets.Layout(width="440px"))
    norm_w = widgets.Checkbox(value=normalised, description="batch layer")
    button = widgets.Button(description="train")
    out = widgets.HTML(readout(rate, normalised))
    chosen = {"rate": float(rate)}  # the rate trained at

    def moved(change: dict) -> None:
        # A browser slider snaps a rate set off its grid (20 is 10^1.30103; the grid has 10^1.3)
        # and sends the snapped rate back as soon as it shows the widget. That is the slider
        # showing the rate at its resolution, not a reader's move: a move lands on another grid
        # point. Without this, "train" would run at 19.95 while everything says 20.
        new = float(change["new"])
        if new > 0 and chosen["rate"] > 0 and math.isclose(
            new, shown_by(rate_w, chosen["rate"]), rel_tol=1e-9
        ):
            return
        chosen["rate"] = new

    def train(*_: object) -> None:
        out.value = "training…"
        out.value = readout(chosen["rate"], bool(norm_w.value))

    rate_w.observe(moved, names="value")
    button.on_click(train)
    where = widgets.HTML("<i>Runs on the kernel: open the chapter in JupyterLab to train at "
                         "another rate; the site shows the run made when it was built.</i>")
    box = widgets.VBox([where, widgets.HBox([rate_w, norm_w, button]), out])
    box.add_class("normcore-rates")  # hooks for the live browser tests
    out.add_class("normcore-readout")
    box.rate, box.normalised, box.button, box.out, box.train = rate_w, norm_w, button, out, train
    return box
