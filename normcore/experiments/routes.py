"""Chapter 3's computations: the three-route backward pass held against the oracle.

* :func:`compare_gradients` puts the collected (true) input gradient, the naive gradient d / s
  and the finite-difference oracle side by side for any input x and upstream gradient, with
  statistics down the columns (batch) or along the rows (layer, RMS). Chapter 4 reuses it.
* :func:`route_terms` splits the true input gradient into its three routes, column by column.
* :func:`gap_against_step` sweeps the oracle's step and records its largest gap to the true
  gradient.
* :func:`naive_versus_true` trains the crowd network with the naive input gradient and with the
  true one, from the same starting weights.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..batch import BatchNorm
from ..data import load_crowd
from ..dense import Dense
from ..errors import SettingError, ShapeError
from ..layer import LayerNorm, RMSNorm
from ..loss import binary_cross_entropy
from ..mode import EVAL, TRAIN
from ..oracle import finite_difference
from ..responses import Gradient, Response
from ..standardise import naive_backward
from ..worked import FOUR_ROWS
from . import network

#: The worked four: four people at two hidden units, chosen so every statistic comes out whole.
WORKED_X = FOUR_ROWS

#: Where the statistics run: 'batch' down the columns, 'layer' and 'rms' along the rows.
AXES = ("batch", "layer", "rms")
#: A true gradient within this share of the gradient's scale has no sign
#: (`GradientComparison.wrong_sign`)
SIGN_FLOOR = 1e-8


def counting_grad(shape: tuple[int, ...]) -> np.ndarray:
    """The upstream gradient 1, 2, 3, ... counted across the input, row by row."""
    size = int(np.prod(shape))
    return np.arange(1.0, size + 1.0).reshape(shape)


def worked_grad() -> np.ndarray:
    """The upstream gradient on the worked mini-batch: 1 to 8 counted across it, row by row."""
    return counting_grad(WORKED_X.shape)


def make_layer(axis: str, features: int, eps: float = 1e-5) -> Any:
    """A fresh layer (scale 1, shift 0) whose statistics run along `axis`."""
    if axis == "batch":
        return BatchNorm.create(features, eps=eps)
    if axis == "layer":
        return LayerNorm.create(features, eps=eps)
    if axis == "rms":
        return RMSNorm.create(features, eps=eps)
    raise SettingError(f"axis: expected one of {AXES}, got {axis!r}")


@dataclass(frozen=True, eq=False)
class GradientComparison:
    """Three candidates for ∂L/∂x, the gradient with respect to the input `x`, and how far each
    is from the oracle.

    `true` is the layer's collected input gradient, `naive` is d / s, `oracle` the central
    difference of sum(grad_output * output). `sum_axis` is the axis the statistics run along (0 for
    batch, 1 for layer and RMS); the structural check sums along it.
    """

    axis: str
    x: np.ndarray
    grad_output: np.ndarray
    output: np.ndarray
    true: np.ndarray
    naive: np.ndarray
    oracle: np.ndarray
    scale_grad: np.ndarray
    shift_grad: np.ndarray
    step: float

    @property
    def sum_axis(self) -> int:
        return 0 if self.axis == "batch" else 1

    @property
    def true_gap(self) -> float:
        """The collected gradient's largest distance from the oracle."""
        return float(np.max(np.abs(self.true - self.oracle)))

    @property
    def naive_error(self) -> float:
        """The naive gradient's largest distance from the oracle."""
        return float(np.max(np.abs(self.naive - self.oracle)))

    @property
    def largest_true(self) -> float:
        """The largest true gradient, in size."""
        return float(np.max(np.abs(self.true)))

    @property
    def true_sums(self) -> np.ndarray:
        """The true gradient summed along the statistics' axis (zero when the layer centres)."""
        return self.true.sum(axis=self.sum_axis)

    @property
    def naive_sums(self) -> np.ndarray:
        return self.naive.sum(axis=self.sum_axis)

    @property
    def _along(self) -> np.ndarray:
        """What a rescaling moves: z for batch and layer norm (scaling about the mean), the input
        itself for RMS norm (scaling about zero)."""
        return self.x if self.axis == "rms" else self.output

    @property
    def true_dots(self) -> np.ndarray:
        """The second structural check: sum of true * z along the statistics' axis (sum of
        true * x for RMS). Zero up to epsilon: a rescaling changes the output only through
        epsilon."""
        return (self.true * self._along).sum(axis=self.sum_axis)

    @property
    def naive_dots(self) -> np.ndarray:
        return (self.naive * self._along).sum(axis=self.sum_axis)

    @property
    def wrong_sign(self) -> np.ndarray:
        """Cells where the naive and the true gradients point opposite ways (a true gradient
        within rounding of zero, `SIGN_FLOOR` of the gradient's scale, has no sign to disagree
        with)."""
        scale = max(1.0, float(np.max(np.abs(self.naive))))
        signed = np.abs(self.true) > SIGN_FLOOR * scale
        return signed & (np.sign(self.naive) * np.sign(self.true) < 0)


