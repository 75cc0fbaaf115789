"""The subscriber network, built from normcore's layers, and the ways of asking it.

Twelve inputs, a dense layer to sixteen hidden units, optionally a batch layer on the hidden
pre-activations, a ReLU, and a dense layer to one output (a logit): one `normcore.Sequential`.
The batch layer is configured as the reference program behaves: nothing learned
(``affine=False``), epsilon under the root, and running statistics that follow the mean and the
*divisor* (``tracks='divisor'``) with momentum 0.9.

A network may hold several runs side by side: every array then has a leading axis, one
entry per run, and an input x (runs, rows, 12) gives each run its own rows (see `normcore.Dense`).
`member` takes one run out of such a network.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...activations import ReLU, sigmoid
from ...batch import BatchNorm
from ...data.subscribers import init_weights, shuffled_test_order
from ...dense import Dense
from ...errors import SettingError
from ...loss import binary_cross_entropy
from ...mode import EVAL, TRAIN, check_mode
from ...sequential import Sequential
from .data import BATCH, CLIP, EPSILON, HIDDEN, MOMENTUM, subscribers


@dataclass(frozen=True, eq=False)
class SubscriberNet:
    """Dense 12→16, optional batch layer, ReLU, dense 16→1 (a logit), as one `Sequential`.

    Shapes: one run takes x (rows, 12); S runs along a leading axis take x (S, rows, 12) and return
    (S, rows). `hidden`, `norm` (None for the plain network) and `output` name the layers.
    """

    layers: Sequential

    @property
    def hidden(self) -> Dense:
        return self.layers.layers[0]

    @property
    def norm(self) -> BatchNorm | None:
        return self.layers.layers[1] if len(self.layers.layers) == 4 else None

    @property
    def output(self) -> Dense:
        return self.layers.layers[-1]

    @property
    def parameters(self) -> int:
        """Learned numbers of one run: weights and biases (the batch layer learns none)."""
        (fan_in, hidden), outputs = self.hidden.weights.shape[-2:], self.output.weights.shape[-1]
        return fan_in * hidden + hidden + hidden * outputs + outputs

    @property
    def runs(self) -> int | None:
        """How many runs stand side by side (None for a single network)."""
        stack = self.hidden.weights.shape[:-2]
        return stack[0] if stack else None

    def hidden_activity(self, x: np.ndarray, mode: str = EVAL) -> np.ndarray:
        """The hidden units' outputs after the ReLU, (…, rows, 16)."""
        return Sequential(self.layers.layers[:-1]).forward(x, mode).output

    def logits(self, x: np.ndarray, mode: str = EVAL) -> np.ndarray:
        """The output before the logistic, (…, rows)."""
        return self.layers.forward(x, mode).output[..., 0]

    def probabilities(self, x: np.ndarray, mode: str = EVAL) -> np.ndarray:
        """The probability of "suspicious" for each row, (…, rows)."""
        return sigmoid(self.logits(x, mode))

    def member(self, k: int) -> SubscriberNet:
        """Run `k` alone, as a single network (its arrays are views of the whole's)."""
        return SubscriberNet(Sequential(tuple(_take(layer, k) for layer in self.layers.layers)))

    def members(self, keep: Sequence[int]) -> SubscriberNet:
        """The runs `keep`, as a network of fewer runs."""
        index = np.asarray(keep, dtype=np.intp)
        return SubscriberNet(Sequential(tuple(_take(layer, index) for layer in self.layers.layers)))


def _take(layer: Any, index: Any) -> Any:
    """`layer` for the runs `index` along its leading axis (an integer drops that axis)."""
    if isinstance(layer, Dense):
        return Dense(layer.weights[index], layer.bias[index])
    if isinstance(layer, BatchNorm):
        fields = ("scale", "shift", "running_mean", layer.spread_field)
        return dataclasses.replace(layer, **{f: getattr(layer, f)[index] for f in fields})
    return layer  # the ReLU holds nothing


def build(seed: int, normalised: bool, eps: float = EPSILON, nudge: int = 0) -> SubscriberNet:
    """The reference program's starting weights for `seed`; a batch layer if `normalised`.

    `nudge` moves every starting hidden weight by that many units in the last place (up if
    positive, down if negative): a deliberate perturbation far below any printed digit."""
    return build_many([seed], normalised, eps, [nudge]).member(0)


def build_many(
    seeds: Sequence[int],
    normalised: bool,
    eps: float = EPSILON,
    nudges: Sequence[int] | None = None,
) -> SubscriberNet:
    """One run per seed, side by side: weights (runs, 12, 16) and (runs, 16, 1), each run
    starting from its seed's weights moved by its nudge (see `build`)."""
    nudges = [0] * len(seeds) if nudges is None else list(nudges)
    if len(nudges) != len(seeds):
        raise SettingError(f"nudges: expected one a seed, got {len(nudges)} for {len(seeds)}")
    w1, b1, w2, b2 = [], [], [], []
    for seed, nudge in zip(seeds, nudges, strict=True):
        (w, b), (v, c) = init_weights(seed, [(12, HIDDEN), (HIDDEN, 1)])
        for _ in range(abs(nudge)):
            w = np.nextafter(w, np.inf if nudge > 0 else -np.inf)
        w1.append(w)
        b1.append(b)
        w2.append(v)
        b2.append(c)
    layers: list[Any] = [Dense(np.stack(w1), np.stack(b1))]
    if normalised:
        layers.append(
            BatchNorm.create(
                HIDDEN,
                stack=(len(seeds),),
                eps=eps,
                momentum=MOMENTUM,
                affine=False,
                tracks="divisor",
            )
        )
    layers += [ReLU(), Dense(np.stack(w2), np.stack(b2))]
    return SubscriberNet(Sequential(tuple(layers)))


