"""Covariate shift, measured (chapter 1), and the lag of the running statistics (chapter 2).

* :func:`deep_network` pushes one mini-batch of 64 rows through a network of ten dense + ReLU
  layers, with or without a batch layer between the dense layer and its ReLU, and records the
  mean and standard deviation of every layer's activations.
* :func:`crowd_shift` trains the crowd network (2 → 16 ReLU → [batch layer] → 1) on the whole
  crowd and records, per epoch, every unit's mean and standard deviation over the rows of the
  activations the output layer reads, and (under the batch layer) the layer's shift.
* :func:`fold_in` takes one real step with a zero upstream gradient: the scale and shift stay put
  and the running statistics are updated with the batch's statistics. :func:`running_lag` repeats it
  and records how far the evaluation-mode output still is from the training-mode output.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..activations import ReLU
from ..batch import BatchNorm
from ..data import load_crowd
from ..dense import Dense
from ..errors import SettingError
from ..mode import EVAL, TRAIN
from . import network

# ------------------------------------------------------------------------------ the deep network

INITS = ("default", "he")
"""How `deep_network` draws its weights: PyTorch's ``nn.Linear`` default, or He (Kaiming)."""

HE_STRETCH = float(np.sqrt(6.0))
"""He-uniform weights are uniform in ±sqrt(6 / fan_in): the default's ±1/sqrt(fan_in) times
sqrt(6), so `deep_network(init="he")` stretches the very same draws by this factor."""

LEVEL = 1.25
"""What "nearly level" means for a deep network (chapter 1 and its claims suite): from layer 1 on,
the largest of its layers' standard deviations is less than LEVEL times the smallest, and so are its
means."""


def uniform_dense(fan_in: int, fan_out: int, rng: np.random.Generator) -> Dense:
    """A dense layer drawn as PyTorch's ``nn.Linear`` draws its default: weights and bias
    uniform in ±1/sqrt(fan_in). (The numbers differ from PyTorch's: the random streams do.)"""
    bound = 1.0 / np.sqrt(fan_in)
    weights = rng.uniform(-bound, bound, size=(fan_in, fan_out))
    bias = rng.uniform(-bound, bound, size=fan_out)
    return Dense(weights=weights, bias=bias)


def skewness(x: np.ndarray, axis: int = -2, floor: float = 1e-12) -> np.ndarray:
    """Each column's skewness, E[(x - mean)^3] / sd^3 along `axis`, sd the standard deviation
    (population moments).

    A column whose standard deviation is at most `floor` (a constant column: a unit that is off for
    every row) has no shape to speak of; its skewness is NaN.

    Args:
        x: any array; the moments run along `axis` (the rows, by default).
        axis: the axis the statistics run along.
        floor: the standard deviation at or below which a column counts as constant.

    Returns:
        The skewness per column, `x`'s shape without `axis`.
    """
    centred = x - x.mean(axis=axis, keepdims=True)
    square = centred * centred  # products, not powers: numpy's ``**3`` calls pow, ten times slower
    deviation = np.sqrt(np.mean(square, axis=axis))
    third = np.mean(square * centred, axis=axis)
    live = deviation > floor
    return np.where(live, third / np.where(live, deviation, 1.0) ** 3, np.nan)


def correlations(x: np.ndarray, floor: float = 1e-12) -> np.ndarray:
    """The correlation between every two columns of `x` (..., rows, units), over the rows.

    Returns:
        Shape (..., units, units); NaN in every entry that involves a constant column
        (standard deviation at most `floor`).
    """
    centred = x - x.mean(axis=-2, keepdims=True)
    deviation = np.sqrt(np.mean(centred * centred, axis=-2))
    live = deviation > floor
    safe = np.where(live, deviation, 1.0)
    unit = centred / safe[..., None, :]
    product = np.matmul(np.swapaxes(unit, -1, -2), unit) / x.shape[-2]  # sum over the rows
    both = live[..., :, None] & live[..., None, :]
    return np.where(both, product, np.nan)


