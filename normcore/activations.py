"""Activations (ReLU, tanh, sigmoid) as parameter-free layers with the same three calls."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._checks import Remade, as_input, check_rank, own_error_state
from .mode import EVAL, check_mode
from .responses import (
    Gradient,
    Response,
    answered,
    check_grad_output,
    check_gradient,
    check_response,
)


@own_error_state
def sigmoid(x: Any) -> np.ndarray:
    """1 / (1 + exp(-x)) without overflow for any finite x; float32 stays float32."""
    x = as_input(x, "x")
    return sigmoid_from(x, np.exp(-np.abs(x)))


def sigmoid_from(x: np.ndarray, e: np.ndarray) -> np.ndarray:
    """The stable sigmoid of `x` given ``e = exp(-|x|)`` (at most 1, so nothing overflows):
    1 / (1 + e) where x >= 0, e / (1 + e) below; in x's float type."""
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(x.dtype, copy=False)


@dataclass(frozen=True, eq=False)
class _Activation(Remade):
    """An element-wise function whose gradient is read from its output: `forward` keeps the output,
    `backward` multiplies the upstream gradient by the function's gradient there."""

    def _apply(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _grad(self, y: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    @own_error_state
    def forward(self, x: Any, mode: str = EVAL) -> Response:
        """The function applied to every value.

        Args:
            x: an input of any shape with at least one axis.
            mode: 'train' or 'eval' (the default); both return the same.

        Returns:
            A `Response` whose `output` is shaped and typed as `x`.
        """
        mode = check_mode(mode)
        x = as_input(x, "x")
        if x.ndim == 0:
            check_rank(x, 1, "x", "at least one axis")
        return Response(output=self._apply(x), layer=self, mode=mode)

    @own_error_state
    def backward(self, response: Response, grad_output: Any) -> Gradient:
        """The input gradient: `grad_output` times the function's gradient at each value.

        Args:
            response: what this layer's `forward` returned.
            grad_output: the upstream gradient at the output (its shape).

        Returns:
            A `Gradient` with `grad_input` shaped as the input and no parameter gradients.
        """
        response = check_response(self, response)
        d = check_grad_output(response, grad_output)
        return answered(Gradient(grad_input=d * self._grad(response.output), layer=self))

    def step(self, gradient: Gradient, rate: float) -> _Activation:
        """Nothing to learn: the same layer back (after checking the gradient is its own)."""
        check_gradient(self, gradient, rate, {})
        return self


@dataclass(frozen=True, eq=False)
class ReLU(_Activation):
    """max(x, 0); gradient 1 where x > 0 and 0 elsewhere (0 at x = 0 itself)."""

    def _apply(self, x: np.ndarray) -> np.ndarray:
        return np.maximum(x, 0)

    def _grad(self, y: np.ndarray) -> np.ndarray:
        return (y > 0).astype(y.dtype)  # y > 0 exactly where x > 0


@dataclass(frozen=True, eq=False)
class Tanh(_Activation):
    """tanh(x); gradient 1 - tanh(x)²."""

    def _apply(self, x: np.ndarray) -> np.ndarray:
        return np.tanh(x)

    def _grad(self, y: np.ndarray) -> np.ndarray:
        return 1 - y * y


@dataclass(frozen=True, eq=False)
class Sigmoid(_Activation):
    """1 / (1 + exp(-x)), computed without overflow; gradient σ(x)(1 - σ(x))."""

    def _apply(self, x: np.ndarray) -> np.ndarray:
        return sigmoid(x)

    def _grad(self, y: np.ndarray) -> np.ndarray:
        return y * (1 - y)
