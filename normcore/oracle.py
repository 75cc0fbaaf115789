"""The finite-difference oracle: central differences of any scalar function of an array."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._checks import Sealed, as_input, number, own_error_state
from .errors import NonFiniteError, SettingError, ShapeError


def _scalar(value: Any) -> float:
    try:
        result = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ShapeError(f"f: expected a function returning one number, got {value!r}") from None
    return result


def _check_function(f: Any) -> None:
    """Refuse (SettingError) an `f` that cannot be called, before any arithmetic."""
    if not callable(f):
        raise SettingError(f"f: expected a function of an array returning one number, got {f!r}")


@own_error_state
def finite_difference(f: Callable[[np.ndarray], float], x: Any, step: float = 1e-6) -> np.ndarray:
    """The gradient of scalar `f` at `x`, cell by cell: (f(x + h) - f(x - h)) / 2h.

    Args:
        f: a function of an array shaped as `x`, returning one number.
        x: the point (an array of real numbers); it is not modified (each nudge is made on a
            private float64 copy).
        step: h, a finite number greater than 0.

    Returns:
        A float64 array shaped as `x`. NonFiniteError if `f` returns NaN or infinity;
        SettingError if `f` is not callable.
    """
    _check_function(f)
    h = number(step, "step", SettingError, "a finite number greater than 0")
    if h <= 0:
        raise SettingError(f"step: expected a finite number greater than 0, got {h!r}")
    base = np.array(as_input(x, "x"), dtype=np.float64, copy=True)
    grad = np.zeros_like(base)
    flat, out = base.reshape(-1), grad.reshape(-1)
    for i in range(flat.size):
        keep = flat[i]
        flat[i] = keep + h
        up = _scalar(f(base))
        flat[i] = keep - h
        down = _scalar(f(base))
        flat[i] = keep
        out[i] = (up - down) / (2 * h)
    if not np.all(np.isfinite(grad)):
        raise NonFiniteError("f: expected finite values near x, got NaN or infinity")
    return grad


@dataclass(frozen=True)
class OracleCheck(Sealed):
    """A claimed gradient held against the oracle: the oracle's gradient and the largest gap (both
    arrays read-only)."""

    oracle: np.ndarray
    claimed: np.ndarray
    largest_gap: float

    @property
    def relative_gap(self) -> float:
        """The largest gap over the largest oracle gradient (or over 1, if every gradient is
        tiny)."""
        return self.largest_gap / max(float(np.max(np.abs(self.oracle), initial=0.0)), 1.0)


@own_error_state
def check_grad(
    f: Callable[[np.ndarray], float], x: Any, claimed: Any, step: float = 1e-6
) -> OracleCheck:
    """Hold `claimed` (the gradient of `f` at `x`, shaped as `x`) against central differences.

    Returns an `OracleCheck` with the largest gap. A claimed gradient with a NaN or an infinity is
    refused (NonFiniteError): it can be no gradient at all, and a NaN gap would compare as neither
    large nor small.
    """
    _check_function(f)
    claimed = np.array(as_input(claimed, "claimed"), dtype=np.float64)
    oracle = finite_difference(f, x, step)
    if claimed.shape != oracle.shape:
        raise ShapeError(f"claimed: expected the shape of x {oracle.shape}, got {claimed.shape}")
    return OracleCheck(
        oracle=oracle,
        claimed=claimed,
        largest_gap=float(np.max(np.abs(oracle - claimed), initial=0.0)),
    )
