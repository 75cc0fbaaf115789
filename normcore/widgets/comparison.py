"""Chapter 6's widget: tick variants and seeds, and read the comparison's table for them.

One definition for JupyterLab and the site (anywidget, see `normcore.widgets._page`): the view is
``js/comparison.js``, which averages in the page; the state and normcore's figures are
`normcore.widgets.comparison_model`. Every choice is among the runs the chapter trained (its five
variants, five seeds, five folds, at its learning rate and epochs), stored in the widget per
seed, so on the static site every tick computes with no kernel. Built without a browser::

    w = comparison_widget(comparison.run_all().scores)
    w.act(comparison_model.toggle_seed, 3, False)
    w.figures_for()          # normcore's figures for the state on show
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import traitlets

from normcore.errors import NormcoreError
from normcore.experiments import comparison
from normcore.widgets import comparison_model
from normcore.widgets._esm import bundle, source
from normcore.widgets._input import StateError, check_state, friendly, items_arg
from normcore.widgets._page import PageWidget


class ComparisonTable(PageWidget):
    """Chapter 6's widget; `results` holds the chapter's per-seed figures (see
    `comparison_model.results_data`)."""

    _esm = bundle("comparison.js")
    _css = source("widgets.css")
    results = traitlets.Dict().tag(sync=True)

    def compute(self, state: dict[str, Any]) -> dict[str, Any]:  # type: ignore[override]
        return comparison_model.figures(state, self.results)

    def figures_for(self, state: dict[str, Any] | None = None) -> dict[str, Any]:
        """normcore's figures for `state` (default: the state on show), or ``{"error":
        sentence}`` when nothing can be shown."""
        try:
            return self.compute(self.state if state is None else state)
        except NormcoreError as error:
            return {"error": friendly(error)}

    def __repr__(self) -> str:
        return (
            f"ComparisonTable({len(self.state['variants'])} variants, seeds {self.state['seeds']})"
        )


def _listed(values: Any) -> Any:
    """A tuple as a list (what `check_state` reads as a sequence); anything else as it is."""
    return list(values) if isinstance(values, tuple) else values


def comparison_widget(
    scores: Mapping[str, comparison.Scores],
    variants: Sequence[str] | None = None,
    seeds: Sequence[int] | None = None,
) -> ComparisonTable:
    """Chapter 6's widget over the chapter's runs.

    Args:
        scores: the chapter's `comparison.run_all(...).scores`, one per variant, every seed
            of `comparison.SEEDS`.
        variants, seeds: what is ticked at first (default: everything, the chapter's table).
    """
    items_arg(scores, "scores", comparison.Scores)
    if not isinstance(scores, Mapping):
        raise StateError(
            f"scores: expected a mapping of variant to Scores, got {type(scores).__name__}"
        )
    choice = {"variants": ([str], None), "seeds": ([int], None)}
    check_state({"variants": _listed(variants), "seeds": _listed(seeds)}, choice, "choice")
    results = comparison_model.results_data(scores)
    state = comparison_model.initial(results)
    if variants is not None:
        state["variants"] = [k for k in results["order"] if k in variants]
    if seeds is not None:
        state["seeds"] = [s for s in results["seeds"] if s in seeds]
    return ComparisonTable(state=state, results=results)
