"""Checks for chapter 4's exercises. Answers are computed with normcore and never printed."""

from __future__ import annotations

from typing import Any

import numpy as np

from normcore import GroupNorm, LayerNorm, RMSNorm
from normcore.exercises import Verdict, verdict

#: Exercise 1: one row for layer norm and RMS norm.
ROW = np.array([[2.0, 4.0, 9.0]])


def check_layer_row(answer: Any) -> Verdict:
    """Exercise 1: ROW through a fresh layer norm (epsilon 1e-5), as a 1 x 3 array."""
    return verdict(answer, LayerNorm.create(3).forward(ROW).output)


def check_rms_row(answer: Any) -> Verdict:
    """Exercise 2: ROW through a fresh RMS norm (epsilon 1e-5), as a 1 x 3 array."""
    return verdict(answer, RMSNorm.create(3).forward(ROW).output)


def check_statistics_shape(answer: Any) -> Verdict:
    """Exercise 3: the shape of the statistics when an input (2, 3, 4, 5) is layer-normed with
    normalized_shape (3, 4, 5), as a tuple."""
    x = np.zeros((2, 3, 4, 5))
    mean = LayerNorm.create((3, 4, 5)).forward(x).cache.mean
    if answer is None:
        return verdict(None, 0)
    return verdict(np.asarray(answer, dtype=np.float64), np.array(mean.shape[:1]), 0.0)


def check_group_count(answer: Any) -> Verdict:
    """Exercise 4: how many values one statistic of group norm reads for images (8, 12, 5, 5)
    split into 4 groups."""
    layer = GroupNorm.create(12, 4)
    return verdict(answer, layer.statistic_count(np.zeros((8, 12, 5, 5))), 0.0)