@dataclass(frozen=True, eq=False)
class NetworkDrift:
    """What each layer of a deep network hands on.

    Entry 0 of `mean`, `deviation` and `mean_square` is the input; entry k the activations after
    layer k's ReLU. These figures are taken over every value of the mini-batch (rows × features),
    the standard deviation being the population one. `skewness` (depth, features) is each column's
    skewness of the scores layer k hands its ReLU (after the batch layer, if there is one), and
    `score_magnitude` (depth,) the mean of those scores' absolute values over the mini-batch.
    """

    normalised: bool
    mean: np.ndarray
    deviation: np.ndarray
    mean_square: np.ndarray | None = None
    skewness: np.ndarray | None = None
    score_magnitude: np.ndarray | None = None
    init: str = "default"
    bias: bool = True

    @property
    def depth(self) -> int:
        return int(self.mean.shape[0] - 1)

    @property
    def factors(self) -> np.ndarray:
        """How much each layer multiplies the activations' mean square by: shape (depth,)."""
        return self.mean_square[1:] / self.mean_square[:-1]


def deep_network(
    normalised: bool,
    *,
    seed: int = 3,
    rows: int = 64,
    features: int = 16,
    depth: int = 10,
    input_scale: float = 1.0,
    init: str = "default",
    bias: bool = True,
) -> NetworkDrift:
    """The deep network: `depth` layers of dense → [batch layer, training] → ReLU.

    The input (standard normal, `rows` × `features`) and the dense layers come from one
    ``np.random.default_rng(seed)`` in that order, so every version of the network reads the
    same input through the same draws and differs only by what is asked for:

    Args:
        normalised: a fresh batch layer (training mode) between each dense layer and its ReLU.
        seed, rows, features, depth: the random seed and the sizes.
        input_scale: multiplies the input x (the weights are drawn the same whatever it is).
        init: ``"default"``, weights and biases uniform in ±1/sqrt(fan_in) (PyTorch's
            ``nn.Linear``); or ``"he"``, the same weight draws stretched by sqrt(6), uniform in
            ±sqrt(6 / fan_in) (variance 2 / fan_in), with zero biases (He et al.).
        bias: False sets every bias to zero (with either `init`).

    Returns:
        A `NetworkDrift`.

    Raises:
        SettingError: an unknown `init`.
    """
    (drift,) = deep_networks(
        normalised,
        (seed,),
        rows=rows,
        features=features,
        depth=depth,
        input_scale=input_scale,
        init=init,
        bias=bias,
    )
    return drift


def deep_networks(
    normalised: bool,
    seeds: Sequence[int],
    *,
    rows: int = 64,
    features: int = 16,
    depth: int = 10,
    input_scale: float = 1.0,
    init: str = "default",
    bias: bool = True,
) -> list[NetworkDrift]:
    """`deep_network` for several seeds, the networks run side by side along a leading axis (one
    call per layer for all of them); each seed draws exactly what `deep_network` draws for it.

    Returns:
        One `NetworkDrift` per seed, in the order given.
    """
    if init not in INITS:
        raise SettingError(f"init: expected one of {INITS}, got {init!r}")
    inputs, weights, biases = [], [], []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        inputs.append(input_scale * rng.standard_normal((rows, features)))
        drawn = [uniform_dense(features, features, rng) for _ in range(depth)]
        weights.append([d.weights for d in drawn])
        biases.append([d.bias for d in drawn])
    count = len(inputs)
    h = np.stack(inputs)  # (seeds, rows, features)
    w = np.stack(weights).swapaxes(0, 1)  # (depth, seeds, features, features)
    b = np.stack(biases).swapaxes(0, 1)  # (depth, seeds, features)
    if init == "he":
        w = HE_STRETCH * w
    keep = bias and init != "he"
    if not keep:
        b = np.zeros_like(b)
    relu = ReLU()
    means, deviations = [h.mean(axis=(-2, -1))], [h.std(axis=(-2, -1))]
    squares = [np.mean(h**2, axis=(-2, -1))]
    skews, magnitudes = [], []
    for k in range(depth):
        h = Dense(weights=w[k], bias=b[k]).forward(h).output
        if normalised:
            h = BatchNorm.create(features, stack=(count,)).forward(h, TRAIN).output
        skews.append(skewness(h))
        magnitudes.append(np.mean(np.abs(h), axis=(-2, -1)))
        h = relu.forward(h).output
        means.append(h.mean(axis=(-2, -1)))
        deviations.append(h.std(axis=(-2, -1)))
        squares.append(np.mean(h**2, axis=(-2, -1)))
    per_seed = [np.array(a) for a in (means, deviations, squares, skews, magnitudes)]
    return [
        NetworkDrift(
            normalised=normalised,
            mean=per_seed[0][:, i],
            deviation=per_seed[1][:, i],
            mean_square=per_seed[2][:, i],
            skewness=per_seed[3][:, i],
            score_magnitude=per_seed[4][:, i],
            init=init,
            bias=keep,
        )
        for i in range(count)
    ]


