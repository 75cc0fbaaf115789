"""Input checks shared by every layer: each runs before any arithmetic and raises a typed error."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .errors import (
    DtypeError,
    EmptyBatchError,
    EpsilonError,
    MagnitudeError,
    MomentumError,
    NonFiniteError,
    PurposeError,
    RateError,
    ShapeError,
)

TRAINING = "training"
PREDICTING = "predicting"
PURPOSES = (TRAINING, PREDICTING)


def as_block(x: Any, name: str = "block") -> np.ndarray:
    """Return `x` as a float32 or float64 array without touching the caller's array.

    Integers become float64; float16 becomes float32; bool, complex, object and text are refused.
    NaN and infinity are refused. The result may share memory with `x`: callers never write to it.
    """
    try:
        a = np.asarray(x)
    except (ValueError, TypeError) as exc:  # ragged nested lists and the like
        raise ShapeError(f"{name}: expected a rectangular block of numbers, got {exc}") from None
    kind = a.dtype.kind
    if kind in "iu":
        a = a.astype(np.float64)
    elif kind == "f":
        if a.dtype == np.float16:
            a = a.astype(np.float32)
        elif a.dtype not in (np.float32, np.float64):
            a = a.astype(np.float64)
    else:
        raise DtypeError(
            f"{name}: expected real numbers (float or integer), got dtype {a.dtype}"
        )
    if not np.isfinite(a).all():
        bad = int(np.size(a) - np.count_nonzero(np.isfinite(a)))
        raise NonFiniteError(f"{name}: expected finite values, got {bad} NaN or infinite entries")
    return a


def check_magnitude(a: np.ndarray, count: int, name: str = "block") -> None:
    """Refuse values whose squares, summed `count` at a time, would overflow `a`'s float type."""
    if a.size == 0:
        return
    limit = math.sqrt(float(np.finfo(a.dtype).max) / (8.0 * max(count, 1)))
    largest = float(np.max(np.abs(a)))
    if largest > limit:
        raise MagnitudeError(
            f"{name}: expected magnitudes up to {limit:.3g} for {a.dtype} statistics over "
            f"{count} values, got {largest:.3g}"
        )


def check_rank(a: np.ndarray, rank: int, name: str, meaning: str) -> None:
    if a.ndim != rank:
        raise ShapeError(f"{name}: expected rank {rank} ({meaning}), got shape {a.shape}")


def check_not_empty(a: np.ndarray, name: str) -> None:
    if a.size == 0:
        raise EmptyBatchError(f"{name}: expected at least one value, got shape {a.shape}")


def check_purpose(purpose: Any) -> str:
    if not isinstance(purpose, str) or purpose not in PURPOSES:
        raise PurposeError(f"purpose: expected 'training' or 'predicting', got {purpose!r}")
    return purpose


def check_epsilon(epsilon: Any) -> float:
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.floating, np.integer)):
        raise EpsilonError(f"epsilon: expected a number greater than 0, got {epsilon!r}")
    value = float(epsilon)
    if not math.isfinite(value) or value <= 0.0:
        raise EpsilonError(f"epsilon: expected a finite number greater than 0, got {value!r}")
    return value


def check_momentum(momentum: Any) -> float:
    if isinstance(momentum, bool) or not isinstance(
        momentum, (int, float, np.floating, np.integer)
    ):
        raise MomentumError(f"momentum: expected a number in [0, 1), got {momentum!r}")
    value = float(momentum)
    if not (0.0 <= value < 1.0):
        raise MomentumError(f"momentum: expected a number in [0, 1), got {value!r}")
    return value


def check_rate(rate: Any) -> float:
    if isinstance(rate, bool) or not isinstance(rate, (int, float, np.floating, np.integer)):
        raise RateError(f"rate: expected a finite number, got {rate!r}")
    value = float(rate)
    if not math.isfinite(value):
        raise RateError(f"rate: expected a finite number, got {value!r}")
    return value


def check_finite_result(a: np.ndarray, what: str) -> np.ndarray:
    """Last guard against overflow inside the arithmetic: never hand back a silent NaN or inf."""
    if not np.isfinite(a).all():
        raise MagnitudeError(f"{what}: the arithmetic overflowed the {a.dtype} range")
    return a


def as_parameter(p: Any, name: str) -> np.ndarray:
    """A parameter array: float64 (or float32 if given), finite, copied so the layer owns it."""
    a = as_block(p, name)
    return np.array(a, copy=True)
