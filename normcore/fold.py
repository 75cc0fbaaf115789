"""Folding a batch layer into the dense layer or the convolution before it, for evaluation mode.

In evaluation mode a batch layer standardises by its running statistics, which are constants, so
``dense`` followed by ``batch`` is one affine map and can be stored as one dense layer (and a
convolution followed by an image batch layer as one convolution):

    z = x @ W + b                                   (the dense layer)
    y = scale * (z - running_mean) / s + shift,     s = sqrt(running_var + eps), the divisor
      = x @ (W * k) + ((b - running_mean) * k + shift),   k = scale / s (per feature)

The folded layer's outputs are the pair's in evaluation mode up to rounding, as the product is
regrouped. It cannot stand in for the pair in training mode: training mode standardises by each
mini-batch's own statistics, which no constant holds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .batch import BatchNorm, ImageBatchNorm
from .conv import Conv2d
from .dense import Dense, WeightNormDense
from .errors import FoldError, ShapeError

__all__ = ["fold_batch_norm", "fold_into_conv"]


def fold_batch_norm(dense: Any, batch: Any) -> Dense:
    """One `Dense` that returns what ``dense`` followed by ``batch`` returns in evaluation mode.

    Args:
        dense: a `Dense` (or `WeightNormDense`, whose effective weights are folded), weights of
            shape (*stack, fan_in, features) and bias (*stack, features).
        batch: a `BatchNorm` over the same `features`, with parameters of shape
            (*stack, features); running statistics of either kind (``tracks`` 'variance' or
            'divisor') are folded as evaluation mode reads them.

    Returns:
        A new `Dense` with weights ``W * k`` and bias ``(b - running_mean) * k + shift``, where
        ``k = scale / running_divisor`` per feature; same shapes as ``dense``'s.

    Raises:
        FoldError: ``dense`` is not a dense layer, or ``batch`` is not a batch layer over
            features: layer, RMS, instance and group norm standardise each row (or image) by its
            own statistics, which change with the input, and an image batch layer's channels are
            not a dense layer's outputs.
        ShapeError: the batch layer's features or leading axes do not match the dense layer's
        outputs.
    """
    if not isinstance(dense, Dense | WeightNormDense):
        raise FoldError(f"dense: expected a Dense layer, got {type(dense).__name__}")
    if isinstance(batch, ImageBatchNorm) or not isinstance(batch, BatchNorm):
        why = (
            "its statistics come from each input itself, not from constants"
            if not isinstance(batch, ImageBatchNorm)
            else "it normalises image channels, not a dense layer's outputs"
        )
        raise FoldError(
            f"batch: expected a BatchNorm over features, got {type(batch).__name__} ({why})"
        )
    w = dense.effective_weights
    outputs = w.shape[:-2] + w.shape[-1:]
    if batch.scale.shape != outputs:
        raise ShapeError(
            f"batch: expected parameters of the dense layer's output shape {outputs}, got "
            f"{batch.scale.shape}"
        )
    weights, bias = _folded(batch, w, dense.bias, lambda k: k[..., None, :])
    return Dense(weights=weights, bias=bias)


def _folded(
    batch: BatchNorm, w: np.ndarray, b: np.ndarray, lined: Callable[[np.ndarray], np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """The fold's arithmetic, for a dense layer and a convolution alike: weights ``w * k`` and
    bias ``(b - running_mean) * k + shift``, with ``k = scale / running divisor`` per output
    (`lined` lines k up with the weights' output axis)."""
    k = batch.scale / batch.running_divisor
    return np.array(w * lined(k)), np.array((b - batch.running_mean) * k + batch.shift)


def fold_into_conv(conv: Any, batch: Any) -> Conv2d:
    """One `Conv2d` that returns what ``conv`` followed by ``batch`` returns in evaluation mode.

    In evaluation mode, the batch layer's running statistics are constants, so per output channel o
    with k[o] = scale[o] / sqrt(running_var[o] + epsilon):

        folded weights[o] = weights[o] * k[o]
        folded bias[o]    = (bias[o] - running_mean[o]) * k[o] + shift[o]

    Args:
        conv: a `Conv2d` (a `StandardisedConv2d` folds its standardised kernel), weights
            (*stack, out_channels, in_channels, kh, kw).
        batch: the batch layer after it, one figure per output channel: an `ImageBatchNorm` over
            `out_channels` for a convolution without leading model axes, or a `BatchNorm` (or
            `GhostBatchNorm`) whose parameters are (*stack, out_channels), reading the
            convolution's channels as features.

    Returns:
        A plain `Conv2d` of the same shapes, stride and padding.

    Raises:
        FoldError: `conv` is not a convolution, or `batch` is not a batch layer: instance, group
            and layer norm read each image's own statistics, which no constant holds.
        ShapeError: the batch layer's parameters are not one per output channel (per model on
            the leading axes).
    """
    if not isinstance(conv, Conv2d):
        raise FoldError(f"conv: expected a Conv2d, got {type(conv).__name__}")
    if not isinstance(batch, BatchNorm):
        raise FoldError(
            f"batch: expected a batch layer (ImageBatchNorm or BatchNorm), got "
            f"{type(batch).__name__} (its statistics come from each image itself, not from "
            "constants)"
        )
    w = conv.effective_weights
    channels = w.shape[:-4] + w.shape[-4:-3]
    if batch.scale.shape != channels:
        raise ShapeError(
            f"batch: expected parameters of the convolution's output channels {channels}, got "
            f"{batch.scale.shape}"
        )
    weights, bias = _folded(batch, w, conv.bias, lambda k: k[..., None, None, None])
    return Conv2d(weights=weights, bias=bias, stride=conv.stride, padding=conv.padding)
