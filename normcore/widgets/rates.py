"""Chapter 7's widget: pick a learning rate, the batch layer or none, and a run of the sweep;
read its final loss, dead units and test accuracy, and for the normalised network the three ways
of asking it.

One definition for JupyterLab and the site (anywidget, see `normcore.widgets._page`): the view
is ``js/rates.js``. The widget offers exactly the runs of the chapter's sweep, which it is built
from, and `results` describes every one of them when the chapter runs (`rates_model`); the page
chooses among them, so on the site it answers with no kernel. In JupyterLab the kernel answers
every choice too, from the runs themselves. Built without a browser::

    w = rate_explorer(R.sweep())
    w.choose(rate=5, normalised=False)
    w.answer()          # the figures on show, as the page shows them
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import traitlets

from normcore.errors import NormcoreError
from normcore.experiments import rates as R
from normcore.widgets import rates_model
from normcore.widgets._esm import bundle, source
from normcore.widgets._input import friendly
from normcore.widgets._page import PageWidget


class RateExplorer(PageWidget):
    """Chapter 7's widget; `results` holds the figures of every run it offers, `rates` the
    learning rates in order."""

    _esm = bundle("rates.js")
    _css = source("widgets.css")
    results = traitlets.Dict().tag(sync=True)
    rates = traitlets.List().tag(sync=True)

    def __init__(self, rows: Sequence[R.SweepRow], state: dict[str, Any], **kwargs: Any) -> None:
        self.rows = list(rows)
        rates = [rates_model.rate_text(r) for r in sorted({row.rate for row in self.rows})]
        super().__init__(state=state, results=rates_model.results(self.rows), rates=rates, **kwargs)

    def compute(self, state: dict[str, Any]) -> dict[str, Any]:  # type: ignore[override]
        return rates_model.describe(state, self.rows)

    def answer(self, state: dict[str, Any] | None = None) -> dict[str, Any]:
        """The figures for `state` (default: the state on show), or ``{"error": sentence}``."""
        try:
            return self.compute(self.state if state is None else state)
        except NormcoreError as error:
            return {"error": friendly(error)}

    def choose(self, **choice: Any) -> None:
        """What the controls do: rate=, normalised=, run= (SettingError for a choice the sweep
        does not hold)."""
        self.state = rates_model.choose(self.state, self.rows, **choice)

    def __repr__(self) -> str:
        return f"RateExplorer({rates_model.key(self.state)})"


def rate_explorer(
    rows: Sequence[R.SweepRow] | None = None,
    rate: float = 20.0,
    normalised: bool = True,
    run: int = 1,
) -> RateExplorer:
    """The widget over the sweep `rows` (default: `R.sweep()`, trained now if not yet), opening
    on one of its runs."""
    rows = R.sweep() if rows is None else rows
    state = rates_model.choose(
        rates_model.initial(), rows, rate=rate, normalised=normalised, run=run
    )
    return RateExplorer(rows, state)
