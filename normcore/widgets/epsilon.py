"""The preface's epsilon slider: move epsilon over powers of ten, watch one standardised entry.

    slider = epsilon_slider(x)       # the preface's mini-batch; the slider starts at 1e-05
    slider                           # display it
    slider.figures_for({"exponent": -3, "x": x.tolist()})   # normcore's figures for a state

The page computes the entry itself (``js/epsilon.js`` over ``js/standardise.js``), so on the
static site the slider computes with no kernel; in JupyterLab the kernel computes too, with
`figures` below, and the page shows the largest difference between the two.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import traitlets

from normcore.batch import BatchNorm
from normcore.errors import SettingError, ShapeError
from normcore.widgets._esm import bundle
from normcore.widgets._input import check_state, real_matrix
from normcore.widgets._page import PageWidget

LOW, HIGH = -8, 3  # the slider's stops: epsilon from 1e-08 to 1e+03


def epsilon_at(exponent: int) -> float:
    """Epsilon for a slider stop: the decimal literal 1e<exponent> (as the page reads it)."""
    return float(f"1e{int(exponent)}")


def _input(x: Any) -> np.ndarray:
    rows = real_matrix(x, "x")
    if rows.ndim != 2 or min(rows.shape) < 1:
        raise ShapeError(f"x: expected a 2-D array with rows and features, got {rows.shape}")
    return rows


def figures(state: dict[str, Any]) -> dict[str, float]:
    """The batch layer's output (scale 1, shift 0, training) for the last row's first entry of
    ``state["x"]`` at epsilon 1e<``state["exponent"]``>."""
    check_state(state, {"exponent": object, "x": object})
    exponent = state["exponent"]
    whole = isinstance(exponent, (int, np.integer)) and not isinstance(exponent, bool)
    if not whole or not LOW <= exponent <= HIGH:
        raise SettingError(
            f"exponent: expected a whole number from {LOW} to {HIGH}, got {exponent!r}"
        )
    x = _input(state["x"])
    layer = BatchNorm.create(x.shape[1], eps=epsilon_at(exponent))
    return {"entry": float(layer.forward(x, "train").output[-1, 0])}


class EpsilonSlider(PageWidget):
    """The slider; its state is ``{"exponent": int, "x": rows}``."""

    _esm = bundle("epsilon.js")
    low = traitlets.Int(LOW).tag(sync=True)
    high = traitlets.Int(HIGH).tag(sync=True)
    compute = staticmethod(figures)

    def __repr__(self) -> str:
        return f"EpsilonSlider(epsilon {epsilon_at(self.state['exponent']):.0e})"


def epsilon_slider(x: Any, exponent: int = -5) -> EpsilonSlider:
    """The preface's slider over the mini-batch `x` (rows x features), starting at epsilon
    1e<exponent>."""
    rows = _input(x)
    state = {"exponent": exponent, "x": rows.tolist()}
    figures(state)  # refuses a bad exponent before anything is shown
    state["exponent"] = int(exponent)  # a numpy integer, stored as JSON
    return EpsilonSlider(state=state)


# ------------------------------------------------------------------ the node differential test
def _plans(rng: np.random.Generator) -> list[dict[str, Any]]:
    plans = []
    for _ in range(6):
        rows, features = int(rng.integers(2, 6)), int(rng.integers(1, 4))
        x = np.round(rng.normal(0, 10, (rows, features)), 3).tolist()
        actions = [["setExponent", int(rng.integers(LOW, HIGH + 1))] for _ in range(12)]
        plans.append({"context": None, "start": {"exponent": -5, "x": x}, "actions": actions})
    return plans


def _node() -> Any:
    from normcore.widgets._node import NodeModel

    return NodeModel("epsilon.js", lambda s, _c: figures(s), _plans)


NODE = _node()
