"""Chapter 5's measurements: weight normalisation's two gradients, their checks and one step.

The case: three neurons read five people of the crowd (features in standard units over the whole
crowd) through tanh; the three tanh outputs are summed into one logit per person and scored by
binary cross-entropy against the person's label. The stored directions have lengths given by the
caller (1, 2.5 and 0.5 by default) and each magnitude starts equal to its direction's length, so
the effective weights are the stored directions themselves and a dense layer holding them returns
the same. The loss is the cross-entropy summed (not averaged) over the five people.

* :func:`make_case` builds the case; :func:`grad_checks` holds both gradients (and the unprojected
  direction gradient) against finite differences; :func:`one_step` takes one step of each layer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..activations import Tanh
from ..data import load_crowd
from ..dense import Dense, WeightNormDense, direction_length
from ..errors import SettingError
from ..loss import binary_cross_entropy
from ..mode import TRAIN
from ..oracle import finite_difference
from .network import standardise_features

LENGTHS = (1.0, 2.5, 0.5)
PEOPLE = 5
CASE_SEED = 5
LEARNING_RATE = 0.1
# chapter 5's claim about the eta^2 law: at LIMIT_RATE the distance over rate squared is within
# LIMIT_MISS (relative) of its predicted limit C on most fresh cases (tests/claims/test_ch05.py)
LIMIT_RATE = 0.0125
LIMIT_MISS = 0.02


@dataclass(frozen=True)
class Case:
    x: np.ndarray  # (5, 2) standard units
    y: np.ndarray  # (5,) labels
    weightnorm: WeightNormDense
    dense: Dense


def make_case(lengths: Sequence[float] = LENGTHS, seed: int = CASE_SEED) -> Case:
    """Directions drawn from `seed` (one per neuron), rescaled to the given lengths."""
    lengths = np.asarray(lengths, dtype=np.float64)
    if lengths.ndim != 1 or lengths.size < 1 or not np.all(np.isfinite(lengths)):
        raise SettingError("lengths: expected a list of finite numbers")
    crowd = load_crowd()
    (x,) = standardise_features(crowd.features)
    rng = np.random.default_rng(seed)
    raw = rng.normal(size=(2, lengths.size))
    direction = raw / direction_length(raw) * lengths
    bias = rng.normal(scale=0.1, size=lengths.size)
    layer = WeightNormDense(direction=direction, bias=bias)  # refuses a zero length
    return Case(
        x=x[:PEOPLE],
        y=crowd.labels[:PEOPLE],
        weightnorm=layer,
        dense=Dense(weights=layer.effective_weights, bias=bias),
    )


def loss_of(layer: Dense, x: np.ndarray, y: np.ndarray) -> float:
    """The case's loss for any dense or weight-normalised layer."""
    answer = np.tanh(layer.forward(x).output)
    return float(binary_cross_entropy(answer.sum(axis=-1), y).value) * len(y)


def arriving_grad(layer: Dense, x: np.ndarray, y: np.ndarray):
    """The layer's response and the upstream gradient at its output (through tanh and the loss)."""
    response = layer.forward(x, TRAIN)
    tanh = Tanh()
    t = tanh.forward(response.output, TRAIN)
    loss = binary_cross_entropy(t.output.sum(axis=-1), y)
    arriving = np.repeat(loss.grad[:, None] * len(y), t.output.shape[-1], axis=-1)
    d = tanh.backward(t, arriving)
    return response, d.grad_input


@dataclass(frozen=True)
class GradChecks:
    forward_gap: float  # largest |weight-normalised answer - dense answer|
    direction_gap: float  # projected direction gradient against finite differences
    magnitude_gap: float
    largest_direction_grad: float  # largest |finite-difference direction gradient|
    unprojected_gap: float  # the unprojected form against finite differences
    projected_dot: np.ndarray  # per neuron: projected gradient · direction
    unprojected_dot: np.ndarray
    direction_grad: np.ndarray
    unprojected_grad: np.ndarray
    oracle_direction: np.ndarray


