"""The book's worked mini-batch, defined once: four rows (people), two features.

Chapter 2 standardises it by hand, chapter 3 takes its backward pass, and the tests hold the
layers to the figures worked from it.
"""

from __future__ import annotations

import numpy as np

from ._checks import frozen

#: the four rows (1, 7), (1, 9), (7, 1), (23, 7), read-only
FOUR_ROWS = frozen([[1.0, 7.0], [1.0, 9.0], [7.0, 1.0], [23.0, 7.0]])


def four_rows() -> np.ndarray:
    """A fresh, writable copy of `FOUR_ROWS`, shape (4, 2), float64."""
    return np.array(FOUR_ROWS)