def _drawn_networks(seeds, rows, features, depth, init, bias):
    """What `deep_networks` draws: per seed the input, then each layer's weights and bias, from one
    ``np.random.default_rng(seed)``, along a leading axis of seeds (depth first for the layers)."""
    inputs, weights, biases, rngs = [], [], [], []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        inputs.append(rng.standard_normal((rows, features)))
        drawn = [uniform_dense(features, features, rng) for _ in range(depth)]
        weights.append([d.weights for d in drawn])
        biases.append([d.bias for d in drawn])
        rngs.append(rng)
    w = np.stack(weights).swapaxes(0, 1)
    b = np.stack(biases).swapaxes(0, 1)
    if init == "he":
        w = HE_STRETCH * w
    if not bias or init == "he":
        b = np.zeros_like(b)
    return np.stack(inputs), w, b, rngs


def network_gradients(
    seeds: Sequence[int],
    *,
    rows: int = 64,
    features: int = 16,
    depth: int = 10,
    init: str = "default",
) -> np.ndarray:
    """The backward half of the deep network without batch layers: after the forward pass of
    `deep_networks`, a standard-normal upstream gradient ∂L/∂h at the top layer's output (drawn from
    the seed's generator after the layers) goes back through every ReLU and dense layer.

    Returns:
        The root mean square of ∂L/∂h at every layer's activations, shape (depth + 1, seeds): entry
        0 is the input, entry `depth` the top (where the upstream gradient was drawn).
    """
    if init not in INITS:
        raise SettingError(f"init: expected one of {INITS}, got {init!r}")
    h, w, b, rngs = _drawn_networks(seeds, rows, features, depth, init, True)
    on = []
    for k in range(depth):
        score = h @ w[k] + b[k][:, None, :]
        on.append(score > 0)
        h = np.maximum(score, 0.0)
    g = np.stack([rng.standard_normal((rows, features)) for rng in rngs])
    found = [np.sqrt(np.mean(g**2, axis=(-2, -1)))]
    for k in reversed(range(depth)):
        g = (g * on[k]) @ np.swapaxes(w[k], -1, -2)
        found.append(np.sqrt(np.mean(g**2, axis=(-2, -1))))
    return np.array(found[::-1])


def network_scores(
    seed: int = 3,
    *,
    rows: int = 64,
    features: int = 16,
    depth: int = 10,
) -> np.ndarray:
    """The standardised scores each batch layer of the normalised deep network hands its ReLU,
    for one seed: shape (depth, rows, features), the draws of `deep_network(True, seed=seed)`."""
    h, w, b, _ = _drawn_networks([seed], rows, features, depth, "default", True)
    found = []
    for k in range(depth):
        score = Dense(weights=w[k], bias=b[k]).forward(h).output
        z = BatchNorm.create(features, stack=(1,)).forward(score, TRAIN).output
        found.append(z[0])
        h = np.maximum(z, 0.0)
    return np.array(found)


# ------------------------------------------------------------------------ the crowd network


