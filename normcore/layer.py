"""Layer normalisation and RMS normalisation: statistics along the row."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._checks import check_rank, check_size, is_whole, whole_numbers
from .errors import ShapeError
from .normaliser import Normaliser


def _as_shape(normalized_shape: Any) -> tuple[int, ...]:
    """A whole number, or a non-empty tuple or list of them, as a tuple: nothing is coerced (a
    string such as "12" is refused, not read as (1, 2))."""
    if is_whole(normalized_shape):
        normalized_shape = (normalized_shape,)
    shape = whole_numbers(normalized_shape, "normalized_shape")
    if not shape:
        raise ShapeError("normalized_shape: expected at least one size, got ()")
    return shape


@dataclass(frozen=True, eq=False)
class LayerNorm(Normaliser):
    """Layer normalisation: each row standardised by its own mean and variance.

    - Axis: statistics run over the trailing axes named by ``normalized_shape`` (as PyTorch's
      ``LayerNorm``): an input (a, b, c, d) with normalized_shape (c, d) gets statistics of shape
      (a, b). For the usual input (rows, features), normalized_shape is (features,) and there is
      one mean and one variance per row. Leading axes hold independent models when the
      parameters carry them: parameters (S, features) take an input (S, rows, features).
    - Variance: biased; epsilon (default 1e-5) under the square root.
    - Scale and shift: one per normalised position, starting at 1 and 0.
    - Modes: accepted for a uniform interface; both return the same, because nothing is read
      from other rows. No running statistics exist.
    - Backward: the same three routes as batch norm with the sums along the row; the input
      gradient's rows sum to zero. Parameter gradients: scale's is sum over rows of grad_output * z,
      shift's the sum over rows of grad_output.

    Agrees with PyTorch's ``LayerNorm`` (biased variance, epsilon 1e-5 under the root).
    """

    normalized_shape: tuple[int, ...] = ()

    name = "layer"

    def __post_init__(self) -> None:
        super().__post_init__()
        shape = _as_shape(self.normalized_shape or self.scale.shape[-1:])
        if self.scale.shape[len(self.scale.shape) - len(shape) :] != shape:
            raise ShapeError(
                f"scale: expected a shape ending in normalized_shape {shape}, got "
                f"{self.scale.shape}"
            )
        object.__setattr__(self, "normalized_shape", shape)

    @classmethod
    def create(
        cls,
        normalized_shape: int | tuple[int, ...],
        *,
        stack: tuple[int, ...] = (),
        eps: float = 1e-5,
        affine: bool = True,
    ) -> LayerNorm:
        """A fresh layer: scale 1 and shift 0, each of shape (*stack, *normalized_shape)."""
        shape = check_size((*whole_numbers(stack, "stack"), *_as_shape(normalized_shape)), "scale")
        return cls(
            scale=np.ones(shape),
            shift=np.zeros(shape),
            eps=eps,
            affine=affine,
            normalized_shape=_as_shape(normalized_shape),
        )

    @property
    def stack(self) -> tuple[int, ...]:
        return self.scale.shape[: self.scale.ndim - len(self.normalized_shape)]

    def _prepare(self, x: np.ndarray, mode: str) -> None:
        ns, stack = self.normalized_shape, self.stack
        if stack:
            check_rank(
                x, len(stack) + 1 + len(ns), "x", "(leading axes..., rows, normalised axes...)"
            )
            if x.shape[: len(stack)] != stack:
                raise ShapeError(f"x: expected leading axes {stack}, got shape {x.shape}")
        elif x.ndim < len(ns):
            raise ShapeError(
                f"x: expected at least {len(ns)} axes ending in {ns}, got shape {x.shape}"
            )
        if x.shape[x.ndim - len(ns) :] != ns:
            raise ShapeError(f"x: expected trailing axes {ns}, got shape {x.shape}")

    def _lined(self, ndim: int) -> tuple[int, ...]:
        stack, ns = self.stack, self.normalized_shape
        return (*stack, *(1,) * (ndim - len(stack) - len(ns)), *ns)

    def _stat_axes(self, view: np.ndarray) -> tuple[int, ...]:
        return tuple(range(view.ndim - len(self.normalized_shape), view.ndim))


@dataclass(frozen=True, eq=False)
class RMSNorm(LayerNorm):
    """RMS normalisation: each row divided by its root mean square, with nothing subtracted.

    - Axis: as `LayerNorm` (trailing ``normalized_shape`` axes).
    - Statistic: the mean square of the row (no centring), epsilon (default 1e-5) under the root:
      root = sqrt(mean(x**2) + epsilon). A row keeps its proportions; only its size is fixed.
    - Scale starts at 1; shift starts at 0. The conventional RMS norm has no shift at all: with
      shift at 0 this layer is exactly that, and keeping it lets one shape serve the family.
    - Backward: two routes (the element's own value and the root mean square):
      grad_input = (n * d - z * sum(d * z)) / (n * root).

    Agrees with PyTorch's ``RMSNorm`` when given eps=1e-5 (PyTorch's default eps is the float
    type's machine epsilon) and no shift.
    """

    centred = False
    name = "RMS"
