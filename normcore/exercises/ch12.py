"""Checks for the reference chapter's exercises (chapter 12). Answers are computed with normcore and
never printed; each checker names the mistakes it expects (`normcore.exercises._mistakes`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from normcore import BatchNorm
from normcore.exercises import Verdict, verdict
from normcore.exercises._mistakes import judged, pytorch_running_var

COLUMN = np.array([[2.0], [4.0], [4.0], [10.0]])


def check_pytorch_variance(answer: Any) -> Verdict:
    """Exercise 1: PyTorch's running variance (momentum 0.1, unbiased variance, start 1) after
    one training batch COLUMN."""
    return pytorch_running_var(answer, float(COLUMN.var()), COLUMN.shape[0])


def check_two_steps(answer: Any) -> Verdict:
    """Exercise 2: normcore's running mean after two steps on COLUMN (momentum 0.9, start 0)."""
    layer = BatchNorm.create(1)
    for _ in range(2):
        r = layer.forward(COLUMN, "train")
        layer = layer.step(layer.backward(r, np.zeros_like(COLUMN)), 0.0)
    mean = float(COLUMN.mean())
    mistakes = [
        (0.1 * mean, "that is the running mean after one step; the question asks for two"),
        (
            0.9 * mean + 0.1 * 0.9 * mean,
            "normcore's momentum 0.9 is the share of the old figure "
            "kept, not the share taken from the batch",
        ),
        (
            mean,
            "that is the batch mean itself; the running mean starts at 0 and moves a tenth of "
            "the way each step",
        ),
    ]
    return judged(answer, float(layer.running_mean[0]), mistakes)


def check_tiny_scale(answer: Any) -> Verdict:
    """Exercise 3: the smallest power of ten s for which COLUMN * s, standardised while
    training with epsilon 1e-5, keeps its last entry above 1.5 (answer the exponent)."""
    for exponent in range(-10, 5):
        z = BatchNorm.create(1).forward(COLUMN * 10.0**exponent, "train").output
        if z[-1, 0] > 1.5:
            mistakes = [
                (
                    exponent - 1,
                    "at that power the variance is about epsilon's size, and the "
                    "entry stays below 1.5",
                ),
                (
                    exponent + 1,
                    "the entry is above 1.5 there, but that is not the first power "
                    "from which it stays above",
                ),
            ]
            return judged(answer, exponent, mistakes, tolerance=0)
    return verdict(answer, np.nan)
