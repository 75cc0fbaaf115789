"""Checks for the reference chapter's exercises (chapter 11). Answers are computed with normcore and
never printed."""

from __future__ import annotations

from typing import Any

import numpy as np

from normcore import BatchNorm
from normcore.exercises import Verdict, verdict

COLUMN = np.array([[2.0], [4.0], [4.0], [10.0]])


def check_pytorch_variance(answer: Any) -> Verdict:
    """Exercise 1: PyTorch's running variance (momentum 0.1, unbiased variance, start 1) after
    one training batch COLUMN."""
    n = COLUMN.shape[0]
    return verdict(answer, 0.9 * 1.0 + 0.1 * float(COLUMN.var()) * n / (n - 1))


def check_two_steps(answer: Any) -> Verdict:
    """Exercise 2: normcore's running mean after two steps on COLUMN (momentum 0.9, start 0)."""
    layer = BatchNorm.create(1)
    for _ in range(2):
        r = layer.forward(COLUMN, "training")
        layer = layer.step(layer.backward(r, np.zeros_like(COLUMN)), 0.0)
    return verdict(answer, float(layer.running_mean[0]))


def check_tiny_scale(answer: Any) -> Verdict:
    """Exercise 3: the smallest power of ten s for which COLUMN * s, standardised while
    training with epsilon 1e-5, keeps its last entry above 1.5 (answer the exponent)."""
    for exponent in range(-10, 5):
        z = BatchNorm.create(1).forward(COLUMN * 10.0**exponent, "training").output
        if z[-1, 0] > 1.5:
            return verdict(answer, exponent, tolerance=0)
    return verdict(answer, np.nan)
