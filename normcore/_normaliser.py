"""The thin value every statistic-reading normaliser shares: standardise, then scale and shift.

Subclasses say only where their statistics run (`_stat_axes`), how their parameters line up with
the block (`_expand`) and what input shapes they take (`_prepare`). The arithmetic is the routine
in `normcore.standardise`, called by `forward` and `backward` below, for every block.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ._checks import (
    Remade,
    as_block,
    as_parameter,
    check_epsilon,
    check_epsilon_fits,
    check_finite_result,
    check_not_empty,
    check_rate,
    check_values,
    field_names,
    fits,
    own_error_state,
    sealed,
)
from .errors import ForeignResponseError, ShapeError
from .purpose import PREDICTING, TRAINING, check_purpose
from .responses import (
    Gradient,
    Response,
    Statistics,
    answered,
    check_d_out,
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

Given = tuple[np.ndarray | None, np.ndarray]  # (mean, deviation) handed in: the running figures
#: scale and shift lined up with a block, and the axes they are shared along
Lined = tuple[np.ndarray | None, np.ndarray | None, tuple[int, ...]]


@dataclass(frozen=True, eq=False)
class Normaliser(Remade):
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
        return statistic_count(view.shape, axes)

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
        view, axes, count = self._layout(x, purpose)
        check_values(x, count, "x")
        scale, shift, _ = self._parameters_for(x)
        given = self._given(x) if purpose == PREDICTING else None
        if given is None:
            st = standardise(view, axes, self.epsilon, self.centred)
        else:
            st = standardise_by(view, given[0], given[1], axes)
        out = st.z if scale is None else st.z * scale + shift
        check_finite_result(out, "forward", self)
        return Response(
            output=out if out.shape == x.shape else _shaped(out, x.shape),
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
        check_values(d, st.count, "d_out")
        scale, _, shared = self._parameters_for(d)
        arriving = view if scale is None else view * scale  # the slope arriving at z
        passed = check_finite_result(standardise_backward(st, arriving), "backward", self)
        slopes = {}
        if scale is not None:  # the parameter slopes: sum(d z) and sum(d) where shared
            # Both finite, with no scan: check_values bounds |d| by sqrt(largest / (8 n)), and
            # |z| <= sqrt(n), so no sum of fewer than 10**18 products can overflow
            shape = self.scale.shape
            slopes["scale"] = np.add.reduce(view * st.z, axis=shared)
            slopes["shift"] = np.add.reduce(view, axis=shared)
            if slopes["scale"].shape != shape:  # group norm: (groups, channels in a group)
                slopes = {key: _shaped(value, shape) for key, value in slopes.items()}
        return answered(
            Gradient(
                passed_down=passed if passed.shape == d.shape else _shaped(passed, d.shape),
                layer=self,
                slopes=slopes,
                statistics=response.statistics,
            )
        )

    @own_error_state
    def step(self, gradient: Gradient, rate: float) -> Normaliser:
        """A new layer with scale and shift moved by ``-rate * slope``.

        Args:
            gradient: what this layer's `backward` answered.
            rate: the learning rate, a finite number.

        Returns:
            A new layer of the same type and shapes; this one is unchanged, and the new one
            shares every array the step did not change (they are read-only).
        """
        rate, slopes, _ = self._checked_gradient(gradient, rate)
        return self._successor(self._moved(slopes, rate))

    # -- helpers -------------------------------------------------------------------------------
    def _checked_gradient(
        self, gradient: Any, rate: Any
    ) -> tuple[float, Mapping[str, np.ndarray], bool]:
        """`check_gradient`'s rate and slopes, and whether this layer's own `backward` made the
        gradient (then its slopes and statistics are taken as they are, with no parameters
        named and looked up to check them against)."""
        if type(gradient) is Gradient and gradient.layer is self and gradient.made_by_backward:
            return check_rate(rate), gradient.slopes, True
        rate, slopes = check_gradient(self, gradient, rate, self._learned())
        return rate, slopes, False

    def _cache(self, name: str) -> dict[Any, Any]:
        """The dict `name` in this layer's ``__dict__``, made on first use: what the layer has
        worked out about the blocks it has read, which cannot change as the layer cannot. Emptied
        past 64 entries (many shapes read, as in a fuzz) rather than left to grow.

        ``_lined_up`` holds this layer's parameters lined up with a block; ``_layouts`` holds
        layouts, checks passed and shapes, which a step does not change, so it is shared with the
        layers the steps make (`_successor`)."""
        known = self.__dict__.get(name)
        if known is None:
            known = self.__dict__[name] = {}
        elif len(known) > 64:
            known.clear()
        return known

    def _successor(self, moved: dict[str, np.ndarray]) -> Normaliser:
        """The layer a step makes: this one with the `moved` arrays in place of the old. It
        shares every array the step did not change, and what this layer learnt about the
        layouts of the blocks it read (a step changes no shape and no setting).

        It holds what ``dataclasses.replace(self, **moved)`` would make, without running the
        constructor's checks again: there is nothing left for them to find, as every field is
        either this layer's (checked by its constructor) or a moved array (checked finite and
        sealed by the step that made it), and running them would cost as much as the step's
        arithmetic. ``tests/test_layer_contract.py`` holds the two equal for every layer.
        """
        cls = type(self)
        new = object.__new__(cls)
        fields, old = new.__dict__, self.__dict__
        for name in field_names(cls):
            fields[name] = old[name]
        fields.update(moved)
        fields["_layouts"] = self._cache("_layouts")
        return new

    def _layout(self, x: np.ndarray, purpose: str) -> tuple[np.ndarray, tuple[int, ...], int]:
        """Refuse a block this layer cannot read for `purpose` (ShapeError, EmptyBatchError, an
        EpsilonError for a float type that cannot hold epsilon); else the statistics' view of
        `x`, the axes they run along and the count `check_values` bounds magnitudes for. The
        checks depend only on the block's shape and dtype (and the layer's settings, which a
        step keeps), so each shape is checked once by a layer and the layers its steps make."""
        known = self._cache("_layouts")
        key = (x.shape, x.dtype, purpose)
        found = known.get(key)
        if found is None:
            self._prepare(x)
            self._check_rows(x, purpose)
            check_not_empty(x, "x")
            check_epsilon_fits(self.epsilon, x.dtype)
            view = self._view(x)
            axes = self._stat_axes(view)
            found = known[key] = (view.shape, axes, self._values_per_check(x, view, axes, purpose))
        shape, axes, count = found
        return (x if shape == x.shape else x.reshape(shape)), axes, count

    def _check_rows(self, x: np.ndarray, purpose: str) -> None:
        """Refuse a block this purpose cannot read (ghost batch norm: rows that do not divide)."""

    def _values_per_check(
        self, x: np.ndarray, view: np.ndarray, axes: tuple[int, ...], purpose: str
    ) -> int:
        """The count `check_values` bounds magnitudes for: the values of one statistic."""
        return statistic_count(view.shape, axes)

    def _learned(self) -> dict[str, np.ndarray]:
        """The parameters a step moves, by name."""
        return {"scale": self.scale, "shift": self.shift} if self.affine else {}

    def _parameters_for(self, x: np.ndarray) -> Lined:
        """Scale and shift lined up with the statistics' view of `x`, in x's dtype, and the
        axes they are shared along (size 1), which their slopes sum over; (None, None, ())
        when not affine. Worked out once per rank and dtype: the layer cannot change."""
        if not self.affine:
            return None, None, ()
        known = self._cache("_lined_up")
        key = (x.ndim, x.dtype)
        found = known.get(key)
        if found is None:
            found = known[key] = self._line_up(x)
        return found

    def _line_up(self, x: np.ndarray) -> Lined:
        """`_parameters_for`'s answer, worked out: the first time a rank and dtype are read, by
        `_in_view`; after that (by this layer or its successors, whose parameters have the same
        shapes and dtype) as reshapes of scale and shift to the shape it gave, which is what
        `_in_view` makes when no cast is needed (lining up inserts or splits axes; it never
        reorders values)."""
        shapes = self._cache("_layouts")
        key = ("lined up", x.ndim, x.dtype)
        layout = shapes.get(key)
        if layout is None or self.scale.dtype != x.dtype or self.shift.dtype != x.dtype:
            scale = self._in_view(self.scale, x, "scale")
            shared = tuple(i for i, n in enumerate(scale.shape) if n == 1)
            shapes[key] = scale.shape, shared
            return scale, self._in_view(self.shift, x, "shift"), shared
        shape, shared = layout
        return self.scale.reshape(shape), self.shift.reshape(shape), shared  # sealed views

    def _in_view(self, p: np.ndarray, x: np.ndarray, name: str) -> np.ndarray:
        """A per-feature array lined up with the statistics' view of `x`, in x's dtype."""
        e = self._expand(p, x)
        return sealed(fits(e.reshape((1,) * (x.ndim - e.ndim) + e.shape), x.dtype, name))

    def _moved(self, slopes: dict[str, np.ndarray], rate: float) -> dict[str, np.ndarray]:
        """Each parameter moved by ``-rate * slope``, checked finite and sealed: the new layer
        takes it as it is (`_successor`), and shares every array the step did not change."""
        moved = {}
        for key, slope in slopes.items():
            value = getattr(self, key) - rate * slope
            moved[key] = sealed(check_finite_result(value, "step", self, key))
        return moved


def _shaped(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """`a` reshaped to `shape`, read-only: a reshape of a fresh answer is a view of it, so the
    answer is sealed first (and the value that keeps the view need not copy it)."""
    return sealed(a).reshape(shape)
