"""The dense layer and its weight-normalised form."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._checks import (
    PREDICTING,
    as_block,
    as_parameter,
    check_finite_result,
    check_not_empty,
    check_purpose,
    check_rank,
    check_values,
    renewed,
)
from .errors import ShapeError, ZeroDirectionError
from .responses import Gradient, Response, check_gradient, check_response, check_slope


def _check_input(x: Any, fan_in: int, stack: tuple[int, ...]) -> np.ndarray:
    x = as_block(x, "x", finite=False)
    check_rank(x, len(stack) + 2, "x", "(" + "stack, " * len(stack) + "rows, inputs)")
    if x.shape[: len(stack)] != stack or x.shape[-1] != fan_in:
        raise ShapeError(f"x: expected shape {(*stack, 'rows', fan_in)}, got {x.shape}")
    check_not_empty(x, "x")
    check_values(x, fan_in, "x")
    return x


def starting_weights(
    fan_in: int, fan_out: int, rng: np.random.Generator, stack: tuple[int, ...] = ()
) -> np.ndarray:
    """He-uniform weights, uniform in ±sqrt(6 / fan_in), shape (*stack, fan_in, fan_out)."""
    limit = np.sqrt(6.0 / fan_in)
    return rng.uniform(-limit, limit, size=(*stack, fan_in, fan_out))


@dataclass(frozen=True, eq=False)
class Dense:
    """A dense layer: output = x @ weights + bias.

    Shapes: x (..., rows, fan_in), weights (..., fan_in, fan_out), bias (..., fan_out); leading axes
    stack independent models. Purposes are accepted for a uniform interface and answer the same.
    Backward: passed_down = d @ weightsᵀ; weights' slope xᵀ @ d and bias' slope the column sum of
    d, summed (not averaged) over rows; the loss decides any averaging.
    """

    weights: Any
    bias: Any = None

    def __post_init__(self) -> None:
        w = as_parameter(self.weights, "weights")
        if w.ndim < 2 or w.size == 0:
            raise ShapeError(
                f"weights: expected shape (..., fan_in, fan_out) with every size >= 1, got "
                f"{w.shape}"
            )
        b = np.zeros(w.shape[:-2] + w.shape[-1:]) if self.bias is None else as_parameter(
            self.bias, "bias"
        )
        if b.shape != w.shape[:-2] + w.shape[-1:]:
            raise ShapeError(
                f"bias: expected shape {w.shape[:-2] + w.shape[-1:]}, got {b.shape}"
            )
        object.__setattr__(self, "weights", w)
        object.__setattr__(self, "bias", b)

    @classmethod
    def create(
        cls, fan_in: int, fan_out: int, rng: np.random.Generator, stack: tuple[int, ...] = ()
    ) -> Dense:
        """He-uniform weights from `rng`, bias 0."""
        return cls(weights=starting_weights(fan_in, fan_out, rng, stack))

    @property
    def stack(self) -> tuple[int, ...]:
        return self.weights.shape[:-2]

    @property
    def effective_weights(self) -> np.ndarray:
        return self.weights

    def forward(self, x: Any, purpose: str = PREDICTING) -> Response:
        check_purpose(purpose)
        w = self.effective_weights
        x = _check_input(x, w.shape[-2], self.stack)
        with np.errstate(over="ignore", invalid="ignore"):  # overflow is refused just below
            out = x @ w.astype(x.dtype, copy=False) + self.bias[..., None, :].astype(
                x.dtype, copy=False
            )
        check_finite_result(out, f"{type(self).__name__}.forward")
        return Response(output=out, layer=self, purpose=purpose, input=x, cache=w)

    def _weight_slope(self, response: Response, d: np.ndarray) -> np.ndarray:
        return np.swapaxes(response.input, -1, -2) @ d

    def backward(self, response: Response, d_out: Any) -> Gradient:
        response = check_response(self, response)
        d = check_slope(response, d_out)
        w = response.cache
        with np.errstate(over="ignore", invalid="ignore"):  # overflow is refused just below
            passed = d @ np.swapaxes(w, -1, -2).astype(d.dtype, copy=False)
            slopes = {"weights": self._weight_slope(response, d), "bias": d.sum(axis=-2)}
        for value in (passed, *slopes.values()):
            check_finite_result(value, f"{type(self).__name__}.backward")
        return Gradient(passed_down=passed, layer=self, slopes=slopes)

    def step(self, gradient: Gradient, rate: float) -> Dense:
        rate = check_gradient(self, gradient, rate)
        with np.errstate(over="ignore", invalid="ignore"):  # overflow is refused just below
            moved = {k: getattr(self, k) - rate * s for k, s in gradient.slopes.items()}
        for key, value in moved.items():
            check_finite_result(value, f"{type(self).__name__}.step ({key})")
        return renewed(self, moved)


def direction_length(direction: np.ndarray) -> np.ndarray:
    """Each neuron's direction length ‖v‖ (over axis -2), scaled first so tiny or huge
    directions neither underflow nor overflow."""
    largest = np.max(np.abs(direction), axis=-2, keepdims=True)
    safe = np.where(largest > 0, largest, 1.0)
    return (largest * np.sqrt(np.sum((direction / safe) ** 2, axis=-2, keepdims=True)))[..., 0, :]


@dataclass(frozen=True, eq=False)
class WeightNormDense(Dense):
    """A dense layer whose weights are stored as a length and a direction per neuron.

    effective weights w = magnitude · direction / ‖direction‖, column by column (a column is a
    neuron). The forward pass is a dense layer's with those weights, value for value.
    Shapes: direction (..., fan_in, fan_out) is stored in `weights`' place as `direction`;
    magnitude (..., fan_out); bias (..., fan_out).

    Slopes, with ∇w the dense slope for the effective weights and u = v / ‖v‖ per neuron:
    magnitude's slope is ∇w · u (the part along the direction), direction's slope is
    (magnitude / ‖v‖) · (∇w − (∇w · u) u): the radial part is projected out, so the slope is
    orthogonal to the direction and a step can only turn it (and lengthen ‖v‖ slightly), never
    shrink it to zero. A zero direction has no unit vector: it is refused with ZeroDirectionError.
    Scaling a direction by any positive number leaves every answer unchanged.
    """

    magnitude: Any = None

    def __post_init__(self) -> None:
        super().__post_init__()
        length = direction_length(self.weights)
        if np.any(length == 0):
            neurons = np.argwhere(length == 0).tolist()
            raise ZeroDirectionError(
                f"direction: expected every neuron's direction to have a length > 0, got "
                f"length 0 at neuron(s) {neurons}"
            )
        m = length.copy() if self.magnitude is None else as_parameter(self.magnitude, "magnitude")
        if m.shape != length.shape:
            raise ShapeError(f"magnitude: expected shape {length.shape}, got {m.shape}")
        object.__setattr__(self, "magnitude", m)
        length.setflags(write=False)
        object.__setattr__(self, "_length", length)

    @classmethod
    def create(
        cls, fan_in: int, fan_out: int, rng: np.random.Generator, stack: tuple[int, ...] = ()
    ) -> WeightNormDense:
        """Directions drawn exactly as `Dense.create` draws weights, magnitude = their length,
        so a fresh layer answers exactly as the dense layer drawn from the same stream."""
        return cls(weights=starting_weights(fan_in, fan_out, rng, stack))

    @classmethod
    def from_dense(cls, dense: Dense) -> WeightNormDense:
        return cls(weights=dense.weights, bias=dense.bias)

    @property
    def direction(self) -> np.ndarray:
        return self.weights

    def _direction_length(self) -> np.ndarray:
        """‖v‖ per neuron, worked out once per layer value (layers never change)."""
        length = self.__dict__.get("_length")
        if length is None:
            length = direction_length(self.weights)
            length.setflags(write=False)
            object.__setattr__(self, "_length", length)
        return length

    @property
    def unit_direction(self) -> np.ndarray:
        unit = self.__dict__.get("_unit")
        if unit is None:
            unit = self.weights / self._direction_length()[..., None, :]
            unit.setflags(write=False)
            object.__setattr__(self, "_unit", unit)
        return unit

    @property
    def effective_weights(self) -> np.ndarray:
        return self.magnitude[..., None, :] * self.unit_direction

    def slopes_from_dense(
        self, weight_slope: np.ndarray, project: bool = True
    ) -> dict[str, np.ndarray]:
        """Magnitude and direction slopes from the dense slope ∇w. `project=False` gives the
        unprojected (wrong) direction slope the book compares against."""
        u = self.unit_direction
        along = np.sum(weight_slope * u, axis=-2)
        rest = weight_slope - along[..., None, :] * u if project else weight_slope
        ratio = self.magnitude / self._direction_length()
        return {"magnitude": along, "weights": ratio[..., None, :] * rest}

    def backward(self, response: Response, d_out: Any) -> Gradient:
        """Dense backward for ∇w, then the magnitude slope and the projected direction slope."""
        gradient = super().backward(response, d_out)
        with np.errstate(over="ignore", invalid="ignore"):  # overflow is refused just below
            slopes = self.slopes_from_dense(gradient.slopes["weights"])
        slopes["bias"] = gradient.slopes["bias"]
        for value in slopes.values():
            check_finite_result(value, "WeightNormDense.backward")
        return Gradient(passed_down=gradient.passed_down, layer=self, slopes=slopes)

    def step(self, gradient: Gradient, rate: float) -> WeightNormDense:
        """A new layer with direction, magnitude and bias moved by `-rate * slope`. The
        projected direction slope cannot shrink a direction to zero, but a zero direction is
        refused here all the same (ZeroDirectionError), as the constructor refuses it."""
        new = super().step(gradient, rate)
        length = new._direction_length()
        if np.any(length == 0):
            neurons = np.argwhere(length == 0).tolist()
            raise ZeroDirectionError(
                f"direction: a step left neuron(s) {neurons} with a direction of length 0"
            )
        return new
