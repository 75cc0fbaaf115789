"""Input checks shared by every layer, each run before any arithmetic and raising a typed error;
and the two guarantees every public call keeps.

* **One guard on the arithmetic.** Every public call computes under numpy's error state of its
  own (`own_error_state`): an overflow, an invalid operation or a division by zero raises, and
  becomes a `MagnitudeError` naming the call; an underflow rounds towards zero. The input checks
  come first, because numpy does not raise on a NaN or an infinity it is handed.
* **Read-only values.** Every value normcore hands back (`Response`, `Gradient`, `Statistics`,
  `Standardised`, `Loss`) seals every array it holds, and every array in a dict it holds, in its
  own constructor (`Sealed`); every layer seals its parameters in its constructor
  (`as_parameter`). Read-only guards against accidents (a stray ``+=``, an array written while a
  layer still holds it): an array's ``.base`` can still be made writable on purpose.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
from collections.abc import Callable
from types import MappingProxyType
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

_F64 = np.dtype(np.float64)
_F32 = np.dtype(np.float32)
_NUMBER = (int, float, np.integer, np.floating)

F = TypeVar("F", bound=Callable[..., Any])


# -- the error state ------------------------------------------------------------------------------
#: numpy's error state inside every public call: an overflow, an invalid operation (inf - inf,
#: 0 * inf) or a division by zero raises, whatever the caller has set; an underflow (a tiny value
#: squared) rounds towards zero, as IEEE arithmetic does, and never raises
ERROR_STATE: dict[str, Any] = {
    "over": "raise",
    "invalid": "raise",
    "divide": "raise",
    "under": "ignore",
}


def own_error_state(call: F) -> F:
    """`call` run under `ERROR_STATE`, a floating-point error turned into a `MagnitudeError` that
    names the call ("BatchNorm.forward: expected results within the float range, got overflow
    encountered in multiply").

    Inputs are checked before any arithmetic (finite, and small enough that the statistics' sums
    of squares fit); this guard catches what only the arithmetic can reveal, such as a huge scale
    times a standardised value, or a step's ``rate * gradient``. ``guarded.__wrapped__`` is
    `call` itself, unguarded (``tests/test_overflow_bounds.py`` runs it with errors ignored as
    the reference the guard is held to).
    """
    method = "." in call.__qualname__
    raising = np.errstate(**ERROR_STATE)(call)  # numpy's decorator: the state around each call

    @functools.wraps(call)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            return raising(*args, **kwargs)
        except FloatingPointError as exc:
            owner = args[0] if method and args else None
            kind = owner if isinstance(owner, type) or owner is None else type(owner)
            name = call.__name__ if kind is None else f"{kind.__name__}.{call.__name__}"
            raise MagnitudeError(
                f"{name}: expected results within the float range, got {exc}"
            ) from exc

    return guarded  # type: ignore[return-value]


# -- read-only arrays -----------------------------------------------------------------------------
def frozen(a: Any) -> np.ndarray:
    """An owned, read-only copy of `a`, handed back as a view (which cannot be made writable)."""
    owner = np.array(a, copy=True)
    owner.setflags(write=False)
    return owner.view()


def _is_sealed(a: np.ndarray) -> bool:
    """Whether `a` is sealed as normcore seals: a read-only view of a read-only array that owns
    its memory (`sealed`, `frozen`, or a reshape of either), which no one writes by accident."""
    if a.flags.writeable:
        return False
    base = a.base
    return type(base) is np.ndarray and base.base is None and not base.flags.writeable


def seal_each(*values: Any) -> list[Any]:
    """Each of `values` with every array it holds read-only, in one call: an array that owns its
    memory made read-only in place (normcore's calls seal the arrays they have just computed)
    and handed back as a view, which cannot be made writable; an array already sealed as it is;
    any other array (a view of memory someone else may write) as a read-only copy; a dict (or a
    read-only mapping) as a read-only mapping of sealed values; anything else as it is (None, a
    layer, a value that sealed its own arrays)."""
    out = []
    for v in values:
        if type(v) is np.ndarray or isinstance(v, np.ndarray):
            base = v.base
            if base is None:
                v.setflags(False)  # type: ignore[call-arg]  # write=False; the keyword is slower
                v = v.view()
            elif not (  # sealed already (`_is_sealed`, written out: every layer call comes here)
                not v.flags.writeable
                and type(base) is np.ndarray
                and base.base is None
                and not base.flags.writeable
            ):
                v = frozen(v)
        elif isinstance(v, (dict, MappingProxyType)):
            v = MappingProxyType(dict(zip(v, seal_each(*v.values()), strict=True)))
        out.append(v)
    return out


def seal(value: Any) -> Any:
    """`value` with every array it holds read-only (`seal_each`)."""
    return seal_each(value)[0]


def read_only(a: np.ndarray) -> np.ndarray:
    """`a` itself when it is sealed already (another layer's output, a layer's parameter), else a
    read-only copy: for an array that may still be the caller's, which normcore never seals."""
    return a if _is_sealed(a) else frozen(a)


def _plain(value: Any) -> Any:
    """A field as it pickles: a read-only mapping becomes a dict."""
    return dict(value) if isinstance(value, MappingProxyType) else value


def _remade(cls: type, values: dict[str, Any]) -> Any:
    return cls(**values)


@functools.lru_cache(maxsize=64)
def field_names(cls: Any) -> tuple[str, ...]:
    """The names of the dataclass `cls`'s fields that its constructor takes, in order."""
    return tuple(f.name for f in dataclasses.fields(cls) if f.init)


#: field types that never hold an array (the rest are looked at by `Sealed`)
_PLAIN_TYPES = frozenset({"int", "bool", "float", "str", "Mode", "tuple[int, ...]"})


#: the fields of each value type that may hold an array (`_may_hold_arrays`), by type
_ARRAY_FIELDS: dict[type, tuple[str, ...]] = {}


def _may_hold_arrays(cls: type) -> tuple[str, ...]:
    """The fields of the dataclass `cls` that may hold an array or a dict: every field but those
    typed as a number, a flag, a string or a tuple of whole numbers (worked out once a type)."""
    names = _ARRAY_FIELDS.get(cls)
    if names is None:
        fields = dataclasses.fields(cls)
        names = tuple(f.name for f in fields if str(f.type) not in _PLAIN_TYPES)
        _ARRAY_FIELDS[cls] = names
    return names


class Remade:
    """Mixin of normcore's immutable values (layers, responses, gradients, statistics, losses):
    pickling or copying one (`pickle`, `copy.copy`, `copy.deepcopy`) makes it again through its
    constructor, which seals every array again and, for a layer, checks its fields again. (By
    default a dataclass comes back from pickle or `copy.deepcopy` holding writable arrays.)"""

    __slots__ = ()

    def __reduce__(self) -> tuple[Any, ...]:
        cls: Any = type(self)
        values = {name: _plain(getattr(self, name)) for name in field_names(cls)}
        return (_remade, (cls, values))


def successor(layer: Any, moved: dict[str, Any]) -> Any:
    """The layer a step makes: `layer` with the `moved` arrays in place of its own, every other
    field shared, without running the constructor's checks again. There is nothing left for them
    to find: every other field is the layer's own (checked when it was made), and every moved
    array is a step's result (finite, under `own_error_state`), sealed here. What the layer
    worked out about the shapes it read is shared too (a step changes no shape and no setting);
    its parameters lined up for a float type (``_lined_up``) are not. Only for layers whose
    other fields do not derive from the moved ones (a weight-normalised layer's unit directions
    do: its step runs the constructor). ``tests/test_layer_contract.py`` holds the successor
    equal to what ``dataclasses.replace(layer, **moved)`` makes, for every layer.
    """
    new = object.__new__(type(layer))
    fields = new.__dict__
    fields.update(layer.__dict__)
    fields.pop("_lined_up", None)
    fields.update(zip(moved, seal_each(*moved.values()), strict=True))
    return new


class Sealed(Remade):
    """Mixin of the values normcore's calls hand back (`Response`, `Gradient`, `Statistics`,
    `Standardised`, `Loss`, `OracleCheck`): the constructor seals every array field and every
    array in a dict field (the dict itself becomes a read-only mapping), so no one who makes one
    can forget.

    An array the value is given that owns its memory is made read-only in place (normcore's
    calls hand over arrays they have just computed, so nothing is copied) and kept as a view,
    which cannot be made writable; an array that views memory someone else may write is copied
    first.

    The values every layer call makes (`Standardised`, `Statistics`, `Response`, `Gradient`)
    write their own constructor, which seals the fields that may hold an array in one call
    (`seal_each`) and sets the fields straight into the instance's ``__dict__`` (the README
    says why). The others keep the generated constructor, which calls `__post_init__` below: it
    seals every field not typed as a number, a flag, a string or a tuple of whole numbers.
    """

    __slots__ = ()

    def __post_init__(self) -> None:
        state = self.__dict__  # the fields, just set by the constructor
        for name in _may_hold_arrays(type(self)):
            state[name] = seal(state[name])


# -- numbers and sizes ----------------------------------------------------------------------------
def statistic_count(shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    """How many values each statistic of an input shaped `shape` is read from, along `axes`."""
    n = 1
    for a in axes:
        n *= shape[a]
    return n


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


def is_whole(value: Any) -> bool:
    """Whether `value` is a whole number: a Python or numpy integer, not a bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def whole_number(
    value: Any,
    name: str,
    error: type[NormcoreError] = ShapeError,
    smallest: int = 1,
    largest: int | None = None,
    wanted: str | None = None,
) -> int:
    """`value` as an int from `smallest` to `largest` (a Python or numpy integer, not a bool, a
    float or a string), refused with `error` otherwise; `wanted` words the expectation when the
    bounds alone do not."""
    if not is_whole(value) or value < smallest or (largest is not None and value > largest):
        if wanted is None:
            wanted = f">= {smallest}" if largest is None else f"from {smallest} to {largest}"
        raise error(f"{name}: expected a whole number {wanted}, got {value!r}")
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

#: the most bytes an input handed to a layer may take: an eighth of this machine's memory
INPUT_BYTES = MEMORY // 8


def check_size(shape: tuple[int, ...], name: str, itemsize: int = 8) -> tuple[int, ...]:
    """Refuse (ShapeError), before allocating, a shape whose array would not fit in memory."""
    nbytes = math.prod(shape) * itemsize
    if nbytes > MEMORY:
        raise ShapeError(
            f"{name}: expected an array that fits in this machine's {MEMORY / 2**30:.3g} GiB, "
            f"got shape {shape} ({nbytes / 2**30:.3g} GiB)"
        )
    return shape


# -- inputs ---------------------------------------------------------------------------------------
def _all_finite(a: np.ndarray) -> bool:
    """True when every entry of the float array `a` is finite, read entry by entry."""
    return bool(np.logical_and.reduce(np.isfinite(a), axis=None))


def check_input_size(shape: tuple[int, ...], name: str, itemsize: int = 8) -> None:
    """Refuse (ShapeError), before anything is allocated, an input that would take more than
    `INPUT_BYTES` (an eighth of this machine's memory): a layer's arithmetic makes several arrays
    of its input's size, so a larger one (a broadcast view of 2·10⁹ values, say) could not be
    processed."""
    nbytes = math.prod(shape) * itemsize
    if nbytes > INPUT_BYTES:
        raise ShapeError(
            f"{name}: expected an array of at most {INPUT_BYTES / 2**30:.3g} GiB (an eighth of "
            f"this machine's memory), got shape {shape} ({nbytes / 2**30:.3g} GiB)"
        )


def as_input(x: Any, name: str = "x", finite: bool = True) -> np.ndarray:
    """Return `x` as a float32 or float64 array without touching the caller's array.

    Integers become float64; float16 becomes float32; bool, complex, object and text are refused.
    An input larger than `INPUT_BYTES` (an eighth of this machine's memory, counted in the float
    type it becomes) is refused (ShapeError) before anything is allocated. NaN and infinity are
    refused, unless ``finite=False`` leaves that to a later `check_values` or
    `check_magnitudes` (which read the input once for both finiteness and magnitude). The result
    may share memory with `x`: callers never write to it, and a value that keeps it seals it (a
    copy, when it is the caller's).
    """
    if type(x) is np.ndarray and (x.dtype == _F64 or x.dtype == _F32):
        a = x  # the common case: already a float64 or float32 array, nothing to convert
        if a.nbytes > INPUT_BYTES:
            check_input_size(a.shape, name, a.itemsize)
    else:
        try:
            a = np.asarray(x)
        except (ValueError, TypeError, OverflowError) as exc:  # ragged lists, 10**400, ...
            raise ShapeError(
                f"{name}: expected a rectangular array of numbers, got {exc}"
            ) from None
        kind = a.dtype.kind
        if kind == "f" and a.dtype in (_F32, np.float16):
            check_input_size(a.shape, name, 4)
        elif kind in "iuf":
            check_input_size(a.shape, name, 8)
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
    if finite and not _all_finite(a):
        _refuse_non_finite(a, name)
    return a


def _refuse_non_finite(a: np.ndarray, name: str) -> None:
    bad = int(np.size(a) - np.count_nonzero(np.isfinite(a)))
    raise NonFiniteError(f"{name}: expected finite values, got {bad} NaN or infinite entries")


def check_values(a: np.ndarray, count: int, name: str = "x") -> None:
    """Refuse NaN, infinity and magnitudes whose squares, summed `count` at a time, would overflow
    (`check_magnitudes` with the limit for `count`)."""
    check_magnitudes(a, magnitude_limit(a.dtype, count), count, name)


def check_magnitudes(a: np.ndarray, limit: float, count: int, name: str = "x") -> None:
    """Refuse NaN, infinity (NonFiniteError) and magnitudes above `limit` (MagnitudeError, which
    says the limit is for statistics over `count` values).

    The array is read once, by one BLAS dot product of the array with itself (`np.vdot`, which
    numpy's error state does not watch): a NaN or an infinity makes the sum of squares
    non-finite, and a finite sum of squares bounds every magnitude (``|a_i| <= sqrt(sum a**2)``).
    Only an array that fails that quick test is read again for its smallest and largest values,
    which decide the error.
    """
    if a.size == 0 or math.sqrt(np.vdot(a, a)) <= limit:  # False for NaN and inf
        return
    lo, hi = float(np.min(a)), float(np.max(a))
    if not (math.isfinite(lo) and math.isfinite(hi)):  # both reductions carry a NaN through
        _refuse_non_finite(a, name)
    largest = max(-lo, hi)
    if largest > limit:
        raise MagnitudeError(
            f"{name}: expected magnitudes up to {limit:.3g} for {a.dtype} statistics over "
            f"{count} values, got {largest:.3g}"
        )


@functools.lru_cache(maxsize=256)
def magnitude_limit(dtype: np.dtype, count: int) -> float:
    """The largest magnitude whose square, summed `count` times (and then some: a factor 8 of
    room), stays within the float type `dtype`: ``sqrt(largest / (8 count))``."""
    return math.sqrt(float(np.finfo(dtype).max) / (8.0 * max(count, 1)))


def smallest(a: np.ndarray) -> float:
    """The smallest value of `a` (infinity when `a` is empty)."""
    return float(np.minimum.reduce(a, axis=None, initial=np.inf))


def largest_magnitude(*arrays: np.ndarray) -> float:
    """The largest magnitude in any of `arrays` (finite float arrays), as a float; 0.0 when they
    hold no value."""
    return max((float(np.max(np.abs(a))) for a in arrays if a.size), default=0.0)


# -- shapes and settings ---------------------------------------------------------------------
def check_rank(a: np.ndarray, rank: int, name: str, meaning: str) -> None:
    if a.ndim != rank:
        raise ShapeError(f"{name}: expected rank {rank} ({meaning}), got shape {a.shape}")


def check_nchw(x: np.ndarray, channels: int, name: str = "x") -> None:
    """Refuse (ShapeError) anything but images (images, `channels`, height, width)."""
    check_rank(x, 4, name, "(images, channels, height, width)")
    if x.shape[1] != channels:
        raise ShapeError(
            f"{name}: expected shape (images, {channels}, height, width), got {x.shape}"
        )


def check_not_empty(a: np.ndarray, name: str) -> None:
    if a.size == 0:
        raise EmptyBatchError(f"{name}: expected at least one value, got shape {a.shape}")


# -- settings -------------------------------------------------------------------------------------
def check_epsilon(eps: Any) -> float:
    """A finite number greater than 0 (its range for a float32 input is checked per input)."""
    value = number(eps, "eps", EpsilonError, "a finite number greater than 0")
    if value <= 0.0:
        raise EpsilonError(f"eps: expected a finite number greater than 0, got {value!r}")
    return value


def check_epsilon_fits(eps: float, dtype: np.dtype) -> None:
    """Refuse, before any arithmetic, an epsilon that the input's float type cannot hold: below
    its smallest positive value it would round to 0 (and a constant stretch divide by zero);
    above its largest it would become infinity."""
    low, high = _float_range(dtype)
    if not low <= eps <= high:
        raise EpsilonError(
            f"eps: expected a value from {low:.3g} to {high:.3g} for a {dtype} input, got {eps!r}"
        )


@functools.lru_cache(maxsize=8)
def _float_range(dtype: np.dtype) -> tuple[float, float]:
    info = np.finfo(dtype)
    return float(info.smallest_subnormal), float(info.max)


def check_momentum(momentum: Any) -> float:
    value = number(momentum, "momentum", MomentumError, "a number in [0, 1)")
    if not (0.0 <= value < 1.0):
        raise MomentumError(f"momentum: expected a number in [0, 1), got {value!r}")
    return value


def check_rate(rate: Any) -> Any:
    """The learning rate: a finite number (RateError otherwise), or an array of finite numbers,
    one per independent model on the parameters' leading axes (its shape those axes: `rate_for`
    checks that)."""
    if type(rate) is float and math.isfinite(rate):  # the common case, as `number` returns it
        return rate
    if isinstance(rate, np.ndarray) and rate.ndim:
        if rate.dtype.kind not in "iuf" or not _all_finite(rate):
            raise RateError(
                f"rate: expected finite numbers, one per model on the leading axes, got {rate!r}"
            )
        return rate
    return number(rate, "rate", RateError, "a finite number")


def rate_for(rate: Any, p: np.ndarray, name: str) -> Any:
    """`rate` as it multiplies the gradient of the parameter `p` (named `name`): a number as it
    is; one rate per independent model, lined up with p's leading axes (RateError when they are not
    the rates' shape)."""
    if not isinstance(rate, np.ndarray):
        return rate
    if p.shape[: rate.ndim] != rate.shape:
        raise RateError(
            f"rate: expected one per model on the leading axes of {name}, shape "
            f"{p.shape[: rate.ndim]}, got shape {rate.shape}"
        )
    return rate.reshape(rate.shape + (1,) * (p.ndim - rate.ndim))


def fits(p: np.ndarray, dtype: np.dtype, name: str) -> np.ndarray:
    """The parameter `p` in the input's `dtype`; MagnitudeError (before any cast) when one of its
    values lies beyond that type's range (a float64 parameter on a float32 input)."""
    if p.dtype == dtype:
        return p
    top, largest = float(np.finfo(dtype).max), largest_magnitude(p)
    if largest > top:
        raise MagnitudeError(
            f"{name}: expected values within the {dtype} range of the input (up to {top:.3g}), "
            f"got {largest:.3g}"
        )
    return p.astype(dtype)


def as_parameter(p: Any, name: str) -> np.ndarray:
    """A layer's parameter array, as its constructor keeps it: float64 (or float32 if given),
    finite (NonFiniteError otherwise, read-only arrays included), read-only.

    An array sealed by normcore (`sealed`) is shared as it is; anything else is copied, so the
    caller's array stays the caller's.
    """
    a = as_input(p, name)
    return a if _is_sealed(a) else frozen(a)
