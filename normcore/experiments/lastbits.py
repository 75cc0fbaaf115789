"""How a nudge in the last place grows in a run that trains (chapter 11).

Two copies of the deep digits network (`deepnet`) train side by side along a leading axis: one as
built, one with every starting hidden weight moved by one unit in the last place
(`deepnet.nudged`). Both see the same mini-batches in the same order, so every difference
between them comes from the nudge. `Pair.further` trains both for more epochs; `Pair.gap`
measures how far apart they are: the largest difference between their hidden weights, and how
many held-out images the two networks now label differently.

Training runs in stretches (`MARKS`: measured after 2, 10, 25 and 40 epochs). Each stretch shuffles
its mini-batches from its own seed, the number of epochs trained before it, so a run split into
the same stretches always sees the same batches, in the chapter and in the claims suite.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import SettingError
from . import deepnet

__all__ = ["MARKS", "RATE", "VERSION", "Gap", "Pair", "growth", "pair"]

#: the batch version at its sweep's middle rate: a run that trains (chapter 8)
VERSION = "batch"
RATE = 0.3
#: the epoch counts at which the gap is measured (each stretch a cell of the chapter under 2 s)
MARKS = (2, 10, 25, 40)


@dataclass(frozen=True)
class Gap:
    """How far the nudged networks are from the built ones after `epochs` epochs, per seed:
    `weights`, the largest |difference| over every hidden dense weight, shape (S,); `changed`,
    how many of the `held_out` images the two label differently, shape (S,); `accuracy`, the
    built networks' held-out accuracy, shape (S,)."""

    epochs: int
    weights: np.ndarray
    changed: np.ndarray
    held_out: int
    accuracy: np.ndarray


@dataclass(frozen=True)
class Pair:
    """S networks as built (the first S on the leading axis) and the same S nudged (the last S),
    trained `epochs` epochs so far at `rate`."""

    net: deepnet.DeepNet
    seeds: tuple[int, ...]
    rate: float
    epochs: int = 0

    def halves(self) -> tuple[deepnet.DeepNet, deepnet.DeepNet]:
        s = len(self.seeds)
        return deepnet.pick(self.net, slice(0, s)), deepnet.pick(self.net, slice(s, 2 * s))

    def further(self, epochs: int, data: tuple[np.ndarray, ...]) -> Pair:
        """Both halves trained `epochs` more epochs on the same mini-batches."""
        if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
            raise SettingError(f"epochs: expected a whole number >= 1, got {epochs!r}")
        run = deepnet.train(
            self.net, data, self.rate, epochs=epochs, batch=64, order_seed=self.epochs
        )
        return Pair(run.net, self.seeds, self.rate, self.epochs + epochs)

    def gap(self, data: tuple[np.ndarray, ...]) -> Gap:
        """The two halves compared on the held-out images of `data`."""
        built, nudged = self.halves()
        weights = np.max(
            [
                np.max(np.abs(a.weights - b.weights), axis=(1, 2))
                for a, b in zip(built.dense, nudged.dense, strict=True)
            ],
            axis=0,
        )
        x_held, y_held = data[2], data[3]
        labels = [deepnet.forward(n, x_held)[1].argmax(axis=-1) for n in (built, nudged)]
        return Gap(
            self.epochs,
            weights,
            np.sum(labels[0] != labels[1], axis=1),
            len(y_held),
            deepnet.accuracy(built, x_held, y_held),
        )

    def nudge(self) -> float:
        """The largest starting difference: one unit in the last place of the largest weight
        (only meaningful before training)."""
        built, nudged = self.halves()
        pairs = zip(built.dense, nudged.dense, strict=True)
        return float(max(np.max(np.abs(a.weights - b.weights)) for a, b in pairs))


def pair(
    seeds: Sequence[int], version: str = VERSION, rate: float = RATE, direction: int = 1
) -> Pair:
    """The networks of `seeds` as built and nudged by one unit in the last place (`direction`
    1: up, -1: down), along a leading axis, untrained."""
    start = deepnet.build(version, list(seeds))
    net = deepnet.concatenate([start, deepnet.nudged(start, direction)])
    return Pair(net, tuple(int(s) for s in seeds), float(rate))


def growth(
    seeds: Sequence[int],
    data: tuple[np.ndarray, ...],
    marks: Sequence[int] = MARKS,
    version: str = VERSION,
    rate: float = RATE,
    direction: int = 1,
) -> list[Gap]:
    """The gap after each of `marks` epochs (increasing), trained in those stretches."""
    if not marks or list(marks) != sorted(set(marks)) or marks[0] < 1:
        raise SettingError(f"marks: expected increasing epoch counts >= 1, got {marks!r}")
    p, gaps = pair(seeds, version, rate, direction), []
    for mark in marks:
        p = p.further(mark - p.epochs, data)
        gaps.append(p.gap(data))
    return gaps
