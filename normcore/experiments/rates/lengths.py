"""The shrinking effective learning rate behind a batch layer: the length of the weights before it.

Hidden unit j's incoming weights w_j (column j of the first dense layer) feed the batch layer, which
takes out each unit's batch mean (and the bias with it) and divides by its batch divisor.
Multiplying w_j by any c > 0 therefore changes nothing after the layer: L(c w_j) = L(w_j), up to
epsilon. Differentiating in c at c = 1 puts the gradient at right angles to w_j, so a step of plain
descent lengthens it, ||w_j - eta g_j||^2 = ||w_j||^2 + eta^2 ||g_j||^2, and since the gradient
shrinks as 1 / ||w_j||, the direction turns at the *effective* rate eta / ||w_j||^2 (chapter 8
derives it). A plain network's loss sees the length: its effective rate does not shrink so.

Nothing here trains: `lengths` reads each run's squared lengths at the start (its seed's starting
weights, `network.build`) and at the end (the network the run kept), so the sweep's own runs
answer. `scale_change` asks whether a network's loss sees the length at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...book import table
from ...dense import Dense
from ...errors import SettingError
from ...mode import TRAIN
from ...sequential import Sequential
from .data import subscribers
from .network import SubscriberNet, build, clipped_loss
from .trainer import Run

# The lines the chapter's claims are drawn at (the claims suite counts with them, the chapter
# glues them): the rates of the chapter's table, the normalised settings up to its largest stable
# rate; the last of them ends with a smaller effective rate than FALLS_FROM; at the last of
# them every unit's effective rate ends below eta / BRAKE_AT_LEAST; doubling the hidden weights
# moves a plain network's loss by more than SEES_LENGTH of itself and a normalised one's by less
# than BLIND_BELOW.
BRAKE_RATES = (0.05, 5.0, 10.0, 20.0, 25.0, 30.0)
FALLS_FROM = 5.0
BRAKE_AT_LEAST = 100
SEES_LENGTH = 0.01
BLIND_BELOW = 1e-6


def unit_lengths(net: SubscriberNet) -> np.ndarray:
    """The squared length of each hidden unit's incoming weights, (…, 16): column sums of the
    first dense layer's squared weights (the bias is not part of it)."""
    return np.sum(np.asarray(net.hidden.weights) ** 2, axis=-2)


@dataclass(frozen=True)
class Lengths:
    """The hidden units' squared lengths of the runs of one setting, at the start and the end.

    Attributes:
        rate: the learning rate the runs trained at (eta).
        normalised: whether the runs have the batch layer.
        start: (runs, 16), each unit's squared length with its seed's starting weights.
        end: (runs, 16), the same after training.
    """

    rate: float
    normalised: bool
    start: np.ndarray
    end: np.ndarray

    @property
    def growth(self) -> np.ndarray:
        """(runs,) the units' mean squared length at the end over that at the start."""
        return self.end.mean(axis=-1) / self.start.mean(axis=-1)

    @property
    def effective(self) -> np.ndarray:
        """(runs,) each unit's effective rate at the end, eta / ||w_j||^2, averaged over units."""
        return np.mean(self.rate / self.end, axis=-1)

    @property
    def effective_start(self) -> np.ndarray:
        """(runs,) the same with the starting weights: the rate the first step turns at."""
        return np.mean(self.rate / self.start, axis=-1)

    @property
    def largest_effective(self) -> np.ndarray:
        """(runs,) the largest unit's effective rate at the end (its shortest weights)."""
        return self.rate / self.end.min(axis=-1)

    @property
    def brake(self) -> np.ndarray:
        """(runs,) how many times smaller than eta the end's mean effective rate is."""
        return self.rate / self.effective


def lengths(runs: Sequence[Run]) -> Lengths:
    """The start and end squared lengths of `runs`, trained at one rate and all plain or all
    normalised, from starting weights that were not nudged (the sweep's rows, `train_many`
    without `nudges`). A run normcore refused to finish ends where it stopped."""
    if not runs:
        raise SettingError("runs: expected at least one run")
    rates = {float(run.rate) for run in runs}
    normalised = {run.net.norm is not None for run in runs}
    if len(rates) != 1 or len(normalised) != 1:
        raise SettingError(
            f"runs: expected one rate and one family, got rates {sorted(rates)} and "
            f"{len(normalised)} families"
        )
    family = normalised.pop()
    return Lengths(
        rate=rates.pop(),
        normalised=family,
        start=np.stack([unit_lengths(build(run.seed, family)) for run in runs]),
        end=np.stack([unit_lengths(run.net) for run in runs]),
    )


def scaled(net: SubscriberNet, factor: float) -> SubscriberNet:
    """`net` with its hidden layer's weights and bias multiplied by `factor` (one network)."""
    hidden = net.hidden
    moved = Dense(factor * np.asarray(hidden.weights), factor * np.asarray(hidden.bias))
    return SubscriberNet(Sequential((moved, *net.layers.layers[1:])))


def scale_change(net: SubscriberNet, factor: float = 2.0, x: Any = None, y: Any = None) -> float:
    """How much the training loss moves, relative to itself, when the hidden layer's weights and
    bias are multiplied by `factor`: |L(factor w) - L(w)| / L(w).

    The loss is normcore's unclipped cross-entropy on the rows `x`, `y` (the training rows by
    default) asked as one training batch, so a batch layer standardises by their statistics.
    Behind a batch layer it is epsilon's share (the loss is blind to the length); a plain
    network's loss moves with it."""
    if not factor > 0:
        raise SettingError(f"factor: expected a positive number, got {factor}")
    if x is None or y is None:
        data = subscribers()
        x, y = data.x_train, data.y_train
    before = clipped_loss(net.logits(x, TRAIN), y, None)
    after = clipped_loss(scaled(net, factor).logits(x, TRAIN), y, None)
    return abs(after - before) / before


def length_table(settings: Sequence[Lengths], caption: str = "") -> Any:
    """One row a setting: the rate, each run's mean squared length at the end, each run's mean
    effective rate at the end, and how many times smaller than the rate that is (three
    significant digits)."""
    header = [
        "rate η",
        "squared length at the end (runs 1, 2)",
        "effective rate η/‖w‖² at the end (runs 1, 2)",
        "η ÷ effective rate",
    ]

    def pair(values: np.ndarray) -> str:
        return ", ".join(format(float(v), ".3g") for v in values)

    rows = [
        [
            format(s.rate, "g"),
            pair(s.end.mean(axis=-1)),
            pair(s.effective),
            pair(s.brake),
        ]
        for s in settings
    ]
    return table(header, rows, caption=caption)
