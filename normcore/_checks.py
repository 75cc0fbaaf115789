"""Input checks shared by every layer: each runs before any arithmetic and raises a typed error."""

from __future__ import annotations

import dataclasses
import functools
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

_F64 = np.dtype(np.float64)
_F32 = np.dtype(np.float32)
_AND = np.logical_and.reduce
_LARGEST = np.maximum.reduce
_SMALLEST = np.minimum.reduce

TRAINING = "training"
PREDICTING = "predicting"
PURPOSES = (TRAINING, PREDICTING)


#: from this many values on, `all_finite` tries one BLAS dot product before the exact test
_QUICK_FROM = 1 << 16


def _sum_of_squares(a: np.ndarray) -> float:
    """sum(a ** 2) of a C-contiguous float block, read once by BLAS: NaN or inf when an entry is
    not finite (squares cannot cancel one) or when the sum overflows, and no warning either way."""
    flat = a.reshape(-1)
    with np.errstate(over="ignore", invalid="ignore"):
        return float(np.dot(flat, flat))


def all_finite(a: np.ndarray) -> bool:
    """True when every entry of the float array `a` is finite.

    A large contiguous block is first read once by a BLAS dot product of itself: a finite sum of
    squares means every entry is finite (squares cannot cancel an infinity or a NaN). Only when
    that sum is not finite (an entry is, or the sum overflowed) is the block tested entry by
    entry. Measured here on 4096 x 1024: 0.20 ms against 0.33 ms in float32, 0.48 against 1.1
    ms in float64; below 64 Ki values the plain test is quicker.
    """
    quick = a.size >= _QUICK_FROM and a.flags.c_contiguous and a.dtype in (_F32, _F64)
    if quick and math.isfinite(_sum_of_squares(a)):
        return True
    return bool(_AND(np.isfinite(a), axis=None))


def as_block(x: Any, name: str = "block", finite: bool = True) -> np.ndarray:
    """Return `x` as a float32 or float64 array without touching the caller's array.

    Integers become float64; float16 becomes float32; bool, complex, object and text are refused.
    NaN and infinity are refused, unless ``finite=False`` leaves that to a later `check_values`
    (which reads the block once for both finiteness and magnitude). The result may share memory
    with `x`: callers never write to it.
    """
    if type(x) is np.ndarray and (x.dtype == _F64 or x.dtype == _F32):
        a = x  # the common case: already a float64 or float32 array, nothing to convert
    else:
        try:
            a = np.asarray(x)
        except (ValueError, TypeError) as exc:  # ragged nested lists and the like
            raise ShapeError(
                f"{name}: expected a rectangular block of numbers, got {exc}"
            ) from None
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
    if finite and not all_finite(a):
        _refuse_non_finite(a, name)
    return a


def _refuse_non_finite(a: np.ndarray, name: str) -> None:
    bad = int(np.size(a) - np.count_nonzero(np.isfinite(a)))
    raise NonFiniteError(f"{name}: expected finite values, got {bad} NaN or infinite entries")


def check_values(a: np.ndarray, count: int, name: str = "block") -> float:
    """Refuse NaN, infinity and magnitudes whose squares, summed `count` at a time, would overflow.

    Returns a bound on the block's largest magnitude, which callers use to bound their answers.
    A contiguous block is read once, by one BLAS dot product of the block with itself: a NaN or
    an infinity makes the sum of squares non-finite, and a finite sum of squares bounds every
    magnitude (``|a_i| <= sqrt(sum a**2)``). Only a block that fails that quick test, or is not
    contiguous, is read again for its exact smallest and largest values, which decide the error.
    """
    if a.size == 0:
        return 0.0
    limit = _magnitude_limit(a.dtype, max(count, 1))
    if a.flags.c_contiguous:
        root = math.sqrt(_sum_of_squares(a))
        if root <= limit:  # False for NaN and inf too
            return root
    lo, hi = float(_SMALLEST(a, axis=None)), float(_LARGEST(a, axis=None))
    if not (math.isfinite(lo) and math.isfinite(hi)):  # both reductions carry a NaN through
        _refuse_non_finite(a, name)
    largest = max(-lo, hi)
    if largest > limit:
        raise MagnitudeError(
            f"{name}: expected magnitudes up to {limit:.3g} for {a.dtype} statistics over "
            f"{count} values, got {largest:.3g}"
        )
    return largest


@functools.lru_cache(maxsize=256)
def _magnitude_limit(dtype: np.dtype, count: int) -> float:
    return math.sqrt(float(np.finfo(dtype).max) / (8.0 * count))


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
    if not all_finite(a):
        raise MagnitudeError(f"{what}: the arithmetic overflowed the {a.dtype} range")
    return a


def as_parameter(p: Any, name: str) -> np.ndarray:
    """A parameter array: float64 (or float32 if given), finite, copied so the layer owns it."""
    a = as_block(p, name)
    return np.array(a, copy=True)


@functools.lru_cache(maxsize=64)
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


def renewed(layer: Any, changes: dict[str, np.ndarray]) -> Any:
    """A copy of the frozen dataclass `layer` with `changes` applied, for `step`.

    A step's new parameters come out of the layer's own checked arithmetic: finite (the caller
    has checked), freshly allocated and of the old shapes and dtypes. Re-running the
    constructor's validation on them would repeat work already done, so this copies the fields
    directly. Any change whose shape differs from the old value's goes through the full
    constructor (``dataclasses.replace``) instead, and is refused or accepted there as before.
    """
    values = layer.__dict__
    for key, value in changes.items():
        if value.shape != values[key].shape:
            return dataclasses.replace(layer, **changes)
    new = object.__new__(type(layer))
    state = new.__dict__
    for key in _field_names(type(layer)):
        state[key] = changes[key] if key in changes else values[key]
    return new
