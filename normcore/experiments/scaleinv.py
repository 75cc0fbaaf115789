"""Scale invariance of weights followed by batch normalisation, and the effective learning rate.

A hidden dense layer followed by a batch layer (training purpose) gives the same output when its
weights and bias are multiplied by any c > 0, up to epsilon: the batch layer divides the factor
out. Two consequences, both measured on the digits batch network:

- the slope of the loss for those weights is c times smaller, and at right angles to them;
- so plain gradient descent can only lengthen them (chapter 5's argument), each step shrinking
  the *effective* rate rate / ||w||^2. Weight decay shrinks them instead; the length settles where
  the two balance: 2 * decay * ||w||^2 = rate * ||g||^2 on average (van Laarhoven 2017).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..errors import SettingError
from . import deepnet
from .digits_rates import digits_data

FACTORS = (0.5, 2.0, 4.0)
LAYER = 3  # the fourth hidden layer, counted from 0
SEEDS = (0, 1, 2)
RATE = 0.2
DECAY = 0.1
STEPS = 150
BATCH = 32
DEPTH = 3  # the effective-rate runs use three hidden layers, to stay quick


@dataclass(frozen=True)
class Invariance:
    """For each factor c in FACTORS: the largest relative change in the loss, the ratio
    c * ||g(c w)|| / ||g(w)|| (1 for exact invariance), and, at c = 1, the cosine between the
    layer's weights-and-bias and their slope."""

    loss_change: tuple[float, ...]
    slope_ratio: tuple[float, ...]
    cosine: float


def _scaled(net: deepnet.DeepNet, layer: int, c: float) -> deepnet.DeepNet:
    dense = list(net.dense)
    d = dense[layer]
    dense[layer] = dataclasses.replace(d, weights=d.weights * c, bias=d.bias * c)
    return dataclasses.replace(net, dense=tuple(dense))


def _layer_slope(net, grads, layer: int) -> np.ndarray:
    g = next(g for g in grads if g.layer is net.dense[layer])
    return np.concatenate([g.slopes["weights"].ravel(), g.slopes["bias"].ravel()])


def invariance(seed: int = 0, layer: int = LAYER) -> Invariance:
    """Scale one hidden layer of a fresh batch network (one seed) and compare one batch's loss
    and slope."""
    if not 0 <= layer < deepnet.DEPTH:
        raise SettingError(f"layer: expected 0 to {deepnet.DEPTH - 1}, got {layer!r}")
    x, y, _, _ = digits_data()
    rows = slice(0, 64)
    net = deepnet.build("batch", [seed])
    loss, grads = deepnet.gradients(net, x[rows], y[rows])
    slope = _layer_slope(net, grads, layer)
    changes, ratios = [], []
    for c in FACTORS:
        scaled = _scaled(net, layer, c)
        loss_c, grads_c = deepnet.gradients(scaled, x[rows], y[rows])
        changes.append(float(np.abs(loss_c - loss).max() / np.abs(loss).max()))
        ratios.append(
            float(c * np.linalg.norm(_layer_slope(scaled, grads_c, layer)) / np.linalg.norm(slope))
        )
    d = net.dense[layer]
    w = np.concatenate([d.weights.ravel(), d.bias.ravel()])
    cosine = float(w @ slope / (np.linalg.norm(w) * np.linalg.norm(slope)))
    return Invariance(loss_change=tuple(changes), slope_ratio=tuple(ratios), cosine=cosine)


@dataclass(frozen=True, eq=False)
class EffectiveRate:
    """Per step (STEPS,) and stacked network (decays x seeds): the squared length of the middle
    hidden layer's weights, the squared length of its slope, and the effective rate
    rate / ||w||^2. `decays` names the weight decay of each row block."""

    decays: tuple[float, ...]
    length2: np.ndarray
    slope2: np.ndarray

    @property
    def effective(self) -> np.ndarray:
        return RATE / self.length2

    def balance(self, last: int = 50) -> np.ndarray:
        """rate * mean ||g||^2 / (2 * decay * mean ||w||^2) over the last `last` steps, per
        decayed network (1 where the two balance)."""
        decay = np.repeat(np.array(self.decays), len(SEEDS))
        keep = decay > 0
        grow = RATE * self.slope2[-last:, keep].mean(axis=0)
        shrink = 2 * decay[keep] * self.length2[-last:, keep].mean(axis=0)
        return grow / shrink


def effective_rate(decays: tuple[float, ...] = (0.0, DECAY)) -> EffectiveRate:
    """Train the batch network (DEPTH hidden layers) at RATE with each weight decay, all seeds
    stacked, STEPS mini-batches of BATCH, recording the middle layer's lengths each step."""
    x, y, _, _ = digits_data()
    seeds = [s for _ in decays for s in SEEDS]
    net = deepnet.build("batch", seeds, depth=DEPTH)
    middle = DEPTH // 2
    rng = np.random.default_rng(0)
    length2, slope2 = [], []
    order = rng.permutation(len(y))
    per_epoch = len(y) // BATCH
    rates = np.full(len(seeds), RATE)
    for k in range(STEPS):
        if k and k % per_epoch == 0:
            order = rng.permutation(len(y))
        rows = order[(k % per_epoch) * BATCH : (k % per_epoch + 1) * BATCH]
        _, grads = deepnet.gradients(net, x[rows], y[rows])
        w = net.dense[middle].weights
        g = next(g for g in grads if g.layer is net.dense[middle]).slopes["weights"]
        length2.append((w.reshape(len(seeds), -1) ** 2).sum(axis=1))
        slope2.append((g.reshape(len(seeds), -1) ** 2).sum(axis=1))
        decay_each = np.repeat(np.array(decays), len(SEEDS))
        net = _decayed_step(net, grads, rates, decay_each)
    return EffectiveRate(decays=tuple(decays), length2=np.array(length2), slope2=np.array(slope2))


def _decayed_step(net, grads, rates: np.ndarray, decay: np.ndarray) -> deepnet.DeepNet:
    """`deepnet.step`, with each stacked network's hidden weights decayed at its own rate."""
    decayed = []
    hidden = {id(d) for d in net.dense}
    for g in grads:
        if id(g.layer) in hidden:
            extra = decay[:, None, None] * g.layer.weights
            g = dataclasses.replace(g, slopes=dict(g.slopes, weights=g.slopes["weights"] + extra))
        decayed.append(g)
    return deepnet.step(net, decayed, rates)
