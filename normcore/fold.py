"""Folding a batch layer into the dense layer before it, for predicting.

In evaluation mode, a batch layer standardises by its running statistics, which are constants, so
``dense`` followed by ``batch`` is one affine map and can be stored as one dense layer:

    z = x @ W + b                                   (the dense layer)
    y = scale * (z - running_mean) / deviation + shift, deviation = sqrt(running_var + eps)
      = x @ (W * k) + ((b - running_mean) * k + shift),   k = scale / deviation (per feature)

The folded layer answers exactly what the pair answers *in evaluation mode*, up to rounding (the
book measures the gap at about 1e-15 on the digits network). It cannot stand in for the pair
while training: training standardises by each batch's own statistics, which no constant holds.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .batch import BatchNorm, ImageBatchNorm
from .dense import Dense, WeightNormDense
from .errors import FoldError, ShapeError

__all__ = ["fold_batch_norm"]


def fold_batch_norm(dense: Any, batch: Any) -> Dense:
    """One `Dense` that answers as ``dense`` followed by ``batch`` in evaluation mode.

    Args:
        dense: a `Dense` (or `WeightNormDense`, whose effective weights are folded), weights of
            shape (*stack, fan_in, features) and bias (*stack, features).
        batch: a `BatchNorm` over the same `features`, with parameters of shape
            (*stack, features); running statistics of either kind (``tracks`` 'variance' or
            'deviation') are folded as predicting reads them.

    Returns:
        A new `Dense` with weights ``W * k`` and bias ``(b - running_mean) * k + shift``, where
        ``k = scale / running_divisor`` per feature; same shapes as ``dense``'s.

    Raises:
        FoldError: ``dense`` is not a dense layer, or ``batch`` is not a batch layer over
            features: layer, RMS, instance and group norm standardise each row (or image) by its
            own statistics, which change with the input, and an image batch layer's channels are
            not a dense layer's outputs.
        ShapeError: the batch layer's features or stack do not match the dense layer's outputs.
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
    k = batch.scale / batch.running_divisor
    weights = w * k[..., None, :]
    bias = (dense.bias - batch.running_mean) * k + batch.shift
    return Dense(weights=np.array(weights), bias=np.array(bias))