def grad_checks(case: Case, step: float = 1e-6) -> GradChecks:
    wn, x, y = case.weightnorm, case.x, case.y
    response, d = arriving_grad(wn, x, y)
    gradient = wn.backward(response, d)
    dense_grad = np.swapaxes(response.input, -1, -2) @ d
    unprojected = wn.grads_from_dense(dense_grad, project=False)["direction"]

    def by_direction(v: np.ndarray) -> float:
        return loss_of(WeightNormDense(direction=v, magnitude=wn.magnitude, bias=wn.bias), x, y)

    def by_magnitude(g: np.ndarray) -> float:
        return loss_of(WeightNormDense(direction=wn.direction, magnitude=g, bias=wn.bias), x, y)

    oracle_v = finite_difference(by_direction, wn.direction, step)
    oracle_g = finite_difference(by_magnitude, wn.magnitude, step)
    projected = gradient.grads["direction"]
    return GradChecks(
        forward_gap=float(np.max(np.abs(wn.forward(x).output - case.dense.forward(x).output))),
        direction_gap=float(np.max(np.abs(projected - oracle_v))),
        magnitude_gap=float(np.max(np.abs(gradient.grads["magnitude"] - oracle_g))),
        largest_direction_grad=float(np.max(np.abs(oracle_v))),
        unprojected_gap=float(np.max(np.abs(unprojected - oracle_v))),
        projected_dot=np.sum(projected * wn.direction, axis=0),
        unprojected_dot=np.sum(unprojected * wn.direction, axis=0),
        direction_grad=projected,
        unprojected_grad=unprojected,
        oracle_direction=oracle_v,
    )


@dataclass(frozen=True)
class StepComparison:
    learning_rate: float
    distance: float  # ‖effective weights after (weight norm) - after (dense)‖
    length_before: np.ndarray  # per neuron, effective weight length (the same for both)
    length_weightnorm: np.ndarray  # after one step
    length_dense: np.ndarray
    weights_weightnorm: np.ndarray
    weights_dense: np.ndarray


def one_step(case: Case, learning_rate: float = LEARNING_RATE) -> StepComparison:
    """One step of each layer at `learning_rate` from the same upstream gradient."""
    results = []
    for layer in (case.weightnorm, case.dense):
        response, d = arriving_grad(layer, case.x, case.y)
        moved = layer.step(layer.backward(response, d), learning_rate)
        results.append(np.array(moved.effective_weights))
    wn_after, dense_after = results
    return StepComparison(
        learning_rate=float(learning_rate),
        distance=float(np.sqrt(np.sum((wn_after - dense_after) ** 2))),
        length_before=direction_length(case.dense.weights),
        length_weightnorm=direction_length(wn_after),
        length_dense=direction_length(dense_after),
        weights_weightnorm=wn_after,
        weights_dense=dense_after,
    )


@dataclass(frozen=True)
class Parts:
    """Each neuron's dense gradient split along and across its unit direction u, at the case's
    starting weights: `along` a = grad_w . u, `across` b = |grad_w - a u|^2, `length` g (the
    length parameter, equal to |v| in the case). Shape (neurons,) each."""

    along: np.ndarray
    across: np.ndarray
    length: np.ndarray


def parts(case: Case) -> Parts:
    """The dense gradient of the case's loss with respect to the effective weights, split along
    and across each neuron's direction (see `Parts`)."""
    response, d = arriving_grad(case.dense, case.x, case.y)
    grad = np.swapaxes(response.input, -1, -2) @ d  # (inputs, neurons)
    v = case.weightnorm.direction
    u = v / direction_length(v)
    a = np.sum(grad * u, axis=0)
    across = grad - a * u
    return Parts(
        along=a, across=np.sum(across**2, axis=0), length=np.asarray(case.weightnorm.magnitude)
    )


def length_gap(case: Case, learning_rate: float) -> np.ndarray:
    """How much longer the dense step leaves each neuron than the weight-norm step, exactly:
    sqrt((g - eta a)^2 + eta^2 b) - |g - eta a| (see `Parts`), when g = |v|. The weight-norm
    length after the step is g - eta a; the dense one is the length of w - eta grad_w, whose
    part along u is g - eta a and whose part across u has squared length eta^2 b."""
    p = parts(case)
    along = p.length - learning_rate * p.along
    return np.sqrt(along**2 + learning_rate**2 * p.across) - np.abs(along)


def second_order_constant(case: Case) -> float:
    """The limit of (distance between the two steps' effective weights) / eta^2 as eta -> 0:
    sqrt(sum over neurons of b (a^2 + b / 4) / g^2). At g = |v| the weight-norm step equals the
    dense step to first order; their difference per neuron is eta^2 ((a / g) r - (b / 2g) u) +
    O(eta^3), r the across part of the gradient."""
    p = parts(case)
    return float(np.sqrt(np.sum(p.across * (p.along**2 + p.across / 4) / p.length**2)))


