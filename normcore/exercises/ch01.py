"""Checks for chapter 1's exercises. Each answer is computed with normcore and never printed; each
checker names the mistake it expects (see `normcore.exercises._mistakes`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from normcore.batch import BatchNorm
from normcore.exercises import Verdict
from normcore.exercises._mistakes import judged
from normcore.experiments.shift import crowd_shift, deep_network, deep_networks

#: The stack's weights and biases are uniform in ±BOUND (1 / sqrt(16)).
BOUND = 0.25
FAN_IN = 16


def _ratio(bias: bool, layer: int = 10) -> float:
    """Layer `layer`'s standard deviation with a tenfold input over its standard deviation with
    the input as is."""
    big = deep_network(False, input_scale=10.0, bias=bias).deviation[layer]
    return float(big / deep_network(False, bias=bias).deviation[layer])


def check_bias_free_ratio(ratio: Any) -> Verdict:
    """Exercise 1: with every bias zeroed, the standard deviation of the activations after layer 10
    when the input is ten times larger, over the standard deviation with the input as it is."""
    return judged(
        ratio,
        10.0,
        lambda: [
            (_ratio(True), "that is the network with its biases; zero them (bias=False)"),
            (
                1.0,
                "a ratio of one would mean the network forgets the input's size; with no "
                "biases, what does a dense layer do to 10x? and a ReLU?",
            ),
            (100.0, "σ scales like the input, not like its square"),
        ],
        tolerance=1e-9,
        mistake_tolerance=5e-3,  # a mistake is named at the three figures a reader would give
    )


def _floor_deviation() -> float:
    """The standard deviation a default-initialised ReLU layer hands on at the fixed point of the
    mean-square recursion: s = (fan_in Var w) q + Var b, q = s / 2, standard deviation =
    sqrt(s) c."""
    var = BOUND**2 / 3.0
    q = var / 2.0 / (1.0 - FAN_IN * var / 2.0)  # q = (16 var q + var) / 2
    s = 2.0 * q
    return float(np.sqrt(s) * np.sqrt(0.5 - 1.0 / (2.0 * np.pi)))


def check_floor_deviation(deviation: Any) -> Verdict:
    """Exercise 2: the standard deviation of the activations a layer of the default network hands on
    at the fixed point where what the weights lose of the mean square equals what the bias adds."""
    c = np.sqrt(0.5 - 1.0 / (2.0 * np.pi))

    def mistakes() -> list[tuple[float, str]]:
        var = BOUND**2 / 3.0
        q = var / 2.0 / (1.0 - FAN_IN * var / 2.0)
        wrong_var = BOUND**2  # the bound squared as the variance
        q_bound = (
            wrong_var / 2.0 / (1.0 - FAN_IN * wrong_var / 2.0) if FAN_IN * wrong_var < 2 else np.inf
        )
        no_half = var / (1.0 - FAN_IN * var)  # the ReLU's halving left out: q = q_s
        stacks = deep_networks(False, list(range(200)))
        measured = float(np.median([s.deviation[5:] for s in stacks]))
        return [
            (
                measured,
                "that is the floor the chapter measured (layers 5 to 10); the question asks for "
                "the fixed point of the recursion, and then why the measured floor differs",
            ),
            (
                np.sqrt(q),
                "that is the root mean square of the activations; their standard deviation "
                "subtracts the mean first (a ReLU's output is not centred)",
            ),
            (
                np.sqrt(2.0 * q),
                "that is the spread of the scores before the ReLU; the activations are "
                "what the ReLU hands on",
            ),
            (
                np.sqrt(no_half) * c,
                "the ReLU keeps only half the scores' mean square; "
                "the recursion has to halve both terms",
            ),
            (
                np.sqrt(2.0 * q_bound) * c if np.isfinite(q_bound) else -1.0,
                "a uniform draw on ±a has variance a²/3, not a²",
            ),
        ]

    return judged(
        deviation, _floor_deviation, mistakes, tolerance=6e-3, mistake_tolerance=6e-3, relative=True
    )


#: ReLU of a standard normal column: its mean, 1 / sqrt(2 pi).
RELU_NORMAL_MEAN = float(1.0 / np.sqrt(2.0 * np.pi))


def check_wide_batch_mean(mean: Any) -> Verdict:
    """Exercise 3: the average of layers 1 to 10's activation means of the network with batch layers
    (seed 3) with 4096 rows a column, to three significant figures."""

    def wide() -> float:
        return float(deep_network(True, rows=4096).mean[1:].mean())

    def mistakes() -> list[tuple[float, str]]:
        drift = deep_network(True, rows=4096)
        return [
            (
                RELU_NORMAL_MEAN,
                "that is a ReLU of a normal column's mean, the figure the question asks you to "
                "test, not the network's; run the cell",
            ),
            (
                float(deep_network(True).mean[1:].mean()),
                "that is the network with 64 rows; the question asks for 4096",
            ),
            (
                float(drift.mean.mean()),
                "that average includes the input (entry 0); take layers 1 to 10",
            ),
        ]

    # three significant figures of a number near 0.37: half a unit in the third place, relative
    return judged(mean, wide, mistakes, tolerance=1.5e-3, mistake_tolerance=1.5e-3, relative=True)


def _first_epoch() -> tuple[float, float]:
    """(smallest standard deviation of the output layer's input at the first epoch, that unit's
    batch variance) under the batch layer, seed 0."""
    record = crowd_shift("batch", seed=0, epochs=1)
    unit = int(np.argmin(record.deviation[0]))
    return float(record.deviation[0, unit]), float(record.source_variance[0, unit])


def check_first_epoch_variance(variance: Any) -> Verdict:
    """Exercise 3: the biased variance v of the ReLU column that the batch layer (seed 0, first
    epoch) standardises to the smallest standard deviation of the output layer's input."""
    eps = BatchNorm.create(1).eps

    def mistakes() -> list[tuple[float, str]]:
        d, _ = _first_epoch()
        return [
            (
                d,
                "that is the standard deviation of the standardised column; solve "
                "d = sqrt(v / (v + ε)) for v",
            ),
            (d**2, "that is the standardised column's variance, v / (v + ε); solve it for v"),
            (
                eps * d / (1.0 - d),
                "the standard deviation is the square root of v / (v + ε): square it before "
                "solving",
            ),
            (1.0 - d**2, "that is ε / (v + ε), the share ε takes; v follows from it"),
        ]

    return judged(
        variance, lambda: _first_epoch()[1], mistakes, tolerance=1e-3, mistake_tolerance=1e-3
    )
