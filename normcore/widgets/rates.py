"""Chapter 7's widget: pick a rate and whether to normalise, train, and read what came out.

`rate_explorer()` returns an ipywidgets box whose readout is an HTML widget (no Output area), so
its first view is stored with the notebook and shown on the static site. `readout()` is the text
it shows, testable without any widget. Errors are written into the readout, never raised.
"""

from __future__ import annotations

import html

import ipywidgets as widgets

from normcore.errors import NormcoreError
from normcore.experiments import rates as R


def readout(rate: float, normalised: bool, seed: int = R.RUN_SEEDS[0]) -> str:
    """HTML: final loss, dead units, test accuracy and (normalised) the three ways to predict."""
    try:
        run = R.train(seed, rate, normalised)
        head = f"rate {rate:g}, {'normalised' if normalised else 'plain'}, seed {seed}"
        if run.refused:
            epoch, batch = run.refused_at
            return (f"<b>{head}</b><br>normcore refused to go on in epoch {epoch + 1}, batch "
                    f"{batch + 1}: {html.escape(run.refused)}")
        data = R._data()
        lines = [f"<b>{head}</b>",
                 f"final training loss {run.loss:.4f}",
                 f"dead units {R.dead_units(run.net)}/16",
                 f"test accuracy (running figures) "
                 f"{R.accuracy(R.predict(run.net, data.x_test), data.y_test):.4f}"]
        if normalised:
            ways = R.three_ways(run.net)
            lines += [f"test accuracy (batch statistics, batches of 20) "
                      f"{ways.accuracy('batch'):.4f}",
                      f"the same, test order shuffled {ways.accuracy('shuffled'):.4f}",
                      f"subscribers whose class the order changes {ways.changed_by_order}"]
        return "<br>".join(lines)
    except (NormcoreError, ValueError) as exc:
        return f"<b>could not train:</b> {html.escape(type(exc).__name__)}: {html.escape(str(exc))}"


def rate_explorer(rate: float = 20.0, normalised: bool = True) -> widgets.VBox:
    """The widget: a rate slider (log scale), a normalisation box, a train button, a readout.

    The box carries `.rate`, `.normalised`, `.button`, `.out` and `.train()` for tests."""
    rate_w = widgets.FloatLogSlider(value=rate, base=10, min=-2, max=2, step=0.05,
                                    description="rate", readout_format=".3g")
    norm_w = widgets.Checkbox(value=normalised, description="batch layer")
    button = widgets.Button(description="train")
    out = widgets.HTML(readout(rate, normalised))

    def train(*_: object) -> None:
        out.value = "training…"
        out.value = readout(float(rate_w.value), bool(norm_w.value))

    button.on_click(train)
    box = widgets.VBox([widgets.HBox([rate_w, norm_w, button]), out])
    box.rate, box.normalised, box.button, box.out, box.train = rate_w, norm_w, button, out, train
    return box
