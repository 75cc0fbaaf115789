"""Checks for chapter 9's exercises (where normalisation is used). Answers are computed with
normcore and never printed; each checker names the typical mistakes it recognises.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from normcore.batch import BatchNorm
from normcore.dense import Dense
from normcore.exercises import PROMPT, Verdict, verdict
from normcore.experiments import prepost
from normcore.fold import fold_batch_norm

__all__ = [
    "FOLD",
    "check_folded",
    "check_post_ln_ratio",
    "check_qk_bound",
    "QK_WIDTH",
]

#: Exercise 3: the head width d of the attention in the QK-norm question
QK_WIDTH = 64

#: Exercise 1: one input, one unit: dense weight and bias, then a batch layer with these running
#: figures, scale and shift (epsilon 1e-5). The running variance is small, so that forgetting
#: epsilon changes the answer beyond the checker's tolerance, and weight and bias differ.
FOLD = {
    "weight": 3.0,
    "bias": 2.0,
    "running_mean": 1.0,
    "running_var": 0.0004,
    "scale": 0.02,
    "shift": 0.5,
}
EPSILON = 1e-5


def _folded() -> Dense:
    dense = Dense(weights=np.array([[FOLD["weight"]]]), bias=np.array([FOLD["bias"]]))
    batch = BatchNorm(
        scale=np.array([FOLD["scale"]]),
        shift=np.array([FOLD["shift"]]),
        running_mean=np.array([FOLD["running_mean"]]),
        running_var=np.array([FOLD["running_var"]]),
        eps=EPSILON,
    )
    return fold_batch_norm(dense, batch)


def _mistakes() -> dict[str, tuple[float, float]]:
    """The folded (weight, bias) each typical mistake gives, by what the reader did wrong."""
    w, b, mu, var = (FOLD[k] for k in ("weight", "bias", "running_mean", "running_var"))
    gamma, beta = FOLD["scale"], FOLD["shift"]
    k = gamma / math.sqrt(var + EPSILON)
    return {
        "epsilon is missing under the square root": (
            w * gamma / math.sqrt(var),
            (b - mu) * gamma / math.sqrt(var) + beta,
        ),
        "the weight and the bias are swapped": ((b - mu) * k + beta, w * k),
        "the running mean is not subtracted from the bias": (w * k, b * k + beta),
        "this divides by the variance, not by the divisor": (
            w * gamma / (var + EPSILON),
            (b - mu) * gamma / (var + EPSILON) + beta,
        ),
        "the shift is not added to the bias": (w * k, (b - mu) * k),
    }


def check_folded(weight: Any, bias: Any) -> Verdict:
    """Exercise 1: the folded layer's weight and bias for FOLD."""
    if weight is None or bias is None:
        return Verdict(PROMPT)
    f = _folded()
    expected = [float(f.weights[0, 0]), float(f.bias[0])]
    found = verdict([weight, bias], expected, tolerance=1e-4)
    if found.right:
        return found
    try:
        given = (float(weight), float(bias))
    except (TypeError, ValueError):
        return found
    for mistake, (mw, mb) in _mistakes().items():
        if abs(given[0] - mw) <= 1e-4 * max(1, abs(mw)) and abs(given[1] - mb) <= 1e-4 * max(
            1, abs(mb)
        ):
            return Verdict(f"not yet: {mistake}")
    return found


def check_post_ln_ratio(answer: Any) -> Verdict:
    """Exercise 2: in a post-LN network of 6 residual blocks, seed 0 alone, the length of block 6's
    weight gradient divided by block 1's."""
    norm = prepost.gradient_profile("post-LN", seeds=(0,), blocks=6).norm[0]
    expected = float(norm[-1] / norm[0])
    try:
        value = float(answer) if answer is not None else None
    except (TypeError, ValueError):
        value = None
    if value is not None and abs(value - 1 / expected) <= 5e-4 * max(1, 1 / expected):
        return Verdict(
            "not yet: that is block 1's gradient over block 6's; the question asks "
            "block 6 over block 1"
        )
    # asked to two decimals: any answer within half a unit of the second decimal is right
    return verdict(answer, expected, tolerance=POST_LN_DECIMALS_TOLERANCE / max(1.0, expected))


#: Exercise 2 asks for two decimals
POST_LN_DECIMALS_TOLERANCE = 0.005


def check_qk_bound(answer: Any) -> Verdict:
    """Exercise 3: with QK-norm (a layer normaliser without a learned scale on every query and
    key, epsilon aside) and heads of width QK_WIDTH, the largest attention logit
    q . k / sqrt(d) can reach: sqrt(d), when a query and a key point the same way."""
    d = QK_WIDTH
    mistakes = {
        float(d): "that is q . k alone: the logit divides it by sqrt(d)",
        1.0: "that is the cosine's bound: a layer-normalised vector has length sqrt(d), not 1",
        float(d) ** 1.5: "that multiplies by sqrt(d) instead of dividing",
    }
    try:
        value = float(answer) if answer is not None else None
    except (TypeError, ValueError):
        value = None
    if value is not None:
        for wrong, why in mistakes.items():
            if abs(value - wrong) <= 1e-6 * max(1.0, wrong):
                return Verdict(f"not yet: {why}")
    return verdict(answer, math.sqrt(d))
