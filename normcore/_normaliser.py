"""The thin value every statistic-reading normaliser shares: standardise, then scale and shift.

Subclasses say only where their statistics run (`_stat_axes`), how their parameters line up with
the block (`_expand`) and what input shapes they take (`_prepare`). The arithmetic lives in
`normcore.standardise` and is written once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ._checks import (
    PREDICTING,
    TRAINING,
    as_block,
    as_parameter,
    check_epsilon,
    check_finite_result,
    check_magnitude,
    check_not_empty,
    check_purpose,
    renewed,
)
from .errors import ShapeError
from .responses import (
    Gradient,
    Response,
    Statistics,
    check_gradient,
    check_response,
    check_slope,
)
from .standardise import (
    Standardised,
    standardise_backward_fast,
    standardise_by,
    standardise_fast,
)


@dataclass(frozen=True, eq=False)
class Normaliser:
    """Base of batch, layer, RMS, instance and group norm. Not used directly."""

    scale: np.ndarray
    shift: np.ndarray
    epsilon: float = 1e-5
    affine: bool = True

    centred: ClassVar[bool] = True
    name: ClassVar[str] = "normaliser"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        scale = as_parameter(self.scale, "scale")
        shift = as_parameter(self.shift, "shift")
        if scale.shape != shift.shape:
            raise ShapeError(
                f"shift: expected the scale's shape {scale.shape}, got {shift.shape}"
            )
        object.__setattr__(self, "scale", scale)
        object.__setattr__(self, "shift", shift)

    # -- what subclasses say -------------------------------------------------------------------
    def _prepare(self, x: np.ndarray) -> None:
        """Refuse blocks of the wrong rank or size for this layer (ShapeError, EmptyBatchError)."""
        raise NotImplementedError

    def _expand(self, p: np.ndarray, x: np.ndarray) -> np.ndarray:
        """A per-feature array `p` reshaped to broadcast against the block `x`."""
        raise NotImplementedError

    def _stat_axes(self, x: np.ndarray) -> tuple[int, ...]:
        raise NotImplementedError

    def _view(self, x: np.ndarray) -> np.ndarray:
        """The block as the statistics see it (group norm splits channels into groups)."""
        return x

    def _given(self, view: np.ndarray, x: np.ndarray) -> tuple[Any, np.ndarray] | None:
        """Statistics to use while predicting (running figures), or None to read the block."""
        return None

    def _batch_statistics(self, st: Standardised, x: np.ndarray) -> Statistics | None:
        return None

    # -- the shared pass -----------------------------------------------------------------------
    def statistic_count(self, x: np.ndarray) -> int:
        view = self._view(x)
        return math.prod([view.shape[a] for a in self._stat_axes(view)])

    def forward(self, x: Any, purpose: str = PREDICTING) -> Response:
        """Standardise `x` and apply scale and shift. Predicting is the default purpose."""
        purpose = check_purpose(purpose)
        x = as_block(x, "x")
        self._prepare(x)
        check_not_empty(x, "x")
        view = self._view(x)
        axes = self._stat_axes(view)
        check_magnitude(x, self.statistic_count(x), "x")
        given = self._given(view, x) if purpose == PREDICTING else None
        if given is None:
            st = standardise_fast(view, axes, self.epsilon, centre=self.centred)
        else:
            st = standardise_by(view, given[0], given[1], axes)
        z = st.z.reshape(x.shape)
        if self.affine:
            out = z * self._expand(self.scale, x).astype(x.dtype, copy=False) + self._expand(
                self.shift, x
            ).astype(x.dtype, copy=False)
        else:
            out = z
        check_finite_result(out, f"{type(self).__name__}.forward")
        stats = self._batch_statistics(st, x) if purpose == TRAINING else None
        return Response(
            output=out, layer=self, purpose=purpose, input=x, cache=st, statistics=stats
        )

    def backward(self, response: Response, d_out: Any) -> Gradient:
        """The slope passed down (all routes the statistics open) and the parameter slopes.

        scale's slope is sum(d_out * z) and shift's is sum(d_out), summed over every axis the
        parameter is shared along.
        """
        response = check_response(self, response)
        d = check_slope(response, d_out)
        check_magnitude(d, self.statistic_count(response.input), "d_out")
        x = response.input
        st: Standardised = response.cache
        z = st.z.reshape(x.shape)
        slopes: dict[str, np.ndarray] = {}
        if self.affine:
            slopes["scale"] = self._reduce(d * z, x)
            slopes["shift"] = self._reduce(d, x)
            d_z = d * self._expand(self.scale, x).astype(x.dtype, copy=False)
        else:
            d_z = d
        passed = standardise_backward_fast(st, self._view_like(d_z, x)).reshape(x.shape)
        check_finite_result(passed, f"{type(self).__name__}.backward")
        return Gradient(
            passed_down=passed, layer=self, slopes=slopes, statistics=response.statistics
        )

    def step(self, gradient: Gradient, rate: float) -> Normaliser:
        """A new layer with scale and shift moved by `-rate * slope`."""
        rate = check_gradient(self, gradient, rate)
        return renewed(self, self._moved(gradient, rate))

    # -- helpers -------------------------------------------------------------------------------
    def _view_like(self, d: np.ndarray, x: np.ndarray) -> np.ndarray:
        return d.reshape(self._view(x).shape)

    def _reduce(self, a: np.ndarray, x: np.ndarray) -> np.ndarray:
        expanded = self._expand(self.scale, x)
        shape = (1,) * (x.ndim - expanded.ndim) + expanded.shape
        axes = tuple(i for i, size in enumerate(shape) if size == 1 and x.shape[i] != 1)
        return np.sum(a, axis=axes, keepdims=True).reshape(self.scale.shape)

    def _moved(self, gradient: Gradient, rate: float) -> dict[str, np.ndarray]:
        if not self.affine:
            return {}
        with np.errstate(over="ignore", invalid="ignore"):  # overflow is refused just below
            moved = {
                "scale": self.scale - rate * gradient.slopes["scale"],
                "shift": self.shift - rate * gradient.slopes["shift"],
            }
        for key, value in moved.items():
            check_finite_result(value, f"{type(self).__name__}.step ({key})")
        return moved
