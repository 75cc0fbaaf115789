"""Binary cross-entropy on logits, finite for any finite logit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._checks import Sealed, as_block, check_not_empty, own_error_state
from .errors import LabelError, ShapeError
from .standardise import statistic_count


@dataclass(frozen=True, eq=False)
class Loss(Sealed):
    """The mean loss (one figure per stacked model: shape `logits.shape[:stack_axes]`) and its
    gradient with respect to the logits (shape of the logits, already divided by the count). Both
    arrays are read-only (sealed by the constructor)."""

    value: np.ndarray
    grad: np.ndarray


@own_error_state
def binary_cross_entropy(logits: Any, labels: Any, stack_axes: int = 0) -> Loss:
    """Mean binary cross-entropy of `labels` (0 to 1) under `sigmoid(logits)`.

    Each value is written as ``z·(1 − y)`` for z >= 0 and ``−z·y`` for z < 0, plus
    ``log(1 + exp(−|z|))``: no term exceeds |z| + log 2, so it is finite for every finite logit,
    and the mean is taken as a sum of the values each divided by the count first, so that it
    stays finite too. The first `stack_axes` axes index independent models; the mean runs over
    the rest.

    Returns a `Loss`: `value` shaped ``logits.shape[:stack_axes]`` and `grad` shaped as the
    logits, in the logits' dtype.
    """
    z = as_block(logits, "logits")
    y = as_block(labels, "labels")
    if y.shape != z.shape:
        raise ShapeError(f"labels: expected the logits' shape {z.shape}, got {y.shape}")
    check_not_empty(z, "logits")
    if np.minimum.reduce(y, axis=None) < 0 or np.maximum.reduce(y, axis=None) > 1:
        raise LabelError("labels: expected values between 0 and 1, got some outside")
    top = max(z.ndim - 1, 0)
    if (
        isinstance(stack_axes, bool)
        or not isinstance(stack_axes, (int, np.integer))
        or not (0 <= stack_axes <= top)
    ):
        raise ShapeError(
            f"stack_axes: expected a whole number from 0 to {top} for logits of shape "
            f"{z.shape}, got {stack_axes!r}"
        )
    axes = tuple(range(int(stack_axes), z.ndim))
    count = statistic_count(z.shape, axes)  # the values each loss is the mean of
    e = np.exp(-np.abs(z))  # shared by the loss and the sigmoid (exactly as `sigmoid` makes it)
    each = np.where(z >= 0, z * (1 - y), -z * y) + np.log1p(e)
    chance = np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(z.dtype, copy=False)
    value = np.add.reduce(each / count, axis=axes)
    return Loss(value=np.asarray(value), grad=np.asarray((chance - y) / count))
