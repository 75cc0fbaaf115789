"""Activations (ReLU, tanh, sigmoid) as parameter-free layers with the same three calls."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._checks import PREDICTING, as_block, check_purpose, check_rank
from .responses import Gradient, Response, check_gradient, check_response, check_slope


def sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)) without overflow for any finite x."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(x.dtype, copy=False)


@dataclass(frozen=True, eq=False)
class _Activation:
    """An element-wise function; `forward` keeps its output, `backward` multiplies by its slope."""

    def _apply(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _slope(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def forward(self, x: Any, purpose: str = PREDICTING) -> Response:
        check_purpose(purpose)
        x = as_block(x, "x")
        if x.ndim == 0:
            check_rank(x, 1, "x", "at least one axis")
        return Response(output=self._apply(x), layer=self, purpose=purpose, input=x)

    def backward(self, response: Response, d_out: Any) -> Gradient:
        response = check_response(self, response)
        d = check_slope(response, d_out)
        return Gradient(
            passed_down=d * self._slope(response.input, response.output), layer=self
        )

    def step(self, gradient: Gradient, rate: float) -> _Activation:
        """Nothing to learn: the same layer back (after checking the gradient is its own)."""
        check_gradient(self, gradient, rate)
        return self


@dataclass(frozen=True, eq=False)
class ReLU(_Activation):
    """max(x, 0); slope 1 where x > 0 and 0 elsewhere (0 at x = 0 itself)."""

    def _apply(self, x: np.ndarray) -> np.ndarray:
        return np.maximum(x, 0)

    def _slope(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return (x > 0).astype(x.dtype)


@dataclass(frozen=True, eq=False)
class Tanh(_Activation):
    """tanh(x); slope 1 - tanh(x)²."""

    def _apply(self, x: np.ndarray) -> np.ndarray:
        return np.tanh(x)

    def _slope(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return 1 - y * y


@dataclass(frozen=True, eq=False)
class Sigmoid(_Activation):
    """1 / (1 + exp(-x)), computed without overflow; slope σ(x)(1 - σ(x))."""

    def _apply(self, x: np.ndarray) -> np.ndarray:
        return sigmoid(x)

    def _slope(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return y * (1 - y)
