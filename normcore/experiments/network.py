"""The crowd network: inputs → 16 ReLU units → (optional normaliser) → 1 logit, trained by plain
full-batch descent on binary cross-entropy.

Independent runs sit along a leading axis: an input x of shape (S, rows, 2) trains S networks in
one call per layer, each with its own starting weights (one seed each) and its own rows.

Variants:
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

from ..activations import ReLU
from ..batch import BatchNorm
from ..dense import Dense, WeightNormDense, starting_weights
from ..errors import SettingError
from ..layer import LayerNorm, RMSNorm
from ..loss import binary_cross_entropy
from ..mode import EVAL, TRAIN
from ..responses import Gradient, Response
from ..sequential import Sequential
from ..standardise import naive_backward

VARIANTS = ("none", "batch", "layer", "rms", "weight")
HIDDEN = 16


@dataclass(frozen=True, eq=False)
class CrowdNetwork:
    """Hidden dense layer, ReLU, optional normaliser, output dense layer.

    The network is `layers` answered one after another, which is what `normcore.Sequential`
    does: `forward`, `train_step` and `train` below hand the four (or three) layers to one
    `Sequential` and name its parts back.
    """

    hidden: Dense | WeightNormDense
    norm: Any
    output: Dense
    relu: ReLU = dataclasses.field(default_factory=ReLU)

    @property
    def stack(self) -> tuple[int, ...]:
        return self.hidden.stack

    @property
    def layers(self) -> tuple[Any, ...]:
        """The layers in the order the input goes through them (the normaliser only if there is
        one)."""
        middle = () if self.norm is None else (self.norm,)
        return (self.hidden, self.relu, *middle, self.output)

    @staticmethod
    def of(layers: Sequence[Any]) -> CrowdNetwork:
        """The network whose `layers` these are (the inverse of `layers`)."""
        hidden, relu, *middle, output = layers
        norm = middle[0] if middle else None
        if isinstance(norm, NaiveGradInput):
            norm = norm.layer
        return CrowdNetwork(hidden=hidden, norm=norm, output=output, relu=relu)


@dataclass(frozen=True, eq=False)
class NaiveGradInput:
    """A normaliser whose backward pass hands down the naive input gradient, d / divisor, instead
    of the
    three-route one (chapter 3); its parameter gradients, its forward pass and its step are the
    normaliser's own. A layer like any other, so that it can stand in a `Sequential`."""

    layer: Any

    def forward(self, x: np.ndarray, mode: str = EVAL) -> Response:
        """The normaliser's forward pass, unchanged."""
        return self.layer.forward(x, mode)

    def backward(self, response: Response, grad_output: np.ndarray) -> Gradient:
        """The normaliser's gradient with `grad_input` replaced by the naive input gradient: the
        upstream
        gradient at the standardised activations (grad_output times the scale) over the divisor."""
        gradient = self.layer.backward(response, grad_output)
        arriving = grad_output * self.layer.aligned(self.layer.scale, grad_output)
        return dataclasses.replace(gradient, grad_input=naive_backward(response.cache, arriving))

    def step(self, gradient: Gradient, rate: float) -> NaiveGradInput:
        """The normaliser stepped, still handing down the naive input gradient."""
        return NaiveGradInput(self.layer.step(gradient, rate))


def build(
    variant: str, seeds: Sequence[int], inputs: int = 2, hidden: int = HIDDEN
) -> CrowdNetwork:
    """One network per seed, along a leading axis of length len(seeds).

    Each seed's weights come from ``np.random.default_rng(seed)``: hidden weights first, then the
    output weights, so 'none' and 'weight' start from identical effective weights.
    """
    if variant not in VARIANTS:
        raise SettingError(f"variant: expected one of {VARIANTS}, got {variant!r}")
    first, second = [], []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        first.append(starting_weights(inputs, hidden, rng))
        second.append(starting_weights(hidden, 1, rng))
    w1, w2 = np.stack(first), np.stack(second)
    stack = (len(seeds),)
    hidden_layer = WeightNormDense(direction=w1) if variant == "weight" else Dense(weights=w1)
    norm = {
        "batch": lambda: BatchNorm.create(hidden, stack=stack),
        "layer": lambda: LayerNorm.create(hidden, stack=stack),
        "rms": lambda: RMSNorm.create(hidden, stack=stack),
    }.get(variant, lambda: None)()
    return CrowdNetwork(hidden=hidden_layer, norm=norm, output=Dense(weights=w2))


@dataclass(frozen=True, eq=False)
class Pass:
    """One forward pass: the responses of every layer as (hidden, relu, normaliser or None,
    output), the logits, shape (*runs, rows), and the activations the output layer reads
    (`read`)."""

    responses: tuple
    logits: np.ndarray
    read: np.ndarray


