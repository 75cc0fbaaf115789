"""Checks for chapter 8's exercises. Answers are computed with normcore and never printed."""

from __future__ import annotations

from typing import Any

import numpy as np

from normcore.batch import BatchNorm
from normcore.dense import Dense
from normcore.exercises import PROMPT, verdict
from normcore.experiments import deepnet, prepost
from normcore.fold import fold_batch_norm

#: Exercise 1: the loss L(w) = (w1**2 + 10 * w2**2) / 2 at W, one step at RATE.
CURVATURE = np.array([1.0, 10.0])
W = np.array([1.0, 1.0])
RATE = 0.1

#: Exercise 4: one input, one unit: dense weight 2 and bias 1, then a batch layer with these
#: running figures, scale and shift (epsilon 1e-5).
FOLD = {
    "weight": 2.0,
    "bias": 1.0,
    "running_mean": 3.0,
    "running_variance": 4.0,
    "scale": 0.5,
    "shift": 1.0,
}

#: Exercise 5: a scale-invariant weight block's squared length, its slope's squared length and
#: the learning rate.
LENGTH2, SLOPE2, STEP_RATE = 4.0, 0.02, 0.1


def check_gradient_change(answer: Any) -> str:
    """Exercise 1: ||g(W - RATE g(W)) - g(W)|| for L(w) = sum(CURVATURE * w**2) / 2."""
    g = CURVATURE * W
    moved = CURVATURE * (W - RATE * g)
    return verdict(answer, float(np.linalg.norm(moved - g)))


def check_parameter_counts(learned: Any, running: Any) -> str:
    """Exercise 2: how many more learned parameters the batch version of the digits network has
    than the plain one, and how many running figures it keeps."""
    if learned is None or running is None:
        return PROMPT
    batch = deepnet.build("batch", [0])
    extra = sum(n.scale.size + n.shift.size for n in batch.norms)
    figures = sum(n.running_mean.size + n.running_variance.size for n in batch.norms)
    return verdict([learned, running], [extra, figures], tolerance=0)


def check_post_ln_ratio(answer: Any) -> str:
    """Exercise 3: in a post-LN stack of 6 blocks, seed 0 alone, the length of block 6's weight
    slope divided by block 1's."""
    norm = prepost.gradient_profile("post-LN", seeds=(0,), blocks=6).norm[0]
    return verdict(answer, float(norm[-1] / norm[0]))


def _folded() -> Dense:
    dense = Dense(weights=np.array([[FOLD["weight"]]]), bias=np.array([FOLD["bias"]]))
    batch = BatchNorm(
        scale=np.array([FOLD["scale"]]),
        shift=np.array([FOLD["shift"]]),
        running_mean=np.array([FOLD["running_mean"]]),
        running_variance=np.array([FOLD["running_variance"]]),
    )
    return fold_batch_norm(dense, batch)


def check_folded(weight: Any, bias: Any) -> str:
    """Exercise 4: the folded layer's weight and bias for FOLD."""
    if weight is None or bias is None:
        return PROMPT
    f = _folded()
    return verdict([weight, bias], [float(f.weights[0, 0]), float(f.bias[0])])


def check_balancing_decay(answer: Any) -> str:
    """Exercise 5: the weight decay at which LENGTH2, SLOPE2 and STEP_RATE balance (checked
    relative to its size, since the answer is small)."""
    expected = STEP_RATE * SLOPE2 / (2 * LENGTH2)
    if answer is None:
        return verdict(None, expected)
    try:
        share = float(answer) / expected
    except (TypeError, ValueError):
        return verdict(answer, expected)
    return verdict(share, 1.0)
