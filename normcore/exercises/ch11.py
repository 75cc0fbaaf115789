"""Checks for the last-digits chapter's exercises (chapter 11). Answers are computed with numpy and
never printed; each checker names the mistakes it expects (`normcore.exercises._mistakes`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from normcore.exercises import Verdict
from normcore.exercises._mistakes import judged

#: the weight of Exercise 1
WEIGHT = 3.0


def check_last_place(answer: Any) -> Verdict:
    """Exercise 1: the exponent k for which one unit in the last place of WEIGHT, in float64,
    is 2**k (a whole number)."""
    k = int(round(math.log2(float(np.spacing(WEIGHT)))))
    mistakes = [
        (
            k - 1,
            "that is the last place of 1.0 (the machine epsilon), half the weight's: a weight "
            "between 2 and 4 has its own power of two, one higher",
        ),
        (k - 2, "that is half the last place of 1.0; start from the weight's own power of two"),
        (k + 1, "count the bits again: float64 keeps 52 after the leading one"),
    ]
    return judged(answer, k, mistakes, tolerance=0)