def compare_gradients(
    x: Any,
    grad_output: Any | None = None,
    axis: str = "batch",
    eps: float = 1e-5,
    step: float = 1e-6,
) -> GradientComparison:
    """Standardise `x` (rows, features) while training, pass `grad_output` back (default: the
    counting gradient) and hold the true and naive input gradients against the finite
    difference of sum(grad_output * output)."""
    x = np.array(x, dtype=np.float64)
    if x.ndim != 2 or x.size == 0:
        raise ShapeError(f"x: expected a non-empty (rows, features) array, got {x.shape}")
    d = counting_grad(x.shape) if grad_output is None else np.array(grad_output, dtype=np.float64)
    if d.shape != x.shape:
        raise ShapeError(f"grad_output: expected the shape of x, {x.shape}, got {d.shape}")
    layer = make_layer(axis, x.shape[1], eps)
    response = layer.forward(x, TRAIN)
    gradient = layer.backward(response, d)

    def objective(b: np.ndarray) -> float:
        return float(np.sum(d * layer.forward(b, TRAIN).output))

    return GradientComparison(
        axis=axis,
        x=x,
        grad_output=d,
        output=response.output,
        true=gradient.grad_input,
        naive=naive_backward(response.cache, d),
        oracle=finite_difference(objective, x, step),
        scale_grad=gradient.grads["scale"],
        shift_grad=gradient.grads["shift"],
        step=step,
    )


def jacobian(column: Any, eps: float = 1e-5) -> np.ndarray:
    """dz/dx for one column of n values standardised by its own statistics (biased variance,
    epsilon under the root), written from the formula (1/s)(I - 11^T/n - z z^T/n), not from a
    layer. Returns an (n, n) array whose entry [i, k] is dz_i/dx_k."""
    x = np.array(column, dtype=np.float64).reshape(-1)
    if x.size < 1:
        raise ShapeError("column: expected at least one value, got none")
    n = x.size
    s = np.sqrt(x.var() + eps)
    z = (x - x.mean()) / s
    return (np.eye(n) - np.ones((n, n)) / n - np.outer(z, z) / n) / s


def rule_step(x: Any) -> float:
    """The finite-difference step by the rule of thumb for central differences: the cube root
    of float64's machine epsilon (about 6e-6) times the input's scale (its largest entry in
    size, at least 1). It balances truncation (like h**2) against rounding (like u / h)."""
    x = np.asarray(x, dtype=np.float64)
    scale = max(1.0, float(np.max(np.abs(x)))) if x.size else 1.0
    return float(np.finfo(np.float64).eps ** (1 / 3) * scale)


@dataclass(frozen=True, eq=False)
class RouteTerms:
    """The batch layer's input gradient split into its three routes (per cell), and the
    column figures the collected line is built from."""

    z: np.ndarray
    divisor: np.ndarray  # per column
    sum_d: np.ndarray  # per column
    sum_dz: np.ndarray  # per column
    own: np.ndarray  # d / s
    through_mean: np.ndarray  # -sum(d) / (n s)
    through_variance: np.ndarray  # -z sum(d z) / (n s)

    @property
    def total(self) -> np.ndarray:
        return self.own + self.through_mean + self.through_variance


def route_terms(x: Any = WORKED_X, grad_output: Any | None = None, eps: float = 1e-5):
    """Split the input gradient of a batch layer (statistics down the columns) into the three
    routes, written out from the statistics rather than taken from the layer."""
    x = np.array(x, dtype=np.float64)
    d = counting_grad(x.shape) if grad_output is None else np.array(grad_output, dtype=np.float64)
    n = x.shape[0]
    mean = x.mean(axis=0)
    s = np.sqrt(((x - mean) ** 2).mean(axis=0) + eps)
    z = (x - mean) / s
    sum_d = d.sum(axis=0)
    sum_dz = (d * z).sum(axis=0)
    return RouteTerms(
        z=z,
        divisor=s,
        sum_d=sum_d,
        sum_dz=sum_dz,
        own=d / s,
        through_mean=np.broadcast_to(-sum_d / (n * s), x.shape).copy(),
        through_variance=-z * sum_dz / (n * s),
    )


