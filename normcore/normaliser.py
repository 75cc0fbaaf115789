"""Every statistic-reading normaliser's three calls: standardise, then scale and shift.

`Normaliser` is the layer value batch, layer, RMS, instance and group norm share. Its `forward`
and `backward` are the arithmetic of every one of them: the input checks, the routine of
`normcore.standardise` along the subclass's axes, ``z * scale + shift``, and the value handed
back. A subclass says six things:

* `_prepare`: the input shapes it takes, in each mode (ShapeError otherwise);
* `_view`: the input as the statistics see it (group norm splits the channels into groups, ghost
  batch norm the rows in training mode; the others read the input as it is);
* `_stat_axes`: the axes of that view the statistics run along;
* `_lined`: the shape a per-feature array (scale, shift, a running statistic) takes to
  broadcast against an input with a given number of axes;
* `_given`: the statistics evaluation mode standardises by (the running statistics), or None to
  read them from the input, as training mode does;
* `_batch_statistics`: the batch's statistics a training response carries to `step`.

Every call runs under numpy's raise state (`own_error_state`): an overflow anywhere in the
arithmetic, a huge scale times z or a step's ``rate * gradient``, is refused as a MagnitudeError
naming the call, and nothing handed back holds a NaN or an infinity.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np

from ._checks import (
    Remade,
    as_input,
    as_parameter,
    check_epsilon,
    check_epsilon_fits,
    check_magnitudes,
    check_not_empty,
    fits,
    magnitude_limit,
    own_error_state,
    seal,
    statistic_count,
    successor,
)
from .errors import ForeignResponseError, SettingError, ShapeError
from .mode import EVAL, TRAIN, check_mode
from .responses import (
    Gradient,
    Response,
    Standardised,
    Statistics,
    answered,
    check_grad_output,
    check_response,
    moved_parameters,
)
from .standardise import standardise, standardise_backward, standardise_by

Given = tuple[np.ndarray | None, np.ndarray]  # (mean, divisor) handed in: running statistics


class Plan(NamedTuple):
    """What a layer works out once about the inputs of one shape, float type and mode (a step
    keeps every shape and setting, so the layers its steps make share it).

    `shape` is the statistics' view of the input, `axes` the axes of the view they run along and
    `n` the values each statistic reads; `limit` is the largest magnitude whose squares, summed
    `n` at a time, stay within the float type (`check_magnitudes`). `lined` is the
    parameters' shape lined up with the input (`Normaliser._lined`), or None when they
    broadcast as they are, and `shared` the input's axes they are shared along, which their
    gradients sum over.
    """

    shape: tuple[int, ...]
    axes: tuple[int, ...]
    n: int
    limit: float
    lined: tuple[int, ...] | None
    shared: tuple[int, ...]


@dataclass(frozen=True, eq=False)
class Normaliser(Remade):
    """Base of batch, layer, RMS, instance and group norm. Not used directly."""

    scale: np.ndarray
    shift: np.ndarray
    eps: float = 1e-5
    affine: bool = True

    centred: ClassVar[bool] = True
    name: ClassVar[str] = "normaliser"

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps", check_epsilon(self.eps))
        scale = as_parameter(self.scale, "scale")
        shift = as_parameter(self.shift, "shift")
        if scale.shape != shift.shape:
            raise ShapeError(f"shift: expected the scale's shape {scale.shape}, got {shift.shape}")
        if not isinstance(self.affine, (bool, np.bool_)):
            raise SettingError(f"affine: expected True or False, got {self.affine!r}")
        object.__setattr__(self, "affine", bool(self.affine))
        object.__setattr__(self, "scale", scale)
        object.__setattr__(self, "shift", shift)
        self.__dict__["_plans"] = {}  # not a field: the `Plan`s, shared with the successors

    # -- what subclasses say -------------------------------------------------------------------
    def _prepare(self, x: np.ndarray, mode: str) -> None:
        """Refuse inputs of the wrong rank or size for this layer in `mode` (ShapeError)."""
        raise NotImplementedError

    def _view(self, x: np.ndarray, mode: str) -> np.ndarray:
        """The input as the statistics see it in `mode`."""
        return x

    def _stat_axes(self, view: np.ndarray) -> tuple[int, ...]:
        raise NotImplementedError

    def _lined(self, ndim: int) -> tuple[int, ...]:
        """The shape of a per-feature array lined up with an input of `ndim` axes."""
        raise NotImplementedError

    def _given(self, x: np.ndarray) -> Given | None:
        """The statistics evaluation mode standardises by, or None to read the input's own."""
        return None

    def _batch_statistics(self, st: Standardised) -> Statistics | None:
        return None

    # -- the three calls -----------------------------------------------------------------------
    @own_error_state
    def forward(self, x: Any, mode: str = EVAL) -> Response:
        """Standardise `x` and apply scale and shift.

        Args:
            x: the input, shaped as the layer's docstring says (batch norm (..., rows,
                features); layer and RMS norm (..., *normalized_shape); the image layers
                (images, channels, height, width)); float32 stays float32, other real numbers
                become float64.
            mode: 'train' (training mode: standardise by the input's own statistics) or
                'eval' (evaluation mode, the default: by the running statistics, for the
                layers that keep them).

        Returns:
            A `Response`: `output` shaped and typed as `x`; `statistics` the batch's own mean,
            variance and divisor (shaped as the running statistics) when a batch layer trained.
        """
        mode = check_mode(mode)
        x = as_input(x, "x", finite=False)
        plan = self.__dict__["_plans"].get((x.shape, x.dtype, mode)) or self._plan(x, mode)
        check_magnitudes(x, plan.limit, plan.n, "x")
        view = x.reshape(plan.shape)
        given = self._given(x) if mode == EVAL else None
        if given is None:
            st = standardise(view, plan.axes, self.eps, self.centred)
        else:
            st = standardise_by(view, given[0], given[1], plan.axes)
        out = st.z.reshape(x.shape)
        if self.affine:
            scale, shift = self._parameters(x, plan)
            out = out * scale + shift
        statistics = self._batch_statistics(st) if mode == TRAIN else None
        return Response(out, self, mode, None, st, statistics)

    @own_error_state
    def backward(self, response: Response, grad_output: Any) -> Gradient:
        """The input gradient ∂L/∂x (every route the statistics open) and the gradients of scale
        and shift.

        Args:
            response: what this layer's `forward` handed back.
            grad_output: the upstream gradient ∂L/∂y, shaped as the output.

        Returns:
            A `Gradient`: `grad_input` (∂L/∂x) shaped as the input; `grads['scale']` =
            sum(grad_output * z) and `grads['shift']` = sum(grad_output), each summed over every
            axis the parameter is shared along and shaped as the parameter (none when ``affine`` is
            False).
        """
        response = check_response(self, response)
        d = check_grad_output(response, grad_output, finite=False)
        plan = self.__dict__["_plans"].get((d.shape, d.dtype, response.mode)) or self._plan(
            d, response.mode
        )
        st = response.cache
        if not isinstance(st, Standardised) or st.z.shape != plan.shape:
            raise ForeignResponseError(
                "response.cache: expected the standardised input this layer's forward pass made"
            )
        check_magnitudes(d, plan.limit, plan.n, "grad_output")
        grads = {}
        if self.affine:  # sum(d z) and sum(d) along the axes each parameter is shared along
            scale, _ = self._parameters(d, plan)
            z = st.z.reshape(d.shape)
            grads["scale"] = np.add.reduce(d * z, axis=plan.shared)
            grads["shift"] = np.add.reduce(d, axis=plan.shared)
            if grads["scale"].shape != self.scale.shape:  # parameters with an axis of size 1
                grads = {key: _shaped(value, self.scale.shape) for key, value in grads.items()}
            d = d * scale  # the upstream gradient at z
        passed = standardise_backward(st, d.reshape(plan.shape))
        if passed.shape != d.shape:  # the statistics' view split an axis
            passed = _shaped(passed, d.shape)
        return answered(Gradient(passed, self, grads, response.statistics))

    @own_error_state
    def step(self, gradient: Gradient, rate: float) -> Normaliser:
        """A new layer with scale and shift moved by ``-rate * gradient``.

        Args:
            gradient: what this layer's `backward` handed back.
            rate: the learning rate, a finite number (or one per independent model, an array
                shaped as the parameters' leading axes).

        Returns:
            A new layer of the same type and shapes; this one is unchanged, and the new one
            shares every array the step did not change (they are read-only).
        """
        return successor(self, moved_parameters(self, gradient, rate))

    # -- public views of where the statistics run ---------------------------------------------
    def statistics_layout(self, x: Any) -> tuple[np.ndarray, tuple[int, ...]]:
        """The input as the statistics see it in training mode, and the axes they run along.

        `x` is any input this layer takes (labels included: integers become float64). The view
        is `x` itself except for group norm, which splits the channels into
        (groups, channels in a group), and ghost batch norm, which splits the rows into
        (groups, rows in a group). Refuses an input of the wrong shape (ShapeError).
        """
        x = as_input(x, "x")
        self._prepare(x, TRAIN)
        view = self._view(x, TRAIN)
        return view, self._stat_axes(view)

    def aligned(self, p: Any, x: Any) -> np.ndarray:
        """A per-feature array `p` (shaped as scale: scale, shift, running statistics) reshaped
        to broadcast against the input `x`."""
        p = as_input(p, "p")
        if p.shape != self.scale.shape:
            raise ShapeError(f"p: expected the scale's shape {self.scale.shape}, got {p.shape}")
        x = as_input(x, "x")
        self._prepare(x, EVAL)
        return p.reshape(self._lined(x.ndim))

    def statistic_count(self, x: Any) -> int:
        """How many values each statistic is read from, for an input shaped as `x`."""
        view, axes = self.statistics_layout(x)
        return statistic_count(view.shape, axes)

    # -- helpers -------------------------------------------------------------------------------
    def _learned(self) -> dict[str, np.ndarray]:
        """The parameters a step moves, by name."""
        return {"scale": self.scale, "shift": self.shift} if self.affine else {}

    def _plan(self, x: np.ndarray, mode: str) -> Plan:
        """The `Plan` for inputs shaped and typed as `x` in `mode`, worked out (the refusals
        first: ShapeError, EmptyBatchError, an EpsilonError for a float type that cannot hold
        epsilon) and kept in ``_plans``, which the calls read before they call this."""
        self._prepare(x, mode)
        check_not_empty(x, "x")
        check_epsilon_fits(self.eps, x.dtype)
        view = self._view(x, mode)
        axes = self._stat_axes(view)
        n = statistic_count(view.shape, axes)
        lined = self._lined(x.ndim)
        as_is = lined[x.ndim - self.scale.ndim :] == self.scale.shape
        shared = tuple(i for i, size in enumerate(lined) if size == 1)
        plan = Plan(
            view.shape, axes, n, magnitude_limit(x.dtype, n), None if as_is else lined, shared
        )
        plans = self.__dict__["_plans"]
        if len(plans) > 64:  # many shapes read (a fuzz): start again rather than grow
            plans.clear()
        plans[(x.shape, x.dtype, mode)] = plan
        return plan

    def _parameters(self, x: np.ndarray, plan: Plan) -> tuple[np.ndarray, np.ndarray]:
        """Scale and shift lined up with the input `x`, in its float type (a float32 input gets
        float32 copies, made once by each layer)."""
        scale, shift = self.scale, self.shift
        if scale.dtype == x.dtype and shift.dtype == x.dtype:
            if plan.lined is None:
                return scale, shift
            return scale.reshape(plan.lined), shift.reshape(plan.lined)  # sealed views
        return self._in_type(x, "scale", scale, "shift", shift)

    def _in_type(
        self, x: np.ndarray, name: str, a: np.ndarray, other: str, b: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The per-feature arrays `a` and `b` (named `name` and `other`) lined up with `x`, in
        x's float type, read-only: worked out once per layer, rank and float type
        (MagnitudeError for a value beyond the type)."""
        known = self.__dict__.setdefault("_lined_up", {})
        key = (name, x.ndim, x.dtype)
        found = known.get(key)
        if found is None:
            shape = self._lined(x.ndim)
            found = known[key] = (
                seal(fits(a.reshape(shape), x.dtype, name)),
                seal(fits(b.reshape(shape), x.dtype, other)),
            )
        return found


def _shaped(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """`a` reshaped to `shape`, read-only: a reshape of a fresh result is a view of it, so the
    result is sealed first (and the value that keeps the view need not copy it)."""
    return seal(a).reshape(shape)