def clipped_loss(logits: np.ndarray, labels: np.ndarray, clip: float | None = CLIP) -> Any:
    """Mean cross-entropy over the last axis with the probability clipped to [clip, 1 - clip],
    as the reference program reports it; ``clip=None`` gives normcore's unclipped
    `binary_cross_entropy` instead. A float for logits (rows,); an array (runs,) for logits
    (runs, rows)."""
    logits = np.asarray(logits, dtype=np.float64)
    if clip is None:
        value = binary_cross_entropy(logits, labels, stack_axes=logits.ndim - 1).value
    else:
        p = np.clip(sigmoid(logits), clip, 1 - clip)
        value = -np.mean(labels * np.log(p) + (1 - labels) * np.log(1 - p), axis=-1)
    return float(value) if logits.ndim == 1 else np.asarray(value)


# ------------------------------------------------------------------------------ asking it
def predict(
    net: Any,
    x: np.ndarray,
    way: str = "running",
    batch: int = BATCH,
    order: np.ndarray | None = None,
) -> np.ndarray:
    """Probabilities for the rows of `x` (one network, x (rows, 12)).

    ``way='running'``: the batch layer divides by its running statistics (the right way).
    ``way='batch'``: the rows are cut into consecutive batches of `batch` (in `order`, if given,
    and put back afterwards) and each batch is standardised by its own statistics, so one row's
    answer depends on the rows it happens to share a batch with.
    """
    if way == "running":
        return net.probabilities(x, EVAL)
    if way != "batch":
        raise SettingError(f"way: expected 'running' or 'batch', got {way!r}")
    order = np.arange(len(x)) if order is None else np.asarray(order)
    out = np.empty(len(x))
    for start in range(0, len(order), batch):
        rows = order[start : start + batch]
        out[rows] = net.probabilities(x[rows], TRAIN)
    return out


def accuracy(p: np.ndarray, y: np.ndarray) -> float:
    """Share of rows where p > 0.5 agrees with y > 0.5."""
    return float(np.mean((np.asarray(p) > 0.5) == (np.asarray(y) > 0.5)))


def dead_units(net: Any, x: np.ndarray | None = None, mode: str = EVAL) -> int:
    """Hidden units that are zero on every training row.

    Asked in evaluation mode (`mode=EVAL`, the default: the running statistics), or in
    training mode (`mode=TRAIN`): then each consecutive mini-batch of BATCH rows is standardised by
    its own statistics, as training sees it, and a unit is dead if it is zero on every row of
    every mini-batch (a last, shorter mini-batch is asked as it comes)."""
    x = subscribers().x_train if x is None else x
    if mode == EVAL:
        return int(np.sum(np.all(net.hidden_activity(x, EVAL) <= 0, axis=0)))
    check_mode(mode)
    silent = np.ones(HIDDEN, dtype=bool)
    for start in range(0, len(x), BATCH):
        seen = net.hidden_activity(x[start : start + BATCH], mode)
        silent &= np.all(seen <= 0, axis=0)
    return int(silent.sum())


@dataclass(frozen=True)
class ThreeWays:
    """A normalised network asked three ways on the test rows: by its running statistics, in
    consecutive batches of 20 by each batch's statistics, and the same with the rows shuffled."""

    running: np.ndarray
    batch: np.ndarray
    shuffled: np.ndarray
    labels: np.ndarray

    def accuracy(self, way: str) -> float:
        return accuracy(getattr(self, way), self.labels)

    @property
    def inflation(self) -> float:
        return self.accuracy("batch") - self.accuracy("running")

    @property
    def inflated_subscribers(self) -> int:
        return int(round(self.inflation * len(self.labels)))

    @property
    def changed_running_vs_batch(self) -> int:
        return int(np.sum((self.running > 0.5) != (self.batch > 0.5)))

    @property
    def changed_by_order(self) -> int:
        return int(np.sum((self.batch > 0.5) != (self.shuffled > 0.5)))

    @property
    def largest_move(self) -> float:
        return float(np.max(np.abs(self.batch - self.shuffled)))

    def summary(self) -> dict[str, float]:
        """The same figures, under the keys of `REFERENCE_THREE_WAYS`."""
        return {
            "running": self.accuracy("running"),
            "batch": self.accuracy("batch"),
            "inflation": self.inflation,
            "inflated_subscribers": self.inflated_subscribers,
            "shuffled": self.accuracy("shuffled"),
            "changed_running_vs_batch": self.changed_running_vs_batch,
            "changed_by_order": self.changed_by_order,
            "largest_move": self.largest_move,
        }


def three_ways(net: Any) -> ThreeWays:
    """Ask a normalised network three ways about the test subscribers."""
    data = subscribers()
    x = data.x_test
    return ThreeWays(
        running=predict(net, x, "running"),
        batch=predict(net, x, "batch"),
        shuffled=predict(net, x, "batch", order=shuffled_test_order()),
        labels=np.asarray(data.y_test),
    )
