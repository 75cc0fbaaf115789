"""Checks for chapter 5's exercises. Answers are computed with normcore and never printed."""

from __future__ import annotations

from typing import Any

import numpy as np

from normcore.dense import WeightNormDense
from normcore.exercises import Verdict, verdict

#: Exercise 1: a dense slope and a stored direction for one neuron (two inputs).
DENSE_SLOPE = np.array([[0.6], [-0.2]])
DIRECTION = np.array([[3.0], [4.0]])
MAGNITUDE = np.array([2.0])


def _slopes(project: bool) -> dict[str, np.ndarray]:
    layer = WeightNormDense(direction=DIRECTION, magnitude=MAGNITUDE)
    return layer.slopes_from_dense(DENSE_SLOPE, project=project)


def check_magnitude_slope(answer: Any) -> Verdict:
    """Exercise 1a: the magnitude's slope for DENSE_SLOPE, DIRECTION and MAGNITUDE (a number)."""
    return verdict(answer if answer is None else np.ravel(answer), _slopes(True)["magnitude"])


def check_direction_slope(answer: Any) -> Verdict:
    """Exercise 1b: the (projected) direction slope, as a 2 x 1 array."""
    return verdict(answer, _slopes(True)["direction"])


def check_unprojected_dot(answer: Any) -> Verdict:
    """Exercise 2: the unprojected direction slope dotted with DIRECTION (a number)."""
    unprojected = _slopes(False)["direction"]
    return verdict(answer, float(np.sum(unprojected * DIRECTION)))


def check_gap_factor(answer: Any) -> Verdict:
    """Exercise 3: by what factor the gap between the dense and weight-norm lengths grows when a
    small learning rate doubles (the gap is eta^2 b / 2g to leading order: 4)."""
    if answer is not None:
        try:
            value = float(answer)
        except (TypeError, ValueError):
            value = None
        if value is not None and abs(value - 2.0) < 0.05:
            return Verdict(
                "not yet: 2 is how the weight-norm change of length grows (eta times the "
                "gradient along u, first order); the gap is second order in eta"
            )
    return verdict(answer, 4.0, tolerance=0.02)
