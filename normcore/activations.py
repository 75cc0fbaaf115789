"""Activations (ReLU, tanh, sigmoid) as parameter-free layers with the same three calls."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._checks import Remade, as_block, check_rank, own_error_state
from .purpose import PREDICTING, check_purpose
from .responses import Gradient, Response, answered, check_d_out, check_gradient, check_response


@own_error_state
def sigmoid(x: Any) -> np.ndarray:
    """1 / (1 + exp(-x)) without overflow for any finite x; float32 stays float32."""
    x = as_block(x, "x")
    return sigmoid_from(x, np.exp(-np.abs(x)))


def sigmoid_from(x: np.ndarray, e: np.ndarray) -> np.ndarray:
    """The stable sigmoid of `x` given ``e = exp(-|x|)`` (at most 1, so nothing overflows):
    1 / (1 + e) where x >= 0, e / (1 + e) below; in x's float type."""
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(x.dtype, copy=False)


@dataclass(frozen=True, eq=False)
class _Activation(Remade):
    """An element-wise function whose slope is read from its output: `forward` keeps the output,
    `backward` multiplies the arriving slope by the function's slope there."""

    def _apply(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _slope(self, y: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    @own_error_state
    def forward(self, x: Any, purpose: str = PREDICTING) -> Response:
        """The function applied to every value.

        Args:
            x: a block of any shape with at least one axis.
            purpose: 'training' or 'predicting' (the default); both answer the same.

        Returns:
            A `Response` whose `output` is shaped and typed as `x`.
        """
        purpose = check_purpose(purpose)
        x = as_block(x, "x")
        if x.ndim == 0:
            check_rank(x, 1, "x", "at least one axis")
        return Response(output=self._apply(x), layer=self, purpose=purpose)

    @own_error_state
    def backward(self, response: Response, d_out: Any) -> Gradient:
        """The slope passed down: `d_out` times the function's slope at each value.

        Args:
            response: what this layer's `forward` answered.
            d_out: the slope arriving at the output (its shape).

        Returns:
            A `Gradient` with `passed_down` shaped as the input and no parameter slopes.
        """
        response = check_response(self, response)
        d = check_d_out(response, d_out)
        return answered(Gradient(passed_down=d * self._slope(response.output), layer=self))

    def step(self, gradient: Gradient, rate: float) -> _Activation:
        """Nothing to learn: the same layer back (after checking the gradient is its own)."""
        check_gradient(self, gradient, rate, {})
        return self


@dataclass(frozen=True, eq=False)
class ReLU(_Activation):
    """max(x, 0); slope 1 where x > 0 and 0 elsewhere (0 at x = 0 itself)."""

    def _apply(self, x: np.ndarray) -> np.ndarray:
        return np.maximum(x, 0)

    def _slope(self, y: np.ndarray) -> np.ndarray:
        return (y > 0).astype(y.dtype)  # y > 0 exactly where x > 0


@dataclass(frozen=True, eq=False)
class Tanh(_Activation):
    """tanh(x); slope 1 - tanh(x)²."""

    def _apply(self, x: np.ndarray) -> np.ndarray:
        return np.tanh(x)

    def _slope(self, y: np.ndarray) -> np.ndarray:
        return 1 - y * y


@dataclass(frozen=True, eq=False)
class Sigmoid(_Activation):
    """1 / (1 + exp(-x)), computed without overflow; slope σ(x)(1 - σ(x))."""

    def _apply(self, x: np.ndarray) -> np.ndarray:
        return sigmoid(x)

    def _slope(self, y: np.ndarray) -> np.ndarray:
        return y * (1 - y)
