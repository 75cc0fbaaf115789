"""Checks for chapter 3's exercises. Answers are computed with normcore and never printed."""

from __future__ import annotations

from typing import Any

import numpy as np

from normcore.exercises import Verdict, verdict
from normcore.experiments.routes import compare_blocks
from normcore.worked import four_rows

#: Exercise 1: the block and the arriving slope.
BLOCK_ONE = np.array([[2.0], [4.0], [9.0]])
SLOPE_ONE = np.array([[1.0], [0.0], [-1.0]])

#: Exercise 2: a block whose arriving slope is the same in every row of a column.
BLOCK_TWO = np.array([[3.0, -1.0], [5.0, 0.0], [10.0, 4.0]])
SLOPE_TWO = np.array([[2.0, -0.5], [2.0, -0.5], [2.0, -0.5]])


def check_passed_down(answer: Any) -> Verdict:
    """Exercise 1: the slope passed down to BLOCK_ONE under SLOPE_ONE (a 3 x 1 array)."""
    return verdict(answer, compare_blocks(BLOCK_ONE, SLOPE_ONE).true)


def check_naive_sum(answer: Any) -> Verdict:
    """Exercise 1, second part: the naive block's column sum for the same block and slope."""
    return verdict(answer, float(compare_blocks(BLOCK_ONE, SLOPE_ONE).naive_sums[0]))


def check_constant_slope(answer: Any) -> Verdict:
    """Exercise 2: the passed-down block for BLOCK_TWO under SLOPE_TWO (a 3 x 2 array)."""
    return verdict(answer, compare_blocks(BLOCK_TWO, SLOPE_TWO).true, tolerance=1e-6)


def check_step_gap(answer: Any) -> Verdict:
    """Exercise 3: the largest gap between the oracle with step 1e-3 and the collected block on
    the worked four under the counting slope (within 10%)."""
    expected = compare_blocks(four_rows(), step=1e-3).true_gap
    if answer is None:
        return verdict(None, expected)
    try:
        given = float(answer)
    except (TypeError, ValueError):
        return Verdict("not yet: the answer should be a number")
    if not np.isfinite(given) or given <= 0:
        return Verdict("not yet: a gap is a positive number")
    off = abs(np.log10(given / expected))
    if off < np.log10(1.1):
        return Verdict("right")
    if off < 1.0:
        return Verdict("close: the right order of magnitude, but not within 10% of the gap")
    return Verdict("not yet: that is not the gap this step gives (within 10%)")


def _standardised_sum(block: np.ndarray, arriving: np.ndarray, epsilon: float) -> float:
    """sum(arriving * z), z the block standardised down its columns (biased variance)."""
    mean = block.mean(axis=0)
    deviation = np.sqrt(((block - mean) ** 2).mean(axis=0) + epsilon)
    return float(np.sum(arriving * (block - mean) / deviation))


def check_backward_function(backward: Any) -> Verdict:
    """Exercise 5, "write it yourself": a function ``backward(x, d, epsilon)`` that returns the
    slope passed down to a (rows, features) block `x` standardised down its columns, given the
    slope `d` arriving at the standardised block. The finite-difference oracle judges it on the
    worked four and on three random blocks; the answer itself is never shown."""
    from normcore.oracle import finite_difference

    if backward is None:
        return verdict(None, 0.0)
    if not callable(backward):
        return Verdict("not yet: the answer should be a function backward(x, d, epsilon)")
    rng = np.random.default_rng(5)
    blocks = [four_rows()]
    blocks += [rng.normal(size=shape) * 3.0 for shape in ((3, 1), (5, 2), (6, 3))]
    worst, scale = 0.0, 0.0
    for x in blocks:
        d = rng.normal(size=x.shape)
        try:
            given = np.asarray(backward(x.copy(), d.copy(), 1e-5), dtype=np.float64)
        except Exception as error:  # the reader's code: say what it raised, never crash
            return Verdict(f"not yet: your function raised {type(error).__name__}: {error}")
        if given.shape != x.shape:
            return Verdict(f"not yet: for a block of shape {x.shape} it returned {given.shape}")
        oracle = finite_difference(lambda b, d=d: _standardised_sum(b, d, 1e-5), x, 1e-6)
        worst = max(worst, float(np.max(np.abs(given - oracle))))
        scale = max(scale, float(np.max(np.abs(oracle))))
    if worst < 1e-6 * max(1.0, scale):
        return Verdict("right")  # it agrees with the oracle on four blocks
    return (
        verdict(worst, 0.0, tolerance=1e-6)
        if worst < 1e-2
        else Verdict(
            "not yet: the oracle disagrees (did you keep the routes through the mean and "
            "the variance?)"
        )
    )
