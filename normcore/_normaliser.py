"""The thin value every statistic-reading normaliser shares: standardise, then scale and shift.

Subclasses say only where their statistics run (`_stat_axes`), how their parameters line up with
the block (`_expand`) and what input shapes they take (`_prepare`). The arithmetic is the routine
in `normcore.standardise`, called by `forward` and `backward` below, for every block.

**How a result is known to be finite.** Each call reads its input once (`check_values`: finite,
and small enough that the statistics' sums of squares cannot overflow), which also gives a bound
on the input's magnitudes. A layer knows a bound on its parameters' magnitudes (`_reach`: worked
out by its constructor, carried forward by each step), and statistics read from the block bound
every standardised value, ``|z| <= sqrt(n)`` (taken as ``2 sqrt(n) + 2``, far above what
rounding adds). Together they bound every value `forward`, `backward` and `step` compute (`Layout`
and `Normaliser._bounded`). A result whose bound stays below its float type's largest value over
256 cannot have overflowed, and is handed back without reading it again; any other result (huge
parameters, or statistics handed in, as the running statistics of an evaluation-mode pass, which
bound no z) is read entry by entry (`check_finite_result`) and refused if it overflowed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np

from ._checks import (
    Remade,
    as_block,
    as_parameter,
    check_epsilon,
    check_epsilon_fits,
    check_finite_result,
    check_magnitudes,
    check_not_empty,
    check_rate,
    fits,
    largest_magnitude,
    magnitude_limit,
    own_error_state,
    sealed,
)
from .errors import ForeignResponseError, ShapeError
from .mode import EVAL, TRAIN, check_mode
from .responses import (
    Gradient,
    Response,
    Statistics,
    answered,
    check_grad_output,
    check_gradient,
    check_response,
)
from .standardise import (
    Standardised,
    standardise,
    standardise_backward,
    standardise_by,
    statistic_count,
)

Given = tuple[np.ndarray | None, np.ndarray]  # (mean, deviation) handed in: the running statistics

#: a result whose bound is below its float type's largest value divided by this is taken as
#: finite without a scan (the bounds are loose by far less: this is a margin, not a correction)
MARGIN = 256.0

#: the largest bound taken without a scan, for each float type normcore computes in
CEILINGS = {np.dtype(t): float(np.finfo(t).max) / MARGIN for t in (np.float32, np.float64)}


class Layout(NamedTuple):
    """What a layer works out once about the blocks of one shape, float type and mode (none
    of it can change: a step keeps every shape and setting).

    `shape` is the statistics' view of the block (`split` when it is not the block's own
    shape: group norm splits the channels, ghost batch norm the rows), `axes` the axes they run
    along and `count` the values each statistic reads. `limit` is the magnitude limit
    `check_magnitudes` holds the block to: its squares summed `checked` at a time stay finite
    (`count`, or the row count for a predicting batch layer); `d_limit` is the one for a gradient
    of its shape (`count` at a time). `z_reach` bounds |z| when the statistics are read from
    the block: ``|z| <= sqrt(count)``, taken as ``2 sqrt(count) + 2`` so that no rounding (of
    the sums, or of a tiny variance) can pass it. `terms` is how many values are summed into
    each entry of a parameter's gradient, and `ceiling` the largest bound taken without a scan
    (the float type's largest value over `MARGIN`). `lined` is the parameters' shape lined up
    with the block (not the view: the output and the parameter gradients are made in the block's
    own shape), or None when they broadcast as they are (a block (rows, features) and
    parameters (features,)), and `shared`
    the axes of the block they are shared along, which their gradients sum over.
    """

    shape: tuple[int, ...]
    split: bool
    axes: tuple[int, ...]
    count: int
    checked: int
    limit: float
    d_limit: float
    z_reach: float
    terms: int
    ceiling: float
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
            raise ShapeError(f"affine: expected True or False, got {self.affine!r}")
        object.__setattr__(self, "affine", bool(self.affine))
        object.__setattr__(self, "scale", scale)
        object.__setattr__(self, "shift", shift)
        # not fields: a bound on the parameters' magnitudes, and the layouts of the blocks read
        # (`Layout`), which the layers this one's steps make share
        self.__dict__["_reach"] = largest_magnitude(scale, shift)
        self.__dict__["_layouts"] = {}

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
        """Statistics to use in evaluation mode (running statistics), or None to read the block."""
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
        """A per-feature array `p` (shaped as scale: scale, shift, running statistics) reshaped to
        broadcast against the block `x`."""
        p = as_block(p, "p")
        if p.shape != self.scale.shape:
            raise ShapeError(f"p: expected the scale's shape {self.scale.shape}, got {p.shape}")
        return self._expand(p, self._checked(x))

    def statistic_count(self, x: Any) -> int:
        """How many values each statistic is read from, for a block shaped as `x`."""
        view, axes = self.statistics_layout(x)
        return statistic_count(view.shape, axes)

    # -- the three calls -----------------------------------------------------------------------
    @own_error_state
    def forward(self, x: Any, mode: str = EVAL) -> Response:
        """Standardise `x` and apply scale and shift.

        Args:
            x: the block, shaped as the layer's docstring says (batch norm (..., rows,
                features); layer and RMS norm (..., *normalized_shape); the image layers
                (images, channels, height, width)); float32 stays float32, other real numbers
                become float64.
            mode: 'train' (standardise by the block's own statistics) or 'eval'
                (the default: by the running statistics, for the layers that keep them).

        Returns:
            A `Response`: `output` shaped and typed as `x`; `statistics` the batch's own mean,
            variance and deviation (shaped as the running statistics) when a batch layer trained.
        """
        mode = check_mode(mode)
        x = as_block(x, "x", finite=False)
        layout = self._layout(x, mode)
        check_magnitudes(x, layout.limit, layout.checked, "x")
        view = x.reshape(layout.shape) if layout.split else x
        scale, shift = self._parameters_for(x, layout)
        given = self._given(x) if mode == EVAL else None
        if given is None:
            st = standardise(view, layout.axes, self.eps, self.centred)
        else:
            st = standardise_by(view, given[0], given[1], layout.axes)
        z = st.z.reshape(x.shape) if layout.split else st.z  # a view: values in order
        if scale is None:
            out, reach = z, layout.z_reach
        else:
            out, reach = z * scale + shift, (layout.z_reach + 1.0) * self._reach
        if not (st.from_block and reach <= layout.ceiling):
            check_finite_result(out, "forward", self)
        statistics = self._batch_statistics(st) if mode == TRAIN else None
        # by position: called with keywords, a class costs nearly a ufunc's time more
        return Response(out, self, mode, None, st, statistics)

    @own_error_state
    def backward(self, response: Response, grad_output: Any) -> Gradient:
        """The input gradient (all the routes the statistics open) and the parameter gradients.

        Args:
            response: what this layer's `forward` answered.
            grad_output: the gradient of the loss with respect to the output (the output's shape).

        Returns:
            A `Gradient`: `grad_input` shaped as the input; `grads['scale']` = sum(grad_output * z)
            and `grads['shift']` = sum(grad_output), each summed over every axis the parameter is
            shared along and shaped as the parameter (no gradients when ``affine`` is False).
        """
        response = check_response(self, response)
        d = check_grad_output(response, grad_output, finite=False)
        layout = self._layout(d, response.mode)
        st = response.cache
        if not isinstance(st, Standardised) or st.z.shape != layout.shape:
            raise ForeignResponseError(
                "response.cache: expected the standardised block this layer's forward pass made"
            )
        d_reach = check_magnitudes(d, layout.d_limit, layout.count, "grad_output")
        scale, _ = self._parameters_for(d, layout)
        if scale is None:
            arriving, reach = d, d_reach
        else:  # the upstream gradient at z
            arriving, reach = d * scale, d_reach * self._reach
        if layout.split:  # to the statistics' view (a view: values in order)
            arriving = arriving.reshape(layout.shape)
        passed = standardise_backward(st, arriving)
        if not (st.from_block and self._bounded(layout, reach)):
            check_finite_result(passed, "backward", self)
        grads: dict[str, np.ndarray] = {}
        grad_reach = layout.terms * d_reach * layout.z_reach  # |sum of d z| and |sum of d|
        if scale is not None:  # the parameter gradients: sum(d z) and sum(d) where shared
            z = st.z.reshape(d.shape) if layout.split else st.z
            grads["scale"] = np.add.reduce(d * z, axis=layout.shared)
            grads["shift"] = np.add.reduce(d, axis=layout.shared)
            if not (st.from_block and grad_reach <= layout.ceiling):
                for key, value in grads.items():
                    check_finite_result(value, "backward", self, f"gradient of {key}")
                grad_reach = largest_magnitude(*grads.values())
            shape = self.scale.shape
            if grads["scale"].shape != shape:  # parameters with an axis of size 1
                grads = {key: _shaped(value, shape) for key, value in grads.items()}
        grad_input = passed if passed.shape == d.shape else _shaped(passed, d.shape)
        # by position: called with keywords, a class costs nearly a ufunc's time more
        return answered(Gradient(grad_input, self, grads, response.statistics), grad_reach)

    @own_error_state
    def step(self, gradient: Gradient, rate: float) -> Normaliser:
        """A new layer with scale and shift moved by ``-rate * grad``.

        Args:
            gradient: what this layer's `backward` answered.
            rate: the learning rate, a finite number.

        Returns:
            A new layer of the same type and shapes; this one is unchanged, and the new one
            shares every array the step did not change (they are read-only).
        """
        rate, grads, grad_reach = self._checked_gradient(gradient, rate)
        return self._successor(*self._moved(grads, rate, grad_reach))

    # -- helpers -------------------------------------------------------------------------------
    def _checked_gradient(
        self, gradient: Any, rate: Any
    ) -> tuple[float, Mapping[str, np.ndarray], float | None]:
        """`check_gradient`'s rate and gradients, and a bound on the gradients' magnitudes when this
        layer's own `backward` made the gradient (then its gradients and statistics are taken as
        they are, with no parameters named and looked up to check them against), else None."""
        if type(gradient) is Gradient and gradient.layer is self and gradient.made_by_backward:
            return check_rate(rate), gradient.grads, gradient.grad_reach
        rate, grads = check_gradient(self, gradient, rate, self._learned())
        return rate, grads, None

    def _bounded(self, layout: Layout, reach: float) -> bool:
        """Whether the input gradient, from an upstream gradient bounded by `reach`, is bounded
        below `layout.ceiling` (statistics read from the block). With n values per statistic,
        |z| <= Z and the deviation at least sqrt(epsilon / 2) (epsilon as the block's float type
        rounds it), every sum in ``(n d - sum(d) - z sum(d z)) / (n s)`` is at most
        n reach (2 + Z**2), and the quotient at most that over n sqrt(epsilon / 2)."""
        n = layout.count
        top = n * reach * (2.0 + layout.z_reach * layout.z_reach)
        return max(top, top / (n * math.sqrt(self.eps / 2))) <= layout.ceiling

    def _successor(self, moved: dict[str, np.ndarray], reach: float) -> Normaliser:
        """The layer a step makes: this one with the `moved` arrays in place of the old, and
        `reach` the bound on its parameters' magnitudes. It shares every array the step did not
        change, and what this layer learnt about the layouts of the blocks it read (a step
        changes no shape and no setting).

        It holds what ``dataclasses.replace(self, **moved)`` would make, without running the
        constructor's checks again: there is nothing left for them to find, as every field is
        either this layer's (checked by its constructor) or a moved array (known finite and
        sealed by the step that made it), and running them would cost as much as the step's
        arithmetic. ``tests/test_layer_contract.py`` holds the two equal for every layer.
        """
        new = object.__new__(type(self))
        fields = new.__dict__
        fields.update(self.__dict__)  # the fields, and the layouts (`_layout`), shared
        fields.pop("_lined_up", None)  # this layer's parameters in another float type: not new's
        fields.update(moved)
        fields["_reach"] = reach
        return new

    def _layout(self, x: np.ndarray, mode: str) -> Layout:
        """Refuse a block this layer cannot read for `mode` (ShapeError, EmptyBatchError, an
        EpsilonError for a float type that cannot hold epsilon); else its `Layout`. The checks
        depend only on the block's shape and float type (and the layer's settings, which a step
        keeps), so each is worked out once by a layer and shared with the layers its steps make.
        """
        key = (x.shape, x.dtype, mode)
        layout = self.__dict__["_layouts"].get(key)
        if layout is None:
            layout = self._cache("_layouts")[key] = self._work_out_layout(x, mode)
        return layout

    def _work_out_layout(self, x: np.ndarray, mode: str) -> Layout:
        """`_layout`'s answer for a block shaped and typed as `x`, read for `mode`, worked out
        (the refusals first, then the view, the axes, the counts, the limits and the bounds)."""
        self._prepare(x)
        self._check_rows(x, mode)
        check_not_empty(x, "x")
        check_epsilon_fits(self.eps, x.dtype)
        view = self._view(x)
        axes = self._stat_axes(view)
        count = statistic_count(view.shape, axes)
        checked = self._values_per_check(x, view, axes, mode)
        e = self._expand(self.scale, x)
        lined = (1,) * (x.ndim - e.ndim) + e.shape
        shared = tuple(i for i, n in enumerate(lined) if n == 1)
        return Layout(
            shape=view.shape,
            split=view.shape != x.shape,
            axes=axes,
            count=count,
            checked=checked,
            limit=magnitude_limit(x.dtype, checked),
            d_limit=magnitude_limit(x.dtype, count),
            z_reach=2.0 * math.sqrt(count) + 2.0,
            terms=x.size // max(self.scale.size, 1),
            ceiling=CEILINGS[x.dtype],
            lined=None if lined[x.ndim - self.scale.ndim :] == self.scale.shape else lined,
            shared=shared,
        )

    def _check_rows(self, x: np.ndarray, mode: str) -> None:
        """Refuse a block this mode cannot read (ghost batch norm: rows that do not divide)."""

    def _values_per_check(
        self, x: np.ndarray, view: np.ndarray, axes: tuple[int, ...], mode: str
    ) -> int:
        """The count `check_values` bounds magnitudes for: the values of one statistic."""
        return statistic_count(view.shape, axes)

    def _learned(self) -> dict[str, np.ndarray]:
        """The parameters a step moves, by name."""
        return {"scale": self.scale, "shift": self.shift} if self.affine else {}

    def _parameters_for(
        self, x: np.ndarray, layout: Layout
    ) -> tuple[np.ndarray | None, np.ndarray | None]:
        """Scale and shift lined up with the block `x` (`layout.lined`), in x's dtype; (None,
        None) when not affine. Parameters (features,) broadcast against a block (rows, features)
        as they are; others are reshaped (a view of the sealed array), and a float32 block gets
        float32 copies, made once by each layer."""
        if not self.affine:
            return None, None
        scale, shift = self.scale, self.shift
        if scale.dtype != x.dtype or shift.dtype != x.dtype:
            known = self._cache("_lined_up")
            key = (x.ndim, x.dtype)
            found = known.get(key)
            if found is None:
                shape = scale.shape if layout.lined is None else layout.lined
                found = known[key] = (
                    sealed(fits(scale.reshape(shape), x.dtype, "scale")),
                    sealed(fits(shift.reshape(shape), x.dtype, "shift")),
                )
            return found
        if layout.lined is None:
            return scale, shift
        return scale.reshape(layout.lined), shift.reshape(layout.lined)  # sealed views

    def _cache(self, name: str) -> dict[Any, Any]:
        """The dict `name` in this layer's ``__dict__``, made on first use: what the layer has
        worked out about the blocks it has read, which cannot change as the layer cannot
        (``_layouts``, shared with its successors; ``_lined_up``, float32 copies of its
        parameters). Emptied past 64 entries (many shapes read, as in a fuzz) rather than left
        to grow."""
        known = self.__dict__.get(name)
        if known is None:
            known = self.__dict__[name] = {}
        elif len(known) > 64:
            known.clear()
        return known

    def _lined(self, p: np.ndarray, x: np.ndarray) -> np.ndarray:
        """A per-feature array `p` reshaped to broadcast against the statistics' view of `x`
        (a view of `p`: lining up inserts or splits axes, it never reorders values)."""
        e = self._expand(p, x)
        return e.reshape((1,) * (x.ndim - e.ndim) + e.shape)

    def _in_view(self, p: np.ndarray, x: np.ndarray, name: str) -> np.ndarray:
        """`p` lined up with the statistics' view of `x` (`_lined`), in x's dtype, read-only."""
        return sealed(fits(self._lined(p, x), x.dtype, name))

    def _moved(
        self, grads: Mapping[str, np.ndarray], rate: float, grad_reach: float | None
    ) -> tuple[dict[str, np.ndarray], float]:
        """Each parameter moved by ``-rate * grad``, sealed (the new layer takes it as it is,
        `_successor`, and shares every array the step did not change), and a bound on the new
        parameters' magnitudes: this layer's bound plus |rate| times `grad_reach` (a bound on
        the gradients' magnitudes, or None when the gradient was made by hand). Each moved array is
        read entry by entry (MagnitudeError on an overflow) unless that bound is below its float
        type's largest value over `MARGIN`."""
        moved, ceiling = {}, CEILINGS[self.scale.dtype]
        for key, grad in grads.items():
            moved[key] = getattr(self, key) - rate * grad
            # rate * gradient is computed in the gradient's float type (float32 for a float32
            # block), the rate cast to it first
            ceiling = min(ceiling, CEILINGS[grad.dtype])
        if not moved:
            return moved, self._reach
        reach = None
        if grad_reach is not None and abs(rate) <= ceiling:
            # rounded up by far more than the rounding of the step's two operations
            reach = (self._reach + abs(rate) * grad_reach) * (1.0 + 2.0**-20)
        if reach is None or reach > ceiling:
            for key, value in moved.items():
                check_finite_result(value, "step", self, key)
            reach = largest_magnitude(*moved.values())
        for key, value in moved.items():
            moved[key] = sealed(value)
        return moved, reach


def _shaped(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """`a` reshaped to `shape`, read-only: a reshape of a fresh answer is a view of it, so the
    answer is sealed first (and the value that keeps the view need not copy it)."""
    return sealed(a).reshape(shape)
