"""Chapter 7's widget: the rate bracket on the chapter's fine grid under a loss limit the reader
types, and the batch layer asked with batch statistics over the chapter's random orders.

One definition for JupyterLab and the site (anywidget, see `normcore.widgets._page`): the view
is ``js/rates.js`` with ``js/rates-model.js``, which recompute the bracket and the spread over
orders in the page from the chapter's runs (`rates_model.results_data`), so the site computes
with no kernel; in JupyterLab the kernel computes every state too (`rates_model.figures`).
Built without a browser::

    w = rate_explorer(rows, [plain_grid, norm_grid], spreads, homogeneous)
    w.choose(limit="0.5", run=2)
    w.figures_for()          # normcore's figures for the state on show
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import traitlets

from normcore.experiments import rates as R
from normcore.widgets import rates_model
from normcore.widgets._esm import bundle, source
from normcore.widgets._input import StateError, items_arg
from normcore.widgets._page import PageWidget


class RateExplorer(PageWidget):
    """Chapter 7's widget; `results` holds the chapter's figures (`rates_model.results_data`)."""

    _esm = bundle("rates.js")
    _css = source("widgets.css")
    results = traitlets.Dict().tag(sync=True)

    def compute(self, state: dict[str, Any]) -> dict[str, Any]:  # type: ignore[override]
        return rates_model.figures(state, self.results)

    def choose(self, **choice: Any) -> None:
        """What the controls do: limit= (text), run= (1 or 2), orders= (one of ORDERS)."""
        self.state = rates_model.choose(self.state, **choice)

    def __repr__(self) -> str:
        s = self.state
        return f"RateExplorer(loss limit {s['limit']}, run {s['run']}, {s['orders']} orders)"


def order_figures(
    rows: Sequence[R.SweepRow], orders: int = 200
) -> tuple[dict[str, R.OrderSpread], dict[str, dict[str, float]]]:
    """The chapter's spreads over orders and label-sorted accuracies for both rate-0.05
    normalised runs, computed as the chapter computes them (for a widget built outside it)."""
    data = R.subscribers()
    by = {(r.normalised, r.rate): r for r in rows}
    nets = {f"run {k + 1}": by[(True, rates_model.ASKED_RATE)].runs[k].net for k in range(2)}
    spreads = {
        name: R.order_spread(net, data.x_test, data.y_test, orders=orders, seed=k)
        for k, (name, net) in enumerate(nets.items())
    }
    orders_by = R.sorted_orders(data.x_test, data.y_test)
    homogeneous = {
        name: {
            key: R.accuracy(R.batch_probabilities(net, data.x_test, order[None])[0], data.y_test)
            for key, order in orders_by.items()
        }
        for name, net in nets.items()
    }
    return spreads, homogeneous


def rate_explorer(
    rows: Sequence[R.SweepRow] | None = None,
    brackets: Sequence[R.Bracket] | None = None,
    spreads: Mapping[str, R.OrderSpread] | None = None,
    sorted_accuracies: Mapping[str, Mapping[str, float]] | None = None,
    **choice: Any,
) -> RateExplorer:
    """The widget over the chapter's runs: the sweep `rows`, the bracket grids `brackets`, the
    spreads over orders and the label-sorted accuracies of the two rate-0.05 normalised runs.
    What is not given is computed as the chapter computes it. `choice` (limit=, run=, orders=)
    sets the opening view."""
    for name, given, kind in (("rows", rows, R.SweepRow), ("brackets", brackets, R.Bracket)):
        if given is not None:
            items_arg(given, name, kind)
    for name, given in (("spreads", spreads), ("sorted_accuracies", sorted_accuracies)):
        if given is not None and not isinstance(given, Mapping):
            raise StateError(f"{name}: expected a mapping, got {type(given).__name__}")
    rows = R.sweep() if rows is None else rows
    if brackets is None:
        brackets = [
            R.stable_bracket([10.0, 12.5], normalised=False),
            R.stable_bracket([25.0, 30.0, 35.0], normalised=True),
        ]
    if spreads is None or sorted_accuracies is None:
        spreads, sorted_accuracies = order_figures(rows)
    results = rates_model.results_data(
        rows, brackets, spreads, sorted_accuracies, len(R.subscribers().y_test)
    )
    state = rates_model.choose(rates_model.initial(), **choice)
    return RateExplorer(state=state, results=results)
