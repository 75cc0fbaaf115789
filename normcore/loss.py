"""Binary cross-entropy on logits, finite for any finite logit."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._checks import as_block, check_not_empty
from .errors import NormcoreError, ShapeError


@dataclass(frozen=True, eq=False)
class Loss:
    """The mean loss (one figure per stacked model: shape `logits.shape[:stack_axes]`) and its
    slope with respect to the logits (shape of the logits, already divided by the count)."""

    value: np.ndarray
    slope: np.ndarray


def binary_cross_entropy(logits: Any, labels: Any, stack_axes: int = 0) -> Loss:
    """Mean binary cross-entropy of `labels` (0 to 1) under `sigmoid(logits)`.

    Written as max(z, 0) - z·y + log(1 + exp(-|z|)), which stays finite for logits of ±1000 and
    beyond. The first `stack_axes` axes index independent models; the mean runs over the rest.
    """
    z = as_block(logits, "logits")
    y = as_block(labels, "labels")
    if y.shape != z.shape:
        raise ShapeError(f"labels: expected the logits' shape {z.shape}, got {y.shape}")
    check_not_empty(z, "logits")
    if np.minimum.reduce(y, axis=None) < 0 or np.maximum.reduce(y, axis=None) > 1:
        raise NormcoreError("labels: expected values between 0 and 1")
    if not 0 <= stack_axes < max(z.ndim, 1):
        raise ShapeError(
            f"stack_axes: expected 0 to {max(z.ndim - 1, 0)} for logits of shape {z.shape}, "
            f"got {stack_axes}"
        )
    axes = tuple(range(stack_axes, z.ndim))
    count = math.prod([z.shape[a] for a in axes])
    e = np.exp(-np.abs(z))  # shared by the loss and the sigmoid (exactly as `sigmoid` makes it)
    each = np.maximum(z, 0) - z * y + np.log1p(e)
    chance = np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(z.dtype, copy=False)
    return Loss(value=np.add.reduce(each, axis=axes) / count, slope=(chance - y) / count)
