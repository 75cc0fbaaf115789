"""Input checks shared by every layer: each runs before any arithmetic and raises a typed error.

Also the two guarantees every public call keeps: it computes under numpy's error state of its own
(`own_error_state`), never the caller's, and the arrays it keeps or hands back are read-only
(`frozen`, `sealed`), so a layer value cannot change after it is made.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import weakref
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, TypeVar

import numpy as np

from .errors import (
    DtypeError,
    EmptyBatchError,
    EpsilonError,
    MagnitudeError,
    MomentumError,
    NonFiniteError,
    NormcoreError,
    RateError,
    ShapeError,
)
from .purpose import PREDICTING, PURPOSES, TRAINING, check_purpose

__all__ = ["PREDICTING", "PURPOSES", "TRAINING", "check_purpose"]  # re-exported for old imports

_F64 = np.dtype(np.float64)
_F32 = np.dtype(np.float32)
_AND = np.logical_and.reduce
_LARGEST = np.maximum.reduce
_SMALLEST = np.minimum.reduce
_NUMBER = (int, float, np.integer, np.floating)

#: from this many values on, `all_finite` tries one BLAS dot product before the exact test
_QUICK_FROM = 256

F = TypeVar("F", bound=Callable[..., Any])

#: True while a call made through `own_error_state` runs (numpy's errors are ignored there)
_OWN_STATE: ContextVar[bool] = ContextVar("normcore_own_error_state", default=False)

#: the answers layers handed back (`handed_out`), by id: read-only views of arrays only normcore
#: holds, which `kept` keeps as they are
_HANDED_OUT: weakref.WeakValueDictionary[int, np.ndarray] = weakref.WeakValueDictionary()


# -- the error state and read-only arrays ---------------------------------------------------------
def own_error_state(call: F) -> F:
    """Run `call` with numpy's floating-point errors ignored, whatever the caller has set.

    Every result that could overflow is checked afterwards (`check_finite_result` and the typed
    refusals before it), so an ignored overflow never reaches the caller silently; and a benign
    underflow (a tiny value squared) never raises because the caller asked
    ``np.seterr(all="raise")``. While `call` runs, `_OWN_STATE` says so, and the checks' dot
    products (`_sum_of_squares`) skip an error-state context of their own.
    """

    @functools.wraps(call)
    def quiet(*args: Any, **kwargs: Any) -> Any:
        with np.errstate(all="ignore"):
            inside = _OWN_STATE.set(True)
            try:
                return call(*args, **kwargs)
            finally:
                _OWN_STATE.reset(inside)

    return quiet  # type: ignore[return-value]


def sealed(a: np.ndarray) -> np.ndarray:
    """`a` (an array normcore made and owns) as a read-only view that cannot be made writable."""
    if a.flags.owndata:
        a.setflags(write=False)
        return a.view()
    if a.flags.writeable:  # a view of something else: take a copy we own
        return frozen(a)
    return a


def sealed_as(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """`sealed(a)` reshaped to `shape`: `a` is sealed first and then reshaped, so that a reshape
    of a freshly computed array is a read-only view of it rather than a copy (a reshape that
    must copy is sealed in its turn)."""
    view = sealed(a).reshape(shape)
    return sealed(view) if view.flags.writeable else view


def handed_out(a: np.ndarray, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """A layer's freshly computed answer `a` as the layer hands it back: sealed (reshaped to
    `shape` when given, as `sealed_as`) and remembered as a block whose memory only normcore
    holds, so that a layer reading it as its input keeps it as it is instead of copying it
    (`kept`). An `a` that is already a read-only view of another array is not remembered."""
    if not (a.flags.owndata or a.flags.writeable):
        return a if shape is None else sealed_as(a, shape)
    answer = sealed(a) if shape is None else sealed_as(a, shape)
    _HANDED_OUT[id(answer)] = answer
    return answer


def frozen(a: Any) -> np.ndarray:
    """An owned, read-only copy of `a` that cannot be made writable again."""
    owner = np.array(a, copy=True)
    owner.setflags(write=False)
    return owner.view()


def _remade(cls: type, values: dict[str, Any]) -> Any:
    """`cls(**values)` with every array among `values` (or in a dict among them) sealed first."""

    def seal(value: Any) -> Any:
        if isinstance(value, np.ndarray):
            return frozen(value)
        if isinstance(value, dict):
            return {key: seal(v) for key, v in value.items()}
        return value

    return cls(**{name: seal(value) for name, value in values.items()})


class Remade:
    """Mixin of normcore's immutable values (layers, responses, gradients, statistics, losses):
    pickling or copying one (`pickle`, `copy.copy`, `copy.deepcopy`) makes it again through its
    constructor from its fields, every array sealed, so the copy is as read-only as the original
    and a layer's constructor checks its fields again. (By default a dataclass comes back from
    pickle or `copy.deepcopy` holding writable arrays.)"""

    __slots__ = ()

    def __reduce__(self) -> tuple[Any, ...]:
        cls = type(self)
        return (_remade, (cls, {name: getattr(self, name) for name in _field_names(cls)}))


# -- numbers and sizes ----------------------------------------------------------------------------
def number(value: Any, name: str, error: type[NormcoreError], wanted: str) -> float:
    """`value` as a float: a real number (not a bool), finite, refused with `error` otherwise.

    Python integers too large for a float (``10**400``) are refused, not an OverflowError.
    """
    if isinstance(value, bool) or not isinstance(value, _NUMBER):
        raise error(f"{name}: expected {wanted}, got {value!r}")
    try:
        result = float(value)
    except OverflowError:
        raise error(
            f"{name}: expected {wanted}, got an integer of {len(str(value))} digits"
        ) from None
    if not math.isfinite(result):
        raise error(f"{name}: expected {wanted}, got {result!r}")
    return result


def whole_number(value: Any, name: str, error: type[NormcoreError] = ShapeError) -> int:
    """`value` as an int >= 1 (a Python or numpy integer, not a bool, not a float or a string)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise error(f"{name}: expected a whole number >= 1, got {value!r}")
    return int(value)


