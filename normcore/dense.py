"""The dense layer and its weight-normalised form."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ._checks import (
    Remade,
    as_input,
    as_parameter,
    check_not_empty,
    check_rank,
    check_size,
    check_values,
    fits,
    own_error_state,
    read_only,
    seal,
    successor,
    whole_number,
    whole_numbers,
)
from .errors import MagnitudeError, SettingError, ShapeError, ZeroDirectionError
from .mode import EVAL, check_mode
from .responses import (
    Gradient,
    Response,
    answered,
    check_grad_output,
    check_kept_input,
    check_response,
    moved_parameters,
)


def starting_weights(
    fan_in: int, fan_out: int, rng: np.random.Generator, stack: tuple[int, ...] = ()
) -> np.ndarray:
    """He-uniform weights (`he_uniform`), shape (*stack, fan_in, fan_out)."""
    fan_in, fan_out = whole_number(fan_in, "fan_in"), whole_number(fan_out, "fan_out")
    shape = check_size((*whole_numbers(stack, "stack"), fan_in, fan_out), "weights")
    return he_uniform(rng, shape, fan_in)


def he_uniform(rng: Any, shape: tuple[int, ...], fan_in: int) -> np.ndarray:
    """Weights of `shape` drawn from `rng` uniform in ±sqrt(6 / fan_in) (He et al. 2015's
    variance 2 / fan_in, as a uniform draw): the one initialiser of the dense layers and the
    convolution."""
    if not isinstance(rng, np.random.Generator):
        raise SettingError(f"rng: expected a numpy Generator, got {type(rng).__name__}")
    limit = np.sqrt(6.0 / fan_in)
    return rng.uniform(-limit, limit, size=shape)


def _checked_bias(bias: Any, fan_out_shape: tuple[int, ...]) -> np.ndarray:
    b = as_parameter(np.zeros(fan_out_shape) if bias is None else bias, "bias")
    if b.shape != fan_out_shape:
        raise ShapeError(f"bias: expected shape {fan_out_shape}, got {b.shape}")
    return b


class _Affine(Remade):
    """What Dense and WeightNormDense share: output = x @ effective weights + bias. (Not a
    dataclass: the fields are the subclasses'.)"""

    __slots__ = ()
    bias: np.ndarray

    grad_names: ClassVar[tuple[str, ...]] = ()

    @property
    def effective_weights(self) -> np.ndarray:
        raise NotImplementedError

    @property
    def stack(self) -> tuple[int, ...]:
        return self.effective_weights.shape[:-2]

    def _grads(self, weight_grad: np.ndarray) -> dict[str, np.ndarray]:
        """The parameter gradients (bias aside) from the gradient of the effective weights (checked
        finite), each checked finite in its turn."""
        raise NotImplementedError

    @own_error_state
    def forward(self, x: Any, mode: str = EVAL) -> Response:
        """output = x @ weights + bias.

        Args:
            x: an input (*stack, rows, fan_in); float32 stays float32, other numbers become float64.
            mode: 'train' or 'eval' (the default); both return the same.

        Returns:
            A `Response` whose `output` is (*stack, rows, fan_out), and whose `input` is `x` as
            no one can change it (the weights' gradient needs it): a read-only copy, or `x` itself
            when it is read-only already (another layer's output).
        """
        mode = check_mode(mode)
        w = self.effective_weights
        stack, fan_in = w.shape[:-2], w.shape[-2]
        x = as_input(x, "x", finite=False)
        check_rank(x, len(stack) + 2, "x", "(" + "model, " * len(stack) + "rows, inputs)")
        if x.shape[: len(stack)] != stack or x.shape[-1] != fan_in:
            raise ShapeError(f"x: expected shape {(*stack, 'rows', fan_in)}, got {x.shape}")
        check_not_empty(x, "x")
        check_values(x, fan_in, "x")
        b = fits(self.bias[..., None, :], x.dtype, "bias")
        out = x @ fits(w, x.dtype, "weights") + b
        return Response(output=out, layer=self, mode=mode, input=read_only(x))

    @own_error_state
    def backward(self, response: Response, grad_output: Any) -> Gradient:
        """The input gradient and the parameter gradients.

        Args:
            response: what this layer's `forward` returned.
            grad_output: the gradient of the loss with respect to the output, (*stack, rows,
                fan_out).

        Returns:
            A `Gradient`: `grad_input` = grad_output @ weightsᵀ, (*stack, rows, fan_in); the
            gradients (see the class docstring) summed, not averaged, over rows, each shaped as its
            parameter.
        """
        response = check_response(self, response)
        x = check_kept_input(response, rows_axis_from_end=1)
        d = check_grad_output(response, grad_output)
        w = fits(self.effective_weights, d.dtype, "weights")
        passed = d @ np.swapaxes(w, -1, -2)
        grads = {**self._grads(np.swapaxes(x, -1, -2) @ d), "bias": d.sum(axis=-2)}
        return answered(Gradient(grad_input=passed, layer=self, grads=grads))

    def _learned(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in self.grad_names}


@dataclass(frozen=True, eq=False)
class Dense(_Affine):
    """A dense layer: output = x @ weights + bias.

    Shapes: x (..., rows, fan_in), weights (..., fan_in, fan_out), bias (..., fan_out); leading axes
    hold independent models. Modes are accepted for a uniform interface and return the same.
    Backward: grad_input = d @ weightsᵀ; weights' gradient xᵀ @ d and bias' gradient the column sum
    of d, summed (not averaged) over rows; the loss decides any averaging.
    """

    weights: Any
    bias: Any = None

    grad_names = ("weights", "bias")

    def __post_init__(self) -> None:
        w = as_parameter(self.weights, "weights")
        if w.ndim < 2 or w.size == 0:
            raise ShapeError(
                f"weights: expected shape (..., fan_in, fan_out) with every size >= 1, got "
                f"{w.shape}"
            )
        object.__setattr__(self, "weights", w)
        object.__setattr__(self, "bias", _checked_bias(self.bias, w.shape[:-2] + w.shape[-1:]))

    @classmethod
    def create(
        cls, fan_in: int, fan_out: int, rng: np.random.Generator, stack: tuple[int, ...] = ()
    ) -> Dense:
        """He-uniform weights from `rng`, shape (*stack, fan_in, fan_out); bias 0."""
        return cls(weights=starting_weights(fan_in, fan_out, rng, stack))

    @property
    def effective_weights(self) -> np.ndarray:
        return self.weights

    def _grads(self, weight_grad: np.ndarray) -> dict[str, np.ndarray]:
        return {"weights": weight_grad}

    @own_error_state
    def step(self, gradient: Gradient, rate: float) -> Dense:
        """A new layer with weights and bias moved by ``-rate * grad``.

        Args:
            gradient: what this layer's `backward` returned.
            rate: the learning rate, a finite number (or one per independent model, an array
                shaped as the parameters' leading axes).

        Returns:
            A new layer of the same shapes; this one is unchanged.
        """
        return successor(self, moved_parameters(self, gradient, rate))


def direction_length(direction: np.ndarray) -> np.ndarray:
    """Each neuron's direction length ‖v‖ (over axis -2), scaled first so tiny or huge
    directions neither underflow nor overflow on the way (the length itself may still overflow:
    the caller checks it)."""
    largest = np.max(np.abs(direction), axis=-2, keepdims=True)
    safe = np.where(largest > 0, largest, 1.0)
    return (largest * np.sqrt(np.sum((direction / safe) ** 2, axis=-2, keepdims=True)))[..., 0, :]


@dataclass(frozen=True, eq=False)
class WeightNormDense(_Affine):
    """A dense layer whose weights are stored as a length and a direction per neuron.

    effective weights w = magnitude · direction / ‖direction‖, column by column (a column is a
    neuron). The forward pass is a dense layer's with those weights, value for value.
    Shapes: direction (..., fan_in, fan_out); magnitude (..., fan_out), by default the
    direction's length; bias (..., fan_out), by default 0.

    Gradients, with ∇w the dense gradient for the effective weights and u = v / ‖v‖ per neuron:
    magnitude's gradient is ∇w · u (the part along the direction), direction's gradient is
    (magnitude / ‖v‖) · (∇w − (∇w · u) u): the radial part is projected out, so the gradient is
    orthogonal to the direction and a step can only turn it (and lengthen ‖v‖ slightly), never
    shrink it to zero. A zero direction has no unit vector: it is refused with ZeroDirectionError.
    Scaling a direction by any positive number leaves every output unchanged.
    """

    direction: Any
    magnitude: Any = None
    bias: Any = None
    # worked out by the constructor from the fields above (never handed in)
    _length: np.ndarray = field(init=False, repr=False)
    _unit: np.ndarray = field(init=False, repr=False)
    _effective: np.ndarray = field(init=False, repr=False)

    grad_names = ("direction", "magnitude", "bias")

    @own_error_state
    def __post_init__(self) -> None:
        v = as_parameter(self.direction, "direction")
        if v.ndim < 2 or v.size == 0:
            raise ShapeError(
                f"direction: expected shape (..., fan_in, fan_out) with every size >= 1, got "
                f"{v.shape}"
            )
        length = direction_length(v)
        if np.any(length == 0):
            neurons = np.argwhere(length == 0).tolist()
            raise ZeroDirectionError(
                f"direction: expected every neuron's direction to have a length > 0, got "
                f"length 0 at neuron(s) {neurons}"
            )
        if not np.all(np.isfinite(length)):
            raise MagnitudeError(
                f"direction: expected lengths within the {v.dtype} range, got an overflow"
            )
        m = length if self.magnitude is None else as_parameter(self.magnitude, "magnitude")
        if m.shape != length.shape:
            raise ShapeError(f"magnitude: expected shape {length.shape}, got {m.shape}")
        unit = v / length[..., None, :]
        object.__setattr__(self, "direction", v)
        object.__setattr__(self, "magnitude", seal(np.array(m)))
        object.__setattr__(self, "bias", _checked_bias(self.bias, length.shape))
        # worked out once: the layer's arrays cannot change, so neither can these
        object.__setattr__(self, "_length", seal(length))
        object.__setattr__(self, "_unit", seal(unit))
        object.__setattr__(self, "_effective", seal(m[..., None, :] * unit))

    @classmethod
    def create(
        cls, fan_in: int, fan_out: int, rng: np.random.Generator, stack: tuple[int, ...] = ()
    ) -> WeightNormDense:
        """Directions drawn exactly as `Dense.create` draws weights, magnitude = their length,
        so a fresh layer returns exactly what the dense layer drawn from the same stream."""
        return cls(direction=starting_weights(fan_in, fan_out, rng, stack))

    @property
    def unit_direction(self) -> np.ndarray:
        """u = v / ‖v‖ per neuron, (..., fan_in, fan_out)."""
        return self._unit

    @property
    def effective_weights(self) -> np.ndarray:
        return self._effective

    def _grads(self, weight_grad: np.ndarray) -> dict[str, np.ndarray]:
        return self.grads_from_dense(weight_grad)

    @own_error_state
    def grads_from_dense(self, weight_grad: Any, project: bool = True) -> dict[str, np.ndarray]:
        """Magnitude and direction gradients from the dense gradient ∇w (shaped as the direction).
        `project=False` gives the unprojected (wrong) direction gradient the book compares against.

        Returns {'magnitude': (..., fan_out), 'direction': (..., fan_in, fan_out)}.
        """
        g = as_input(weight_grad, "weight_grad")
        if g.shape != self.direction.shape:
            raise ShapeError(
                f"weight_grad: expected the direction's shape {self.direction.shape}, got {g.shape}"
            )
        u = self._unit
        along = np.sum(g * u, axis=-2)
        rest = g - along[..., None, :] * u if project else g
        ratio = self.magnitude / self._length
        return {"magnitude": along, "direction": ratio[..., None, :] * rest}

    @own_error_state
    def step(self, gradient: Gradient, rate: float) -> WeightNormDense:
        """A new layer with direction, magnitude and bias moved by ``-rate * grad``.

        Args:
            gradient: what this layer's `backward` returned.
            rate: the learning rate, a finite number (or one per independent model, an array
                shaped as the parameters' leading axes).

        Returns:
            A new layer of the same shapes (this one is unchanged). The projected direction
            gradient cannot shrink a direction to zero, but a zero direction is refused here all
            the same (ZeroDirectionError), as the constructor refuses it.
        """
        moved = moved_parameters(self, gradient, rate)
        try:
            return dataclasses.replace(self, **moved)
        except ZeroDirectionError as exc:
            raise ZeroDirectionError(f"direction: a step left {exc}") from None
