"""Santurkar et al. (2018)'s measurements of smoothness on the deep digits network, plain and batch.

At a few moments of training (probes), take the batch in hand, its gradient g at the weights w,
and look along the gradient direction. Two ways of choosing the points:

At multiples m * rate of the learning rate (the points a step at m times the rate reaches; a
network with a longer gradient reaches further):

- `loss_variation`: the largest minus the smallest loss L(w - m * rate * g) over the multiples
  and w itself, on the same batch;
- `gradient_change_absolute`: the largest ||g(w - m * rate * g) - g(w)|| over the multiples, the
  l2 change of the gradient Santurkar et al. plot as "gradient predictiveness";
- `gradient_change`: the same divided by ||g(w)|| (relative to the gradient's own length; not
  a measure of theirs).

At equal distances d moved along -g / ||g|| (the same for both networks):

- `loss_variation_equal`: the largest minus the smallest loss over the distances in CHORDS and 0;
- `beta_short`, `beta_long`: ||g(w - d g/||g||) - g(w)|| / d at d = CHORDS[0] and d = LONG_CHORD,
  the "effective beta-smoothness" (change of the gradient per distance moved) over a short and
  a long chord.

Both versions train at the same rate from the same seeds, stacked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import SettingError
from . import deepnet
from .digits_rates import BATCH, digits_data

SEEDS = (0, 1, 2)
RATE = 0.1
MULTIPLES = (0.5, 1.0, 2.0, 4.0)
PROBES = (0, 8, 16)
#: the distances moved along the gradient direction for the equal-length measures
CHORDS = (0.05, 0.1, 0.2, 0.4)
LONG_CHORD = 1.6


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
    """Per version, arrays of shape (len(probes), len(seeds)): `loss_variation`,
    `gradient_change` (relative) and `gradient_change_absolute` at multiples of the rate;
    `loss_variation_equal`, `beta_short` and `beta_long` at equal distances; `gradient_norm`.
    `probes` are the steps measured (0 before the first)."""

    version: str
    loss_variation: np.ndarray
    gradient_change: np.ndarray
    gradient_change_absolute: np.ndarray
    gradient_norm: np.ndarray
    loss_variation_equal: np.ndarray
    beta_short: np.ndarray
    beta_long: np.ndarray
    probes: tuple[int, ...] = PROBES


def measure(
    version: str,
    data: tuple[np.ndarray, ...] | None = None,
    seeds: Sequence[int] = SEEDS,
    probes: Sequence[int] = PROBES,
    order_seed: int = 0,
) -> Smoothness:
    """Train `version` at RATE (the seeds stacked), probing before the steps in `probes`.

    The mini-batches are consecutive blocks of one shuffle of the training rows (from
    `order_seed`), reshuffled each epoch.
    """
    x, y, _, _ = digits_data() if data is None else data
    probes = tuple(int(p) for p in probes)
    if not probes or min(probes) < 0 or list(probes) != sorted(set(probes)):
        raise SettingError(f"probes: expected increasing step numbers >= 0, got {probes!r}")
    if not seeds:
        raise SettingError("seeds: expected at least one seed")
    net = deepnet.build(version, list(seeds))
    rates = np.full(len(seeds), RATE)
    rng = np.random.default_rng(order_seed)
    per_epoch = len(y) // BATCH
    rows_of = []
    for _ in range(probes[-1] // per_epoch + 1):
        order = rng.permutation(len(y))
        rows_of += [order[k * BATCH : (k + 1) * BATCH] for k in range(per_epoch)]
    rows_of = rows_of[: probes[-1] + 1]
    variation, change, absolute, norms = [], [], [], []
    equal, short, long = [], [], []
    for k, rows in enumerate(rows_of):
        loss, grads = deepnet.gradients(net, x[rows], y[rows])
        if k in probes:
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
            along, betas = [loss], {}
            for d in (*CHORDS, LONG_CHORD):
                moved = deepnet.step(net, grads, d / norm)
                moved_loss, moved_grads = deepnet.gradients(moved, x[rows], y[rows])
                if d in CHORDS:
                    along.append(moved_loss)
                betas[d] = gradient_gap(moved_grads, grads) / d
            along_a = np.array(along)
            equal.append(along_a.max(axis=0) - along_a.min(axis=0))
            short.append(betas[CHORDS[0]])
            long.append(betas[LONG_CHORD])
        if k == probes[-1]:
            break
        net = deepnet.step(net, grads, rates)
    return Smoothness(
        version=version,
        loss_variation=np.array(variation),
        gradient_change=np.array(change),
        gradient_change_absolute=np.array(absolute),
        gradient_norm=np.array(norms),
        loss_variation_equal=np.array(equal),
        beta_short=np.array(short),
        beta_long=np.array(long),
        probes=probes,
    )