#: The steps the oracle sweep tries: 1e-1 down to 1e-12.
STEPS = tuple(10.0**-k for k in range(1, 13))


@dataclass(frozen=True, eq=False)
class StepSweep:
    steps: np.ndarray
    gaps: np.ndarray  # largest |oracle - true| at each step

    @property
    def best_step(self) -> float:
        return float(self.steps[int(np.argmin(self.gaps))])

    @property
    def best_gap(self) -> float:
        return float(np.min(self.gaps))


def gap_against_step(
    x: Any = WORKED_X,
    grad_output: Any | None = None,
    steps: Sequence[float] = STEPS,
    axis: str = "batch",
) -> StepSweep:
    """The oracle's largest gap to the true gradient, for each finite-difference step."""
    gaps = [compare_gradients(x, grad_output, axis, step=h).true_gap for h in steps]
    return StepSweep(steps=np.array(steps, dtype=np.float64), gaps=np.array(gaps))


@dataclass(frozen=True, eq=False)
class TrainingPair:
    """Loss per epoch (epochs, seeds) for the crowd network trained with the true input gradient
    at the batch layer and with the naive one, the final training accuracy (per seed) of each,
    and the norm of the hidden layer's weights and bias, ‖(W, b)‖, before each epoch's step and
    after the last one (epochs + 1, seeds)."""

    seeds: tuple[int, ...]
    true_loss: np.ndarray
    naive_loss: np.ndarray
    true_accuracy: np.ndarray
    naive_accuracy: np.ndarray
    true_norm: np.ndarray | None = None
    naive_norm: np.ndarray | None = None

    def ending(self, loss: np.ndarray, last: int = 100) -> np.ndarray:
        """Where a run ends: its mean loss over the last `last` epochs, per seed (at rate 1 one
        epoch's loss depends on where a spike fell; the mean over a stretch does not)."""
        return loss[-last:].mean(axis=0)

    @property
    def true_lower(self) -> np.ndarray:
        """Per seed: does the true pass end lower (mean loss of the last 100 epochs)?"""
        return self.ending(self.true_loss) < self.ending(self.naive_loss)


def hidden_norm(net: Any) -> np.ndarray:
    """‖(W, b)‖ of the crowd network's hidden layer, per network on the leading axis."""
    w, b = net.hidden.weights, net.hidden.bias
    return np.sqrt(np.sum(w**2, axis=(-2, -1)) + np.sum(b**2, axis=-1))


def unit_norms(net: Any) -> np.ndarray:
    """The norm of each hidden unit's incoming weights and bias, shape (*stack, units)."""
    w, b = net.hidden.weights, net.hidden.bias
    return np.sqrt(np.sum(w**2, axis=-2) + b**2)


def rescaled_hidden(net: Any, factor: np.ndarray) -> Any:
    """The network with each hidden unit's weights and bias multiplied by `factor` (*stack,
    units). Below a batch layer (and a ReLU, which commutes with a positive factor) this leaves
    every output unchanged up to epsilon: only the size of the next steps changes."""
    hidden = Dense(weights=net.hidden.weights * factor[..., None, :], bias=net.hidden.bias * factor)
    return dataclasses.replace(net, hidden=hidden)


@dataclass(frozen=True, eq=False)
class PartlyNaive:
    """A normaliser over several networks on a leading axis that hands down the naive gradient
    d / s for the networks `naive` marks (a bool per network) and the three-route gradient for the
    others, so that both kinds train side by side in one run. Its forward pass, parameter gradients
    and step are the normaliser's own; where `naive` is all true it is
    `network.NaiveGradInput`."""

    layer: Any
    naive: np.ndarray

    def forward(self, x: np.ndarray, mode: str = EVAL) -> Response:
        """The normaliser's forward pass, unchanged."""
        return self.layer.forward(x, mode)

    def backward(self, response: Response, grad_output: np.ndarray) -> Gradient:
        """The normaliser's gradient, its `grad_input` swapped for the naive gradient (the
        upstream gradient at the standardised output over the divisor) in the marked networks."""
        gradient = self.layer.backward(response, grad_output)
        arriving = grad_output * self.layer.aligned(self.layer.scale, grad_output)
        naive = naive_backward(response.cache, arriving)
        marked = self.naive.reshape(self.naive.shape + (1,) * (naive.ndim - self.naive.ndim))
        return dataclasses.replace(
            gradient, grad_input=np.where(marked, naive, gradient.grad_input)
        )

    def step(self, gradient: Gradient, rate: float) -> PartlyNaive:
        """The normaliser stepped, still naive in the same networks."""
        return PartlyNaive(self.layer.step(gradient, rate), self.naive)


