"""Batch normalisation: statistics down the rows, one per feature.

The arithmetic every normaliser runs (the input checks, `normcore.standardise`, ``z * scale +
shift`` and the backward pass) is `normcore.normaliser.Normaliser`'s; this module says where
batch norm's statistics run, what it keeps (the running statistics) and how `step` updates
them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ._checks import (
    as_input,
    as_parameter,
    check_momentum,
    check_nchw,
    check_rank,
    check_size,
    own_error_state,
    seal,
    smallest,
    successor,
    whole_number,
    whole_numbers,
)
from .errors import SettingError, ShapeError
from .mode import TRAIN
from .normaliser import Given, Normaliser
from .responses import Gradient, Standardised, Statistics, check_statistics, moved_parameters

Tracks = Literal["variance", "divisor"]


@dataclass(frozen=True, eq=False)
class BatchNorm(Normaliser):
    """Batch normalisation of a mini-batch of shape (..., rows, features).

    - Axis: statistics run down the rows (axis -2), one mean and one variance per feature. Leading
      axes hold independent models: an input (S, rows, features) with parameters (S, features)
      is S separate layers run in one call, each reading down its own rows.
    - Variance: biased (divided by the number of rows). Epsilon (default 1e-5) sits under the
      square root: divisor = sqrt(variance + epsilon).
    - Scale and shift: per feature, starting at 1 and 0; ``affine=False`` fixes them there
      (nothing learned), as chapter 7's network does.
    - Modes: 'train' standardises by the batch's own statistics; 'eval' by the running
      statistics. Evaluation mode is the default, so a forgotten argument never lets other rows of a
      request leak into a row's output.
    - Running statistics: start at mean 0 and variance 1. They move only in `step`, once per batch,
      by ``running = momentum * running + (1 - momentum) * batch`` with momentum 0.9 and the batch's
      *biased* variance. A forward pass never changes the layer: a training pass made for a look,
      never followed by a step, leaves prediction where it was.
    - Running statistics by name: ``running_mean``, ``running_var`` (the running variance) and
      ``running_divisor`` (the divisor evaluation mode uses, sqrt(running_var +
      epsilon), worked out by the constructor from the running variance: a value handed in must
      be that one, or None; so ``dataclasses.replace`` of the running variance or epsilon takes
      ``running_divisor=None`` too, and a mismatched divisor is refused, never replaced).
    - With ``tracks='divisor'`` the running statistics are the mean and the divisor
      sqrt(variance + epsilon) instead (chapter 7's network): the layer holds
      ``running_divisor`` (starting at 1), updates it with the batch's divisor, and evaluation mode
      divides by it as it stands; it holds no running variance (``running_var`` is None).
    - Backward (training): three routes (a value's own z, the column mean, the column variance;
      see `normcore.standardise`); the input gradient's columns sum to zero. Backward (evaluation
      mode): the running statistics are constants, so the gradient is d / divisor.
      Parameter gradients: scale's is the column sum of grad_output * z, shift's the column sum of
      grad_output.

    Differences from PyTorch's ``BatchNorm1d``: PyTorch names momentum by the share taken from the
    batch (its default 0.1 is this 0.9); PyTorch updates its running variance with the *unbiased*
    variance (n / (n - 1) times the biased one), this layer with the biased one it standardised by;
    PyTorch updates running statistics inside the training forward pass, this layer in `step`;
    PyTorch modules default to training mode, this layer to evaluation mode; PyTorch refuses a
    one-row training batch, this layer returns zeros for it (the arithmetic's honest result, and
    still a mistake in a training loop).
    """

    running_mean: Any = None
    running_var: Any = None
    momentum: float = 0.9
    tracks: Tracks = "variance"
    running_divisor: Any = None

    name = "batch"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.scale.ndim < 1:
            raise ShapeError(f"scale: expected shape (..., features), got {self.scale.shape}")
        object.__setattr__(self, "momentum", check_momentum(self.momentum))
        if not isinstance(self.tracks, str) or self.tracks not in ("variance", "divisor"):
            raise SettingError(f"tracks: expected 'variance' or 'divisor', got {self.tracks!r}")
        spread = self.spread_field
        if self.tracks == "divisor" and self.running_var is not None:
            raise SettingError(
                "running_var: expected None with tracks='divisor' (the layer tracks the "
                "running divisor: give running_divisor)"
            )
        if self.tracks == "variance" and self.running_var is None:
            if self.running_divisor is not None:
                raise SettingError(
                    "running_divisor: expected None with tracks='variance' and no "
                    "running_var (the layer tracks the running variance: give "
                    "running_var, or tracks='divisor')"
                )
        for field, start in (("running_mean", 0.0), (spread, 1.0)):
            value = getattr(self, field)
            if value is None:
                value = seal(np.full(self.scale.shape, start))
            else:
                value = as_parameter(value, field)
            if value.shape != self.scale.shape:
                raise ShapeError(
                    f"{field}: expected the scale's shape {self.scale.shape}, got {value.shape}"
                )
            object.__setattr__(self, field, value)
        least = smallest(getattr(self, spread))
        if self.tracks == "variance" and least < 0:
            raise SettingError("running_var: expected values >= 0")
        if self.tracks == "divisor" and least <= 0:
            raise SettingError("running_divisor: expected values > 0")
        if self.tracks == "variance":  # the divisor derives from the running variance
            with np.errstate(all="ignore"):  # finite: both are finite and >= 0
                divisor = np.sqrt(self.running_var + self.eps)
            given = self.running_divisor
            if given is not None and not np.array_equal(
                as_input(given, "running_divisor"), divisor
            ):
                raise SettingError(
                    "running_divisor: expected None or sqrt(running_var + epsilon) with "
                    "tracks='variance' (the layer works the divisor out from the running "
                    "variance), got other values"
                )
            object.__setattr__(self, "running_divisor", seal(divisor))

    @classmethod
    def create(
        cls,
        features: int,
        *,
        stack: tuple[int, ...] = (),
        eps: float = 1e-5,
        momentum: float = 0.9,
        affine: bool = True,
        tracks: Tracks = "variance",
    ) -> BatchNorm:
        """A fresh layer: scale 1, shift 0, running mean 0, running variance 1, each of shape
        (*stack, features)."""
        return cls._fresh(features, stack, eps=eps, momentum=momentum, affine=affine, tracks=tracks)

    @classmethod
    def _fresh(cls, features: int, stack: tuple[int, ...], **settings: Any) -> Any:
        """A layer of this class with scale 1 and shift 0 of shape (*stack, features), its
        running statistics at their start, and `settings` (the `create` of each class)."""
        shape = check_size(
            (*whole_numbers(stack, "stack"), whole_number(features, "features")), "scale"
        )
        return cls(scale=np.ones(shape), shift=np.zeros(shape), **settings)

    @property
    def features(self) -> int:
        return int(self.scale.shape[-1])

    @property
    def spread_field(self) -> str:
        """The name of the running spread this layer holds and updates: 'running_var', or
        'running_divisor' with ``tracks='divisor'``."""
        return "running_var" if self.tracks == "variance" else "running_divisor"

    # -- where the statistics run --------------------------------------------------------------
    def _prepare(self, x: np.ndarray, mode: str) -> None:
        stack = self.scale.shape[:-1]
        check_rank(x, len(stack) + 2, "x", "(" + "model, " * len(stack) + "rows, features)")
        if x.shape[: len(stack)] != stack or x.shape[-1] != self.features:
            raise ShapeError(f"x: expected shape {(*stack, 'rows', self.features)}, got {x.shape}")

    def _lined(self, ndim: int) -> tuple[int, ...]:
        return (*self.scale.shape[:-1], 1, self.features)

    def _stat_axes(self, view: np.ndarray) -> tuple[int, ...]:
        return (view.ndim - 2,)

    def _given(self, x: np.ndarray) -> Given:
        """The running mean and divisor lined up with `x`, in its float type."""
        mean, divisor = self.running_mean, self.running_divisor
        return self._in_type(x, "running_mean", mean, "running divisor", divisor)

    def _batch_statistics(self, st: Standardised) -> Statistics:
        shape = self.scale.shape
        assert st.mean is not None and st.variance is not None  # batch norm centres
        return Statistics(
            st.mean.reshape(shape), st.variance.reshape(shape), st.divisor.reshape(shape)
        )

    @own_error_state
    def step(self, gradient: Gradient, rate: float) -> BatchNorm:
        """A new layer: scale and shift moved by ``-rate * grad`` and, if the gradient came from a
        training pass, the running statistics updated with the batch's statistics.

        Args:
            gradient: what this layer's `backward` returned (its `statistics` are the batch's).
            rate: the learning rate, a finite number (or one per independent model, an array
                shaped as the parameters' leading axes).

        Returns:
            A new layer of the same shapes: ``running = momentum * running + (1 - momentum) *
            batch`` for the mean and the (biased) variance (and the running divisor worked
            out from it), or the divisor when ``tracks='divisor'``. This layer is unchanged.
        """
        moved = moved_parameters(self, gradient, rate)
        stats = gradient.statistics
        if stats is not None:
            if not gradient.made_by_backward:  # a hand-made gradient could carry anything
                stats = check_statistics(stats, self.scale.shape)
            keep = self.momentum
            moved["running_mean"] = keep * self.running_mean + (1 - keep) * stats.mean
            if self.tracks == "variance":
                variance = keep * self.running_var + (1 - keep) * stats.variance
                moved["running_var"] = variance
                moved["running_divisor"] = np.sqrt(variance + self.eps)
            else:
                moved["running_divisor"] = keep * self.running_divisor + (1 - keep) * stats.divisor
        return successor(self, moved)


@dataclass(frozen=True, eq=False)
class GhostBatchNorm(BatchNorm):
    """Batch normalisation whose training statistics are read over groups of `group_rows` rows:
    ghost batch normalisation (Hoffer, Hubara & Soudry 2017).

    - Training: a mini-batch of R rows (R a multiple of `group_rows`) is cut, in row order, into
      R / group_rows groups, and each row is standardised by its own group's mean and (biased)
      variance, as each of R / group_rows machines would standardise the rows it holds. With
      ``group_rows == R`` the output is `BatchNorm`'s.
    - Scale, shift and running statistics: one per feature, shared by every group. A step updates
      the running statistics with the groups' average statistics (the mean of their means, of
      their variances and of their divisors), with `BatchNorm`'s momentum rule.
    - Evaluation mode: exactly `BatchNorm`'s (the running statistics, row by row), for any number of
      rows.
    - Backward (training): each group's three routes, inside its group (the input gradient's columns
      of every group sum to zero); the parameter gradients sum over every row of every group.
    - Shapes: x (..., rows, features), parameters (..., features), as `BatchNorm`.

    PyTorch has no such layer. Its equivalent is ``torch.nn.BatchNorm1d`` applied to each group
    of rows in turn with shared parameters, the parameter gradients summed over the groups; the
    running statistics then differ (PyTorch moves them once per group, with unbiased variances).
    """

    #: required: left out (None), the constructor refuses it (SettingError)
    group_rows: Any = None

    name = "ghost batch"

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(
            self, "group_rows", whole_number(self.group_rows, "group_rows", SettingError)
        )

    @classmethod
    def create(  # type: ignore[override]
        cls,
        features: int,
        group_rows: int,
        *,
        stack: tuple[int, ...] = (),
        eps: float = 1e-5,
        momentum: float = 0.9,
        affine: bool = True,
        tracks: Tracks = "variance",
    ) -> GhostBatchNorm:
        """A fresh layer reading its training statistics over groups of `group_rows` rows: scale
        1, shift 0, running mean 0, running variance 1, each of shape (*stack, features)."""
        group_rows = whole_number(group_rows, "group_rows", SettingError)
        settings = {"eps": eps, "momentum": momentum, "affine": affine, "tracks": tracks}
        return cls._fresh(features, stack, group_rows=group_rows, **settings)

    def _prepare(self, x: np.ndarray, mode: str) -> None:
        """`BatchNorm`'s shapes; in training mode, a row count that is a multiple of
        `group_rows` (ShapeError otherwise). Evaluation mode reads any number of rows (by the
        running statistics)."""
        super()._prepare(x, mode)
        if mode == TRAIN and x.shape[-2] % self.group_rows:
            raise ShapeError(
                f"x: expected a multiple of group_rows={self.group_rows} rows for training, "
                f"got {x.shape[-2]}"
            )

    def _view(self, x: np.ndarray, mode: str) -> np.ndarray:
        """In training mode (..., groups, group_rows, features); in evaluation mode the input as
        it is (the running statistics read no group)."""
        if mode != TRAIN:
            return x
        rows = x.shape[-2]
        return x.reshape(*x.shape[:-2], rows // self.group_rows, self.group_rows, x.shape[-1])

    def _batch_statistics(self, st: Standardised) -> Statistics:
        shape = self.scale.shape
        groups = st.z.ndim - 3  # the axis that runs over the groups
        assert st.mean is not None and st.variance is not None  # batch norm centres

        def average(a: np.ndarray) -> np.ndarray:
            return np.mean(a, axis=groups).reshape(shape)

        return Statistics(
            mean=average(st.mean), variance=average(st.variance), divisor=average(st.divisor)
        )


@dataclass(frozen=True, eq=False)
class ImageBatchNorm(BatchNorm):
    """Batch normalisation of images (N, C, H, W): one mean and variance per channel, over
    (N, H, W). Everything else (modes, running statistics, routes, PyTorch differences) as
    `BatchNorm`; compare PyTorch's ``BatchNorm2d``."""

    name = "image batch"

    def _prepare(self, x: np.ndarray, mode: str) -> None:
        if self.scale.ndim != 1:
            raise ShapeError(f"scale: expected shape (channels,), got {self.scale.shape}")
        check_nchw(x, self.features)

    def _lined(self, ndim: int) -> tuple[int, ...]:
        return (1, self.features, 1, 1)

    def _stat_axes(self, view: np.ndarray) -> tuple[int, ...]:
        return (0, 2, 3)
