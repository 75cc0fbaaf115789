"""The thin value every statistic-reading normaliser shares: standardise, then scale and shift.

Subclasses say only where their statistics run (`_stat_axes`), how their parameters line up with
the block (`_expand`) and what input shapes they take (`_prepare`). The arithmetic is the routine
in `normcore.standardise`, called by `forward` and `backward` below; blocks larger than one
slab go to `normcore.fast` instead, an optimisation of that routine chosen there and only there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from . import fast
from ._checks import (
    Remade,
    as_block,
    as_parameter,
    check_epsilon,
    check_epsilon_fits,
    check_finite_result,
    check_not_empty,
    check_values,
    fits,
    handed_out,
    own_error_state,
    renewed,
    sealed_as,
)
from .errors import ForeignResponseError, ShapeError
from .purpose import PREDICTING, TRAINING, check_purpose
from .responses import (
    Gradient,
    Response,
    Statistics,
    check_d_out,
    check_gradient,
    check_response,
)
from .standardise import Standardised, standardise, standardise_backward, standardise_by

Given = tuple[np.ndarray | None, np.ndarray]  # (mean, deviation) handed in: the running figures


@dataclass(frozen=True, eq=False)
class Normaliser(Remade):
    """Base of batch, layer, RMS, instance and group norm. Not used directly."""

    scale: np.ndarray
    shift: np.ndarray
    epsilon: float = 1e-5
    affine: bool = True

    centred: ClassVar[bool] = True
    name: ClassVar[str] = "normaliser"

    @own_error_state
    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        scale = as_parameter(self.scale, "scale")
        shift = as_parameter(self.shift, "shift")
        if scale.shape != shift.shape:
            raise ShapeError(f"shift: expected the scale's shape {scale.shape}, got {shift.shape}")
        if not isinstance(self.affine, (bool, np.bool_)):
            raise ShapeError(f"affine: expected True or False, got {self.affine!r}")
        object.__setattr__(self, "affine", bool(self.affine))
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
        """The block as the statistics see it (group norm splits channels into groups, ghost
        batch norm rows)."""
        return x

    def _given(self, x: np.ndarray) -> Given | None:
        """Statistics to use while predicting (running figures), or None to read the block."""
        return None

    def _batch_statistics(self, st: Standardised) -> Statistics | None:
        return None

    # -- public views of where the statistics run ---------------------------------------------
    def _checked(self, x: Any) -> np.ndarray:
        x = as_block(x, "x")
        self._prepare(x)
        return x

    def statistics_layout(self, x: Any) -> tuple[np.ndarray, tuple[int, ...]]:
        """The block as the statistics see it, and the axes they run along.

        `x` is any block this layer takes (labels included: integers become float64). The view
        is `x` itself except for group norm, which splits the channels into
        (groups, channels in a group), and ghost batch norm, which splits the rows into
        (groups, rows in a group). Refuses a block of the wrong shape (ShapeError).
        """
        view = self._view(self._checked(x))
        return view, self._stat_axes(view)

    def aligned(self, p: Any, x: Any) -> np.ndarray:
        """A per-feature array `p` (shaped as scale: scale, shift, running figures) reshaped to
        broadcast against the block `x`."""
        p = as_block(p, "p")
        if p.shape != self.scale.shape:
            raise ShapeError(f"p: expected the scale's shape {self.scale.shape}, got {p.shape}")
        return self._expand(p, self._checked(x))

    def statistic_count(self, x: Any) -> int:
        """How many values each statistic is read from, for a block shaped as `x`."""
        view, axes = self.statistics_layout(x)
        return math.prod([view.shape[a] for a in axes])

    # -- the three calls -----------------------------------------------------------------------
    @own_error_state
    def forward(self, x: Any, purpose: str = PREDICTING) -> Response:
        """Standardise `x` and apply scale and shift.

        Args:
            x: the block, shaped as the layer's docstring says (batch norm (..., rows,
                features); layer and RMS norm (..., *normalized_shape); the image layers
                (images, channels, height, width)); float32 stays float32, other real numbers
                become float64.
            purpose: 'training' (standardise by the block's own statistics) or 'predicting'
                (the default: by the running figures, for the layers that keep them).

        Returns:
            A `Response`: `output` shaped and typed as `x`; `statistics` the batch's own mean,
            variance and deviation (shaped as the running figures) when a batch layer trained.
        """
        purpose = check_purpose(purpose)
        x = as_block(x, "x", finite=False)
        self._prepare(x)
        check_not_empty(x, "x")
        check_epsilon_fits(self.epsilon, x.dtype)
        view = self._view(x)
        axes = self._stat_axes(view)
        check_values(x, math.prod([view.shape[a] for a in axes]), "x")
        scale, shift = self._parameters_for(x)
        given = self._given(x) if purpose == PREDICTING else None
        what, eps = f"{type(self).__name__}.forward", self.epsilon
        if fast.serves(view):  # beyond one slab: the same figures, computed a slab at a time
            st, out = fast.forward(view, axes, eps, self.centred, scale, shift, given, what)
        else:  # the readable routine, then scale and shift
            if given is None:
                st = standardise(view, axes, eps, self.centred)
            else:
                st = standardise_by(view, given[0], given[1], axes)
            out = check_finite_result(st.z if scale is None else st.z * scale + shift, what)
        return Response(
            output=handed_out(out, x.shape),
            layer=self,
            purpose=purpose,
            cache=st,
            statistics=self._batch_statistics(st) if purpose == TRAINING else None,
        )

    @own_error_state
    def backward(self, response: Response, d_out: Any) -> Gradient:
        """The slope passed down (all the routes the statistics open) and the parameter slopes.

        Args:
            response: what this layer's `forward` answered.
            d_out: the slope of the loss with respect to the output (the output's shape).

        Returns:
            A `Gradient`: `passed_down` shaped as the input; `slopes['scale']` = sum(d_out * z)
            and `slopes['shift']` = sum(d_out), each summed over every axis the parameter is
            shared along and shaped as the parameter (no slopes when ``affine`` is False).
        """
        response = check_response(self, response)
        d = check_d_out(response, d_out, finite=False)
        view = self._view(d)
        st = response.cache
        if not isinstance(st, Standardised) or st.z.shape != view.shape:
            raise ForeignResponseError(
                "response.cache: expected the standardised block this layer's forward pass made"
            )
        largest = check_values(d, st.count, "d_out")
        scale, _ = self._parameters_for(d)
        shared = None if scale is None else tuple(i for i, n in enumerate(scale.shape) if n == 1)
        what = f"{type(self).__name__}.backward"
        if fast.serves(view):
            passed, d_scale, d_shift = fast.backward(st, view, scale, shared, largest, what)
        else:  # the readable routine, through z * scale + shift
            arriving = view if scale is None else view * scale  # the slope arriving at z
            passed = check_finite_result(standardise_backward(st, arriving), what)
            d_scale = d_shift = None
            if shared is not None:  # the parameter slopes: sum(d z) and sum(d) where shared
                d_scale = np.sum(view * st.z, axis=shared, keepdims=True)
                d_shift = np.sum(view, axis=shared, keepdims=True)
        slopes: dict[str, np.ndarray] = {}
        if d_scale is not None and d_shift is not None:
            for key, value in (("scale", d_scale), ("shift", d_shift)):
                slopes[key] = sealed_as(check_finite_result(value, what), self.scale.shape)
        return Gradient(
            passed_down=sealed_as(passed, d.shape),
            layer=self,
            slopes=slopes,
            statistics=response.statistics,
        )

    @own_error_state
    def step(self, gradient: Gradient, rate: float) -> Normaliser:
        """A new layer with scale and shift moved by ``-rate * slope``.

        Args:
            gradient: what this layer's `backward` answered.
            rate: the learning rate, a finite number.

        Returns:
            A new layer of the same type and shapes; this one is unchanged.
        """
        rate, slopes = check_gradient(self, gradient, rate, self._learned())
        return renewed(self, self._moved(slopes, rate))

    # -- helpers -------------------------------------------------------------------------------
    def _learned(self) -> dict[str, np.ndarray]:
        """The parameters a step moves, by name."""
        return {"scale": self.scale, "shift": self.shift} if self.affine else {}

    def _parameters_for(self, x: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
        """Scale and shift lined up with the statistics' view of `x`, in x's dtype (None, None
        when not affine)."""
        if not self.affine:
            return None, None
        return self._in_view(self.scale, x, "scale"), self._in_view(self.shift, x, "shift")

    def _in_view(self, p: np.ndarray, x: np.ndarray, name: str) -> np.ndarray:
        """A per-feature array lined up with the statistics' view of `x`, in x's dtype."""
        e = self._expand(p, x)
        return fits(e.reshape((1,) * (x.ndim - e.ndim) + e.shape), x.dtype, name)

    def _moved(self, slopes: dict[str, np.ndarray], rate: float) -> dict[str, np.ndarray]:
        moved = {key: getattr(self, key) - rate * slope for key, slope in slopes.items()}
        for key, value in moved.items():
            check_finite_result(value, f"{type(self).__name__}.step ({key})")
        return moved