def _pass(net: CrowdNetwork, response: Response) -> Pass:
    """Name the parts of a Sequential's response after the network's layers."""
    h, a, *middle, o = response.parts
    n = middle[0] if middle else None
    return Pass(responses=(h, a, n, o), logits=o.output[..., 0], read=o.input)


def forward(net: CrowdNetwork, x: np.ndarray, mode: str = EVAL) -> Pass:
    """The network's forward pass: its layers as one `Sequential`.

    Args:
        net: the network (independent runs along leading axes).
        x: the input (*runs, rows, 2).
        mode: 'train' or 'eval' (the default).

    Returns:
        A `Pass` with every layer's response and the logits, shape (*stack, rows).
    """
    return _pass(net, Sequential(net.layers).forward(x, mode))


def probabilities(net: CrowdNetwork, x: np.ndarray, mode: str = EVAL) -> np.ndarray:
    """The chance of class 1 for every row, per network, shape (*runs, rows)."""
    logits = forward(net, x, mode).logits
    return 1.0 / (1.0 + np.exp(-logits))


def accuracy(net: CrowdNetwork, x: np.ndarray, y: np.ndarray, mode: str = EVAL):
    """Share of rows classified right, per network (logit > 0 means class 1)."""
    return np.mean((forward(net, x, mode).logits > 0) == (y > 0.5), axis=-1)


def train_step(
    net: CrowdNetwork, x: np.ndarray, y: np.ndarray, rate: float, naive: bool = False
) -> tuple[CrowdNetwork, np.ndarray, Pass]:
    """One full-batch step of gradient descent on binary cross-entropy.

    The network's layers, as one `Sequential`, answer `x` for training; the loss's gradient goes
    back through them (`Sequential.backward`), and every layer steps at `rate`
    (`Sequential.step`). With `naive=True` the normaliser hands down the naive input gradient
    (`NaiveGradInput`; its parameter gradients are unchanged), for chapter 3.

    Args:
        net: the network (independent runs along leading axes).
        x: the training inputs (*runs, rows, 2); y: their 0/1 labels (*runs, rows).
        rate: the learning rate.
        naive: hand down the naive input gradient at the normaliser.

    Returns:
        The stepped network, the loss this step's forward pass measured (per network,
        shape `stack`) and that forward pass.
    """
    layers = net.layers
    if naive and net.norm is not None:
        layers = (*layers[:2], NaiveGradInput(net.norm), layers[-1])
    body = Sequential(layers)
    response = body.forward(x, TRAIN)
    logits = response.output[..., 0]
    loss = binary_cross_entropy(logits, y, stack_axes=len(net.stack))
    gradient = body.backward(response, loss.grad[..., None])
    stepped = CrowdNetwork.of(body.step(gradient, rate).layers)
    return stepped, loss.value, _pass(net, response)


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
    """Train for `epochs` full-batch steps (`train_step`, one an epoch).

    The loss recorded for an epoch is the one its own forward pass measured, before its step.
    With `watch`, also record the activations the output layer reads (per-unit mean and standard
    deviation
    over the rows, before the step), the normaliser's shift, and, after each step, the accuracy on
    `x` asked two ways: evaluation mode, and training mode (the batch's own statistics). `two_ways`
    records only those two accuracies, more cheaply: the training-mode accuracy after step k
    is read off step k + 1's own forward pass, which asks exactly that question of exactly that
    network.

    Returns:
        The trained network and its `History`.
    """
    losses = np.empty((epochs, *net.stack))
    asking = watch or two_ways
    predicting = np.empty((epochs, *net.stack)) if asking else None
    batch = np.empty((epochs + 1, *net.stack)) if asking else None
    means, divisors, shifts = [], [], []
    wanted = y > 0.5
    for epoch in range(epochs):
        before = net
        net, losses[epoch], seen = train_step(net, x, y, rate, naive)
        if asking:
            batch[epoch] = np.mean((seen.logits > 0) == wanted, axis=-1)
            predicting[epoch] = accuracy(net, x, y, EVAL)
        if watch:
            means.append(seen.read.mean(axis=-2))
            divisors.append(seen.read.std(axis=-2))
            if before.norm is not None:
                shifts.append(before.norm.shift)
    if not asking:
        return net, History(loss=losses)
    batch[epochs] = accuracy(net, x, y, TRAIN)
    history = History(loss=losses, accuracy_predicting=predicting, accuracy_batch=batch[1:])
    if watch:
        history = dataclasses.replace(
            history,
            read_mean=np.array(means),
            read_deviation=np.array(divisors),
            shift=np.array(shifts) if shifts else None,
        )
    return net, history


def standardise_features(train_x: np.ndarray, *others: np.ndarray) -> list[np.ndarray]:
    """Put features in standard units using the training rows' mean and (population)
    standard deviation only, along axis -2; apply the same figures to `others`."""
    mean = train_x.mean(axis=-2, keepdims=True)
    dev = train_x.std(axis=-2, keepdims=True)
    return [(a - mean) / dev for a in (train_x, *others)]
