"""The crowd network: inputs → 16 ReLU units → (optional normaliser) → 1 logit, trained by plain
full-batch descent on binary cross-entropy.

Independent runs stack along a leading axis: a block of shape (S, rows, 2) trains S networks in
one call per layer, each with its own starting weights (one seed each) and its own rows.

Arrangements:
    'none'   plain network
    'batch'  a batch layer after the hidden ReLU
    'layer'  a layer-norm layer after the hidden ReLU
    'rms'    an RMS layer after the hidden ReLU
    'weight' a weight-normalised hidden layer, nothing inserted
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._checks import PREDICTING, TRAINING
from ..activations import ReLU
from ..batch import BatchNorm
from ..dense import Dense, WeightNormDense, starting_weights
from ..errors import SettingError
from ..layer import LayerNorm, RMSNorm
from ..loss import binary_cross_entropy
from ..standardise import naive_backward

ARRANGEMENTS = ("none", "batch", "layer", "rms", "weight")
HIDDEN = 16


@dataclass(frozen=True, eq=False)
class CrowdNetwork:
    """Hidden dense layer, ReLU, optional normaliser, output dense layer."""

    hidden: Dense
    norm: Any
    output: Dense
    relu: ReLU = dataclasses.field(default_factory=ReLU)

    @property
    def stack(self) -> tuple[int, ...]:
        return self.hidden.stack


def build(
    arrangement: str, seeds: Sequence[int], inputs: int = 2, hidden: int = HIDDEN
) -> CrowdNetwork:
    """One network per seed, stacked along a leading axis of length len(seeds).

    Each seed's weights come from ``np.random.default_rng(seed)``: hidden weights first, then the
    output weights, so 'none' and 'weight' start from identical effective weights.
    """
    if arrangement not in ARRANGEMENTS:
        raise SettingError(f"arrangement: expected one of {ARRANGEMENTS}, got {arrangement!r}")
    first, second = [], []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        first.append(starting_weights(inputs, hidden, rng))
        second.append(starting_weights(hidden, 1, rng))
    w1, w2 = np.stack(first), np.stack(second)
    stack = (len(seeds),)
    hidden_layer = WeightNormDense(direction=w1) if arrangement == "weight" else Dense(weights=w1)
    norm = {
        "batch": lambda: BatchNorm.create(hidden, stack=stack),
        "layer": lambda: LayerNorm.create(hidden, stack=stack),
        "rms": lambda: RMSNorm.create(hidden, stack=stack),
    }.get(arrangement, lambda: None)()
    return CrowdNetwork(hidden=hidden_layer, norm=norm, output=Dense(weights=w2))


@dataclass(frozen=True, eq=False)
class Pass:
    """One forward pass: the responses of every layer, the logits and the block the output
    layer reads (`read`)."""

    responses: tuple
    logits: np.ndarray
    read: np.ndarray


def forward(net: CrowdNetwork, x: np.ndarray, purpose: str = PREDICTING) -> Pass:
    h = net.hidden.forward(x, purpose)
    a = net.relu.forward(h.output, purpose)
    n = net.norm.forward(a.output, purpose) if net.norm is not None else None
    read = n.output if n is not None else a.output
    o = net.output.forward(read, purpose)
    return Pass(responses=(h, a, n, o), logits=o.output[..., 0], read=read)


def probabilities(net: CrowdNetwork, x: np.ndarray, purpose: str = PREDICTING) -> np.ndarray:
    logits = forward(net, x, purpose).logits
    return 1.0 / (1.0 + np.exp(-logits))


def accuracy(net: CrowdNetwork, x: np.ndarray, y: np.ndarray, purpose: str = PREDICTING):
    """Share of rows classified right, per stacked network (logit > 0 means class 1)."""
    return np.mean((forward(net, x, purpose).logits > 0) == (y > 0.5), axis=-1)


def train_step(
    net: CrowdNetwork, x: np.ndarray, y: np.ndarray, rate: float, naive: bool = False
) -> tuple[CrowdNetwork, np.ndarray, Pass]:
    """One full-batch step; returns the new network, the loss measured on the way (per stacked
    network) and the forward pass. `naive=True` replaces the normaliser's passed-down block by
    the naive d / deviation (the parameter slopes are unchanged), for chapter 3."""
    p = forward(net, x, TRAINING)
    h, a, n, o = p.responses
    loss = binary_cross_entropy(p.logits, y, stack_axes=len(net.stack))
    g_out = net.output.backward(o, loss.slope[..., None])
    d = g_out.passed_down
    g_norm = None
    if net.norm is not None:
        g_norm = net.norm.backward(n, d)
        if naive:
            arriving = d * net.norm.aligned(net.norm.scale, d)
            g_norm = dataclasses.replace(g_norm, passed_down=naive_backward(n.cache, arriving))
        d = g_norm.passed_down
    g_relu = net.relu.backward(a, d)
    g_hidden = net.hidden.backward(h, g_relu.passed_down)
    new = CrowdNetwork(
        hidden=net.hidden.step(g_hidden, rate),
        norm=net.norm.step(g_norm, rate) if net.norm is not None else None,
        output=net.output.step(g_out, rate),
        relu=net.relu,
    )
    return new, loss.value, p


@dataclass(frozen=True, eq=False)
class History:
    """Per-epoch records, shape (epochs, *stack) or (epochs, *stack, units)."""

    loss: np.ndarray
    read_mean: np.ndarray | None = None
    read_deviation: np.ndarray | None = None
    shift: np.ndarray | None = None
    accuracy_predicting: np.ndarray | None = None
    accuracy_batch: np.ndarray | None = None


def train(
    net: CrowdNetwork,
    x: np.ndarray,
    y: np.ndarray,
    epochs: int = 400,
    rate: float = 1.0,
    watch: bool = False,
    naive: bool = False,
    two_ways: bool = False,
) -> tuple[CrowdNetwork, History]:
    """Train for `epochs` full-batch steps. The loss recorded for an epoch is the one its own
    forward pass measured, before its step. With `watch`, also record the block the output layer
    reads (per-unit mean and deviation over the rows, before the step), the normaliser's shift,
    and, after each step, the accuracy on `x` asked two ways: predicting, and training (the
    batch's own statistics). `two_ways` records only those two accuracies, more cheaply (the
    training-purpose answer after step k is read off epoch k + 1's own forward pass, which asks
    exactly that question of exactly that network)."""
    if watch or naive:
        return _train_watching(net, x, y, epochs, rate, watch, naive)
    return _train_lean(net, x, y, epochs, rate, two_ways)


def _train_lean(
    net: CrowdNetwork, x: np.ndarray, y: np.ndarray, epochs: int, rate: float, two_ways: bool
) -> tuple[CrowdNetwork, History]:
    """`train_step`'s arithmetic, layer call for layer call, without the bookkeeping objects: the
    same forward, backward and step of every layer in the same order, so the same numbers."""
    hidden, relu, norm, output = net.hidden, net.relu, net.norm, net.output
    stack_axes = len(net.stack)
    losses = np.empty((epochs, *net.stack))
    asked = np.empty((epochs + 1, *net.stack)) if two_ways else None
    by_running = np.empty((epochs, *net.stack)) if two_ways else None
    wanted = y > 0.5
    for epoch in range(epochs):
        h = hidden.forward(x, TRAINING)
        a = relu.forward(h.output, TRAINING)
        n = norm.forward(a.output, TRAINING) if norm is not None else None
        o = output.forward(n.output if n is not None else a.output, TRAINING)
        logits = o.output[..., 0]
        if two_ways:
            asked[epoch] = np.mean((logits > 0) == wanted, axis=-1)
        loss = binary_cross_entropy(logits, y, stack_axes=stack_axes)
        losses[epoch] = loss.value
        g_out = output.backward(o, loss.slope[..., None])
        d = g_out.passed_down
        if norm is not None:
            g_norm = norm.backward(n, d)
            d = g_norm.passed_down
            norm = norm.step(g_norm, rate)
        g_hidden = hidden.backward(h, relu.backward(a, d).passed_down)
        hidden = hidden.step(g_hidden, rate)
        output = output.step(g_out, rate)
        if two_ways:
            stepped = CrowdNetwork(hidden=hidden, norm=norm, output=output, relu=relu)
            by_running[epoch] = accuracy(stepped, x, y, PREDICTING)
    net = CrowdNetwork(hidden=hidden, norm=norm, output=output, relu=relu)
    if not two_ways:
        return net, History(loss=losses)
    asked[epochs] = accuracy(net, x, y, TRAINING)
    return net, History(loss=losses, accuracy_predicting=by_running, accuracy_batch=asked[1:])


def _train_watching(
    net: CrowdNetwork,
    x: np.ndarray,
    y: np.ndarray,
    epochs: int,
    rate: float,
    watch: bool,
    naive: bool,
) -> tuple[CrowdNetwork, History]:
    losses, means, devs, shifts, acc_p, acc_b = [], [], [], [], [], []
    for _ in range(epochs):
        new, loss, p = train_step(net, x, y, rate, naive=naive)
        losses.append(loss)
        if watch:
            means.append(p.read.mean(axis=-2))
            devs.append(p.read.std(axis=-2))
            if net.norm is not None:
                shifts.append(net.norm.shift)
        net = new
        if watch:
            acc_p.append(accuracy(net, x, y, PREDICTING))
            acc_b.append(accuracy(net, x, y, TRAINING))
    if not watch:
        return net, History(loss=np.array(losses))
    return net, History(
        loss=np.array(losses),
        read_mean=np.array(means),
        read_deviation=np.array(devs),
        shift=np.array(shifts) if shifts else None,
        accuracy_predicting=np.array(acc_p),
        accuracy_batch=np.array(acc_b),
    )


def standardise_features(train_x: np.ndarray, *others: np.ndarray) -> list[np.ndarray]:
    """Put features in standard units using the training rows' mean and (population) deviation
    only, along axis -2; apply the same figures to `others`."""
    mean = train_x.mean(axis=-2, keepdims=True)
    dev = train_x.std(axis=-2, keepdims=True)
    return [(a - mean) / dev for a in (train_x, *others)]
