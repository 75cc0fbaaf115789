"""The finite-difference oracle: central differences of any scalar function of a block."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


def finite_difference(
    f: Callable[[np.ndarray], float], x: np.ndarray, step: float = 1e-6
) -> np.ndarray:
    """The slope of scalar `f` at `x`, cell by cell: (f(x + h) - f(x - h)) / 2h.

    `x` is not modified (each nudge is made on a private float64 copy).
    """
    base = np.array(x, dtype=np.float64, copy=True)
    slope = np.zeros_like(base)
    flat, out = base.reshape(-1), slope.reshape(-1)
    for i in range(flat.size):
        keep = flat[i]
        flat[i] = keep + step
        up = float(f(base))
        flat[i] = keep - step
        down = float(f(base))
        flat[i] = keep
        out[i] = (up - down) / (2 * step)
    return slope


@dataclass(frozen=True)
class OracleCheck:
    """A claimed slope held against the oracle: the oracle's block and the largest gap."""

    oracle: np.ndarray
    claimed: np.ndarray
    largest_gap: float

    @property
    def relative_gap(self) -> float:
        """The largest gap over the largest oracle slope (or over 1, if every slope is tiny)."""
        return self.largest_gap / max(float(np.max(np.abs(self.oracle), initial=0.0)), 1.0)


def check_slope(
    f: Callable[[np.ndarray], float], x: np.ndarray, claimed: np.ndarray, step: float = 1e-6
) -> OracleCheck:
    """Hold `claimed` (the slope of `f` at `x`) against central differences."""
    oracle = finite_difference(f, x, step)
    claimed = np.asarray(claimed, dtype=np.float64)
    return OracleCheck(
        oracle=oracle, claimed=claimed, largest_gap=float(np.max(np.abs(oracle - claimed)))
    )
