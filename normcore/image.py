"""The image-axis family on blocks of shape (N, C, H, W): instance norm, group norm, AdaIN and
local response normalisation. Batch norm per channel is `normcore.batch.ImageBatchNorm`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._checks import (
    as_block,
    check_epsilon,
    check_finite_result,
    check_not_empty,
    check_rank,
    check_values,
)
from ._normaliser import Normaliser
from .errors import SettingError, ShapeError
from .standardise import standardise


def _check_images(x: np.ndarray, channels: int) -> None:
    check_rank(x, 4, "x", "(images, channels, height, width)")
    if x.shape[1] != channels:
        raise ShapeError(
            f"x: expected shape (images, {channels}, height, width), got {x.shape}"
        )


@dataclass(frozen=True, eq=False)
class InstanceNorm(Normaliser):
    """Instance normalisation: each image's each channel standardised over (H, W).

    Biased variance, epsilon (default 1e-5) under the root, per-channel scale 1 and shift 0 at
    the start. No running figures (PyTorch's ``InstanceNorm2d`` default, which also has no
    scale and shift unless ``affine=True``). Purposes are accepted and answer the same.
    Backward: three routes with the sums over (H, W).
    """

    name = "instance"

    @classmethod
    def create(cls, channels: int, *, epsilon: float = 1e-5, affine: bool = True) -> InstanceNorm:
        ones, zeros = np.ones(channels), np.zeros(channels)
        return cls(scale=ones, shift=zeros, epsilon=epsilon, affine=affine)

    def _prepare(self, x: np.ndarray) -> None:
        _check_images(x, self.scale.shape[0])

    def _expand(self, p: np.ndarray, x: np.ndarray) -> np.ndarray:
        return p[:, None, None]

    def _stat_axes(self, x: np.ndarray) -> tuple[int, ...]:
        return (2, 3)


@dataclass(frozen=True, eq=False)
class GroupNorm(Normaliser):
    """Group normalisation: channels split into `groups` equal groups; each image's each group
    standardised over (channels in the group, H, W).

    groups = 1 is layer norm over (C, H, W); groups = C is instance norm. Biased variance,
    epsilon (default 1e-5) under the root, per-channel scale 1 and shift 0 at the start, no
    running figures, both purposes answer the same. Agrees with PyTorch's ``GroupNorm``.
    """

    groups: int = 1

    name = "group"

    def __post_init__(self) -> None:
        super().__post_init__()
        channels = self.scale.shape[0] if self.scale.ndim == 1 else -1
        if (
            isinstance(self.groups, bool)
            or not isinstance(self.groups, (int, np.integer))
            or self.groups < 1
            or channels < 1
            or channels % self.groups
        ):
            raise SettingError(
                f"groups: expected a whole number >= 1 that divides the {channels} channels, "
                f"got {self.groups!r}"
            )

    @classmethod
    def create(
        cls, channels: int, groups: int, *, epsilon: float = 1e-5, affine: bool = True
    ) -> GroupNorm:
        return cls(
            scale=np.ones(channels),
            shift=np.zeros(channels),
            epsilon=epsilon,
            affine=affine,
            groups=groups,
        )

    def _prepare(self, x: np.ndarray) -> None:
        _check_images(x, self.scale.shape[0])

    def _view(self, x: np.ndarray) -> np.ndarray:
        n, c, h, w = x.shape
        return x.reshape(n, self.groups, c // self.groups, h, w)

    def _in_view(self, p: np.ndarray, x: np.ndarray) -> np.ndarray:
        c = x.shape[1]
        return p.reshape(1, self.groups, c // self.groups, 1, 1).astype(x.dtype, copy=False)

    def _expand(self, p: np.ndarray, x: np.ndarray) -> np.ndarray:
        return p[:, None, None]

    def _stat_axes(self, x: np.ndarray) -> tuple[int, ...]:
        return (2, 3, 4)


def adain(content: Any, style: Any, epsilon: float = 1e-5) -> np.ndarray:
    """Adaptive instance normalisation: `content` (N, C, H, W) standardised by its own per-image,
    per-channel statistics, then given the `style` block's deviation as scale and its mean as
    shift. `style` must have the same number of images and channels (its H, W may differ)."""
    epsilon = check_epsilon(epsilon)
    content = as_block(content, "content")
    style = as_block(style, "style")
    check_rank(content, 4, "content", "(images, channels, height, width)")
    check_rank(style, 4, "style", "(images, channels, height, width)")
    check_not_empty(content, "content")
    check_not_empty(style, "style")
    check_values(content, content.shape[2] * content.shape[3], "content")
    check_values(style, style.shape[2] * style.shape[3], "style")
    if style.shape[:2] != content.shape[:2]:
        raise ShapeError(
            f"style: expected {content.shape[:2]} images and channels, got {style.shape[:2]}"
        )
    own = standardise(content, (2, 3), epsilon)
    target = standardise(style, (2, 3), epsilon)
    return own.z * target.deviation + target.mean


def local_response_normalisation(
    a: Any, size: int = 5, alpha: float = 1e-4, beta: float = 0.75, k: float = 2.0
) -> np.ndarray:
    """Each activation of `a` (N, C, H, W) divided by (k + alpha / size * sum of squares of the
    `size` channels centred on it, at the same pixel) ** beta. The channel window is cut at the
    edges. The alpha / size form is PyTorch's ``LocalResponseNorm`` convention (which defaults
    to k = 1). Krizhevsky et al. (2012) write plain alpha, with no division by size: their
    n = 5, alpha = 1e-4, beta = 0.75, k = 2 is size=5, alpha=5e-4 here. The defaults (alpha
    1e-4 over size 5) are therefore PyTorch's alpha with AlexNet's k."""
    a = as_block(a, "a")
    check_rank(a, 4, "a", "(images, channels, height, width)")
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
        raise SettingError(f"size: expected a whole number >= 1, got {size!r}")
    for name, value, low in (("k", k, 0.0), ("alpha", alpha, 0.0), ("beta", beta, 0.0)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise SettingError(f"{name}: expected a finite number, got {value!r}")
        if not math.isfinite(float(value)) or float(value) < low or (name == "k" and value == 0):
            raise SettingError(
                f"{name}: expected a finite number {'> 0' if name == 'k' else '>= 0'}, "
                f"got {value!r}"
            )
    check_values(a, size, "a")
    squares = a * a
    channels = a.shape[1]
    padded = np.zeros((a.shape[0], channels + size, *a.shape[2:]), dtype=a.dtype)
    padded[:, size // 2 + 1 : size // 2 + 1 + channels] = squares
    running = np.cumsum(padded, axis=1)
    window = running[:, size:] - running[:, :channels]
    with np.errstate(over="ignore", under="ignore"):
        answer = a / (k + alpha / size * window) ** beta
    return check_finite_result(answer, "local_response_normalisation")
