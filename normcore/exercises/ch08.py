"""Checks for chapter 8's exercises. Answers are computed with normcore and never printed."""

from __future__ import annotations

from typing import Any

import numpy as np

from normcore.exercises import PROMPT, Verdict, verdict
from normcore.experiments import deepnet

#: Exercise 1: the loss L(w) = (w1**2 + 10 * w2**2) / 2 at W, one step at RATE.
CURVATURE = np.array([1.0, 10.0])
W = np.array([1.0, 1.0])
RATE = 0.1

#: Exercise 3: a scale-invariant weight block's squared length, its gradient's squared length and
#: the learning rate.
LENGTH2, GRAD2, STEP_RATE = 4.0, 0.02, 0.1


def check_gradient_change(answer: Any) -> Verdict:
    """Exercise 1: ||g(W - RATE g(W)) - g(W)|| for L(w) = sum(CURVATURE * w**2) / 2."""
    g = CURVATURE * W
    moved = CURVATURE * (W - RATE * g)
    expected = float(np.linalg.norm(moved - g))
    length = float(np.linalg.norm(g))
    step = RATE * length
    mistakes = {
        expected / length: "that is the change divided by the gradient's length; the question "
        "asks for the absolute length of the change",
        length: "that is the length of the gradient g(w) itself, not of its change",
        step: "that is the length of the step, eta |g(w)|, not the change of the gradient",
        expected / step: "that is the change per distance moved (divided by the step's "
        "length); the question asks for the change itself",
    }
    value = _number(answer) if answer is not None else None
    if value is not None:
        for wrong, why in mistakes.items():
            if abs(value - wrong) < 5e-4 * max(1.0, abs(wrong)):
                return Verdict(f"not yet: {why}")
    return verdict(answer, expected)


def _number(answer: Any) -> float | None:
    try:
        return float(answer)
    except (TypeError, ValueError):
        return None


def check_parameter_counts(learned: Any, running: Any) -> Verdict:
    """Exercise 2: how many more learned parameters the batch version of the digits network has
    than the plain one, and how many running statistics it keeps."""
    if learned is None or running is None:
        return Verdict(PROMPT)
    batch = deepnet.build("batch", [0])
    extra = sum(n.scale.size + n.shift.size for n in batch.norms)
    figures = sum(n.running_mean.size + n.running_var.size for n in batch.norms)
    if _number(learned) == extra // 2:
        return Verdict("not yet: each batch layer learns a shift per unit as well as a scale")
    if _number(running) == figures // 2:
        return Verdict(
            "not yet: a batch layer keeps a running variance per unit as well as a running mean"
        )
    return verdict([learned, running], [extra, figures], tolerance=0)


def check_balancing_decay(answer: Any) -> Verdict:
    """Exercise 3: the weight decay at which LENGTH2, SLOPE2 and STEP_RATE balance (checked
    relative to its size, since the answer is small)."""
    expected = STEP_RATE * GRAD2 / (2 * LENGTH2)
    if answer is None:
        return verdict(None, expected)
    try:
        share = float(answer) / expected
    except (TypeError, ValueError):
        return verdict(answer, expected)
    if abs(share - 2.0) < 1e-3:
        return Verdict(
            "not yet: the decay shrinks the squared length by 2 eta lambda |w|^2 per "
            "step; the 2 belongs on the decay's side"
        )
    if abs(share - 0.5) < 1e-3:
        return Verdict(
            "not yet: the balance is 2 lambda |w|^2 = eta |g|^2; this is half the decay it gives"
        )
    unsquared = STEP_RATE * np.sqrt(GRAD2) / (2 * np.sqrt(LENGTH2))
    if abs(float(answer) - unsquared) <= 1e-3 * unsquared:
        return Verdict(
            "not yet: the numbers given are squared lengths; the balance uses them as they are, "
            "not their square roots"
        )
    return verdict(share, 1.0)
