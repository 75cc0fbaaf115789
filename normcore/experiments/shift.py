"""Covariate shift, measured (chapter 1), and the lag of the running figures (chapter 2).

* :func:`deep_stack` pushes one block of 64 rows through a stack of ten dense + ReLU layers,
  with or without a batch layer between the dense layer and its ReLU, and records the mean and
  deviation of every block handed on.
* :func:`crowd_shift` trains the crowd network (2 → 16 ReLU → [batch layer] → 1) on the whole
  crowd and records, per epoch, every unit's mean and deviation over the rows of the block the
  output layer reads, and (under the batch layer) the layer's shift.
* :func:`fold_in` takes one real step with a zero slope arriving: the scale and shift stay put and
  the batch's statistics are folded into the running figures. :func:`running_lag` repeats it and
  records how far the predicting answer still is from the training answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..activations import ReLU
from ..batch import BatchNorm
from ..data import load_crowd
from ..dense import Dense
from ..purpose import PREDICTING, TRAINING
from . import network

# ------------------------------------------------------------------------------ the deep stack


def uniform_dense(fan_in: int, fan_out: int, rng: np.random.Generator) -> Dense:
    """A dense layer drawn as PyTorch's ``nn.Linear`` draws its default: weights and bias
    uniform in ±1/sqrt(fan_in). (The numbers differ from PyTorch's: the random streams do.)"""
    bound = 1.0 / np.sqrt(fan_in)
    weights = rng.uniform(-bound, bound, size=(fan_in, fan_out))
    bias = rng.uniform(-bound, bound, size=fan_out)
    return Dense(weights=weights, bias=bias)


@dataclass(frozen=True, eq=False)
class StackDrift:
    """Mean and deviation of the block each layer of a deep stack hands on.

    Entry 0 is the input; entry k the block after layer k's ReLU. Both figures are taken over
    every value of the block (rows × features), the deviation being the population one.
    """

    normalised: bool
    mean: np.ndarray
    deviation: np.ndarray

    @property
    def depth(self) -> int:
        return int(self.mean.shape[0] - 1)


def deep_stack(
    normalised: bool,
    *,
    seed: int = 3,
    rows: int = 64,
    features: int = 16,
    depth: int = 10,
    input_scale: float = 1.0,
) -> StackDrift:
    """The deep stack: `depth` layers of dense → [batch layer, training] → ReLU.

    The input (standard normal, `rows` × `features`) and the dense layers come from one
    ``np.random.default_rng(seed)`` in that order, so both versions of the stack read the same
    block through the same weights and differ only by the batch layers. `input_scale` multiplies
    the input block (the weights are drawn the same whatever it is).
    """
    rng = np.random.default_rng(seed)
    h = input_scale * rng.standard_normal((rows, features))
    layers = [uniform_dense(features, features, rng) for _ in range(depth)]
    relu = ReLU()
    means, deviations = [h.mean()], [h.std()]
    for dense in layers:
        h = dense.forward(h).output
        if normalised:
            h = BatchNorm.create(features).forward(h, TRAINING).output
        h = relu.forward(h).output
        means.append(h.mean())
        deviations.append(h.std())
    return StackDrift(normalised=normalised, mean=np.array(means), deviation=np.array(deviations))


# ------------------------------------------------------------------------ the crowd network


def crowd_block() -> tuple[np.ndarray, np.ndarray]:
    """The whole crowd in standard units (its own mean and population deviation) and labels."""
    crowd = load_crowd()
    (x,) = network.standardise_features(crowd.features)
    return x, crowd.labels


@dataclass(frozen=True, eq=False)
class CrowdShift:
    """Per-epoch records of the block the crowd network's output layer reads.

    `mean` and `deviation` have shape (epochs, units): each unit's mean and population deviation
    over the rows, measured on each epoch's training pass before its step. `shift` (same shape)
    is the batch layer's shift at that pass, None without a batch layer.
    """

    arrangement: str
    seed: int
    mean: np.ndarray
    deviation: np.ndarray
    shift: np.ndarray | None
    loss: np.ndarray

    @property
    def epochs(self) -> int:
        return int(self.mean.shape[0])

    @property
    def travel(self) -> np.ndarray:
        """Each unit's mean, last epoch minus first."""
        return self.mean[-1] - self.mean[0]

    @property
    def largest_shift(self) -> float:
        """The largest distance any unit's mean travels from the first epoch to the last."""
        return float(np.max(np.abs(self.travel)))

    def largest_shift_to(self, epoch: int) -> float:
        """The largest distance any unit's mean travels from the first epoch to `epoch`
        (counted from 1)."""
        return float(np.max(np.abs(self.mean[epoch - 1] - self.mean[0])))

    @property
    def shift_unit(self) -> int:
        """The unit whose mean travels furthest, first epoch to last."""
        return int(np.argmax(np.abs(self.travel)))

    @property
    def moves(self) -> np.ndarray:
        """Each unit's mean, one epoch minus the one before: shape (epochs - 1, units)."""
        return np.diff(self.mean, axis=0)

    @property
    def largest_move(self) -> float:
        """The largest move any unit's mean makes in one epoch."""
        return float(np.max(np.abs(self.moves)))

    @property
    def largest_move_at(self) -> tuple[int, int]:
        """(epoch, unit) of the largest single move; the epoch counts from 1 (the move from
        epoch e - 1 to epoch e)."""
        epoch, unit = np.unravel_index(np.argmax(np.abs(self.moves)), self.moves.shape)
        return int(epoch) + 1, int(unit)

    @property
    def reversals(self) -> float:
        """The share of one-epoch moves, over all units, whose sign is the opposite of the move
        before: near one when the means zigzag from epoch to epoch."""
        m = self.moves
        return float(np.mean(np.sign(m[1:]) != np.sign(m[:-1])))

    @property
    def shift_gap(self) -> float | None:
        """The largest gap, over epochs and units, between the block's mean and the batch
        layer's shift (None without a batch layer)."""
        if self.shift is None:
            return None
        return float(np.max(np.abs(self.mean - self.shift)))


def crowd_shift(
    arrangement: str = "none", seed: int = 0, epochs: int = 400, rate: float = 1.0
) -> CrowdShift:
    """Train one crowd network ('none' or 'batch') on the whole crowd and watch its read block."""
    shifts = crowd_shifts(arrangement, (seed,), epochs=epochs, rate=rate)
    return shifts[0]


def crowd_shifts(
    arrangement: str, seeds: Sequence[int], epochs: int = 400, rate: float = 1.0
) -> list[CrowdShift]:
    """`crowd_shift` for several seeds, trained side by side as one stacked run."""
    x, y = crowd_block()
    count = len(seeds)
    net = network.build(arrangement, list(seeds))
    xs = np.broadcast_to(x, (count, *x.shape))
    ys = np.broadcast_to(y, (count, *y.shape))
    _, history = network.train(net, xs, ys, epochs=epochs, rate=rate, watch=True)
    return [
        CrowdShift(
            arrangement=arrangement,
            seed=int(seed),
            mean=history.read_mean[:, i],
            deviation=history.read_deviation[:, i],
            shift=None if history.shift is None else history.shift[:, i],
            loss=history.loss[:, i],
        )
        for i, seed in enumerate(seeds)
    ]


# ------------------------------------------------------------------- the running figures' lag


def fold_in(layer: BatchNorm, block: np.ndarray, rate: float = 1.0) -> BatchNorm:
    """One real step of `layer` on `block` with a zero slope arriving: scale and shift do not
    move, and the block's statistics are folded into the running figures."""
    response = layer.forward(block, TRAINING)
    gradient = layer.backward(response, np.zeros_like(response.output))
    return layer.step(gradient, rate)


@dataclass(frozen=True, eq=False)
class Lag:
    """`gaps[k - 1]` is the largest gap, over the block, between the predicting answer and the
    training answer after k zero-slope steps on the same block."""

    gaps: np.ndarray
    layer: BatchNorm

    def after(self, steps: int) -> float:
        return float(self.gaps[steps - 1])

    def first_under(self, tolerance: float) -> int | None:
        """The first step count after which the gap is below `tolerance` (None if never)."""
        below = np.flatnonzero(self.gaps < tolerance)
        return int(below[0]) + 1 if below.size else None


def running_lag(block: np.ndarray, steps: int = 100, layer: BatchNorm | None = None) -> Lag:
    """Step a batch layer `steps` times on `block` (zero slope) and measure the lag each time."""
    block = np.asarray(block, dtype=np.float64)
    layer = BatchNorm.create(block.shape[-1]) if layer is None else layer
    trained = layer.forward(block, TRAINING).output
    gaps = []
    for _ in range(steps):
        layer = fold_in(layer, block)
        gaps.append(np.max(np.abs(layer.forward(block, PREDICTING).output - trained)))
    return Lag(gaps=np.array(gaps), layer=layer)
