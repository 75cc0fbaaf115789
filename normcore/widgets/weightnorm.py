"""Chapter 5's widget: choose three direction lengths and a learning rate; see one step of the
weight-normalised layer and of the dense layer side by side.

One definition for JupyterLab and the site (anywidget, see `normcore.widgets._page`): the view is
``js/weightnorm.js`` and computes in the page; the state and normcore's figures are
`normcore.widgets.weightnorm_model`. Built without a browser::

    w = weightnorm_step_widget()
    w.act(weightnorm_model.set_length, 1, "4")
    w.figures_for()          # normcore's lengths after one step, and the distance
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import traitlets

from normcore.experiments import weightnorm
from normcore.widgets import weightnorm_model
from normcore.widgets._esm import bundle
from normcore.widgets._page import PageWidget


class WeightNormStep(PageWidget):
    """Chapter 5's widget; `case` holds the case's numbers (see weightnorm_model.case_data)."""

    _esm = bundle("weightnorm.js")
    case = traitlets.Dict().tag(sync=True)

    @staticmethod
    def compute(state: dict[str, Any]) -> dict[str, Any]:  # type: ignore[override]
        return weightnorm_model.figures(state, weightnorm_model.case_data())

    def __init__(
        self,
        lengths: Sequence[float] = weightnorm.LENGTHS,
        learning_rate: float = weightnorm.LEARNING_RATE,
        **kwargs: Any,
    ) -> None:
        state = weightnorm_model.initial(lengths, learning_rate)
        super().__init__(state=state, case=weightnorm_model.case_data(), **kwargs)

    def __repr__(self) -> str:
        return (
            f"WeightNormStep(lengths {self.state['lengths']}, "
            f"learning rate {self.state['learning_rate']})"
        )


def weightnorm_step_widget(
    lengths: Sequence[float] = weightnorm.LENGTHS, learning_rate: float = weightnorm.LEARNING_RATE
) -> WeightNormStep:
    """Chapter 5's widget, opening on the chapter's lengths and learning rate."""
    return WeightNormStep(lengths, learning_rate)
