"""Checks for chapter 5's exercises. Answers are computed with normcore and never printed; each
checker names the mistakes it expects (see `normcore.exercises._mistakes`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from normcore.dense import WeightNormDense
from normcore.exercises import Verdict, verdict
from normcore.exercises._mistakes import judged

#: Exercise 1: a dense gradient and a stored direction for one neuron (two inputs).
DENSE_GRAD = np.array([[0.6], [-0.2]])
DIRECTION = np.array([[3.0], [4.0]])
MAGNITUDE = np.array([2.0])


def _grads(project: bool) -> dict[str, np.ndarray]:
    layer = WeightNormDense(direction=DIRECTION, magnitude=MAGNITUDE)
    return layer.grads_from_dense(DENSE_GRAD, project=project)


def _parts() -> tuple[np.ndarray, np.ndarray, float]:
    """The unit direction u, the dense gradient with its part along u removed, and g/|v|."""
    u = DIRECTION / np.linalg.norm(DIRECTION)
    across = DENSE_GRAD - float(np.sum(DENSE_GRAD * u)) * u
    return u, across, float(MAGNITUDE[0] / np.linalg.norm(DIRECTION))


def check_magnitude_grad(answer: Any) -> Verdict:
    """Exercise 1a: the magnitude's gradient for DENSE_GRAD, DIRECTION and MAGNITUDE (a number)."""

    def mistakes() -> list[tuple[Any, str]]:
        u, _, _ = _parts()
        along = float(np.sum(DENSE_GRAD * u))
        return [
            (
                [float(np.sum(DENSE_GRAD * DIRECTION))],
                "that dots the gradient with the stored direction v; dw/dg is the unit "
                "direction u = v/|v|",
            ),
            ([float(MAGNITUDE[0]) * along], "that multiplies by the length g; dw/dg = u has no g"),
        ]

    given = answer if answer is None else np.ravel(answer)
    return judged(given, _grads(True)["magnitude"], mistakes)


def check_direction_grad(answer: Any) -> Verdict:
    """Exercise 1b: the (projected) direction gradient, as a 2 x 1 array."""

    def mistakes() -> list[tuple[Any, str]]:
        _, across, scale = _parts()
        return [
            (
                scale * DENSE_GRAD,
                "that is the shortcut, g/|v| times the dense gradient: remove its part along u "
                "first",
            ),
            (across, "the part along u is removed; it still needs the factor g/|v|"),
            (float(MAGNITUDE[0]) * across, "that scales by g; the factor is g/|v|"),
            (across / np.linalg.norm(DIRECTION), "that divides by |v| but leaves out g"),
        ]

    return judged(answer, _grads(True)["direction"], mistakes)


def check_unprojected_dot(answer: Any) -> Verdict:
    """Exercise 2: the unprojected direction gradient dotted with DIRECTION (a number)."""

    def mistakes() -> list[tuple[Any, str]]:
        u, _, scale = _parts()
        return [
            (
                0.0,
                "zero is what the projected gradient gives; the question asks for the "
                "unprojected one, g/|v| times the dense gradient",
            ),
            (
                float(np.sum(DENSE_GRAD * DIRECTION)),
                "that dots the dense gradient itself; the unprojected direction gradient "
                "carries the factor g/|v|",
            ),
            (
                scale * float(np.sum(DENSE_GRAD * u)),
                "that dots with the unit direction u; the question dots with the stored v",
            ),
        ]

    unprojected = _grads(False)["direction"]
    return judged(answer, float(np.sum(unprojected * DIRECTION)), mistakes)


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
