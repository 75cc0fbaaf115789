"""Checks for chapter 3's exercises. Answers are computed with normcore and never printed."""

from __future__ import annotations

from typing import Any

import numpy as np

from normcore.exercises import Verdict, verdict
from normcore.experiments.routes import compare_blocks

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
    expected = compare_blocks(np.array([[1.0, 7.0], [1.0, 9.0], [7.0, 1.0], [23.0, 7.0]]),
                              step=1e-3).true_gap
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
