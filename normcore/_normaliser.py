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
    check_not_empty,
    check_purpose,
    check_values,
    renewed,
)
from .errors import ShapeError
from .fused import standardise_affine, standardise_affine_backward, standardise_by_affine
from .responses import (
    Gradient,
    Response,
    Statistics,
    check_gradient,
    check_response,
    check_slope,
)
from .standardise import Standardised

#: answers provably below this share of the float type's largest value skip the overflow scan
_SAFE = 0.25


def _largest(a: np.ndarray | None, default: float) -> float:
    """The largest magnitude in a (small) parameter array, or `default` when there is none."""
    return default if a is None else float(np.max(np.abs(a)))


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

    # -- public views of where the statistics run ---------------------------------------------
    def statistics_layout(self, x: np.ndarray) -> tuple[np.ndarray, tuple[int, ...]]:
        """The block as the statistics see it, and the axes they run along.

        The view is `x` itself except for group norm, which splits the channels into
        (groups, channels in a group). Any array of the input's shape will do (labels included).
        """
        view = self._view(x)
        return view, self._stat_axes(view)

    def aligned(self, p: np.ndarray, x: np.ndarray) -> np.ndarray:
        """A per-feature array (scale, shift, running figures) reshaped to broadcast against `x`."""
        return self._expand(p, x)

    # -- the shared pass -----------------------------------------------------------------------
    def statistic_count(self, x: np.ndarray) -> int:
        """How many values each statistic is read from, for a block shaped as `x`."""
        view, axes = self.statistics_layout(x)
        return math.prod([view.shape[a] for a in axes])

    def forward(self, x: Any, purpose: str = PREDICTING) -> Response:
        """Standardise `x` and apply scale and shift. Predicting is the default purpose."""
        purpose = check_purpose(purpose)
        x = as_block(x, "x", finite=False)
        self._prepare(x)
        check_not_empty(x, "x")
        view, axes = self.statistics_layout(x)
        count = math.prod([view.shape[a] for a in axes])
        check_values(x, count, "x")
        given = self._given(view, x) if purpose == PREDICTING else None
        scale, shift = (self._in_view(self.scale, x), self._in_view(self.shift, x)) if (
            self.affine
        ) else (None, None)
        if given is None:
            st, out = standardise_affine(view, axes, self.epsilon, self.centred, scale, shift)
            # Statistics read from the block keep every |z| <= sqrt(count): the output is bounded
            # by the parameters alone, and the full scan for overflow is needed only near the top
            # of the float range.
            bound = math.sqrt(count) * _largest(scale, 1.0) + _largest(shift, 0.0)
        else:
            st, out = standardise_by_affine(view, given[0], given[1], axes, scale, shift)
            bound = math.inf
        if not bound < _SAFE * float(np.finfo(x.dtype).max):
            check_finite_result(out, f"{type(self).__name__}.forward")
        stats = self._batch_statistics(st, x) if purpose == TRAINING else None
        return Response(
            output=out.reshape(x.shape),
            layer=self,
            purpose=purpose,
            input=x,
            cache=st,
            statistics=stats,
        )

    def backward(self, response: Response, d_out: Any) -> Gradient:
        """The slope passed down (all routes the statistics open) and the parameter slopes.

        scale's slope is sum(d_out * z) and shift's is sum(d_out), summed over every axis the
        parameter is shared along.
        """
        response = check_response(self, response)
        d = check_slope(response, d_out, finite=False)
        x = response.input
        st: Standardised = response.cache
        largest = check_values(d, st.count, "d_out")
        if self.affine:
            scale = self._in_view(self.scale, x)
            shared = tuple(i for i, size in enumerate(scale.shape) if size == 1)
        else:
            scale, shared = None, None
        passed, d_scale, d_shift = standardise_affine_backward(
            st, self._view_like(d, x), scale, shared
        )
        # |passed| <= max(scale / deviation) * max|d_out| * (2 + sqrt(count)): the three routes,
        # each bounded because |z| <= sqrt(count) and mean|z| <= 1.
        routes = 2.0 + math.sqrt(st.count) if st.from_block else 1.0
        bound = largest * _largest(scale, 1.0) * float(np.max(1.0 / st.deviation)) * routes
        if not bound < _SAFE * float(np.finfo(x.dtype).max):
            check_finite_result(passed, f"{type(self).__name__}.backward")
        slopes: dict[str, np.ndarray] = {}
        if d_scale is not None and d_shift is not None:
            for key, value in (("scale", d_scale), ("shift", d_shift)):
                slopes[key] = check_finite_result(
                    value.reshape(self.scale.shape), f"{type(self).__name__}.backward ({key})"
                )
        return Gradient(
            passed_down=passed.reshape(x.shape),
            layer=self,
            slopes=slopes,
            statistics=response.statistics,
        )

    def step(self, gradient: Gradient, rate: float) -> Normaliser:
        """A new layer with scale and shift moved by `-rate * slope`."""
        rate = check_gradient(self, gradient, rate)
        return renewed(self, self._moved(gradient, rate))

    # -- helpers -------------------------------------------------------------------------------
    def _view_like(self, d: np.ndarray, x: np.ndarray) -> np.ndarray:
        return d.reshape(self._view(x).shape)

    def _in_view(self, p: np.ndarray, x: np.ndarray) -> np.ndarray:
        """A per-feature array lined up with the statistics' view of `x`, in x's dtype."""
        e = self._expand(p, x)
        return e.reshape((1,) * (x.ndim - e.ndim) + e.shape).astype(x.dtype, copy=False)

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
