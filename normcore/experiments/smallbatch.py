"""Small batches: training on a batch layer's small-batch statistics, and freezing it for
fine-tuning.

- `by_group_size`: the digits batch network trained for one epoch of the chapter's 64-row steps
  with its batch layers reading their statistics over groups of B rows (`GhostBatchNorm`), B from 2
  to 32, as B rows on each of 64 / B machines would: everything else about training (the rows of a
  step, their order, the learning rate, the number of steps) is the same for every B, so the only
  change is the statistics' batch. With B = 64 it is the chapter's sweep itself. A layer or group
  normaliser reads no other row, so its training is the same run for every B.
- `fine_tune`: a trained batch network takes more steps on batches of two rows, either in the
  training purpose (statistics of two rows, running figures moving) or in the predicting purpose
  (the batch layer frozen: a fixed scale and shift per feature, running figures still).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..batch import BatchNorm, GhostBatchNorm
from ..errors import SettingError
from . import deepnet, digits_rates

#: the statistics' batch sizes the chapter shows; the last is the sweep's own 64-row batch
SIZES = (2, 4, 8, 16, 32, 64)
#: epochs of the group-size runs
EPOCHS = 1
TUNE_STEPS = 30
TUNE_BATCH = 2
TUNE_RATE = 0.003


def ghost(net: deepnet.DeepNet, group_rows: int) -> deepnet.DeepNet:
    """`net` (the batch version) with every batch layer reading its training statistics over
    groups of `group_rows` rows; parameters and running figures are kept."""
    if not all(isinstance(n, BatchNorm) for n in net.norms):
        raise SettingError("net: expected the batch version of the digits network")
    norms = tuple(
        GhostBatchNorm(
            scale=n.scale,
            shift=n.shift,
            epsilon=n.epsilon,
            affine=n.affine,
            running_mean=n.running_mean,
            running_variance=n.running_variance,
            momentum=n.momentum,
            tracks=n.tracks,
            group_rows=group_rows,
        )
        for n in net.norms
    )
    return replace(net, norms=norms)


def by_group_size(
    data: tuple[np.ndarray, ...],
    rate: float,
    seeds: Sequence[int] = digits_rates.SEEDS,
    sizes: Sequence[int] = SIZES[:-1],
) -> np.ndarray:
    """Held-out accuracy (predicting) of the digits batch network after EPOCHS epochs of 64-row
    steps at `rate`, its statistics read over groups of B rows: shape (len(sizes), len(seeds)).
    Each B trains the seeds as one stack, from the starting weights and in the row order of
    `digits_rates.sweep`; the sizes train in turn, in this process.
    """
    batch = digits_rates.BATCH
    for b in sizes:
        if isinstance(b, bool) or not isinstance(b, (int, np.integer)) or b < 1 or batch % b:
            raise SettingError(f"sizes: expected whole numbers that divide {batch}, got {b!r}")
    if not seeds:
        raise SettingError("seeds: expected at least one seed")
    seeds = tuple(seeds)
    return np.array([_group_size_run(int(b), data, rate, seeds) for b in sizes])


def _group_size_run(
    group_rows: int, data: tuple[np.ndarray, ...], rate: float, seeds: tuple[int, ...]
) -> np.ndarray:
    """Held-out accuracy (S,) of one `by_group_size` run: statistics over `group_rows` rows."""
    net = ghost(deepnet.build("batch", list(seeds)), group_rows)
    run = deepnet.train(net, data, rate, epochs=EPOCHS, batch=digits_rates.BATCH)
    return run.accuracy[-1]


def by_size(
    sweeps: dict[str, digits_rates.Sweep],
    data: tuple[np.ndarray, ...],
    rate: float,
) -> dict[str, np.ndarray]:
    """Held-out accuracy after EPOCHS epochs for every B of SIZES, each (len(SIZES), seeds):

    - 'batch': the batch network at `rate`, B from 2 to 32 trained here (`by_group_size`), B = 64
      read from `sweeps['batch']` (the same run: the tests hold the two to the last bit);
    - 'layer': the layer network at its best rate in `sweeps['layer']`, the same run for every B
      (it reads no other row, so the statistics' batch does not enter its training).
    """
    if EPOCHS > digits_rates.EPOCHS:
        raise SettingError(f"EPOCHS: the sweep records {digits_rates.EPOCHS} epochs")
    if rate not in digits_rates.RATES:
        raise SettingError(
            f"rate: expected one of the sweep's rates {digits_rates.RATES}, got {rate!r}"
        )
    batch_64 = sweeps["batch"].accuracy[digits_rates.RATES.index(rate), :, EPOCHS]
    layer = sweeps["layer"]
    layer_acc = layer.accuracy[digits_rates.RATES.index(layer.best_rate()), :, EPOCHS]
    return {
        "batch": np.vstack([by_group_size(data, rate, sizes=SIZES[:-1]), batch_64]),
        "layer": np.tile(layer_acc, (len(SIZES), 1)),
    }


@dataclass(frozen=True, eq=False)
class FineTune:
    """Held-out accuracy (predicting) before and after TUNE_STEPS steps on batches of two, for
    each way of treating the batch layer; shapes (S,).

    `after_frozen` is steady: the same under every arithmetic setting the book is tested with
    (tools/arith_matrix.py). `after_training` is not: the running figures end as the statistics
    of the last few pairs, and on one seed of the chapter's three the final accuracy moved by
    about a tenth between those settings, so the chapter states a bound for it, never its
    digits."""

    before: np.ndarray
    after_training: np.ndarray
    after_frozen: np.ndarray


def fine_tune(net: deepnet.DeepNet, data: tuple[np.ndarray, ...], seed: int = 0) -> FineTune:
    """Fine-tune `net` (a stack of S networks) on TUNE_STEPS random pairs of training rows, both
    ways."""
    x, y, x_held, y_held = data
    rng = np.random.default_rng(seed)
    pairs = [rng.choice(len(y), TUNE_BATCH, replace=False) for _ in range(TUNE_STEPS)]
    rates = np.full(net.size, TUNE_RATE)
    after = {}
    for purpose in ("training", "predicting"):
        tuned = net
        for rows in pairs:
            _, grads = deepnet.gradients(tuned, x[rows], y[rows], purpose)
            tuned = deepnet.step(tuned, grads, rates)
        after[purpose] = deepnet.accuracy(tuned, x_held, y_held)
    return FineTune(
        before=deepnet.accuracy(net, x_held, y_held),
        after_training=after["training"],
        after_frozen=after["predicting"],
    )
