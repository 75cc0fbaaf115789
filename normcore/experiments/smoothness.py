"""Santurkar et al. (2018)'s two measurements on the deep digits network, plain and batch.

At a few moments of training (probes), take the batch in hand, its gradient g at the weights w,
and look along the gradient step at several multiples m * rate of the learning rate:

- loss variation: the largest minus the smallest loss L(w - m * rate * g) over the multiples,
  on the same batch (how much the loss changes along the step: a smooth landscape changes little);
- gradient change: the largest ||g(w - m * rate * g) - g(w)|| over the multiples, divided by
  ||g(w)|| (gradient predictiveness: how far the gradient one stands on predicts the gradient one
  steps to), and the same without the division.

Both versions train at the same rate from the same seeds, stacked.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import deepnet
from .digits_rates import BATCH, digits_data

SEEDS = (0, 1, 2, 3, 4)
RATE = 0.1
MULTIPLES = (0.5, 1.0, 2.0, 4.0)
PROBES = (0, 8, 16)
STEPS = 17


def gradient_norm(grads: list) -> np.ndarray:
    """The length of the whole gradient (every parameter slope), per stacked network (S,)."""
    total = 0.0
    for g in grads:
        for v in g.slopes.values():
            total = total + (v.reshape(v.shape[0], -1) ** 2).sum(axis=1)
    return np.sqrt(total)


def gradient_gap(a: list, b: list) -> np.ndarray:
    """||a - b|| over every parameter slope, per stacked network; `a` and `b` list the same
    network's layers in the same order."""
    total = 0.0
    for ga, gb in zip(a, b, strict=True):
        for key, v in ga.slopes.items():
            diff = v - gb.slopes[key]
            total = total + (diff.reshape(diff.shape[0], -1) ** 2).sum(axis=1)
    return np.sqrt(total)


@dataclass(frozen=True, eq=False)
class Smoothness:
    """Per version, arrays of shape (len(PROBES), len(SEEDS)): `loss_variation`,
    `gradient_change` (relative) and `gradient_change_absolute`, and `gradient_norm`."""

    version: str
    loss_variation: np.ndarray
    gradient_change: np.ndarray
    gradient_change_absolute: np.ndarray
    gradient_norm: np.ndarray


def measure(version: str, data: tuple[np.ndarray, ...] | None = None) -> Smoothness:
    """Train `version` at RATE for STEPS mini-batches (5 seeds stacked), probing at PROBES."""
    x, y, _, _ = digits_data() if data is None else data
    net = deepnet.build(version, list(SEEDS))
    rates = np.full(len(SEEDS), RATE)
    order = np.random.default_rng(0).permutation(len(y))
    rows_of = [order[k * BATCH : (k + 1) * BATCH] for k in range(STEPS)]
    variation, change, absolute, norms = [], [], [], []
    for k, rows in enumerate(rows_of):
        loss, grads = deepnet.gradients(net, x[rows], y[rows])
        if k in PROBES:
            losses, gaps = [loss], []
            for m in MULTIPLES:
                moved = deepnet.step(net, grads, rates * m)
                moved_loss, moved_grads = deepnet.gradients(moved, x[rows], y[rows])
                losses.append(moved_loss)
                gaps.append(gradient_gap(moved_grads, grads))
            losses_a, gaps_a = np.array(losses), np.array(gaps)
            norm = gradient_norm(grads)
            variation.append(losses_a.max(axis=0) - losses_a.min(axis=0))
            absolute.append(gaps_a.max(axis=0))
            change.append(gaps_a.max(axis=0) / norm)
            norms.append(norm)
        net = deepnet.step(net, grads, rates)
    return Smoothness(
        version=version,
        loss_variation=np.array(variation),
        gradient_change=np.array(change),
        gradient_change_absolute=np.array(absolute),
        gradient_norm=np.array(norms),
    )