def turning_factor(layer: WeightNormDense) -> np.ndarray:
    """g^2 / |v|^2 per neuron: how much the weight-norm step turns a neuron's effective weights
    relative to the dense step (to first order). 1 at the case's start; a growing |v| lowers it."""
    return np.asarray(layer.magnitude) ** 2 / direction_length(layer.direction) ** 2


def data_dependent_start(layer: WeightNormDense, x: np.ndarray) -> WeightNormDense:
    """Salimans and Kingma's data-dependent initialisation: keep the directions, and choose each
    length g and bias b so that the layer's pre-activations over the batch `x` (rows, inputs) have
    mean 0 and standard deviation 1 per neuron: t = x . u, g = 1 / sd(t), b = -mean(t) / sd(t). A
    layer with leading axes (directions (*stack, inputs, neurons)) takes a batch with the same
    leading axes (*stack, rows, inputs).

    Raises:
        SettingError: a neuron's t is constant over the batch (nothing to scale by).
    """
    v = np.asarray(layer.direction)
    t = np.asarray(x) @ (v / np.linalg.norm(v, axis=-2, keepdims=True))
    sd = t.std(axis=-2)
    if np.any(sd == 0):
        raise SettingError("x: a neuron's pre-activations are constant over the batch")
    return WeightNormDense(direction=v, magnitude=1.0 / sd, bias=-t.mean(axis=-2) / sd)


def factor_pinned(layer: WeightNormDense) -> WeightNormDense:
    """The same layer (the same effective weights, so the same function) with each stored
    direction rescaled to its length parameter, so that the turning factor g^2 / |v|^2 is 1:
    an intervention on the factor alone."""
    v = np.asarray(layer.direction)
    g = np.asarray(layer.magnitude)
    unit = v / np.linalg.norm(v, axis=-2, keepdims=True)
    return WeightNormDense(direction=unit * g[..., None, :], magnitude=g, bias=layer.bias)


@dataclass(frozen=True)
class ShortcutSplit:
    """The shortcut direction gradient (g / |v|) grad_w split into the projected (turning) part,
    at right angles to v, and its error, the radial part (g / |v|)(grad_w . u) u along v.

    `turning`: the projected gradient's length per neuron; `radial`: the signed size
    (g / |v|)(grad_w . u) of the error along u (positive: a step with it shortens v).
    `effect_on_w`: the largest change of the effective weights that the radial part alone
    makes in a step of `rate` (zero to first order: w = g v / |v| ignores |v|)."""

    turning: np.ndarray
    radial: np.ndarray
    effect_on_w: float
    rate: float


def _dense_gradient(case: Case) -> np.ndarray:
    response, d = arriving_grad(case.dense, case.x, case.y)
    return np.swapaxes(response.input, -1, -2) @ d  # (inputs, neurons), shaped as v


def shortcut_split(case: Case, rate: float = LEARNING_RATE) -> ShortcutSplit:
    """Split the shortcut's direction gradient (see `ShortcutSplit`)."""
    wn = case.weightnorm
    grad = _dense_gradient(case)
    right = wn.grads_from_dense(grad)["direction"]
    wrong = wn.grads_from_dense(grad, project=False)["direction"]
    error = wrong - right
    v = np.asarray(wn.direction)
    u = v / direction_length(v)
    moved = WeightNormDense(direction=v - rate * error, magnitude=wn.magnitude, bias=wn.bias)
    return ShortcutSplit(
        turning=direction_length(right),
        radial=np.sum(error * u, axis=0),
        effect_on_w=float(np.max(np.abs(moved.effective_weights - wn.effective_weights))),
        rate=float(rate),
    )


def direction_lengths_after(case: Case, rate: float, project: bool = True) -> np.ndarray:
    """|v| per neuron after one step of plain gradient descent at `rate` with the projected
    direction gradient (`project=True`) or the shortcut (`project=False`)."""
    wn = case.weightnorm
    grad = wn.grads_from_dense(_dense_gradient(case), project=project)["direction"]
    return direction_length(np.asarray(wn.direction) - rate * grad)


__all__ = [
    "CASE_SEED",
    "LEARNING_RATE",
    "LENGTHS",
    "LIMIT_MISS",
    "LIMIT_RATE",
    "PEOPLE",
    "Case",
    "Parts",
    "ShortcutSplit",
    "GradChecks",
    "StepComparison",
    "arriving_grad",
    "data_dependent_start",
    "direction_lengths_after",
    "factor_pinned",
    "length_gap",
    "loss_of",
    "make_case",
    "one_step",
    "parts",
    "second_order_constant",
    "shortcut_split",
    "grad_checks",
    "turning_factor",
]