def crowd_features() -> tuple[np.ndarray, np.ndarray]:
    """The whole crowd in standard units (its own mean and population standard deviation)
    and labels."""
    crowd = load_crowd()
    (x,) = network.standardise_features(crowd.features)
    return x, crowd.labels


DRIFT_RATE = 0.1
"""The learning rate chapter 1 watches the output layer's input at: slow enough that most one-epoch
moves of a unit's mean continue the move before rather than reverse it (at 1, most reverse)."""


def _largest_change(first: np.ndarray, last: np.ndarray) -> float:
    """The largest |last - first| over the entries defined (not NaN) at both ends."""
    change = np.abs(last - first)
    return float(np.nanmax(change)) if np.any(np.isfinite(change)) else 0.0


@dataclass(frozen=True, eq=False)
class CrowdShift:
    """Per-epoch records of the activations the crowd network's output layer reads.

    `mean` and `deviation` have shape (epochs, units): each unit's mean and population
    standard deviation over the rows, measured on each epoch's training pass before its step.
    `shift` and `scale` (same shape) are the batch layer's shift and scale at that pass, and
    `source_variance` the biased variance of the activations it standardised (the ReLU's output);
    all three None without a batch layer. `read` (epochs, rows, units) holds the activations
    themselves. `skewness` (epochs, units) and `correlation` (epochs, units, units) describe their
    shape and how their units move together; NaN where a unit is constant over the rows (off for
    every person). They are computed from `read` when first asked for (None without it), and
    `travels` needs only the first and last epochs, so a record whose shape is never drawn costs two
    epochs' worth, not four hundred. `rate` is the learning rate the network was trained at.
    """

    variant: str
    seed: int
    mean: np.ndarray
    deviation: np.ndarray
    shift: np.ndarray | None
    loss: np.ndarray
    read: np.ndarray | None = field(default=None, repr=False)
    scale: np.ndarray | None = None
    source_variance: np.ndarray | None = None
    rate: float = DRIFT_RATE

    @property
    def epochs(self) -> int:
        return int(self.mean.shape[0])

    @property
    def travel(self) -> np.ndarray:
        """Each unit's mean, last epoch minus first."""
        return self.mean[-1] - self.mean[0]

    @property
    def largest_shift(self) -> float:
        """The largest distance any unit's mean drifts from the first epoch to the last (the
        mean's drift; the name is older than the chapter's word for it)."""
        return float(np.max(np.abs(self.travel)))

    @property
    def mean_travel(self) -> float:
        """The largest distance any unit's mean drifts, first epoch to last."""
        return self.largest_shift

    @property
    def deviation_travel(self) -> float:
        """The largest change of any unit's standard deviation, first epoch to last."""
        return _largest_change(self.deviation[0], self.deviation[-1])

    @cached_property
    def skewness(self) -> np.ndarray | None:
        """Each unit's skewness over the rows, per epoch: shape (epochs, units)."""
        return None if self.read is None else skewness(self.read)

    @cached_property
    def correlation(self) -> np.ndarray | None:
        """The correlation of every two units over the rows, per epoch: (epochs, units, units)."""
        return None if self.read is None else correlations(self.read)

    def _ends(self, name: str, measure) -> np.ndarray:
        """`measure` of the read activations at the first and last epochs (from the record's own, if
        it has already been computed: the same figures, column by column)."""
        whole = self.__dict__.get(name)
        return whole[[0, -1]] if whole is not None else measure(self.read[[0, -1]])

    @property
    def skewness_travel(self) -> float:
        """The largest change of any unit's skewness, first epoch to last (units constant at
        either end left out)."""
        first, last = self._ends("skewness", skewness)
        return _largest_change(first, last)

    @property
    def correlation_travel(self) -> float:
        """The largest change of the correlation between any two units, first epoch to last
        (pairs with a constant unit at either end left out)."""
        first, last = self._ends("correlation", correlations)
        upper = np.triu_indices(first.shape[-1], k=1)
        return _largest_change(first[upper], last[upper])

    def travels(self) -> dict[str, float]:
        """The four drifts, first epoch to last, by measure."""
        return {
            "mean": self.mean_travel,
            "deviation": self.deviation_travel,
            "skewness": self.skewness_travel,
            "correlation": self.correlation_travel,
        }

    def largest_shift_to(self, epoch: int) -> float:
        """The largest distance any unit's mean drifts from the first epoch to `epoch`
        (counted from 1)."""
        return float(np.max(np.abs(self.mean[epoch - 1] - self.mean[0])))

    @property
    def shift_unit(self) -> int:
        """The unit whose mean drifts furthest, first epoch to last."""
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
        """The largest gap, over epochs and units, between the activations' mean and the batch
        layer's shift (None without a batch layer)."""
        if self.shift is None:
            return None
        return float(np.max(np.abs(self.mean - self.shift)))

    @property
    def scale_gap(self) -> float | None:
        """The largest gap, over epochs and units, between the activations' standard deviation and
        |scale| * sqrt(v / (v + epsilon)), v the variance the batch layer standardised (None
        without a batch layer)."""
        if self.scale is None:
            return None
        v = self.source_variance
        pinned = np.abs(self.scale) * np.sqrt(v / (v + BatchNorm.create(1).eps))
        return float(np.max(np.abs(self.deviation - pinned)))


