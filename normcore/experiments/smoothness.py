"""Santurkar et al. (2018)'s measurements of smoothness on the deep digits network, plain and batch.

At a few moments of training (probes), take the batch in hand, its gradient g at the weights w,
and look along the gradient direction. Two ways of choosing the points:

At multiples m * rate of the learning rate (the points a step at m times the rate reaches; a
network with a longer gradient reaches further), Santurkar et al.'s three measures as they
define them, over the same steps:

- `loss_variation` (their (a), the loss landscape): the largest minus the smallest loss
  L(w - m * rate * g) over the multiples and w itself, on the same batch;
- `gradient_change_absolute` (their (b), "gradient predictiveness"): the largest
  ||g(w - m * rate * g) - g(w)|| over the multiples, the l2 change of the gradient;
- `beta_effective` (their (c), "effective beta-smoothness"): the largest change of the gradient
  per distance moved, ||g(w - m * rate * g) - g(w)|| / (m * rate * ||g||), over the multiples;
- `gradient_change`: (b) divided by ||g(w)|| (relative to the gradient's own length; this
  book's measure, not theirs).

At equal distances d moved along -g / ||g|| (the same for both networks; this book's variants,
not theirs):

- `loss_variation_equal`: the largest minus the smallest loss over the distances in CHORDS and 0;
- `beta_short`, `beta_long`: ||g(w - d g/||g||) - g(w)|| / d at d = CHORDS[0] and d = LONG_CHORD,
  the change of the gradient per distance moved over one short and one long chord.

`scale` (an intervention): the hidden dense layers' weights and biases are multiplied by it at
each probe before measuring (training itself is untouched). In front of batch layers they are
scale-invariant, so the network computes the same function (up to epsilon); only the measures
that see the length move.

Both versions train at the same rate from the same seeds, side by side along a leading axis; at a
probe, the nine points looked at are nine copies of the networks on that axis (one gradient call).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import SettingError
from . import deepnet
from .digits_rates import BATCH, Sweep, digits_data
from .digits_rates import SEEDS as SWEEP_SEEDS

#: the chapter's seeds: its sweep's, whose runs at RATE it probes (`from_sweep`)
SEEDS = SWEEP_SEEDS
RATE = 0.1
MULTIPLES = (0.5, 1.0, 2.0, 4.0)
PROBES = (0, 8, 16)
#: the probes of the claims suite (tests/claims/test_ch08.py): the chapter's two after the start,
#: and one before the first step of the third epoch
CLAIMS_PROBES = (8, 16, 44)
#: the distances moved along the gradient direction for the equal-length measures
CHORDS = (0.05, 0.1, 0.2, 0.4)
LONG_CHORD = 1.6
#: the factors the rescaling check multiplies the hidden weights by (`scale`)
SCALES = (2.0, 4.0)


def gradient_norm(grads: list) -> np.ndarray:
    """The length of the whole gradient (every parameter gradient), per network (S,)."""
    total = 0.0
    for g in grads:
        for v in g.grads.values():
            total = total + (v.reshape(v.shape[0], -1) ** 2).sum(axis=1)
    return np.sqrt(total)


def gradient_gap(a: list, b: list) -> np.ndarray:
    """||a - b|| over every parameter gradient, per network; `a` and `b` list the same
    network's layers in the same order."""
    total = 0.0
    for ga, gb in zip(a, b, strict=True):
        for key, v in ga.grads.items():
            diff = v - gb.grads[key]
            total = total + (diff.reshape(diff.shape[0], -1) ** 2).sum(axis=1)
    return np.sqrt(total)


def gradient_gaps(moved: list, grads: list, count: int) -> np.ndarray:
    """`gradient_gap` of each of `count` copies against `grads`: `moved` is the gradient
    of count x S networks on the leading axis (copy c of network s at ``c * S + s``), `grads` that
    of the S networks. Returns (count, S), each entry computed exactly as `gradient_gap` computes
    it."""
    total = 0.0
    for ga, gb in zip(moved, grads, strict=True):
        for key, v in ga.grads.items():
            b = gb.grads[key]
            diff = v.reshape(count, *b.shape) - b
            total = total + (diff.reshape(count * b.shape[0], -1) ** 2).sum(axis=1)
    return np.sqrt(total).reshape(count, -1)


@dataclass(frozen=True, eq=False)
class Smoothness:
    """Per version, arrays of shape (len(probes), len(seeds)): `loss_variation`,
    `gradient_change` (relative) and `gradient_change_absolute` at multiples of the rate;
    `loss_variation_equal`, `beta_short` and `beta_long` at equal distances; `gradient_norm`;
    `beta_effective` at multiples of the rate (their (c)); `loss` the batch's loss at the probe.
    `probes` are the steps measured (0 before the first); `scale` the factor the hidden weights
    were multiplied by at each probe (1: as trained)."""

    version: str
    loss_variation: np.ndarray
    gradient_change: np.ndarray
    gradient_change_absolute: np.ndarray
    gradient_norm: np.ndarray
    loss_variation_equal: np.ndarray
    beta_short: np.ndarray
    beta_long: np.ndarray
    beta_effective: np.ndarray
    loss: np.ndarray
    probes: tuple[int, ...] = PROBES
    scale: float = 1.0


