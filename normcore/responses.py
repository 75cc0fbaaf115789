"""What a layer hands back: a `Response` from `forward` (a normaliser's carries a `Standardised`),
a `Gradient` from `backward`, a batch's `Statistics`; the checks a layer makes of them before it
uses one (hand-made ones included); and the one parameter step every layer takes
(`moved_parameters`).

The values write their own constructors, each field sealed by name and set straight into the
instance's ``__dict__`` (the README says why)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ._checks import Sealed, as_input, check_rate, fits, rate_for, seal_each, smallest
from .errors import ForeignResponseError, SettingError, ShapeError
from .mode import Mode


@dataclass(frozen=True, eq=False, init=False)
class Standardised(Sealed):
    """An input standardised along `axes`, with what the backward pass needs
    (`normcore.standardise`).

    `mean`, `variance` and `divisor` keep the reduced axes (size 1) so they broadcast against
    the input. `mean` is None when the input was not centred (RMS); `variance` is then the mean
    square. `from_input` is False when the statistics were handed in (the running statistics of
    evaluation mode): those are constants, so the backward pass is a plain division. Every array
    is read-only (sealed by the constructor).
    """

    z: np.ndarray
    mean: np.ndarray | None
    variance: np.ndarray | None
    divisor: np.ndarray
    axes: tuple[int, ...]
    count: int
    from_input: bool

    def __init__(
        self,
        z: np.ndarray,
        mean: np.ndarray | None,
        variance: np.ndarray | None,
        divisor: np.ndarray,
        axes: tuple[int, ...],
        count: int,
        from_input: bool,
    ) -> None:
        fields = self.__dict__
        fields["z"], fields["mean"], fields["variance"], fields["divisor"] = seal_each(
            z, mean, variance, divisor
        )
        fields["axes"] = axes
        fields["count"] = count
        fields["from_input"] = from_input


@dataclass(frozen=True, eq=False, init=False)
class Statistics(Sealed):
    """A batch's own statistics, per feature (or channel): mean, biased variance, divisor.

    Shapes match the layer's running statistics. Carried on a training response and on its gradient,
    so that `step` can update the running statistics with them. Every array is read-only (sealed by
    the constructor).
    """

    mean: np.ndarray
    variance: np.ndarray
    divisor: np.ndarray

    def __init__(self, mean: np.ndarray, variance: np.ndarray, divisor: np.ndarray) -> None:
        fields = self.__dict__
        fields["mean"], fields["variance"], fields["divisor"] = seal_each(mean, variance, divisor)


@dataclass(frozen=True, eq=False, init=False)
class Response(Sealed):
    """What one forward pass returns.

    `output` is the layer's output; `layer` is the layer that computed it (backward
    refuses a response from any other); `mode` is 'train' or 'eval'; `input` is the
    input read, kept by the layers whose backward pass needs it (dense layers), else None;
    `statistics` holds the batch's statistics when a batch-statistics layer trained, else None;
    `parts` are the responses of the layers inside a `Sequential`, in order; `cache` is what the
    backward pass needs (a `Standardised` for the normalisers) and is not part of the public
    contract. Every array is read-only (sealed by the constructor: an array that views someone
    else's memory, such as the caller's input, is copied first).
    """

    output: np.ndarray
    layer: Any
    mode: Mode
    input: np.ndarray | None = None
    cache: Any = None
    statistics: Statistics | None = None
    parts: tuple[Response, ...] = ()

    def __init__(
        self,
        output: np.ndarray,
        layer: Any,
        mode: Mode,
        input: np.ndarray | None = None,
        cache: Any = None,
        statistics: Statistics | None = None,
        parts: tuple[Response, ...] = (),
    ) -> None:
        fields = self.__dict__
        fields["output"], fields["input"], fields["cache"] = seal_each(output, input, cache)
        fields["layer"] = layer
        fields["mode"] = mode
        fields["statistics"] = statistics
        fields["parts"] = parts


@dataclass(frozen=True, eq=False, init=False)
class Gradient(Sealed):
    """What one backward pass returns.

    `grad_input` is the gradient handed to the layer below (shape of the layer's input); `grads`
    maps each parameter's name to its gradient (same shape as the parameter); `statistics` repeats
    the batch's statistics from the response, for `step`; `parts` are the gradients of the layers
    inside a `Sequential`, in order. Every array is read-only and `grads` is a read-only mapping
    (sealed by the constructor).

    `step` checks a gradient's entries and statistics before it uses them, unless the layer's own
    `backward` made the gradient (`made_by_backward`): those came out of its guarded arithmetic
    and cannot have changed since. A gradient made by hand, by ``dataclasses.replace`` or by a
    copy is checked.
    """

    grad_input: np.ndarray
    layer: Any
    grads: dict[str, np.ndarray] = field(default_factory=dict)
    statistics: Statistics | None = None
    parts: tuple[Gradient, ...] = ()

    def __init__(
        self,
        grad_input: np.ndarray,
        layer: Any,
        grads: dict[str, np.ndarray] | None = None,
        statistics: Statistics | None = None,
        parts: tuple[Gradient, ...] = (),
    ) -> None:
        fields = self.__dict__
        fields["grad_input"], fields["grads"] = seal_each(
            grad_input, {} if grads is None else grads
        )
        fields["layer"] = layer
        fields["statistics"] = statistics
        fields["parts"] = parts

    #: True when this gradient is the one its layer's `backward` handed back (`answered`)
    made_by_backward: ClassVar[bool] = False


def answered(gradient: Gradient) -> Gradient:
    """`gradient`, marked as the one a layer's `backward` made (so `step` takes its gradients as
    they are: they came out of the layer's own guarded arithmetic)."""
    gradient.__dict__["made_by_backward"] = True
    return gradient


_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _foreign(what: str, got: str) -> ForeignResponseError:
    return ForeignResponseError(f"{what}: expected {got}")


def check_response(layer: Any, response: Any) -> Response:
    """`response` when it is a Response of `layer`'s own forward pass, with a float output;
    ForeignResponseError otherwise (a response of another layer, or one put together by hand
    that lacks what backward reads)."""
    if not isinstance(response, Response):
        raise _foreign(
            "response", f"the Response of this layer's forward pass, got {type(response).__name__}"
        )
    if response.layer is not layer:
        raise ForeignResponseError(
            f"response: expected a response from this {type(layer).__name__}, got one from "
            f"another {type(response.layer).__name__} (backward must go to the layer that "
            "computed the output)"
        )
    output = response.output
    if not isinstance(output, np.ndarray) or output.dtype not in _FLOATS:
        raise _foreign(
            "response.output", f"a float array from forward, got {type(output).__name__}"
        )
    if response.mode not in ("train", "eval"):
        raise _foreign("response.mode", f"'train' or 'eval', got {response.mode!r}")
    return response


def check_kept_input(response: Response, rows_axis_from_end: int | None = None) -> np.ndarray:
    """The input a response kept for backward: an array of the output's dtype and (leading) shape.

    ``rows_axis_from_end=None`` asks for the output's whole shape (activations); 1 asks for all but
    the last axis (dense layers, whose last axis changes size)."""
    x = response.input
    want = response.output.shape
    if isinstance(x, np.ndarray) and x.dtype == response.output.dtype:
        if x.shape == want if rows_axis_from_end is None else x.shape[:-1] == want[:-1]:
            return x
    raise _foreign("response.input", f"the input forward read, shaped as {want}")


def check_grad_output(response: Response, grad_output: Any, finite: bool = True) -> np.ndarray:
    """`grad_output` as an array of the output's shape and dtype (finiteness left to the caller when
    ``finite=False``)."""
    d = as_input(grad_output, "grad_output", finite)
    if d.shape != response.output.shape:
        raise ShapeError(
            f"grad_output: expected the output's shape {response.output.shape}, got {d.shape}"
        )
    if d.dtype != response.output.dtype:  # float64 gradients beyond float32's range: refuse
        d = fits(as_input(d, "grad_output"), response.output.dtype, "grad_output")
    return d


def check_gradient(
    layer: Any, gradient: Any, rate: Any, parameters: dict[str, np.ndarray]
) -> tuple[float, dict[str, np.ndarray]]:
    """The rate and the gradients of `gradient`, after checking that it is `layer`'s own and that
    its gradients are finite arrays named and shaped as the layer's `parameters` (a hand-made
    gradient included). Returns (rate, gradients in the parameters' dtypes)."""
    if not isinstance(gradient, Gradient):
        raise _foreign(
            "gradient", f"the Gradient of this layer's backward pass, got {type(gradient).__name__}"
        )
    if gradient.layer is not layer:
        raise ForeignResponseError(
            f"gradient: expected a gradient from this {type(layer).__name__}, got one from "
            f"another {type(gradient.layer).__name__}"
        )
    rate = check_rate(rate)
    given = gradient.grads
    if gradient.made_by_backward:
        return rate, dict(given)
    if not isinstance(given, Mapping) or sorted(given) != sorted(parameters):
        names = sorted(given) if isinstance(given, Mapping) else type(given).__name__
        raise _foreign("gradient.grads", f"gradients named {sorted(parameters)}, got {names}")
    grads = {}
    for name, p in parameters.items():
        s = as_input(given[name], f"gradient of {name}")
        if s.shape != p.shape:
            raise ShapeError(f"gradient of {name}: expected shape {p.shape}, got {s.shape}")
        grads[name] = s
    return rate, grads


def check_statistics(stats: Any, shape: tuple[int, ...]) -> Statistics:
    """A batch's statistics as `step` reads them: finite arrays of `shape`, variance >= 0 and
    divisor > 0 (SettingError otherwise: a hand-made gradient could carry anything)."""
    if not isinstance(stats, Statistics):
        raise _foreign("gradient.statistics", f"the batch's Statistics, got {type(stats).__name__}")
    values = {}
    for name in ("mean", "variance", "divisor"):
        a = as_input(getattr(stats, name), f"statistics.{name}")
        if a.shape != shape:
            raise ShapeError(f"statistics.{name}: expected shape {shape}, got {a.shape}")
        values[name] = a
    if smallest(values["variance"]) < 0 or smallest(values["divisor"]) <= 0:
        raise SettingError(
            "statistics: expected a variance >= 0 and a divisor > 0, got a negative variance "
            "or a divisor <= 0"
        )
    return Statistics(**values)


def moved_parameters(layer: Any, gradient: Any, rate: Any) -> dict[str, Any]:
    """The one parameter step: each learned array (``layer._learned()``) moved by ``-rate *
    gradient``, `rate` a number or one per independent model (`rate_for`). A gradient the layer's
    own `backward` made is taken as it is; any other is checked against the layer first
    (`check_gradient`). The new layer seals the moved arrays (`normcore._checks.successor`).

    Returns:
        name: the moved array, for each learned array's name.
    """
    if type(gradient) is Gradient and gradient.layer is layer and gradient.made_by_backward:
        rate, grads = check_rate(rate), gradient.grads
    else:
        rate, grads = check_gradient(layer, gradient, rate, layer._learned())
    moved = {}
    for key, grad in grads.items():
        p = getattr(layer, key)
        moved[key] = p - (rate if type(rate) is float else rate_for(rate, p, key)) * grad
    return moved