def whole_numbers(values: Any, name: str) -> tuple[int, ...]:
    """A tuple of whole numbers >= 1 from a tuple or list of them (a string is refused)."""
    if not isinstance(values, (tuple, list)):
        raise ShapeError(f"{name}: expected a tuple of whole numbers >= 1, got {values!r}")
    return tuple(whole_number(v, name) for v in values)


def _memory_bytes() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # not a POSIX system: a terabyte
        return 1 << 40


#: the most bytes one array normcore makes may take: this machine's memory
MEMORY = _memory_bytes()


def check_size(shape: tuple[int, ...], name: str, itemsize: int = 8) -> tuple[int, ...]:
    """Refuse (ShapeError), before allocating, a shape whose array would not fit in memory."""
    nbytes = math.prod(shape) * itemsize
    if nbytes > MEMORY:
        raise ShapeError(
            f"{name}: expected an array that fits in this machine's {MEMORY / 2**30:.3g} GiB, "
            f"got shape {shape} ({nbytes / 2**30:.3g} GiB)"
        )
    return shape


# -- blocks ---------------------------------------------------------------------------------------
def _sum_of_squares(a: np.ndarray) -> float:
    """sum(a ** 2) of a C-contiguous float block, read once by BLAS: NaN or inf when an entry is
    not finite (squares cannot cancel one) or when the sum overflows, and no warning either way.

    Inside a call made through `own_error_state` numpy's errors are already ignored, so the dot
    runs as it is; should code called back from there have asked numpy to raise, a raised
    overflow (or underflow) counts as a sum that is not finite, which sends every caller to its
    exact test. Elsewhere the dot runs under an error-state context of its own."""
    flat = a.reshape(-1)
    if _OWN_STATE.get():
        try:
            return float(np.dot(flat, flat))
        except FloatingPointError:
            return math.inf
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        return float(np.dot(flat, flat))


def all_finite(a: np.ndarray) -> bool:
    """True when every entry of the float array `a` is finite.

    A contiguous block of 256 values or more is first read once by a BLAS dot product of itself:
    a finite sum of squares means every entry is finite (squares cannot cancel an infinity or a
    NaN). Only when that sum is not finite (an entry is, or the sum overflowed) is the block
    tested entry by entry. Below 256 values the plain test is as quick.
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
    with `x`: callers never write to it, and a layer that keeps it for its backward pass keeps
    an owned copy (`kept`).
    """
    if type(x) is np.ndarray and (x.dtype == _F64 or x.dtype == _F32):
        a = x  # the common case: already a float64 or float32 array, nothing to convert
    else:
        try:
            a = np.asarray(x)
        except (ValueError, TypeError, OverflowError) as exc:  # ragged lists, 10**400, ...
            raise ShapeError(
                f"{name}: expected a rectangular block of numbers, got {exc}"
            ) from None
        kind = a.dtype.kind
        if kind in "iu":
            a = a.astype(np.float64)
        elif kind == "f":
            if a.dtype == np.float16:
                a = a.astype(np.float32)
            elif a.dtype not in (_F32, _F64):
                a = a.astype(np.float64)
        else:
            raise DtypeError(
                f"{name}: expected real numbers (float or integer), got dtype {a.dtype}"
            )
    if finite and not all_finite(a):
        _refuse_non_finite(a, name)
    return a


