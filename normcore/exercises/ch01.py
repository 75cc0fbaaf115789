"""Checks for chapter 1's exercises. Each answer is computed with normcore and never printed."""

from __future__ import annotations

from typing import Any

import numpy as np

from normcore.exercises import Verdict, verdict
from normcore.experiments.shift import crowd_shift, deep_stack


def check_ten_times_input(deviation: Any) -> Verdict:
    """Exercise 1: the deviation of the block after the first layer of the plain deep stack
    when its input is ten times larger (same seed, same weights)."""
    return verdict(deviation, lambda: deep_stack(False, input_scale=10.0).deviation[1])


def check_seed_one(plain: Any, batch: Any) -> Verdict:
    """Exercise 2: the largest first-to-last mean shift of the crowd network's read block under
    seed 1, plain and with the batch layer, as two numbers."""
    return verdict(
        [plain, batch],
        lambda: [
            crowd_shift(arrangement, seed=1).largest_shift for arrangement in ("none", "batch")
        ],
    )


def check_first_epoch_smallest_deviation(deviation: Any) -> Verdict:
    """Exercise 3: under the batch layer (seed 0), the smallest deviation among the sixteen units
    of the read block at the first epoch."""
    return verdict(
        deviation,
        lambda: float(np.min(crowd_shift("batch", seed=0, epochs=1).deviation[0])),
        tolerance=1e-7,
    )