def _probe(
    net: deepnet.DeepNet, loss: np.ndarray, grads: list, x: np.ndarray, y: np.ndarray
) -> tuple[np.ndarray, ...]:
    """Every measure at one probe, per network: the batch (x, y), its loss and gradient
    at `net`; the nine points looked at (the multiples of the rate, then the distances) in one
    call along the leading axis. Returns (loss_variation, gradient_change, gradient_change_absolute,
    gradient_norm, loss_variation_equal, beta_short, beta_long, beta_effective, loss)."""
    norm = gradient_norm(grads)
    rates = np.full(net.size, RATE)
    lengths = [rates * m for m in MULTIPLES] + [d / norm for d in (*CHORDS, LONG_CHORD)]
    moved = deepnet.concatenate([deepnet.step(net, grads, r) for r in lengths])
    moved_loss, moved_grads = deepnet.gradients(moved, x, y)
    moved_loss = moved_loss.reshape(len(lengths), -1)
    gaps = gradient_gaps(moved_grads, grads, len(lengths))
    at_rates, at_lengths = slice(0, len(MULTIPLES)), slice(len(MULTIPLES), None)
    losses = np.vstack([loss, moved_loss[at_rates]])
    along = np.vstack([loss, moved_loss[at_lengths][: len(CHORDS)]])
    betas = gaps[at_lengths] / np.array([*CHORDS, LONG_CHORD])[:, None]
    return (
        losses.max(axis=0) - losses.min(axis=0),
        gaps[at_rates].max(axis=0) / norm,
        gaps[at_rates].max(axis=0),
        norm,
        along.max(axis=0) - along.min(axis=0),
        betas[0],
        betas[-1],
        (gaps[at_rates] / (np.array(MULTIPLES)[:, None] * RATE * norm)).max(axis=0),
        np.asarray(loss, dtype=np.float64),
    )


def _assembled(
    version: str, probes: tuple[int, ...], found: list, scale: float = 1.0
) -> Smoothness:
    """The `Smoothness` of the probes' measures, `found` in probe order (each as `_probe`)."""
    fields = [np.array(column) for column in zip(*found, strict=True)]
    return Smoothness(version, *fields, probes=probes, scale=scale)


def rescaled(net: deepnet.DeepNet, factor: float) -> deepnet.DeepNet:
    """`net` with every hidden dense layer's weights and bias multiplied by `factor` (> 0); the
    output layer and the normalisers are untouched. In front of batch layers the function is
    the same (up to epsilon); a plain network's is not."""
    if not factor > 0:
        raise SettingError(f"factor: expected a positive number, got {factor!r}")
    if factor == 1:
        return net
    dense = tuple(
        dataclasses.replace(d, weights=d.weights * factor, bias=d.bias * factor) for d in net.dense
    )
    return dataclasses.replace(net, dense=dense)


def _checked_probes(probes: Sequence[int]) -> tuple[int, ...]:
    probes = tuple(int(p) for p in probes)
    if not probes or min(probes) < 0 or list(probes) != sorted(set(probes)):
        raise SettingError(f"probes: expected increasing step numbers >= 0, got {probes!r}")
    return probes


def measure(
    version: str,
    data: tuple[np.ndarray, ...] | None = None,
    seeds: Sequence[int] = SEEDS,
    probes: Sequence[int] = PROBES,
    order_seed: int = 0,
    scale: float = 1.0,
) -> Smoothness:
    """Train `version` at RATE (the seeds side by side), probing before the steps in `probes`.

    The mini-batches are consecutive slices of one shuffle of the training rows (from
    `order_seed`), reshuffled each epoch: the batches `deepnet.train` reads, so that the probes
    of a run at RATE are the same whether measured here or on a sweep's kept steps
    (`from_sweep`). `scale`: see the module's docstring (the probes only; training untouched).
    """
    x, y, _, _ = digits_data() if data is None else data
    probes = _checked_probes(probes)
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
    found = []
    for k, rows in enumerate(rows_of):
        loss, grads = deepnet.gradients(net, x[rows], y[rows])
        if k in probes:
            if scale == 1:
                found.append(_probe(net, loss, grads, x[rows], y[rows]))
            else:
                moved = rescaled(net, scale)
                at, grads_at = deepnet.gradients(moved, x[rows], y[rows])
                found.append(_probe(moved, at, grads_at, x[rows], y[rows]))
        if k == probes[-1]:
            break
        net = deepnet.step(net, grads, rates)
    return _assembled(version, probes, found, scale)


def from_sweep(
    sweep: Sweep,
    data: tuple[np.ndarray, ...],
    probes: Sequence[int] = PROBES,
    scale: float = 1.0,
) -> Smoothness:
    """`measure` of the sweep's networks at RATE (its seeds), read from the steps the sweep kept
    (`digits_rates.sweep(..., keep=probes)`) instead of training them again: the same numbers,
    to the last bit, as ``measure(sweep.version, data, sweep.seeds, probes)`` (the sweep trains
    each network exactly as it would on its own, on the same batches)."""
    x, y, _, _ = data
    probes = _checked_probes(probes)
    if RATE not in sweep.rates:
        raise SettingError(f"sweep: expected the rate {RATE:g} among its rates {sweep.rates}")
    missing = [p for p in probes if p not in sweep.kept]
    if missing:
        raise SettingError(f"sweep: the steps {missing} were not kept (keep={probes!r})")
    start = sweep.rates.index(RATE) * len(sweep.seeds)
    found = []
    for p in probes:
        stack, rows = sweep.kept[p]
        net = rescaled(deepnet.pick(stack, slice(start, start + len(sweep.seeds))), scale)
        loss, grads = deepnet.gradients(net, x[rows], y[rows])
        found.append(_probe(net, loss, grads, x[rows], y[rows]))
    return _assembled(sweep.version, probes, found, scale)
