"""The image-axis family on image batches of shape (N, C, H, W): instance norm, group norm, AdaIN
and local response normalisation. Batch norm per channel is `normcore.batch.ImageBatchNorm`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._checks import (
    as_input,
    check_epsilon,
    check_epsilon_fits,
    check_nchw,
    check_not_empty,
    check_rank,
    check_size,
    check_values,
    number,
    own_error_state,
    seal,
    whole_number,
)
from .errors import SettingError, ShapeError
from .normaliser import Normaliser
from .standardise import standardise


@dataclass(frozen=True, eq=False)
class InstanceNorm(Normaliser):
    """Instance normalisation: each image's each channel standardised over (H, W).

    Biased variance, epsilon (default 1e-5) under the root, per-channel scale 1 and shift 0 at
    the start. No running statistics (PyTorch's ``InstanceNorm2d`` default, which also has no
    scale and shift unless ``affine=True``). Modes are accepted and return the same.
    Backward: three routes with the sums over (H, W).
    """

    name = "instance"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.scale.ndim != 1:
            raise ShapeError(f"scale: expected shape (channels,), got {self.scale.shape}")

    @classmethod
    def create(cls, channels: int, *, eps: float = 1e-5, affine: bool = True) -> InstanceNorm:
        """A fresh layer: scale 1 and shift 0, one per channel."""
        shape = check_size((whole_number(channels, "channels"),), "scale")
        return cls(scale=np.ones(shape), shift=np.zeros(shape), eps=eps, affine=affine)

    def _prepare(self, x: np.ndarray, mode: str) -> None:
        check_nchw(x, self.scale.shape[0])

    def _lined(self, ndim: int) -> tuple[int, ...]:
        return (1, self.scale.shape[0], 1, 1)

    def _stat_axes(self, view: np.ndarray) -> tuple[int, ...]:
        return (2, 3)


@dataclass(frozen=True, eq=False)
class GroupNorm(Normaliser):
    """Group normalisation: channels split into `groups` equal groups; each image's each group
    standardised over (channels in the group, H, W).

    groups = 1 is layer norm over (C, H, W); groups = C is instance norm. Biased variance,
    epsilon (default 1e-5) under the root, per-channel scale 1 and shift 0 at the start, no
    running statistics, both modes return the same. Agrees with PyTorch's ``GroupNorm``.
    """

    groups: int = 1

    name = "group"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.scale.ndim != 1:
            raise ShapeError(f"scale: expected shape (channels,), got {self.scale.shape}")
        channels = self.scale.shape[0]
        wanted = f">= 1 that divides the {channels} channels"
        groups = whole_number(self.groups, "groups", SettingError, wanted=wanted)
        if channels < 1 or channels % groups:
            raise SettingError(f"groups: expected a whole number {wanted}, got {self.groups!r}")

    @classmethod
    def create(
        cls, channels: int, groups: int, *, eps: float = 1e-5, affine: bool = True
    ) -> GroupNorm:
        """A fresh layer: scale 1 and shift 0, one per channel, `groups` groups."""
        shape = check_size((whole_number(channels, "channels"),), "scale")
        return cls(
            scale=np.ones(shape),
            shift=np.zeros(shape),
            eps=eps,
            affine=affine,
            groups=groups,
        )

    def _prepare(self, x: np.ndarray, mode: str) -> None:
        check_nchw(x, self.scale.shape[0])

    def _view(self, x: np.ndarray, mode: str) -> np.ndarray:
        n, c, h, w = x.shape
        return x.reshape(n, self.groups, c // self.groups, h, w)

    def _lined(self, ndim: int) -> tuple[int, ...]:
        return (1, self.scale.shape[0], 1, 1)

    def _stat_axes(self, view: np.ndarray) -> tuple[int, ...]:
        return (2, 3, 4)


@own_error_state
def adain(content: Any, style: Any, eps: float = 1e-5) -> np.ndarray:
    """Adaptive instance normalisation: `content` (N, C, H, W) standardised by its own per-image,
    per-channel statistics, then given the `style` images' divisor as scale and its mean as
    shift. `style` must have the same number of images and channels (its H, W may differ).

    Returns a read-only array shaped as `content`, float32 only when both inputs are float32.
    """
    eps = check_epsilon(eps)
    content = as_input(content, "content")
    style = as_input(style, "style")
    check_rank(content, 4, "content", "(images, channels, height, width)")
    check_rank(style, 4, "style", "(images, channels, height, width)")
    check_not_empty(content, "content")
    check_not_empty(style, "style")
    if style.shape[:2] != content.shape[:2]:
        raise ShapeError(
            f"style: expected {content.shape[:2]} images and channels, got {style.shape[:2]}"
        )
    for block in (content, style):
        check_epsilon_fits(eps, block.dtype)
    check_values(content, content.shape[2] * content.shape[3], "content")
    check_values(style, style.shape[2] * style.shape[3], "style")
    own = standardise(content, (2, 3), eps)
    target = standardise(style, (2, 3), eps)
    answer = own.z * target.divisor + target.mean
    return seal(answer)


def _window_sums(squares: np.ndarray, size: int) -> np.ndarray:
    """For each channel c (axis 1), the sum of `squares` over the channels from c - size // 2 to
    c + (size - 1) // 2, cut at the edges (PyTorch's window).

    Each window is added up directly, one offset at a time, never as a difference of running
    totals: such a difference loses every small square that follows a large one.
    """
    channels = squares.shape[1]
    before = min(size // 2, channels - 1)
    after = min((size - 1) // 2, channels - 1)
    total = np.zeros_like(squares)
    for offset in range(-before, after + 1):  # the channel at c + offset
        if offset < 0:
            total[:, -offset:] += squares[:, : channels + offset]
        else:
            total[:, : channels - offset] += squares[:, offset:]
    return total


@own_error_state
def local_response_normalisation(
    a: Any, size: int = 5, alpha: float = 1e-4, beta: float = 0.75, k: float = 2.0
) -> np.ndarray:
    """Each activation of `a` (N, C, H, W) divided by (k + alpha / size * sum of squares of the
    `size` channels centred on it, at the same pixel) ** beta. The channel window is cut at the
    edges. The alpha / size form is PyTorch's ``LocalResponseNorm`` convention (which defaults
    to k = 1). Krizhevsky et al. (2012) write plain alpha, with no division by size: their
    n = 5, alpha = 1e-4, beta = 0.75, k = 2 is size=5, alpha=5e-4 here. The defaults (alpha
    1e-4 over size 5) are therefore PyTorch's alpha with AlexNet's k.

    Returns a read-only array shaped and typed as `a`.
    """
    a = as_input(a, "a")
    check_rank(a, 4, "a", "(images, channels, height, width)")
    size = whole_number(size, "size", SettingError, 1, 2**62, "from 1 to 2**62")
    k = number(k, "k", SettingError, "a finite number > 0")
    alpha = number(alpha, "alpha", SettingError, "a finite number >= 0")
    beta = number(beta, "beta", SettingError, "a finite number >= 0")
    if k <= 0 or alpha < 0 or beta < 0:
        raise SettingError(
            f"k, alpha, beta: expected k > 0, alpha >= 0 and beta >= 0, got {k!r}, {alpha!r}, "
            f"{beta!r}"
        )
    check_values(a, min(int(size), max(a.shape[1], 1)), "a")
    if a.size == 0:
        return seal(a.copy())
    squares = a * a
    denominator = (k + alpha / float(size) * _window_sums(squares, int(size))) ** beta
    if not np.all(denominator > 0):  # k so small that it underflows, with no square to lift it
        raise SettingError(
            f"k: expected a value whose power beta stays above 0 in {a.dtype}, got {k!r}"
        )
    return seal(a / denominator)