def naive_versus_true(
    seeds: Sequence[int] = (0, 1, 2, 3, 4),
    epochs: int = 400,
    rate: float = 1.0,
    variant: str = "batch",
    equalise: bool = False,
) -> TrainingPair:
    """Train the crowd network (batch layer after the hidden ReLU) on the whole crowd, features in
    standard units, once with the true backward pass and once with the naive one, from the same
    starting weights per seed. Accuracy is asked in evaluation mode, after the last step.

    With `equalise`, after every step each naive run's hidden units are rescaled to the norms of
    the true run's units (`rescaled_hidden`): the batch layer makes that rescaling invisible to
    the outputs, so the two runs then differ only in the direction of their steps, not in the
    weight norm that sets their effective learning rate (chapter 8). Only for 'batch'.

    The two passes train side by side in one run of 2 x len(seeds) networks along a leading axis
    (each seed twice, `PartlyNaive` marking the second copy); each network's arithmetic is its own,
    so each run is the one it would be on its own."""
    if equalise and variant != "batch":
        raise SettingError("equalise: only a batch layer makes each hidden unit scale-invariant")
    crowd = load_crowd()
    (x,) = network.standardise_features(crowd.features)
    count = len(seeds)
    stack = 2 * count
    xs = np.broadcast_to(x, (stack, *x.shape)).copy()
    ys = np.broadcast_to(crowd.labels, (stack, len(crowd))).copy()
    net = network.build(variant, [*seeds, *seeds])
    naive = np.arange(stack) >= count
    net = dataclasses.replace(net, norm=PartlyNaive(net.norm, naive))
    losses = np.empty((epochs, stack))
    norms = np.empty((epochs + 1, stack))
    for epoch in range(epochs):
        norms[epoch] = hidden_norm(net)
        net, losses[epoch], _ = network.train_step(net, xs, ys, rate)
        if equalise:
            units = unit_norms(net)
            factor = np.ones_like(units)
            factor[count:] = units[:count] / units[count:]
            net = rescaled_hidden(net, factor)
    norms[epochs] = hidden_norm(net)
    accuracy = network.accuracy(net, xs, ys)
    return TrainingPair(
        seeds=tuple(seeds),
        true_loss=losses[:, :count],
        naive_loss=losses[:, count:],
        true_accuracy=accuracy[:count],
        naive_accuracy=accuracy[count:],
        true_norm=norms[:, :count],
        naive_norm=norms[:, count:],
    )


@dataclass(frozen=True, eq=False)
class FirstGrads:
    """The hidden layer's weight gradient on the first step, reached through the true and through
    the naive input gradient (same network, same batch)."""

    true: np.ndarray
    naive: np.ndarray

    @property
    def cosine(self) -> float:
        a, b = self.true.ravel(), self.naive.ravel()
        return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))

    @property
    def relative_gap(self) -> float:
        """|naive - true| / |true|, over the whole weight matrix."""
        return float(np.linalg.norm(self.naive - self.true) / np.linalg.norm(self.true))

    @property
    def length_ratio(self) -> float:
        """|naive| / |true|: how much longer the naive gradient is."""
        return float(np.linalg.norm(self.naive) / np.linalg.norm(self.true))

    @property
    def descent_ratio(self) -> float:
        """<true, naive> / |true|^2: the first-order fall in the loss of a small step along the
        naive gradient, as a share of the fall along the true one (above 1: the naive step
        descends more, to first order)."""
        a, b = self.true.ravel(), self.naive.ravel()
        return float(a @ b / (a @ a))


def first_hidden_grads(seed: int = 0, variant: str = "batch") -> FirstGrads:
    """The gradient the hidden weights receive on the crowd network's first step, both ways."""
    crowd = load_crowd()
    (x,) = network.standardise_features(crowd.features)
    net = network.build(variant, [seed])
    xs, ys = x[None], crowd.labels[None]
    p = network.forward(net, xs, TRAIN)
    h, a, n, o = p.responses
    loss = binary_cross_entropy(p.logits, ys, stack_axes=1)
    d = net.output.backward(o, loss.grad[..., None]).grad_input
    arriving = d * net.norm.scale[:, None, :]
    found = {}
    for naive in (False, True):
        below = naive_backward(n.cache, arriving) if naive else net.norm.backward(n, d).grad_input
        relu = net.relu.backward(a, below).grad_input
        found[naive] = net.hidden.backward(h, relu).grads["weights"][0]
    return FirstGrads(true=found[False], naive=found[True])
