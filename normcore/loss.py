"""The two losses on logits, binary and softmax cross-entropy, finite for any finite logit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._checks import (
    Sealed,
    as_input,
    check_not_empty,
    own_error_state,
    statistic_count,
    whole_number,
)
from .activations import sigmoid_from
from .errors import LabelError, SettingError, ShapeError


@dataclass(frozen=True, eq=False)
class Loss(Sealed):
    """The mean loss (one value per independent model on the leading axes: shape
    `logits.shape[:stack_axes]`) and its gradient with respect to the logits (shape of the logits,
    already divided by the count). Both arrays are read-only (sealed by the constructor)."""

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
    z = as_input(logits, "logits")
    y = as_input(labels, "labels")
    if y.shape != z.shape:
        raise ShapeError(f"labels: expected the logits' shape {z.shape}, got {y.shape}")
    check_not_empty(z, "logits")
    if np.minimum.reduce(y, axis=None) < 0 or np.maximum.reduce(y, axis=None) > 1:
        raise LabelError("labels: expected values between 0 and 1, got some outside")
    top = max(z.ndim - 1, 0)
    wanted = f"from 0 to {top} for logits of shape {z.shape}"
    stack_axes = whole_number(stack_axes, "stack_axes", ShapeError, 0, top, wanted)
    axes = tuple(range(stack_axes, z.ndim))
    count = statistic_count(z.shape, axes)  # the values each loss is the mean of
    e = np.exp(-np.abs(z))  # shared by the loss and the sigmoid
    each = np.where(z >= 0, z * (1 - y), -z * y) + np.log1p(e)
    chance = sigmoid_from(z, e)
    value = np.add.reduce(each / count, axis=axes)
    return Loss(value=np.asarray(value), grad=np.asarray((chance - y) / count))


@own_error_state
def softmax_cross_entropy(logits: Any, labels: Any) -> Loss:
    """Mean cross-entropy of integer `labels` (rows,) under softmax(`logits`) (S, rows, classes).

    The largest logit of each row is subtracted first, so any finite logits give a finite loss.
    Raises ShapeError for mismatched shapes and SettingError for labels outside 0..classes-1.

    Returns a `Loss`: `value` shaped (S,) and `grad` (∂L/∂logits) shaped as the logits, already
    divided by the row count.
    """
    z = as_input(logits, "logits")
    if z.ndim != 3:
        raise ShapeError(f"logits: expected shape (models, rows, classes), got {z.shape}")
    y = np.asarray(labels)
    if y.shape != z.shape[1:2] or y.dtype.kind not in "iu":
        raise ShapeError(f"labels: expected {z.shape[1]} whole numbers, got {y.shape} {y.dtype}")
    if y.size and (y.min() < 0 or y.max() >= z.shape[2]):
        raise SettingError(f"labels: expected classes 0 to {z.shape[2] - 1}")
    shifted = z - z.max(axis=-1, keepdims=True)
    log_total = np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    log_p = shifted - log_total
    rows = z.shape[1]
    picked = log_p[:, np.arange(rows), y]
    grad = np.exp(log_p)
    grad[:, np.arange(rows), y] -= 1.0
    return Loss(value=-picked.mean(axis=1), grad=grad / rows)