def kept(x: np.ndarray, given: Any) -> np.ndarray:
    """The block `x` (from `as_block(given)`) as a read-only array a response may keep, that no
    one can change: `x` itself when it is a layer's answer (`handed_out`: read-only, its memory
    normcore's alone); a copy when it is still the caller's array; `x` sealed when `as_block`
    already copied it."""
    if _HANDED_OUT.get(id(x)) is x:
        return x
    if isinstance(given, np.ndarray) and np.may_share_memory(x, given):
        return frozen(x)
    return sealed(x)


def _refuse_non_finite(a: np.ndarray, name: str) -> None:
    bad = int(np.size(a) - np.count_nonzero(np.isfinite(a)))
    raise NonFiniteError(f"{name}: expected finite values, got {bad} NaN or infinite entries")


def check_values(a: np.ndarray, count: int, name: str = "block") -> float:
    """Refuse NaN, infinity and magnitudes whose squares, summed `count` at a time, would overflow.

    Returns a bound on the block's largest magnitude. A contiguous block is read once, by one
    BLAS dot product of the block with itself: a NaN or an infinity makes the sum of squares
    non-finite, and a finite sum of squares bounds every magnitude (``|a_i| <= sqrt(sum a**2)``).
    Only a block that fails that quick test, or is not contiguous, is read again for its exact
    smallest and largest values, which decide the error.
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


# -- settings -------------------------------------------------------------------------------------
def check_epsilon(epsilon: Any) -> float:
    """A finite number greater than 0 (its range for a float32 block is checked per block)."""
    value = number(epsilon, "epsilon", EpsilonError, "a finite number greater than 0")
    if value <= 0.0:
        raise EpsilonError(f"epsilon: expected a finite number greater than 0, got {value!r}")
    return value


def check_epsilon_fits(epsilon: float, dtype: np.dtype) -> None:
    """Refuse, before any arithmetic, an epsilon that the block's float type cannot hold: below
    its smallest positive value it would round to 0 (and a constant stretch divide by zero);
    above its largest it would become infinity."""
    info = np.finfo(dtype)
    low, high = float(info.smallest_subnormal), float(info.max)
    if not low <= epsilon <= high:
        raise EpsilonError(
            f"epsilon: expected a value from {low:.3g} to {high:.3g} for a {dtype} block, "
            f"got {epsilon!r}"
        )


def check_momentum(momentum: Any) -> float:
    value = number(momentum, "momentum", MomentumError, "a number in [0, 1)")
    if not (0.0 <= value < 1.0):
        raise MomentumError(f"momentum: expected a number in [0, 1), got {value!r}")
    return value


def check_rate(rate: Any) -> float:
    return number(rate, "rate", RateError, "a finite number")


def fits(p: np.ndarray, dtype: np.dtype, name: str) -> np.ndarray:
    """The parameter `p` in the block's `dtype`; MagnitudeError (before any cast) when one of its
    values lies beyond that type's range (a float64 parameter on a float32 block)."""
    if p.dtype == dtype:
        return p
    top = float(np.finfo(dtype).max)
    if p.size and float(_LARGEST(np.abs(p), axis=None)) > top:
        raise MagnitudeError(
            f"{name}: expected values within the {dtype} range of the block (up to {top:.3g}), "
            f"got {float(_LARGEST(np.abs(p), axis=None)):.3g}"
        )
    return p.astype(dtype)


def check_finite_result(a: np.ndarray, what: str) -> np.ndarray:
    """Last guard against overflow inside the arithmetic: never hand back a silent NaN or inf."""
    if not all_finite(a):
        raise MagnitudeError(
            f"{what}: expected results within the {a.dtype} range, got an overflow in the "
            "arithmetic"
        )
    return a


def as_parameter(p: Any, name: str) -> np.ndarray:
    """A parameter array: float64 (or float32 if given), finite, an owned read-only copy."""
    return frozen(as_block(p, name))


@functools.lru_cache(maxsize=64)
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls) if f.init)


def renewed(layer: Any, changes: dict[str, np.ndarray]) -> Any:
    """A copy of the frozen dataclass `layer` with `changes` applied, for `step`.

    A step's new parameters come out of the layer's own checked arithmetic: finite, freshly
    allocated and of the old shapes and dtypes, so they are sealed and placed without re-running
    the constructor's checks; every unchanged array is copied, so the new layer shares no array
    with the old one. A change whose shape differs from the old value's goes through the full
    constructor (``dataclasses.replace``) instead, and is refused or accepted there as before.
    """
    values = layer.__dict__
    for key, value in changes.items():
        if value.shape != values[key].shape:
            return dataclasses.replace(layer, **changes)
    new = object.__new__(type(layer))
    state = new.__dict__
    for key in _field_names(type(layer)):
        value = values[key]
        if key in changes:
            state[key] = sealed(changes[key])
        elif isinstance(value, np.ndarray):
            state[key] = frozen(value)
        else:
            state[key] = value
    return new
