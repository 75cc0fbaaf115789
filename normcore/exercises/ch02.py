"""Checks for chapter 2's exercises. Each answer is computed with normcore and never printed; each
checker names the mistake it expects (see `normcore.exercises._mistakes`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from normcore.batch import BatchNorm
from normcore.exercises import Verdict, verdict
from normcore.exercises._mistakes import judged, pytorch_running_var
from normcore.experiments.shift import fold_in
from normcore.worked import FOUR_ROWS

WORKED = FOUR_ROWS
EPSILON = 1e-5


def check_standardised_23(value: Any) -> Verdict:
    """What the 23 of the first column standardises to while training (six decimals: this
    precision cannot see epsilon, so the chapter asks for the gap below 5/3 instead)."""
    answer = BatchNorm.create(2).forward(WORKED, "train").output[3, 0]
    return verdict(value, answer, tolerance=1e-6)


def check_gap_below_five_thirds(gap: Any) -> Verdict:
    """Exercise 1: 5/3 minus what the 23 of the first column standardises to while training,
    to two significant figures."""
    answer = 5.0 / 3.0 - BatchNorm.create(2).forward(WORKED, "train").output[3, 0]
    first = WORKED[:, 0]
    offset = first[3] - first.mean()
    biased = first.var()
    mistakes = [
        (
            0.0,
            "without epsilon the 23 would be exactly 5/3; epsilon under the root makes the "
            "divisor a hair larger than 9",
        ),
        (
            5 / 3 - offset / (np.sqrt(biased) + EPSILON),
            "that is epsilon added outside the square root, sqrt(v) + epsilon; it belongs under it",
        ),
        (-answer, "the 23 lands below 5/3, so 5/3 minus it is positive"),
        (
            5 / 3 - offset / np.sqrt(first.var(ddof=1) + EPSILON),
            "that divides the squared offsets by 3 (unbiased); the layer divides by the 4 rows",
        ),
        (
            EPSILON / (2 * biased),
            "that is the divisor's relative change, epsilon / (2 v); the 23 standardises to "
            "5/3 times (1 minus it), so the gap carries the factor 5/3",
        ),
    ]
    # two significant figures: every distance relative, so a rounded mistake is still named and
    # an answer ten times off is not "close"
    return judged(gap, answer, mistakes, tolerance=0.05, mistake_tolerance=0.05, relative=True)


def check_running_after_three(mean: Any, variance: Any) -> Verdict:
    """Exercise 2: the running mean and running variance (two features each) after three
    zero-gradient steps on the worked mini-batch, as two arrays."""
    layer = BatchNorm.create(2)
    for _ in range(3):
        layer = fold_in(layer, WORKED)
    kept = 0.9**3
    unbiased = WORKED.var(axis=0, ddof=1)
    mistakes = [
        (
            [layer.running_mean, kept + (1 - kept) * unbiased],
            "the means are right; the running variance takes the biased one (divide by 4)",
        ),
        (
            [(1 - 0.1**3) * WORKED.mean(axis=0), 0.1**3 + (1 - 0.1**3) * WORKED.var(axis=0)],
            "that keeps a tenth of the old figure; momentum 0.9 keeps nine tenths",
        ),
        (
            [0.1 * WORKED.mean(axis=0), 0.9 + 0.1 * WORKED.var(axis=0)],
            "that is one step; the running statistics are updated three times",
        ),
    ]
    return judged([mean, variance], [layer.running_mean, layer.running_var], mistakes)


def check_steps_to_one_percent(steps: Any) -> Verdict:
    """Exercise 3: the fewest zero-gradient steps after which the running mean of feature 2 is
    within one per cent of the batch mean (6)."""
    layer, count = BatchNorm.create(2), 0
    target = layer.forward(WORKED, "train").statistics.mean[1]
    while abs(layer.running_mean[1] - target) >= 0.01 * abs(target):
        layer, count = fold_in(layer, WORKED), count + 1
    real = np.log(0.01) / np.log(0.9)
    mistakes = [
        (
            count - 1,
            "after that many steps the mean is still just outside one per cent: the "
            "first whole step past ln 0.01 / ln 0.9",
        ),
        (real, "steps come whole: take the first whole step past the bound"),
    ]
    return judged(steps, count, mistakes, tolerance=0.0, mistake_tolerance=1e-3)


def check_pytorch_running_var(value: Any) -> Verdict:
    """Exercise 4: the running variance of feature 2 after one step if, as PyTorch does, the
    running variance were updated with the unbiased variance (momentum 0.1 in PyTorch's naming)."""
    response = BatchNorm.create(2).forward(WORKED, "train")
    biased = float(response.statistics.variance[1])
    return pytorch_running_var(
        value, biased, WORKED.shape[0], tolerance=1e-9, mistake_tolerance=1e-6
    )


#: Keras's and Flax's default momentum, the share of the old running statistic kept.
KERAS_MOMENTUM = 0.99


def check_steps_keras(steps: Any) -> Verdict:
    """Exercise 3: the fewest zero-gradient steps after which the running mean of feature 2,
    updated with momentum 0.99 (the share kept, as Keras and Flax name it) from its start of 0,
    is within one per cent of the batch mean (6)."""
    target = float(WORKED[:, 1].mean())
    running, count = 0.0, 0
    while abs(running - target) >= 0.01 * abs(target):
        running, count = KERAS_MOMENTUM * running + (1 - KERAS_MOMENTUM) * target, count + 1
    real = float(np.log(0.01) / np.log(KERAS_MOMENTUM))
    tenth = int(np.ceil(np.log(0.01) / np.log(0.9)))
    mistakes = [
        (tenth, "that is the count for momentum 0.9; Keras and Flax keep 0.99 of the old figure"),
        (
            count - 1,
            "after that many steps the mean is still just outside one per cent: take the first "
            "whole step past the bound",
        ),
        (round(real), "steps come whole, and the bound must be passed: round up, not to nearest")
        if round(real) != count
        else (-1, ""),
        (real, "steps come whole: take the first whole step past the bound"),
        (1, "momentum 0.99 is the share kept, not the share taken from the batch"),
    ]
    return judged(steps, count, mistakes, tolerance=0.0, mistake_tolerance=1e-3)