def crowd_shift(
    variant: str = "none", seed: int = 0, epochs: int = 400, rate: float = DRIFT_RATE
) -> CrowdShift:
    """Train one crowd network ('none' or 'batch') on the whole crowd and watch the activations its
    output layer reads."""
    shifts = crowd_shifts(variant, (seed,), epochs=epochs, rate=rate)
    return shifts[0]


def crowd_shifts(
    variant: str, seeds: Sequence[int], epochs: int = 400, rate: float = DRIFT_RATE
) -> list[CrowdShift]:
    """`crowd_shift` for several seeds, trained side by side as one run along a leading axis of
    seeds.

    Each epoch is one full-batch step of `network.train_step` (plain gradient descent on binary
    cross-entropy at `rate`); the read activations are measured on that step's own training pass,
    before the step.

    Returns:
        One `CrowdShift` per seed, in the order given.
    """
    if variant not in ("none", "batch"):
        raise SettingError(f"variant: expected 'none' or 'batch', got {variant!r}")
    x, y = crowd_features()
    count = len(seeds)
    net = network.build(variant, list(seeds))
    xs = np.broadcast_to(x, (count, *x.shape))
    ys = np.broadcast_to(y, (count, *y.shape))
    reads, losses, shifts, scales, sources = [], [], [], [], []
    for _ in range(epochs):
        before = net
        net, loss, seen = network.train_step(before, xs, ys, rate)
        reads.append(seen.read)
        losses.append(loss)
        if before.norm is not None:
            shifts.append(before.norm.shift)
            scales.append(before.norm.scale)
            sources.append(seen.responses[2].statistics.variance)
    read = np.stack(reads)  # (epochs, seeds, rows, units)
    read.flags.writeable = False
    record = {
        "mean": read.mean(axis=-2),
        "deviation": read.std(axis=-2),
        "loss": np.array(losses),
        "shift": np.array(shifts) if shifts else None,
        "scale": np.array(scales) if scales else None,
        "source": np.array(sources) if sources else None,
    }
    return [
        CrowdShift(
            variant=variant,
            seed=int(seed),
            mean=record["mean"][:, i],
            deviation=record["deviation"][:, i],
            shift=None if record["shift"] is None else record["shift"][:, i],
            loss=record["loss"][:, i],
            read=read[:, i],
            scale=None if record["scale"] is None else record["scale"][:, i],
            source_variance=None if record["source"] is None else record["source"][:, i],
            rate=float(rate),
        )
        for i, seed in enumerate(seeds)
    ]


# ------------------------------------------------------------------- the running statistics' lag


def fold_in(layer: BatchNorm, x: np.ndarray, rate: float = 1.0) -> BatchNorm:
    """One real step of `layer` on `x` with a zero upstream gradient: scale and shift do not
    move, and the running statistics are updated with the mini-batch's statistics."""
    response = layer.forward(x, TRAIN)
    gradient = layer.backward(response, np.zeros_like(response.output))
    return layer.step(gradient, rate)


