"""Checks for chapter 2's exercises. Each answer is computed with normcore and never printed."""

from __future__ import annotations

from typing import Any

from normcore.batch import BatchNorm
from normcore.exercises import Verdict, verdict
from normcore.experiments.shift import fold_in
from normcore.worked import FOUR_ROWS

WORKED = FOUR_ROWS


def check_standardised_23(value: Any) -> Verdict:
    """Exercise 1: what the 23 of the first column standardises to while training."""
    answer = BatchNorm.create(2).forward(WORKED, "training").output[3, 0]
    return verdict(value, answer, tolerance=1e-6)


def check_running_after_three(mean: Any, variance: Any) -> Verdict:
    """Exercise 2: the running mean and running variance (two features each) after three
    zero-slope steps on the worked block, as two arrays."""
    layer = BatchNorm.create(2)
    for _ in range(3):
        layer = fold_in(layer, WORKED)
    return verdict([mean, variance], [layer.running_mean, layer.running_variance])


def check_steps_to_one_percent(steps: Any) -> Verdict:
    """Exercise 3: the fewest zero-slope steps after which the running mean of feature 2 is
    within one per cent of the batch mean (6)."""
    layer, count = BatchNorm.create(2), 0
    target = layer.forward(WORKED, "training").statistics.mean[1]
    while abs(layer.running_mean[1] - target) >= 0.01 * abs(target):
        layer, count = fold_in(layer, WORKED), count + 1
    return verdict(steps, count, tolerance=0.0)


def check_pytorch_running_variance(value: Any) -> Verdict:
    """Exercise 4: the running variance of feature 2 after one step if, as PyTorch does, the
    unbiased variance were folded in (momentum 0.1 in PyTorch's naming)."""
    response = BatchNorm.create(2).forward(WORKED, "training")
    rows = WORKED.shape[0]
    unbiased = response.statistics.variance[1] * rows / (rows - 1)
    return verdict(value, 0.9 * 1.0 + 0.1 * unbiased, tolerance=1e-9)