@dataclass(frozen=True, eq=False)
class Lag:
    """`gaps[k - 1]` is the largest gap, over the mini-batch, between the evaluation-mode output and
    the training-mode output after k zero-gradient steps on the same mini-batch."""

    gaps: np.ndarray
    layer: BatchNorm

    def after(self, steps: int) -> float:
        return float(self.gaps[steps - 1])

    def first_under(self, tolerance: float) -> int | None:
        """The first step count after which the gap is below `tolerance` (None if never)."""
        below = np.flatnonzero(self.gaps < tolerance)
        return int(below[0]) + 1 if below.size else None


def running_lag(x: np.ndarray, steps: int = 100, layer: BatchNorm | None = None) -> Lag:
    """Step a batch layer `steps` times on `x` (zero gradient) and measure the lag each time."""
    x = np.asarray(x, dtype=np.float64)
    layer = BatchNorm.create(x.shape[-1]) if layer is None else layer
    trained = layer.forward(x, TRAIN).output
    gaps = []
    for _ in range(steps):
        layer = fold_in(layer, x)
        gaps.append(np.max(np.abs(layer.forward(x, EVAL).output - trained)))
    return Lag(gaps=np.array(gaps), layer=layer)


# ------------------------------------------------------------- what the running variance estimates


@dataclass(frozen=True, eq=False)
class VarianceEstimate:
    """What the running variance of a batch layer settles on, batch after batch of fresh rows
    from one distribution of variance `true_variance`, per independent stream.

    `folded` is normcore's running variance after the last step (updated with the biased
    batch variance), `unbiased` the same rule updated with n / (n - 1) times it (the paper's and
    PyTorch's choice), and `precise` the variance of every row of the last `recent` batches
    pooled, recomputed once after the steps (shape (streams,) each).
    """

    rows: int
    steps: int
    true_variance: float
    folded: np.ndarray
    unbiased: np.ndarray
    precise: np.ndarray
    recent: int

    @property
    def expected_folded(self) -> float:
        """What the biased fold averages to: (n - 1) / n of the true variance."""
        return (self.rows - 1) / self.rows * self.true_variance


def running_var_estimate(
    rows: int = 4, streams: int = 200, steps: int = 100, seed: int = 0, recent: int = 50
) -> VarianceEstimate:
    """Fold `steps` batches of `rows` standard-normal rows (one feature) into `streams` fresh
    batch layers side by side (`fold_in`, one real zero-gradient step a batch), and compare the
    running variance with the two alternatives of `VarianceEstimate`.

    After 100 steps at momentum 0.9 the start (variance 1) weighs 0.9^100, about 3e-5, so what
    is left is the average of the batches' own variances.

    Raises:
        SettingError: fewer than two rows (a batch of one has no variance to fold), or fewer
            recent batches than one or more than `steps`.
    """
    if not isinstance(rows, int) or rows < 2:
        raise SettingError(f"rows: expected an int of at least 2, got {rows!r}")
    if not isinstance(recent, int) or not 1 <= recent <= steps:
        raise SettingError(f"recent: expected 1 to {steps}, got {recent!r}")
    rng = np.random.default_rng(seed)
    layer = BatchNorm.create(1, stack=(streams,))
    unbiased = np.ones((streams, 1))
    kept = []
    for _ in range(steps):
        batch = rng.standard_normal((streams, rows, 1))
        layer = fold_in(layer, batch)
        unbiased = layer.momentum * unbiased + (1 - layer.momentum) * batch.var(axis=-2, ddof=1)
        kept.append(batch)
    pooled = np.concatenate(kept[-recent:], axis=-2)
    return VarianceEstimate(
        rows=rows,
        steps=steps,
        true_variance=1.0,
        folded=np.asarray(layer.running_var)[:, 0],
        unbiased=unbiased[:, 0],
        precise=pooled.var(axis=-2, ddof=1)[:, 0],
        recent=recent,
    )
